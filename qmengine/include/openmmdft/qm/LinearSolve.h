#pragma once
// The one dense linear-algebra entry point the density fitting needs. It is kept
// in its own file so that the plugin can route it through its least-squares kernel.
#include <Eigen/Dense>
#include <memory>

namespace OpenMMDFT {
namespace QM {

/// Solve A X = B for symmetric positive definite A (n x n); B (n x nrhs) is overwritten by X.
/// Throws OpenMMException if A is not positive definite.
void solveSymmetricPositiveDefinite(const Eigen::MatrixXd& A, Eigen::MatrixXd& B);

/// The same, with the factorization of A kept for many right-hand sides (one SCF).
class SymmetricPositiveDefiniteSolver {
public:
    explicit SymmetricPositiveDefiniteSolver(const Eigen::MatrixXd& A);
    ~SymmetricPositiveDefiniteSolver();
    void solveInPlace(Eigen::MatrixXd& B) const;
    Eigen::VectorXd solve(const Eigen::VectorXd& b) const;
private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};

} // namespace QM
} // namespace OpenMMDFT
