#pragma once
// Pulay's direct inversion in the iterative subspace for Fock matrices.
#include <Eigen/Dense>
#include <deque>

namespace OpenMMDFT {
namespace QM {

class DIIS {
public:
    explicit DIIS(int subspaceSize) : size_(subspaceSize) {}
    /// Add a Fock matrix and its error (commutator in an orthonormal basis); returns the
    /// extrapolated Fock matrix (the input itself until two entries exist or if the
    /// subspace equations are singular).
    Eigen::MatrixXd extrapolate(const Eigen::MatrixXd& fock, const Eigen::MatrixXd& error);
    void reset() { focks_.clear(); errors_.clear(); }
private:
    int size_;
    std::deque<Eigen::MatrixXd> focks_, errors_;
};

} // namespace QM
} // namespace OpenMMDFT
