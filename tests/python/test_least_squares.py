"""openmmdft.solveLeastSquares against numpy.linalg.lstsq (LAPACK gelsd), on every platform here.

Tolerances: QR is backward stable, so |x - x_ref| <= 100 cond eps |x_ref|; the normal-equation
methods square the condition number, so they get 100 cond^2 eps (in the platform's precision).
"""

import numpy as np
import openmm as mm
import pytest

import openmmdft
from conftest import PLATFORMS

METHODS = ["QR", "Cholesky", "Gauss", "GaussSeidel"]


def problem(m, n, cond, nrhs=1, seed=0):
    rng = np.random.default_rng(seed)
    u, _ = np.linalg.qr(rng.normal(size=(m, n)))
    v, _ = np.linalg.qr(rng.normal(size=(n, n)))
    s = np.logspace(0, -np.log10(cond), n)
    A = u @ np.diag(s) @ v.T
    b = rng.normal(size=(m, nrhs)) if nrhs > 1 else rng.normal(size=m)
    return A, b


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("shape", [(10, 3), (200, 40), (1000, 200)])
def test_matches_numpy_on_cpu(method, shape):
    # Gauss-Seidel converges at a rate set by cond(A^T A): it gets a well-conditioned problem and is
    # checked against its own stopping rule (|A^T r| <= tol |A^T b|, so |x - x*| <= cond^2 tol |x*|).
    cond = 10.0 if method == "GaussSeidel" else 1e3
    A, b = problem(*shape, cond)
    x, info = openmmdft.solveLeastSquares(A, b, method=method, fullOutput=True, tolerance=1e-12)
    reference = np.linalg.lstsq(A, b, rcond=None)[0]
    eps = np.finfo(float).eps
    bound = {"QR": 100 * cond * eps, "GaussSeidel": 10 * cond**2 * 1e-12}.get(method, 100 * cond**2 * eps)
    assert np.linalg.norm(x - reference) <= bound * np.linalg.norm(reference)
    assert info["residualNorm"] == pytest.approx(np.linalg.norm(A @ reference - b), rel=1e-6)
    if method == "GaussSeidel":
        assert info["iterations"] > 0


def test_ill_conditioned_qr_is_accurate():
    A, b = problem(500, 50, 1e8)
    x = openmmdft.solveLeastSquares(A, b)
    reference = np.linalg.lstsq(A, b, rcond=None)[0]
    assert np.linalg.norm(x - reference) <= 100 * 1e8 * np.finfo(float).eps * np.linalg.norm(reference)


@pytest.mark.parametrize("platformName", [p for p in PLATFORMS if p not in ("Reference", "CPU")] or ["Reference"])
@pytest.mark.parametrize("precision", ["double", "mixed", "single"])
def test_gpu_platforms(platformName, precision):
    if platformName == "Reference" and precision != "double":
        pytest.skip("Reference is double precision only")
    A, b = problem(300, 30, 10.0, nrhs=2, seed=3)
    reference = np.linalg.lstsq(A, b, rcond=None)[0]
    eps = {"double": 1e-16, "mixed": 6e-8, "single": 6e-8}[precision]
    for method in ("QR", "Cholesky", "Gauss"):
        x, info = openmmdft.solveLeastSquares(A, b, method=method, platform=platformName,
                                              precision=None if platformName == "Reference" else precision, fullOutput=True)
        bound = 100 * (10.0 if method == "QR" else 100.0) * eps
        assert np.linalg.norm(x - reference) <= bound * np.linalg.norm(reference) + 1e-12, method
        # GPU platforms report the device memory of the solve (at least A); Reference/CPU work in host memory.
        if platformName == "Reference":
            assert info["deviceMemoryBytes"] == 0
        else:
            assert info["deviceMemoryBytes"] >= A.size * (8 if precision == "double" else 4)


@pytest.mark.parametrize("platformName", [p for p in PLATFORMS if p not in ("Reference", "CPU")] or ["Reference"])
@pytest.mark.parametrize("precision", ["double", "mixed", "single"])
def test_gpu_platforms_constrained(platformName, precision):
    """A total-charge-like constraint on every method, against elimination solved by numpy."""
    if platformName == "Reference" and precision != "double":
        pytest.skip("Reference is double precision only")
    A, b = problem(120, 70, 10.0, seed=8)  # n = 70 crosses the 64-column panel of the GPU factorizations
    C, d = np.ones((1, 70)), np.array([0.5])
    reduced = A[:, :69] - A[:, [69]]
    y = np.linalg.lstsq(reduced, b - 0.5 * A[:, 69], rcond=None)[0]
    expected = np.append(y, 0.5 - y.sum())
    eps = {"double": 2.2e-16, "mixed": 1.2e-7, "single": 1.2e-7}[precision]
    for method in ("QR", "Cholesky", "Gauss", "GaussSeidel"):
        tolerance = 1e-5 if precision == "single" else 1e-11
        x, info = openmmdft.solveLeastSquares(A, b, method=method, platform=platformName, constraints=(C, d), tolerance=tolerance,
                                              precision=None if platformName == "Reference" else precision, fullOutput=True)
        # The range-space method forms (A^T A)^-1 C^T, so every method gets the normal-equation bound; Gauss-Seidel
        # stops at |A^T r| <= tolerance |A^T b|, which leaves up to cond^2 tolerance in x.
        bound = 100 * 10.0**2 * eps + (10 * 10.0**2 * tolerance if method == "GaussSeidel" else 0.0)
        assert np.linalg.norm(x - expected) <= bound * np.linalg.norm(expected) + 1e-10, method
        assert x.sum() == pytest.approx(0.5, abs=100 * eps * np.abs(x).sum()), method
        assert info["lagrangeMultipliers"].shape == (1, 1)


def test_sum_constraint_matches_elimination():
    A, b = problem(40, 5, 10.0, seed=5)
    C, d = np.ones((1, 5)), np.array([1.0])
    x, info = openmmdft.solveLeastSquares(A, b, constraints=(C, d), fullOutput=True)
    # Independent: eliminate x_4 = 1 - sum(x_0..3) and solve the reduced problem with numpy.
    reduced = A[:, :4] - A[:, [4]]
    y = np.linalg.lstsq(reduced, b - A[:, 4], rcond=None)[0]
    expected = np.append(y, 1 - y.sum())
    assert np.allclose(x, expected, atol=1e-12)
    assert x.sum() == pytest.approx(1.0, abs=1e-13)
    assert info["lagrangeMultipliers"].shape == (1, 1)


def test_bad_input_is_reported():
    with pytest.raises(mm.OpenMMException, match="m < n|fewer rows|rows"):
        openmmdft.solveLeastSquares(np.ones((2, 3)), np.ones(2))
    with pytest.raises(mm.OpenMMException, match="rows"):
        openmmdft.solveLeastSquares(np.ones((4, 2)), np.ones(3))
    A = np.eye(3)
    A[1, 1] = np.nan
    with pytest.raises(mm.OpenMMException, match="NaN|finite"):
        openmmdft.solveLeastSquares(A, np.ones(3))
    rankDeficient = np.ones((5, 2))
    with pytest.raises(mm.OpenMMException, match="rank|singular|condition"):
        openmmdft.solveLeastSquares(rankDeficient, np.arange(5.0))
    x, info = openmmdft.solveLeastSquares(rankDeficient, np.arange(5.0), allowRankDeficient=True, fullOutput=True)
    assert info["rankDeficient"] and info["rank"] == 1
    assert np.allclose(x, np.linalg.lstsq(rankDeficient, np.arange(5.0), rcond=None)[0])


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_extreme_scales(method, scale):
    """A and b scaled by 1e+-300 (A^T A overflows or underflows if formed as given): the scaled problem's solution
    (numpy's gelsd scales internally) and a finite residual norm, computed here in numpy.longdouble."""
    cond = 10.0
    A, b = problem(60, 8, cond, seed=11)
    As, bs = A * scale, b * scale
    x, info = openmmdft.solveLeastSquares(As, bs, method=method, tolerance=1e-12, fullOutput=True)
    reference = np.linalg.lstsq(As, bs, rcond=None)[0]
    eps = np.finfo(float).eps
    bound = {"QR": 100 * cond * eps, "GaussSeidel": 10 * cond**2 * 1e-12}.get(method, 100 * cond**2 * eps)
    assert np.linalg.norm(x - reference) <= bound * np.linalg.norm(reference)
    residual = As.astype(np.longdouble) @ x.astype(np.longdouble) - bs.astype(np.longdouble)
    exact = float(np.sqrt(np.sum(residual * residual)))
    assert np.isfinite(info["residualNorm"]) and info["residualNorm"] == pytest.approx(exact, rel=1e-10)
    assert np.isfinite(info["conditionEstimate"])


@pytest.mark.parametrize("method", METHODS)
def test_solution_beyond_double_range_is_an_error(method):
    A, b = problem(60, 8, 10.0, seed=12)
    with pytest.raises(mm.OpenMMException, match="solution is not finite"):
        openmmdft.solveLeastSquares(A * 1e-300, b * 1e300, method=method, tolerance=1e-12)


@pytest.mark.parametrize("platformName", ["Reference", "CPU"] + [p for p in PLATFORMS if p == "OpenCL"])
def test_gauss_seidel_refuses_a_rank_deficient_problem(platformName):
    # Gauss-Seidel sweeps converge for a singular A^T A too, to one of many solutions; the rank is checked as
    # Cholesky checks it (a repeated column makes A rank deficient), with and without a constraint.
    precision = "double" if platformName == "OpenCL" else None
    rng = np.random.default_rng(0)
    A = rng.normal(size=(6, 2))
    A = np.c_[A, A[:, 0]]
    b = rng.normal(size=6)
    with pytest.raises(mm.OpenMMException, match="singular|positive definite"):
        openmmdft.solveLeastSquares(A, b, method="GaussSeidel", platform=platformName, precision=precision)
    if platformName != "OpenCL":  # the GPU platforms need A itself of full rank with constraints (documented)
        with pytest.raises(mm.OpenMMException, match="singular|positive definite"):
            openmmdft.solveLeastSquares(np.c_[A, rng.normal(size=6)], b, method="GaussSeidel", platform=platformName,
                                        constraints=(np.array([[0.0, 0.0, 0.0, 1.0]]), [0.5]))
    # A full-rank problem of the same shape still solves, to numpy's answer.
    A[:, 2] += 0.5 * rng.normal(size=6)
    x = openmmdft.solveLeastSquares(A, b, method="GaussSeidel", platform=platformName, precision=precision, tolerance=1e-13)
    assert np.allclose(x, np.linalg.lstsq(A, b, rcond=None)[0], atol=1e-8)


@pytest.mark.parametrize("method", ["Gauss", "Cholesky", "GaussSeidel"])
def test_minimum_norm_solution_needs_qr(method):
    with pytest.raises(mm.OpenMMException, match="allowRankDeficient.*needs method QR"):
        openmmdft.solveLeastSquares(np.ones((5, 2)), np.arange(5.0), method=method, allowRankDeficient=True)


def test_empty_constraint_set_is_the_unconstrained_problem():
    rng = np.random.default_rng(1)
    A, b = rng.normal(size=(6, 3)), rng.normal(size=6)
    x = openmmdft.solveLeastSquares(A, b, constraints=(np.zeros((0, 3)), np.zeros(0)))
    assert np.array_equal(x, openmmdft.solveLeastSquares(A, b))
    with pytest.raises(mm.OpenMMException, match="d has 3 values"):
        openmmdft.solveLeastSquares(A, b, constraints=(np.ones((2, 3)), np.ones(3)))
