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

/**
 * rotateOccupiedVirtual on orbitals held where `m` runs its products: C_o, C_v and the intermediates stay there, t and
 * the occupied x occupied factors go up, the two blocks of the result come down.
 */
Eigen::MatrixXd rotateHeld(const MatrixProducts& m, const Held& C, int nOccupied, const Eigen::MatrixXd& t) {
    const int n = C->rows(), no = nOccupied, nv = C->cols() - nOccupied;
    const Held occupied = m.block(C, 0, 0, n, no), virtuals = m.block(C, 0, no, n, nv), amplitudes = m.hold(t);
    Eigen::VectorXd lambda;
    Eigen::MatrixXd V;
    symmetricEigensystem(m.fetch(m.multiply(amplitudes, true, amplitudes, false)), lambda, V);
    Eigen::VectorXd inverseSqrt(no), remainder(no);
    for (int k = 0; k < no; k++) {
        inverseSqrt[k] = 1.0 / std::sqrt(1.0 + std::max(lambda[k], 0.0));
        remainder[k] = inverseSqrtRemainder(lambda[k]);
    }
    const Eigen::MatrixXd occupiedMetric = V * inverseSqrt.asDiagonal() * V.transpose();  // (1 + t^T t)^-1/2
    const Eigen::MatrixXd K = V * remainder.asDiagonal() * V.transpose();
    Eigen::MatrixXd rotated(n, C->cols());
    // (C_o + C_v t)(1 + t^T t)^-1/2
    rotated.leftCols(no) = m.fetch(m.multiply(m.multiply(virtuals, false, amplitudes, false, occupied), false, m.hold(occupiedMetric), false));
    // C_v - C_o t^T, then plus (C_v - C_o t^T) t (K t^T)
    const Held turned = m.multiply(occupied, false, amplitudes, true, virtuals, true);
    const Held KtT = m.multiply(m.hold(K), false, amplitudes, true);
    rotated.rightCols(nv) = m.fetch(m.multiply(m.multiply(turned, false, amplitudes, false), false, KtT, false, turned));
    return rotated;
}

Eigen::MatrixXd rotateOccupiedVirtual(const Eigen::MatrixXd& C, int nOccupied, const Eigen::MatrixXd& t,
                                      const MatrixProducts* products) {
    const double largest = 2.0 * C.rows() * (C.cols() - nOccupied) * nOccupied;
    const MatrixProducts& m = chainProducts(products, largest);
    return rotateHeld(m, m.hold(C), nOccupied, t);
}

bool blockDiagonalize(const Eigen::MatrixXd& F, const Eigen::MatrixXd& C, int nOccupied, double tolerance, double maxRotation,
                      BlockDiagonalization& out, const MatrixProducts* products) {
    const int no = nOccupied, nv = (int) C.cols() - nOccupied;
    if (no <= 0 || nv <= 0)
        return false;
    // G = C^T F C, held where the products run: its blocks are the Riccati steps' operands there.
    const MatrixProducts& m = chainProducts(products, 2.0 * F.size() * C.cols());
    const Held orbitals = m.hold(C);
    const Held held = m.multiply(orbitals, true, m.multiply(m.hold(F), false, orbitals, false), false);
    const Eigen::MatrixXd G = m.fetch(held);
    const Held heldGoo = m.block(held, 0, 0, no, no), heldGvv = m.block(held, no, no, nv, nv), heldGvo = m.block(held, no, 0, nv, no);
    const Eigen::MatrixXd Gvo = G.bottomLeftCorner(nv, no);
    const Eigen::VectorXd eo = G.topLeftCorner(no, no).diagonal(), ev = G.bottomRightCorner(nv, nv).diagonal();
    if (!(ev.minCoeff() > eo.maxCoeff()))
        return false;
    Eigen::MatrixXd gaps(nv, no);
    for (int i = 0; i < no; i++)
        gaps.col(i) = ev.array() - eo[i];
    Eigen::MatrixXd t = Eigen::MatrixXd::Zero(nv, no);
    double previous = std::numeric_limits<double>::infinity();
    int steps = 0;
    for (;; steps++) {
        // The occupied-virtual block of F in the orbitals C_o + C_v t and C_v - C_o t^T (before orthonormalizing):
        // (G_vo + G_vv t) - t (G_oo + G_vo^T t).
        Eigen::MatrixXd residual = Gvo;
        if (steps > 0) {
            const Held amplitudes = m.hold(t);
            const Held occupiedBlock = m.multiply(heldGvo, true, amplitudes, false, heldGoo);
            residual = m.fetch(m.multiply(amplitudes, false, occupiedBlock, false, m.multiply(heldGvv, false, amplitudes, false, heldGvo), true));
        }
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
    out.orbitals = rotateHeld(m, orbitals, no, t);
    out.energies.resize(no + nv);
    out.energies << eo, ev;
    out.steps = steps;
    out.largestRotation = t.cwiseAbs().maxCoeff();
    return true;
}

} // namespace QM
} // namespace OpenMMDFT
