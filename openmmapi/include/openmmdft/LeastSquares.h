#ifndef OPENMMDFT_LEASTSQUARES_H_
#define OPENMMDFT_LEASTSQUARES_H_

/*
 * Dense linear least squares, min ||A x - b||_2, as a platform kernel of openmm-dft.
 * Used by the QM engine (density-fitting metric, ESP charges) and callable
 * on its own.
 *
 * Layout: every matrix crosses this API as a std::vector<double> in ROW-MAJOR order
 * (C order, what numpy.ascontiguousarray gives):
 *   A  m x n      A(i,j)  = A[i*n + j]
 *   b  m x nrhs   b(i,k)  = b[i*nrhs + k]     (nrhs = 1: a plain vector of length m)
 *   C  p x n      C(r,j)  = C[r*n + j]        (optional equality constraints C x = d)
 *   d  p x nrhs   d(r,k)  = d[r*nrhs + k]
 *   x  n x nrhs   x(j,k)  = result.x[j*nrhs + k]
 *
 * Methods (LeastSquaresMethod):
 *   QR          Householder QR of A (no normal equations); error ~ cond(A)*eps. The default.
 *   Gauss       normal equations A^T A x = A^T b, LU with partial pivoting; error ~ cond(A)^2*eps.
 *   Cholesky    normal equations, Cholesky factorization; error ~ cond(A)^2*eps.
 *   GaussSeidel normal equations, Gauss-Seidel (SOR with relaxation=1) sweeps until
 *               ||A^T(b - A x)||_2 <= tolerance * ||A^T b||_2 for every right-hand side.
 *
 * Constraints C x = d (p x n, p <= n, C of full row rank):
 *   Gauss       bordered KKT system [A^T A  C^T; C  0][x; lambda] = [A^T b; d], LU with pivoting;
 *   Cholesky    the same KKT system by block elimination (range space: Cholesky of A^T A,
 *               then Cholesky of the Schur complement C (A^T A)^-1 C^T);
 *   GaussSeidel null-space reduction (QR of C^T) of the normal equations, then Gauss-Seidel;
 *   QR          null-space method: x = x_p + Z y with Z an orthonormal basis of null(C),
 *               y from the Householder QR of A Z.
 *   These are the Reference/CPU (LAPACK) methods. The OpenCL/CUDA platforms use one range-space
 *   method for every method instead: the factorization of A^T A (R^T R for QR) is applied to
 *   [A^T b | C^T] on the device, and the p x p Schur complement C (A^T A)^-1 C^T is solved on the
 *   host; this needs A itself of full column rank (m >= n; an error says so otherwise).
 *   The Lagrange multipliers lambda (p x nrhs, row-major) satisfy
 *   A^T (A x - b) + C^T lambda = 0, i.e. they belong to the Lagrangian
 *   1/2 ||A x - b||^2 + lambda^T (C x - d).
 *
 * Rank deficiency (decision, see docs): by default a numerically rank-deficient problem is an
 * error. QR estimates rcond(A) = 1/cond_1(A) from R (LAPACK dtrcon-style estimate); if it is below
 * rankTolerance (default max(m,n)*eps of the working precision) an OpenMMException says so,
 * with the estimate. With allowRankDeficient = true and method QR, the minimum-norm solution is
 * returned instead (column-pivoted QR / complete orthogonal factorization, LAPACK dgelsy-style),
 * with result.rankDeficient = true and result.rank < n (Reference and CPU platforms; OpenCL and CUDA
 * refuse allowRankDeficient with an error that says so). The normal-equation methods (Gauss,
 * Cholesky) always raise an error when A^T A is singular to working precision (estimated
 * rcond_1(A^T A) below eps, or the Cholesky factorization breaks down), naming cond(A^T A); a
 * cond(A) of about 1e8 already makes A^T A singular in double precision. Gauss-Seidel, whose sweeps
 * would converge to one of many solutions of a singular system, checks the rank the same way (a Cholesky
 * factorization of a copy of A^T A, O(n^3/3)) before sweeping, and reports non-convergence (or a zero
 * column of A). allowRankDeficient with another method than QR is an error.
 *
 * Scale: any finite data are accepted, 1e300 or 1e-300 alike. Before a platform sees the problem it is
 * scaled by powers of two (exactly: A' = 2^(alpha+xi) A, b' = 2^alpha b, C' = 2^(gamma+xi) C, d' = 2^gamma d,
 * x = 2^xi x'), so that the largest element of A and of C is in [1/2, 1) and b and d are at most 1; A^T A can
 * then neither overflow nor underflow, in double or in float. The answer is unscaled exactly, so an ordinary
 * problem gives bit for bit what it would unscaled, and the condition estimate, the rank tolerance and the
 * Gauss-Seidel stopping rule, all relative, are unchanged. Scaling is uniform (not per column): column scaling
 * would change cond(A), and with it what rankTolerance means.
 *
 * Errors: OpenMMException naming the problem for m < n (m + p < n with constraints), sizes that do
 * not match m, n, nrhs, p, NaN or Inf in A, b, C or d, rank deficiency (above), constraint
 * rows that are linearly dependent, a zero column of A (Gauss-Seidel), Gauss-Seidel that does
 * not converge within maxIterations, a platform that lacks the kernel, and a result that is not finite:
 * every solve checks that x, the residual norms, the Lagrange multipliers and the condition estimate are
 * finite ("the solution is not finite ..."), which happens when the answer itself lies beyond the double
 * range (e.g. A ~ 1e-300 with b ~ 1e300 gives x ~ 1e600; A and b ~ 1e300 with C ~ 1 gives multipliers ~ 1e600).
 * The condition estimate may be infinite only for the minimum-norm solution (allowRankDeficient).
 *
 * Precision: Reference and CPU always compute in double (LAPACK/OpenBLAS). The OpenCL/CUDA
 * kernels follow the platform's Precision property (single: float; mixed: float storage and
 * double accumulation of A^T A and A^T b; double). residualNorms are always recomputed in
 * double precision on the host from the caller's A and b (in their power-of-two scaled form, so that
 * no square overflows or underflows; the norm is unscaled exactly).
 */

#include "openmmdft/internal/windowsExportDFT.h"
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace OpenMM {
class Platform;
class Context;
class ContextImpl;
class System;
class Integrator;
class Kernel;
} // namespace OpenMM

namespace OpenMMDFT {

enum class LeastSquaresMethod {
    Gauss = 0,
    Cholesky = 1,
    GaussSeidel = 2,
    QR = 3
};

/** The method's name ("Gauss", "Cholesky", "GaussSeidel", "QR"). */
OPENMM_EXPORT_DFT std::string leastSquaresMethodName(LeastSquaresMethod method);
/** Parse a method name, case-insensitively ("gauss-seidel" and "gauss_seidel" are accepted); throws on an unknown name. */
OPENMM_EXPORT_DFT LeastSquaresMethod leastSquaresMethodFromName(const std::string& name);

struct OPENMM_EXPORT_DFT LeastSquaresOptions {
    LeastSquaresMethod method = LeastSquaresMethod::QR;
    /** Gauss-Seidel: stop when ||A^T(b - A x)||_2 <= tolerance * ||A^T b||_2 (each right-hand side). */
    double tolerance = 1e-10;
    /** Gauss-Seidel: the most sweeps before non-convergence is reported as an error. */
    int maxIterations = 10000;
    /** Gauss-Seidel: relaxation factor omega in (0, 2); 1 is plain Gauss-Seidel, other values give SOR. */
    double relaxation = 1.0;
    /** Gauss-Seidel: starting point, n x nrhs row-major; empty means zero. */
    std::vector<double> initialGuess;
    /**
     * Threshold on the estimated reciprocal condition number: rcond(A) for QR, rcond(A^T A) for
     * Gauss and Cholesky. 0 (the default) means max(m,n)*eps for QR and eps for the normal
     * equations, eps being the working precision's machine epsilon.
     */
    double rankTolerance = 0.0;
    /** QR only: return the minimum-norm solution of a rank-deficient problem instead of raising an error. */
    bool allowRankDeficient = false;
    /**
     * The caller already has the normal equations: A is the n x n symmetric positive definite
     * normal matrix (m = n) and b its right-hand side, and they are solved as they are (Cholesky,
     * Gauss or Gauss-Seidel; no constraints). Density fitting is such a fit: its normal matrix is
     * the Coulomb metric (P|Q). Every platform.
     */
    bool normalEquationsGiven = false;
    /**
     * Recompute ||A x_k - b_k|| in double for every right-hand side (O(m n nrhs)). Callers that
     * solve for many right-hand sides and check the result themselves (e.g. an inverse of the
     * density-fitting metric) may switch it off; residualNorms is then empty.
     */
    bool computeResidualNorms = true;
    /**
     * Profiling: wall-clock seconds of the solve's phases in LeastSquaresResult::phaseSeconds (GPU platforms, the
     * normal-equation methods: "upload", "normalEquations", "factorization", "conditionEstimate", "solves",
     * "download"). The device is synchronized after each phase, which costs a little time.
     */
    bool timePhases = false;
};

struct OPENMM_EXPORT_DFT LeastSquaresResult {
    int n = 0, nrhs = 0, numConstraints = 0;
    /** The solution, n x nrhs, row-major: x(j,k) = x[j*nrhs + k]. */
    std::vector<double> x;
    /** ||A x_k - b_k||_2 for each right-hand side k, computed in double precision from the caller's A and b (scaled exactly, see Scale). */
    std::vector<double> residualNorms;
    /** With constraints: the Lagrange multipliers, p x nrhs row-major (see above). Empty otherwise. */
    std::vector<double> lagrangeMultipliers;
    /** Gauss-Seidel: sweeps used (the largest over the right-hand sides). 0 for the direct methods. */
    int iterations = 0;
    /** Gauss-Seidel: final relative normal-equation residual ||A^T(b-Ax)||/||A^T b|| (largest over right-hand sides). */
    double relativeNormalResidual = 0.0;
    /** Numerical rank of A (of A Z with constraints): n (n - p) unless rankDeficient. */
    int rank = 0;
    /** True only when allowRankDeficient was set and the minimum-norm solution was returned. */
    bool rankDeficient = false;
    /** Estimated condition number (1-norm): of A (QR), of A^T A (Gauss, Cholesky); 0 when not estimated (Gauss-Seidel). */
    double conditionEstimate = 0.0;
    LeastSquaresMethod method = LeastSquaresMethod::QR;
    /** With LeastSquaresOptions::timePhases: seconds per phase of the solve (empty otherwise). */
    std::map<std::string, double> phaseSeconds;
    /**
     * Device memory (bytes) the solve allocated on a GPU platform, all freed when it returns (the sum of its
     * arrays, an upper bound of the peak). 0 on Reference and CPU, which work in host memory.
     */
    long long deviceMemoryBytes = 0;
    /** The platform that solved it and its precision ("double", "mixed" or "single"). */
    std::string platformName, precision;
};

/**
 * A least-squares solver bound to a platform. It owns a minimal private Context (one particle,
 * no forces) only to obtain the platform's kernel; reuse one solver for many solves to pay the
 * Context creation (and, on OpenCL/CUDA, kernel compilation) once.
 */
class OPENMM_EXPORT_DFT LeastSquaresSolver {
public:
    /** Create a solver on a platform; properties are Platform properties (e.g. {"Precision", "double"}). */
    explicit LeastSquaresSolver(OpenMM::Platform& platform, const std::map<std::string, std::string>& properties = {});
    /** Create a solver that runs in an existing Context (used inside the plugin, e.g. by QMMMForceImpl). */
    explicit LeastSquaresSolver(OpenMM::ContextImpl& context);
    ~LeastSquaresSolver();
    LeastSquaresSolver(const LeastSquaresSolver&) = delete;
    LeastSquaresSolver& operator=(const LeastSquaresSolver&) = delete;
    /** min ||A x - b||_2; layouts as documented at the top of this header. */
    LeastSquaresResult solve(int m, int n, int nrhs, const std::vector<double>& A, const std::vector<double>& b,
                             const LeastSquaresOptions& options = LeastSquaresOptions());
    /** min ||A x - b||_2 subject to C x = d (p constraints). */
    LeastSquaresResult solveConstrained(int m, int n, int nrhs, const std::vector<double>& A, const std::vector<double>& b,
                                        int p, const std::vector<double>& C, const std::vector<double>& d,
                                        const LeastSquaresOptions& options = LeastSquaresOptions());
    /**
     * The inverse of a given n x n symmetric positive definite matrix G (row-major, which for a symmetric matrix is
     * column-major too), by Cholesky: what the density fitting asks of its Coulomb metric. The same checks, scaling
     * and result as solve() with normalEquationsGiven, method Cholesky and the identity as the n right-hand sides
     * (options.method must be Cholesky; rankTolerance and timePhases apply), without that path's passes over an
     * n x n right-hand side: on a host those copies cost several times LAPACK's own time for n ~ 1700. The same bits
     * as that solve, except that a subnormal element of the inverse may differ in its last place (the solve rounds
     * once more there). result.x holds G^-1.
     */
    LeastSquaresResult invertSymmetricPositiveDefinite(int n, const std::vector<double>& G, const LeastSquaresOptions& options);
    /** The same with the default options of a Cholesky solve. */
    LeastSquaresResult invertSymmetricPositiveDefinite(int n, const std::vector<double>& G);
    /** The name of the platform the solver runs on. */
    std::string getPlatformName() const;
private:
    void createKernel(OpenMM::ContextImpl& context);
    std::unique_ptr<OpenMM::System> system;
    std::unique_ptr<OpenMM::Integrator> integrator;
    std::unique_ptr<OpenMM::Context> context;
    std::unique_ptr<OpenMM::Kernel> kernel;
    std::string platformName;
};

/** One-shot entry point: min ||A x - b||_2 on the given platform (creates a LeastSquaresSolver). */
OPENMM_EXPORT_DFT LeastSquaresResult solveLeastSquares(OpenMM::Platform& platform, int m, int n, int nrhs,
                                                       const std::vector<double>& A, const std::vector<double>& b,
                                                       const LeastSquaresOptions& options = LeastSquaresOptions(),
                                                       const std::map<std::string, std::string>& platformProperties = {});

/** One-shot entry point with linear equality constraints C x = d (C p x n, d p x nrhs, row-major). */
OPENMM_EXPORT_DFT LeastSquaresResult solveConstrainedLeastSquares(OpenMM::Platform& platform, int m, int n, int nrhs,
                                                                  const std::vector<double>& A, const std::vector<double>& b,
                                                                  int p, const std::vector<double>& C, const std::vector<double>& d,
                                                                  const LeastSquaresOptions& options = LeastSquaresOptions(),
                                                                  const std::map<std::string, std::string>& platformProperties = {});

} // namespace OpenMMDFT

#endif
