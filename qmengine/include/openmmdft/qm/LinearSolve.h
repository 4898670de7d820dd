#pragma once
// The one dense linear-algebra entry point the density fitting needs. It is kept
// in its own file so that the plugin can route it through its least-squares kernel
// (a NormalEquationSolver passed to KohnShamLDA, as the XC back end is).
#include <Eigen/Dense>
#include <functional>
#include <memory>

namespace OpenMMDFT {
namespace QM {

/// Solves the normal equations A X = B of a fit (A symmetric positive definite, B overwritten by X).
using NormalEquationSolver = std::function<void(const Eigen::MatrixXd& A, Eigen::MatrixXd& B)>;

/// Solve A X = B for symmetric positive definite A (n x n); B (n x nrhs) is overwritten by X.
/// Throws OpenMMException if A is not positive definite.
void solveSymmetricPositiveDefinite(const Eigen::MatrixXd& A, Eigen::MatrixXd& B);

/// The same, with the factorization of A kept for many right-hand sides (one SCF). With a
/// NormalEquationSolver given, A^-1 is obtained from it once and applied to each right-hand side,
/// with one step of iterative refinement (the products with one right-hand side on up to `threads`
/// threads, 0: all), for which the solver keeps a reference to A: A must outlive it (a density fitting's metric is
/// tens of MB, not copied); otherwise Eigen's Cholesky factorization is used.
class SymmetricPositiveDefiniteSolver {
public:
    explicit SymmetricPositiveDefiniteSolver(const Eigen::MatrixXd& A, const NormalEquationSolver& solver = NormalEquationSolver(),
                                             int threads = 1);
    ~SymmetricPositiveDefiniteSolver();
    void solveInPlace(Eigen::MatrixXd& B) const;
    Eigen::VectorXd solve(const Eigen::VectorXd& b) const;
    /// A^-1 when it came from a NormalEquationSolver (which the products may use elsewhere), else null.
    const Eigen::MatrixXd* inverse() const;
private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace QM
} // namespace OpenMMDFT
