#pragma once
// The one dense linear-algebra entry point the density fitting needs. It is kept
// in its own file so that the plugin can route it through its least-squares kernel.
#include <Eigen/Dense>
#include <functional>
#include <memory>

namespace OpenMMDFT {
namespace QM {

/// Solves the normal equations A X = B of a fit (A symmetric positive definite, B overwritten by X).
using NormalEquationSolver = std::function<void(const Eigen::MatrixXd& A, Eigen::MatrixXd& B)>;

/// While one of these lives, SymmetricPositiveDefiniteSolver (the density-fitting metric solve) in
/// this thread goes through `solver` instead of Eigen's Cholesky: the plugin installs its
/// least-squares kernel this way around each QM computation. Scopes nest; the previous is restored.
class ScopedNormalEquationSolver {
public:
    explicit ScopedNormalEquationSolver(NormalEquationSolver solver);
    ~ScopedNormalEquationSolver();
    ScopedNormalEquationSolver(const ScopedNormalEquationSolver&) = delete;
    ScopedNormalEquationSolver& operator=(const ScopedNormalEquationSolver&) = delete;
    /// The solver installed in this thread (empty if none).
    static const NormalEquationSolver& current();
private:
    NormalEquationSolver previous_;
};

/// Solve A X = B for symmetric positive definite A (n x n); B (n x nrhs) is overwritten by X.
/// Throws OpenMMException if A is not positive definite.
void solveSymmetricPositiveDefinite(const Eigen::MatrixXd& A, Eigen::MatrixXd& B);

/// The same, with the factorization of A kept for many right-hand sides (one SCF). With an
/// installed NormalEquationSolver, A^-1 is obtained from it once and applied to each right-hand side,
/// with one step of iterative refinement.
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
