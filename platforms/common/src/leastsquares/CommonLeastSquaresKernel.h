#ifndef OPENMMDFT_COMMONLEASTSQUARESKERNEL_H_
#define OPENMMDFT_COMMONLEASTSQUARESKERNEL_H_

#include "openmmdft/LeastSquaresKernels.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeKernel.h"
#include "openmm/common/ComputeProgram.h"
#include <functional>
#include <vector>

namespace OpenMMDFT {

/**
 * Least squares on the GPU platforms (OpenCL, CUDA), written once against OpenMM's Compute API
 * (kernels in leastsquares/kernels/lsq*.cc). Blocked algorithms whose O(n^3) work is one tiled
 * matrix-product kernel (lsqGemm.cc), as LAPACK's are built on dgemm:
 *   QR          blocked Householder QR of [A | b] with compact WY updates (dgeqrf/dlarft/dlarfb), then R x = Q^T b;
 *   Cholesky    A^T A and A^T b by the tiled product (lower half only), blocked right-looking Cholesky, two triangular solves;
 *   Gauss       A^T A, blocked LU with partial pivoting (row swaps on the device), two triangular solves;
 *   GaussSeidel A^T A, Gauss-Seidel sweeps by one work group per right-hand side, residual checked every sweep.
 * normalEquationsGiven: the given n x n matrix and right-hand sides replace A^T A and A^T b.
 * Equality constraints C x = d: range-space method. The factorization of A^T A (R^T R for QR) is applied to
 * [A^T b | C^T] on the device, giving X0 and Y = (A^T A)^-1 C^T; the p x p Schur complement S = C Y, the
 * multipliers lambda = S^-1 (C X0 - d) and x = X0 - Y lambda are formed on the host in double (p is small).
 * This needs A itself of full column rank (m >= n), which the Reference/CPU null-space method does not.
 * Precision follows the platform: single = float everywhere; mixed = A and b rounded to float,
 * A^T A, A^T b, the factorizations and the solves in double ("double accumulation"); double = double.
 * The problem arrives scaled by powers of two (LeastSquaresSolver): the largest element of A is in [1/2, 1) and b is at
 * most 1, so A^T A cannot overflow even in float, whatever the caller's scale.
 * Condition checks: a non-positive Cholesky pivot, the spread of the Cholesky/LU pivots or of |R(j,j)|, and an
 * estimate of cond_2 (max_j ||a_j||^2 times ||(A^T A)^-1||_2 by three steps of power iteration with the
 * factorization, O(n^2) each; the square root of it for QR), all lower bounds of the condition number, against
 * the rank tolerance (default max(n,10)*eps for A^T A and max(m,n)*eps for A, eps of float in single and
 * mixed, of double in double). Every check fails closed: a NaN or Inf pivot or estimate is an error.
 * Device memory: A^T (m n, storage type), b, A^T A (n^2) and A^T b for the normal equations; [A | b]
 * (m (n + nrhs)) and 64-column work arrays for QR; all freed when the solve returns. The total is reported
 * in LeastSquaresResult::deviceMemoryBytes.
 * Not available here (an OpenMMException says so; use Reference or CPU): the minimum-norm solution of a
 * rank-deficient problem (allowRankDeficient).
 */
class CommonSolveLeastSquaresKernel : public SolveLeastSquaresKernel {
public:
    CommonSolveLeastSquaresKernel(std::string name, const OpenMM::Platform& platform, OpenMM::ComputeContext& cc)
        : SolveLeastSquaresKernel(name, platform), cc(cc), accDouble(false), storeDouble(false) {
    }
    void initialize() override;
    void solve(const LeastSquaresProblem& problem, const LeastSquaresOptions& options, LeastSquaresResult& result) override;
    /** The solve of G X = I, with errors that name the matrix to invert instead of A^T A. */
    void invertSymmetricPositiveDefinite(int n, std::vector<double>& G, const LeastSquaresOptions& options,
                                         LeastSquaresResult& result) override;
private:
    /** Solves for nrhs + p columns: x for b, then Y = (A^T A)^-1 C^T; column-major n x (nrhs + p), in double. */
    std::vector<double> solveNormal(const LeastSquaresProblem& problem, const LeastSquaresOptions& options, LeastSquaresResult& result);
    std::vector<double> solveQR(const LeastSquaresProblem& problem, const LeastSquaresOptions& options, LeastSquaresResult& result);
    void factorCholesky(OpenMM::ComputeArray& G, int n, const LeastSquaresOptions& options, LeastSquaresResult& result);
    void factorLU(OpenMM::ComputeArray& G, OpenMM::ComputeArray& H, OpenMM::ComputeArray& swaps, int n, int columns,
                  const LeastSquaresOptions& options, LeastSquaresResult& result);
    /** op(T) x = h in place for cols right-hand sides (lower or upper triangle of T, op = transpose if transposed); blocked.
     *  lowerTriangularRHS (forward solves only): column c of h is zero above row c, as in the identity, and those
     *  zeros are skipped. */
    void triangularSolve(int n, int cols, OpenMM::ComputeArray& T, int tOff, int ldt, bool lower, bool transposed, bool unitDiagonal,
                         OpenMM::ComputeArray& H, int hOff, int ldh, bool lowerTriangularRHS = false);
    /** ||M^-1||_2 of a symmetric M by power iteration, applyInverse(Z) overwriting Z (n x 1) with M^-1 Z. */
    double inverseNormEstimate(int n, const std::function<void(OpenMM::ComputeArray&)>& applyInverse);
    void gaussSeidel(OpenMM::ComputeArray& G, OpenMM::ComputeArray& H, OpenMM::ComputeArray& X, int n, int columns,
                     const LeastSquaresOptions& options, LeastSquaresResult& result);
    /** C = [C +] [-] opA(A) opB(B), column-major (see lsqGemm.cc); storeInput selects the kernel whose inputs are STORE. */
    void gemm(bool storeInput, int M, int N, int K, bool subtract, bool accumulate, OpenMM::ComputeArray& A, int aOff, int lda,
              bool transA, OpenMM::ComputeArray& B, int bOff, int ldb, bool transB, OpenMM::ComputeArray& C, int cOff, int ldc,
              bool lowerOnly);
    /** Create a device array and count its bytes into deviceBytes (what the solve reports). */
    void allocate(OpenMM::ComputeArray& array, size_t elements, int elementSize, const std::string& name);
    /** Create a device array of float or double elements holding data (converted from double). */
    void uploadNew(OpenMM::ComputeArray& array, const std::vector<double>& data, bool isDouble, const std::string& name);
    /** Bytes of one element of the accumulation type (ACC). */
    int accumulationSize() const {
        return accDouble ? sizeof(double) : sizeof(float);
    }
    /** Threshold on 1 / cond(A^T A) for the normal-equation methods: rankTolerance, else max(n, 10) eps. */
    double normalEquationTolerance(const LeastSquaresOptions& options, int n) const;
    /** Throws the error for a numerically singular A^T A (or matrix to invert, within invertSymmetricPositiveDefinite). */
    [[noreturn]] void singular(const LeastSquaresOptions& options, double conditionLowerBound, const std::string& how) const;
    bool invertingGivenMatrix = false;  // within invertSymmetricPositiveDefinite: the normal matrix is the caller's G
    OpenMM::ComputeContext& cc;
    OpenMM::ComputeProgram program;
    OpenMM::ComputeKernel gemmStore, gemmAcc;
    bool accDouble, storeDouble;
    size_t deviceBytes = 0;
    std::string precision;
    double eps;
};

} // namespace OpenMMDFT

#endif
