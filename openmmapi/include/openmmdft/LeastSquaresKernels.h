#ifndef OPENMMDFT_LEASTSQUARESKERNELS_H_
#define OPENMMDFT_LEASTSQUARESKERNELS_H_

#include "openmmdft/LeastSquares.h"
#include "openmm/KernelImpl.h"
#include "openmm/Platform.h"
#include <string>
#include <vector>

namespace OpenMMDFT {

/**
 * A least-squares problem as the kernels see it: already validated by LeastSquaresSolver
 * (sizes, m + p >= n, finite values, option ranges). All matrices are row-major, as
 * documented in LeastSquares.h; C and d are null when p == 0.
 */
struct LeastSquaresProblem {
    int m = 0, n = 0, nrhs = 0, p = 0;
    const double* A = nullptr;
    const double* b = nullptr;
    const double* C = nullptr;
    const double* d = nullptr;
};

/**
 * The platform kernel that solves dense least-squares problems. Each platform
 * provides one; LeastSquaresSolver drives it. The kernel fills x, lagrangeMultipliers (when
 * p > 0), iterations, relativeNormalResidual, rank, rankDeficient, conditionEstimate and
 * precision of the result; the solver fills the rest (residual norms, sizes, names).
 * Numerical failures (rank deficiency, non-convergence, ...) are reported by throwing
 * OpenMM::OpenMMException with a message that names the problem.
 */
class SolveLeastSquaresKernel : public OpenMM::KernelImpl {
public:
    static std::string Name() {
        return "SolveLeastSquares";
    }
    SolveLeastSquaresKernel(std::string name, const OpenMM::Platform& platform) : OpenMM::KernelImpl(name, platform) {
    }
    /** Called once after the kernel is created. */
    virtual void initialize() = 0;
    /** Solve one problem. */
    virtual void solve(const LeastSquaresProblem& problem, const LeastSquaresOptions& options, LeastSquaresResult& result) = 0;
    /**
     * result.x = G^-1 for a validated, scaled symmetric positive definite G (n x n), and its condition estimate. The
     * kernel may overwrite G or take its storage. By default the solve of G X = I (normalEquationsGiven, Cholesky); a
     * platform may invert directly. Either way its errors speak of "the matrix to invert", not of A^T A, and advise no
     * other method (the inverse is computed by Cholesky only).
     */
    virtual void invertSymmetricPositiveDefinite(int n, std::vector<double>& G, const LeastSquaresOptions& options,
                                                 LeastSquaresResult& result);
};

} // namespace OpenMMDFT

#endif
