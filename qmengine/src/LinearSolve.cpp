#include "openmmdft/qm/LinearSolve.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include <openmm/OpenMMException.h>

namespace OpenMMDFT {
namespace QM {

struct SymmetricPositiveDefiniteSolver::Impl {
    Eigen::LLT<Eigen::MatrixXd> llt;
    Eigen::MatrixXd inverse;  // from an installed NormalEquationSolver
    const Eigen::MatrixXd* matrix = nullptr;  // A itself, for one step of iterative refinement (the caller's)
    bool useInverse = false;
    int threads = 1;
    /** X = A^-1 B refined once: an explicit inverse alone loses about cond(A) eps, the refinement
     *  brings the error back to the level of a Cholesky solve. */
    Eigen::MatrixXd apply(const Eigen::MatrixXd& B) const {
        Eigen::MatrixXd X = inverse * B;
        X += inverse * (B - *matrix * X);
        return X;
    }
    /** The same for one right-hand side; A and A^-1 are symmetric, so their columns give the products. */
    Eigen::VectorXd apply(const Eigen::VectorXd& b) const {
        Eigen::VectorXd x = streamedTransposeProduct(inverse, b, threads);
        x += streamedTransposeProduct(inverse, b - streamedTransposeProduct(*matrix, x, threads), threads);
        return x;
    }
};

SymmetricPositiveDefiniteSolver::SymmetricPositiveDefiniteSolver(const Eigen::MatrixXd& A, const NormalEquationSolver& solver, int threads)
    : impl_(new Impl) {
    impl_->threads = threads;
    if (A.rows() != A.cols())
        throw OpenMM::OpenMMException("QM: solveSymmetricPositiveDefinite needs a square matrix");
    if (solver) {
        // One solve with the identity as right-hand sides; each SCF iteration is then a product.
        impl_->inverse = Eigen::MatrixXd::Identity(A.rows(), A.cols());
        solver(A, impl_->inverse);
        impl_->matrix = &A;
        impl_->useInverse = true;
        return;
    }
    impl_->llt.compute(A);
    if (impl_->llt.info() != Eigen::Success)
        throw OpenMM::OpenMMException("QM: matrix is not positive definite (Cholesky factorization failed; "
                                      "is the auxiliary basis linearly dependent?)");
}

SymmetricPositiveDefiniteSolver::~SymmetricPositiveDefiniteSolver() = default;

void SymmetricPositiveDefiniteSolver::solveInPlace(Eigen::MatrixXd& B) const {
    if (impl_->useInverse)
        B = impl_->apply(B);
    else
        impl_->llt.solveInPlace(B);
}

Eigen::VectorXd SymmetricPositiveDefiniteSolver::solve(const Eigen::VectorXd& b) const {
    if (impl_->useInverse)
        return impl_->apply(b);
    return impl_->llt.solve(b);
}

const Eigen::MatrixXd* SymmetricPositiveDefiniteSolver::inverse() const {
    return impl_->useInverse ? &impl_->inverse : nullptr;
}

void solveSymmetricPositiveDefinite(const Eigen::MatrixXd& A, Eigen::MatrixXd& B) {
    SymmetricPositiveDefiniteSolver(A).solveInPlace(B);
}

} // namespace QM
} // namespace OpenMMDFT
