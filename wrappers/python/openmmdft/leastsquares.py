"""Least-squares fitting on an OpenMM platform (the plugin's SolveLeastSquares kernel).

    x = solveLeastSquares(A, b)                            # QR on the CPU platform
    x, info = solveLeastSquares(A, b, method="Cholesky", platform="OpenCL", fullOutput=True)
    x = solveLeastSquares(A, b, constraints=(C, d))        # min |Ax - b| subject to C x = d

Methods: "QR" (Householder, no normal equations; the accurate default), "Cholesky" and
"Gauss" (normal equations A^T A x = A^T b, LU with partial pivoting for Gauss) and
"GaussSeidel" (iterative on the normal equations; ``tolerance``, ``maxIterations``).
Normal-equation methods square the condition number: use them for well-conditioned A.

With ``fullOutput=True`` the second value is a dict: ``residualNorm`` (|Ax - b| per
right-hand side, computed in double precision), ``iterations`` (Gauss-Seidel sweeps),
``rank``, ``rankDeficient``, ``conditionEstimate``, ``lagrangeMultipliers``, ``platform``,
``precision`` and ``deviceMemoryBytes`` (what a GPU platform allocated for the solve; 0 on
CPU). A rank-deficient A raises OpenMMException, or with
``allowRankDeficient=True`` (QR only) gives the minimum-norm solution and
``rankDeficient=True``. Bad input (m < n, mismatched shapes, NaN/Inf) raises OpenMMException.

Any finite data are accepted (A near 1e300 or 1e-300 alike): the solver scales the problem by
powers of two before it reaches the platform and unscales the answer exactly. A result that
itself lies beyond the double range (x, a residual norm or a Lagrange multiplier) raises
OpenMMException ("... is not finite ...") instead of returning NaN or Inf.
"""

import numpy as np
import openmm as mm

from . import core


def _platformName(platform):
    if platform is None:
        return "CPU"
    return platform if isinstance(platform, str) else platform.getName()


def solveLeastSquares(A, b, method="QR", platform=None, precision=None, constraints=None, tolerance=1e-10,
                      maxIterations=10000, relaxation=1.0, allowRankDeficient=False, fullOutput=False):
    """Solve min |A x - b|_2 (optionally subject to C x = d) on an OpenMM platform; see the module doc."""
    A = np.ascontiguousarray(A, dtype=float)
    b = np.asarray(b, dtype=float)
    if A.ndim != 2:
        raise mm.OpenMMException("solveLeastSquares: A must be a matrix (2-D array), got %d dimensions" % A.ndim)
    m, n = A.shape
    vector = (b.ndim == 1)
    B = b.reshape(-1, 1) if vector else b
    if B.ndim != 2 or B.shape[0] != m:
        raise mm.OpenMMException("solveLeastSquares: b has %d rows but A has %d" % (B.shape[0] if B.ndim else 0, m))
    nrhs = B.shape[1]
    p, C, d = 0, np.zeros(0), np.zeros(0)
    if constraints is not None:
        C, d = constraints
        C = np.atleast_2d(np.asarray(C, dtype=float))
        d = np.asarray(d, dtype=float)
        if C.shape[0] == 0:  # no constraint rows: the unconstrained problem
            if d.size != 0:
                raise mm.OpenMMException("solveLeastSquares: constraints have no rows of C but %d values of d" % d.size)
            C, d = np.zeros(0), np.zeros((0, nrhs))
        else:
            if d.size not in (C.shape[0], C.shape[0] * nrhs):
                raise mm.OpenMMException("solveLeastSquares: d has %d values; C has %d rows (d needs one per row, or one "
                                         "per row and right-hand side)" % (d.size, C.shape[0]))
            d = d.reshape(C.shape[0], -1)
            if d.shape[1] == 1 and nrhs > 1:
                d = np.repeat(d, nrhs, axis=1)
            p = C.shape[0]
    out = core._solveLeastSquares(_platformName(platform), precision or "", method, m, n, nrhs, A.ravel(), B.ravel(),
                                  p, C.ravel(), np.ascontiguousarray(d).ravel(), tolerance, maxIterations, relaxation,
                                  allowRankDeficient)
    x = np.array(out.x).reshape(n, nrhs)
    if vector:
        x = x[:, 0]
    if not fullOutput:
        return x
    info = {
        "residualNorm": np.array(out.residualNorms) if not vector else float(np.array(out.residualNorms)[0]),
        "iterations": out.iterations,
        "rank": out.rank,
        "rankDeficient": out.rankDeficient,
        "conditionEstimate": out.conditionEstimate,
        "relativeNormalResidual": out.relativeNormalResidual,
        "deviceMemoryBytes": out.deviceMemoryBytes,
        "lagrangeMultipliers": np.array(out.lagrangeMultipliers).reshape(p, nrhs),
        "platform": out.platformName,
        "precision": out.precision,
    }
    return x, info
