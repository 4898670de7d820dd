#include "openmmdft/qm/LinearSolve.h"
#include <openmm/OpenMMException.h>

namespace OpenMMDFT {
namespace QM {

struct SymmetricPositiveDefiniteSolver::Impl {
    Eigen::LLT<Eigen::MatrixXd> llt;
};

SymmetricPositiveDefiniteSolver::SymmetricPositiveDefiniteSolver(const Eigen::MatrixXd& A) : impl_(new Impl) {
    if (A.rows() != A.cols())
        throw OpenMM::OpenMMException("QM: solveSymmetricPositiveDefinite needs a square matrix");
    impl_->llt.compute(A);
    if (impl_->llt.info() != Eigen::Success)
        throw OpenMM::OpenMMException("QM: matrix is not positive definite (Cholesky factorization failed; "
                                      "is the auxiliary basis linearly dependent?)");
}

SymmetricPositiveDefiniteSolver::~SymmetricPositiveDefiniteSolver() = default;

void SymmetricPositiveDefiniteSolver::solveInPlace(Eigen::MatrixXd& B) const {
    impl_->llt.solveInPlace(B);
}

Eigen::VectorXd SymmetricPositiveDefiniteSolver::solve(const Eigen::VectorXd& b) const {
    return impl_->llt.solve(b);
}

void solveSymmetricPositiveDefinite(const Eigen::MatrixXd& A, Eigen::MatrixXd& B) {
    SymmetricPositiveDefiniteSolver(A).solveInPlace(B);
}

} // namespace QM
} // namespace OpenMMDFT
