#include "CoulombResponse.h"
#include "OrbitalRotation.h"
#include "openmmdft/qm/DenseAlgebra.h"

namespace OpenMMDFT {
namespace QM {

namespace {
double dot(const Eigen::MatrixXd& a, const Eigen::MatrixXd& b) {
    return a.cwiseProduct(b).sum();
}
} // namespace

CoulombResponseStep coulombResponse(const Eigen::MatrixXd& C, const Eigen::VectorXd& eps, int nOccupied,
                                    const Eigen::MatrixXd& coulombMismatch,
                                    const std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)>& coulomb, int maxSteps,
                                    double tolerance, const MatrixProducts* products,
                                    const HeldCoulomb& heldCoulomb) {
    CoulombResponseStep step;
    const int n = (int) C.rows(), nOcc = nOccupied, nVirt = (int) C.cols() - nOccupied;
    step.occupied = C.leftCols(nOcc);
    step.orbitals = C;
    if (nOcc == 0 || nVirt == 0 || maxSteps <= 0)
        return step;
    // The orbitals held where the products run, for the whole step: each Coulomb build's density and matrix cross the
    // bus, the orbitals once.
    const MatrixProducts& m = chainProducts(products, 2.0 * n * n * nOcc);
    const Held orbitals = m.hold(C);
    const Held occupied = m.block(orbitals, 0, 0, n, nOcc), virtuals = m.block(orbitals, 0, nOcc, n, nVirt);
    // The virtual-occupied block of a matrix in the AO basis.
    auto virtualOccupiedOfHeld = [&](const Held& M) {
        return m.fetch(m.multiply(virtuals, true, m.multiply(M, false, occupied, false), false));
    };
    auto virtualOccupied = [&](const Eigen::MatrixXd& M) {
        return virtualOccupiedOfHeld(m.hold(M));
    };
    const Eigen::MatrixXd g = virtualOccupied(coulombMismatch);
    Eigen::MatrixXd gaps(nVirt, nOcc);
    for (int a = 0; a < nVirt; a++)
        for (int i = 0; i < nOcc; i++)
            gaps(a, i) = eps[nOcc + a] - eps[i];
    if (!(gaps.minCoeff() > 0))
        return step;  // no gap at the Fermi level: the response is not defined, the Roothaan step stands
    // The Coulomb term of the response: amplitudes x move the density by dD = 2 sum_ai x_ai (C_a C_i^T + C_i C_a^T).
    // (C_v x) C_o^T: n nv no + n no n operations, against nv no n + n nv n for C_v (x C_o^T). dD = 4 (H + H^T) / 2 for
    // H = C_v x C_o^T: built where H is held, where that is offered (the density and J then stay there).
    auto coulombTerm = [&](const Eigen::MatrixXd& x) {
        const Held half = m.multiply(m.multiply(virtuals, false, m.hold(x), false), false, occupied, true);
        step.coulombBuilds++;
        if (heldCoulomb)
            return virtualOccupiedOfHeld(heldCoulomb(m, half, 4.0));
        const Eigen::MatrixXd h = m.fetch(half);
        return virtualOccupied(coulomb(2 * (h + h.transpose())));
    };
    // Preconditioned conjugate gradients on (gaps + W) t = -g, from t = 0.
    Eigen::MatrixXd t = Eigen::MatrixXd::Zero(nVirt, nOcc);
    Eigen::MatrixXd residual = -g;
    Eigen::MatrixXd z = residual.cwiseQuotient(gaps);
    Eigen::MatrixXd direction = z;
    double rz = dot(residual, z);
    const double first = residual.norm();
    if (!(first > 0))
        return step;  // J~ is J[D0] already
    for (int k = 0; k < maxSteps; k++) {
        const Eigen::MatrixXd q = gaps.cwiseProduct(direction) + coulombTerm(direction);
        const double curvature = dot(direction, q);
        if (!(curvature > 0))
            break;
        const double alpha = rz / curvature;
        t += alpha * direction;
        residual -= alpha * q;
        if (residual.norm() <= tolerance * first)
            break;
        z = residual.cwiseQuotient(gaps);
        const double rzNext = dot(residual, z);
        direction = z + (rzNext / rz) * direction;
        rz = rzNext;
    }
    if (!t.allFinite())
        return step;
    // Rotate and orthonormalize: (C_o + C_v t)(1 + t^T t)^-1/2, which is C'(C'^T S C')^-1/2 for C orthonormal in S.
    step.orbitals = rotateHeld(m, orbitals, nOcc, t);
    step.occupied = step.orbitals.leftCols(nOcc);
    return step;
}

} // namespace QM
} // namespace OpenMMDFT
