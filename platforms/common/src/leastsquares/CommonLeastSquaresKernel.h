#ifndef OPENMMDFT_COMMONLEASTSQUARESKERNEL_H_
#define OPENMMDFT_COMMONLEASTSQUARESKERNEL_H_

#include "openmmdft/LeastSquaresKernels.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeProgram.h"

namespace OpenMMDFT {

/**
 * Least squares on the GPU platforms (OpenCL, CUDA), written once against OpenMM's Compute API
 * (kernels in leastsquares/kernels/leastSquares.cc):
 *   QR          unblocked Householder QR of A on the device (one reflector per step), back substitution;
 *   Cholesky    A^T A and A^T b by tiled products, right-looking Cholesky, two triangular solves;
 *   Gauss       A^T A, LU with partial pivoting (row swaps on the device), back substitution;
 *   GaussSeidel A^T A, Gauss-Seidel sweeps by one work group per right-hand side, residual checked every sweep.
 * Precision follows the platform: single = float everywhere; mixed = A and b rounded to float,
 * A^T A, A^T b, the factorizations and the solves in double ("double accumulation"); double = double.
 * Condition checks are cheap on-device estimates: a non-positive Cholesky pivot, the spread of the
 * Cholesky/LU pivots or of |R(j,j)| (lower bounds of the condition number) against the rank tolerance
 * (default max(n,10)*eps for A^T A and max(m,n)*eps for A, eps of float in single and mixed, of double in double).
 * Not available here (OpenMMException that says so; use Reference or CPU): equality constraints and the
 * minimum-norm rank-deficient solution.
 */
class CommonSolveLeastSquaresKernel : public SolveLeastSquaresKernel {
public:
    CommonSolveLeastSquaresKernel(std::string name, const OpenMM::Platform& platform, OpenMM::ComputeContext& cc)
        : SolveLeastSquaresKernel(name, platform), cc(cc), accDouble(false), storeDouble(false) {
    }
    void initialize() override;
    void solve(const LeastSquaresProblem& problem, const LeastSquaresOptions& options, LeastSquaresResult& result) override;
private:
    void solveNormal(const LeastSquaresProblem& problem, const LeastSquaresOptions& options, LeastSquaresResult& result);
    void solveQR(const LeastSquaresProblem& problem, const LeastSquaresOptions& options, LeastSquaresResult& result);
    OpenMM::ComputeContext& cc;
    OpenMM::ComputeProgram program;
    bool accDouble, storeDouble;
    std::string precision;
    double eps;
};

} // namespace OpenMMDFT

#endif
