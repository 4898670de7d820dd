#ifndef OPENMMDFT_REFERENCELEASTSQUARESKERNEL_H_
#define OPENMMDFT_REFERENCELEASTSQUARESKERNEL_H_

#include "openmmdft/LeastSquaresKernels.h"

namespace OpenMMDFT {

/**
 * Least squares on the Reference platform and every platform derived from it (CPU):
 * double precision through LAPACK/BLAS (OpenBLAS where installed, threaded by OpenBLAS):
 * QR = dgeqrf + dormqr + dtrtrs (dgelsy for the minimum-norm rank-deficient case),
 * Gauss = dsyrk + dgetrf/dgetrs (bordered KKT with constraints), Cholesky = dsyrk +
 * dpotrf/dpotrs (range-space block elimination with constraints), Gauss-Seidel = own sweeps
 * on the (null-space reduced) normal equations.
 */
class ReferenceSolveLeastSquaresKernel : public SolveLeastSquaresKernel {
public:
    ReferenceSolveLeastSquaresKernel(std::string name, const OpenMM::Platform& platform) : SolveLeastSquaresKernel(name, platform) {
    }
    void initialize() override {
    }
    void solve(const LeastSquaresProblem& problem, const LeastSquaresOptions& options, LeastSquaresResult& result) override;
    /** LAPACK's dpotrf, dpocon and dpotri in G's own storage (symmetric: its layout does not matter). */
    void invertSymmetricPositiveDefinite(int n, std::vector<double>& G, const LeastSquaresOptions& options,
                                         LeastSquaresResult& result) override;
};

} // namespace OpenMMDFT

#endif
