#include "openmmdft/qm/DIIS.h"
#include <cmath>

namespace OpenMMDFT {
namespace QM {

Eigen::MatrixXd DIIS::extrapolate(const Eigen::MatrixXd& fock, const Eigen::MatrixXd& error) {
    if (size_ < 2)
        return fock;
    focks_.push_back(fock);
    errors_.push_back(error);
    while ((int) focks_.size() > size_) {
        focks_.pop_front();
        errors_.pop_front();
    }
    const int n = (int) focks_.size();
    if (n < 2)
        return fock;
    // Minimize |sum c_i e_i| with sum c_i = 1 (Lagrange multiplier in the last row);
    // the error products are scaled by the largest diagonal for conditioning.
    Eigen::MatrixXd B = Eigen::MatrixXd::Zero(n + 1, n + 1);
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            B(i, j) = B(j, i) = errors_[i].cwiseProduct(errors_[j]).sum();
    const double scale = B.diagonal().head(n).maxCoeff();
    if (!(scale > 0))
        return fock;
    B.topLeftCorner(n, n) /= scale;
    B.row(n).head(n).setConstant(-1);
    B.col(n).head(n).setConstant(-1);
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero(n + 1);
    rhs[n] = -1;
    const Eigen::VectorXd c = B.fullPivLu().solve(rhs);
    if (!c.allFinite())
        return fock;
    Eigen::MatrixXd f = Eigen::MatrixXd::Zero(fock.rows(), fock.cols());
    for (int i = 0; i < n; i++)
        f += c[i] * focks_[i];
    return f;
}

} // namespace QM
} // namespace OpenMMDFT
