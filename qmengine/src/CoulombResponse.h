#pragma once
// The Coulomb-response correction of an SCF step: after DIIS has extrapolated a Fock matrix F~ and the new occupied
// orbitals come from it, their density D0 differs from the density D~ that F~ implies, and the Coulomb part of the
// Fock matrix answers that difference, which a plain Roothaan step ignores. The correction is a Newton step in the
// Coulomb (Hartree) kernel alone: first-order (coupled-perturbed) orbital response to
//   dF = J[D0] - J~ + J[dD],
// solved for the rotation of the occupied orbitals into the virtual ones. The exchange-correlation kernel is left out
// (the LDA kernel is local and short-ranged; the slow directions of an SCF in a cluster of molecules are charge moving
// between them, which J governs). Preconditioning the SCF map by the inverse dielectric operator (1 - chi0 v_H)^-1 is
// the idea of M. F. Herbst and A. Levitt, J. Phys.: Condens. Matter 33, 085503 (2021); the coupled-perturbed
// equations are those of J. A. Pople, R. Krishnan, H. B. Schlegel and J. S. Binkley, Int. J. Quantum Chem. Symp. 13,
// 225 (1979).
#include "openmmdft/qm/MatrixProducts.h"
#include <Eigen/Dense>
#include <functional>

namespace OpenMMDFT {
namespace QM {

/// J[scale (D + D^T) / 2] of a matrix D held by the MatrixProducts given, held there too (DensityFittedCoulomb::compute).
using HeldCoulomb = std::function<Held(const MatrixProducts&, const Held&, double)>;

struct CoulombResponseStep {
    Eigen::MatrixXd occupied;  ///< corrected occupied orbitals (n_bf x n_occ), orthonormal in the overlap metric
    Eigen::MatrixXd orbitals;  ///< all orbitals turned by the same rotation (occupied first), orthonormal
    int coulombBuilds = 0;     ///< Coulomb matrices built by the conjugate-gradient steps
};

/**
 * The occupied orbitals corrected for the Coulomb response, for a closed shell (every occupied orbital holds two
 * electrons). C (n_bf x n_mo) and eps are the orbitals and energies of F~, the first nOccupied occupied;
 * coulombMismatch is J[D0] - J~ (AO basis); coulomb(D) builds J[D] of any symmetric D. The rotation amplitudes t_ai
 * (virtual a, occupied i) solve
 *   (eps_a - eps_i) t_ai + 4 sum_bj (ai|bj) t_bj = -(C_a^T coulombMismatch C_i),
 * a symmetric positive definite system, by conjugate gradients preconditioned with the orbital-energy differences,
 * at most maxSteps steps (one Coulomb build each), stopping at a residual below tolerance times the first one. The
 * orbitals C_i + sum_a t_ai C_a are then orthonormalized (Loewdin), which keeps the density idempotent, and the
 * virtual ones turned with them (rotateOccupiedVirtual, OrbitalRotation.h; C must be orthonormal in S). The products of
 * basis-sized matrices run where `products` runs them (null: the host); heldCoulomb, where given, builds the
 * conjugate-gradient steps' Coulomb matrices from their held densities (else they are fetched for coulomb()).
 */
CoulombResponseStep coulombResponse(const Eigen::MatrixXd& C, const Eigen::VectorXd& eps, int nOccupied,
                                    const Eigen::MatrixXd& coulombMismatch,
                                    const std::function<Eigen::MatrixXd(const Eigen::MatrixXd&)>& coulomb, int maxSteps,
                                    double tolerance, const MatrixProducts* products = nullptr,
                                    const HeldCoulomb& heldCoulomb = nullptr);

} // namespace QM
} // namespace OpenMMDFT
