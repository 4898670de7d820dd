#include "OrbitalRotation.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include <algorithm>
#include <cmath>
#include <limits>

namespace OpenMMDFT {
namespace QM {

namespace {
/// Fixed-point steps of the Riccati equation before giving up: each step shrinks the residual by about the ratio of
/// the off-diagonal elements of G_oo and G_vv to the gap, far below 1/2 near a solution.
constexpr int MAX_RICCATI_STEPS = 50;

/// ((1 + l)^-1/2 - 1) / l, with its series where the quotient would cancel.
double inverseSqrtRemainder(double l) {
    l = std::max(l, 0.0);  // t^T t is positive semidefinite; rounding may make an eigenvalue -1e-17
    if (l < 1e-3)
        return -0.5 + l * (0.375 - l * 0.3125);
    return (1.0 / std::sqrt(1.0 + l) - 1.0) / l;
}
} // namespace

Eigen::MatrixXd rotateOccupiedVirtual(const Eigen::MatrixXd& C, int nOccupied, const Eigen::MatrixXd& t,
                                      const MatrixProducts* products) {
    const int no = nOccupied, nv = (int) C.cols() - nOccupied;
    const Eigen::MatrixXd occupied = C.leftCols(no), virtuals = C.rightCols(nv);
    Eigen::VectorXd lambda;
    Eigen::MatrixXd V;
    symmetricEigensystem(productOn(products, t, true, t, false), lambda, V);
    Eigen::VectorXd inverseSqrt(no), remainder(no);
    for (int k = 0; k < no; k++) {
        inverseSqrt[k] = 1.0 / std::sqrt(1.0 + std::max(lambda[k], 0.0));
        remainder[k] = inverseSqrtRemainder(lambda[k]);
    }
    const Eigen::MatrixXd occupiedMetric = V * inverseSqrt.asDiagonal() * V.transpose();  // (1 + t^T t)^-1/2
    const Eigen::MatrixXd K = V * remainder.asDiagonal() * V.transpose();
    Eigen::MatrixXd rotated(C.rows(), C.cols());
    rotated.leftCols(no) = productOn(products, occupied + productOn(products, virtuals, false, t, false), false, occupiedMetric, false);
    const Eigen::MatrixXd turned = virtuals - productOn(products, occupied, false, t, true);
    rotated.rightCols(nv) = turned + productOn(products, productOn(products, turned, false, t, false), false,
                                               productOn(products, K, false, t, true), false);
    return rotated;
}

bool blockDiagonalize(const Eigen::MatrixXd& F, const Eigen::MatrixXd& C, int nOccupied, double tolerance, double maxRotation,
                      BlockDiagonalization& out, const MatrixProducts* products) {
    const int no = nOccupied, nv = (int) C.cols() - nOccupied;
    if (no <= 0 || nv <= 0)
        return false;
    const Eigen::MatrixXd G = congruenceOn(products, F, C);
    const Eigen::MatrixXd Goo = G.topLeftCorner(no, no), Gvv = G.bottomRightCorner(nv, nv), Gvo = G.bottomLeftCorner(nv, no);
    const Eigen::VectorXd eo = Goo.diagonal(), ev = Gvv.diagonal();
    if (!(ev.minCoeff() > eo.maxCoeff()))
        return false;
    Eigen::MatrixXd gaps(nv, no);
    for (int i = 0; i < no; i++)
        gaps.col(i) = ev.array() - eo[i];
    Eigen::MatrixXd t = Eigen::MatrixXd::Zero(nv, no);
    double previous = std::numeric_limits<double>::infinity();
    int steps = 0;
    for (;; steps++) {
        // The occupied-virtual block of F in the orbitals C_o + C_v t and C_v - C_o t^T (before orthonormalizing).
        Eigen::MatrixXd residual = Gvo;
        if (steps > 0)
            residual += productOn(products, Gvv, false, t, false) -
                        productOn(products, t, false, Goo + productOn(products, Gvo, true, t, false), false);
        const double largest = residual.cwiseAbs().maxCoeff();
        if (!std::isfinite(largest))
            return false;
        if (largest <= tolerance)
            break;
        if (steps == MAX_RICCATI_STEPS || largest > 0.5 * previous)
            return false;
        previous = largest;
        t -= residual.cwiseQuotient(gaps);
        if (!(t.cwiseAbs().maxCoeff() <= maxRotation))
            return false;
    }
    out.orbitals = rotateOccupiedVirtual(C, no, t, products);
    out.energies.resize(no + nv);
    out.energies << eo, ev;
    out.steps = steps;
    out.largestRotation = t.cwiseAbs().maxCoeff();
    return true;
}

} // namespace QM
} // namespace OpenMMDFT
