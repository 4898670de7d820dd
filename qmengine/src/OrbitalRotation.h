#pragma once
// Orbitals of a Fock matrix without an eigensolver at the size of the basis.
//
// After the first iteration of an SCF started near its solution (every MD step after the first), the orbitals C of
// the previous iteration nearly block-diagonalize the next Fock matrix F: in G = C^T F C the occupied-virtual block
// G_vo is small. The occupied space of F, all that the density needs, is then reached by one rotation t (virtual x
// occupied) that makes the block vanish, the algebraic Riccati equation of an invariant subspace
//   G_vo + G_vv t - t G_oo - t G_ov t = 0
// (G. W. Stewart, SIAM Rev. 15, 727 (1973)), solved by fixed-point steps preconditioned with the differences of the
// diagonal elements G_aa - G_ii: the pseudo-diagonalization of J. J. P. Stewart, P. Csaszar and P. Pulay,
// J. Comput. Chem. 3, 227 (1982), taken to convergence. At the size of the basis everything is a matrix product (no
// tridiagonalization, which is memory-bound and threads poorly); the one eigensystem is of t^T t, occupied x occupied.
#include "openmmdft/qm/MatrixProducts.h"
#include <Eigen/Dense>

namespace OpenMMDFT {
namespace QM {

/**
 * The orbitals C = [C_o C_v] (columns orthonormal in the overlap metric, the first nOccupied occupied) turned by the
 * amplitudes t (n_virtual x nOccupied): C_o' = (C_o + C_v t)(1 + t^T t)^-1/2 and C_v' = (C_v - C_o t^T)(1 + t t^T)^-1/2.
 * The two blocks stay orthogonal to each other ((-t, 1)(1, t)^T = 0) and each is orthonormalized symmetrically, so C'
 * is C times an orthogonal matrix: still orthonormal, whatever the size of t. (1 + t t^T)^-1/2 comes from the
 * eigensystem of t^T t = V L V^T: it is 1 + t V f(L) V^T t^T with f(l) = ((1 + l)^-1/2 - 1) / l.
 */
Eigen::MatrixXd rotateOccupiedVirtual(const Eigen::MatrixXd& C, int nOccupied, const Eigen::MatrixXd& t,
                                      const MatrixProducts* products = nullptr);

/** rotateOccupiedVirtual of orbitals C held where `m` runs its products (t goes up, the result comes down). */
Eigen::MatrixXd rotateHeld(const MatrixProducts& m, const Held& C, int nOccupied, const Eigen::MatrixXd& t);

struct BlockDiagonalization {
    Eigen::MatrixXd orbitals;   ///< C' (n_bf x n_mo), occupied first, orthonormal in the overlap metric
    Eigen::VectorXd energies;   ///< the diagonal of C^T F C in the orbitals before the rotation (the rotation
                                ///< changes it only at second order in t): occupied, then virtual, not sorted
    int steps = 0;              ///< fixed-point steps of the Riccati equation
    double largestRotation = 0; ///< max |t_ai|
};

/**
 * Rotate C (orthonormal, the first nOccupied occupied) so that F has no occupied-virtual block in the new orbitals to
 * within tolerance (max |residual of the Riccati equation|, hartree). Returns false, leaving out as it was, where the
 * rotation is not small (max |t| above maxRotation: the SCF is not near its solution), where an occupied diagonal
 * element lies above a virtual one (no gap in these orbitals: the aufbau order may change, which only an eigensolver
 * sees), or where the steps do not contract; the caller then diagonalizes. The products of basis-sized matrices run
 * where `products` runs them (null: the host).
 */
bool blockDiagonalize(const Eigen::MatrixXd& F, const Eigen::MatrixXd& C, int nOccupied, double tolerance, double maxRotation,
                      BlockDiagonalization& out, const MatrixProducts* products = nullptr);

} // namespace QM
} // namespace OpenMMDFT
