#pragma once
// Nuclear-coordinate derivatives of integral contractions: the building blocks of analytic
// forces (not yet assembled into a force; see README). Each returns d/dR of a contraction
// sum_uv P_uv O_uv(R) at fixed P, P symmetric in the basis of the BasisSet (pure where it
// is pure), atomic units. Gradients are numAtoms x 3 (row = atom index of the shells).
// Basis-function derivatives come from the integrals themselves with the angular momentum
// raised and lowered, d/dA_x x_A^i e^{-a r_A^2} = 2a x_A^{i+1} e^{..} - i x_A^{i-1} e^{..},
// since the Libint2 of Debian 12 has no one-body derivative integrals.
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Types.h"
#include <Eigen/Dense>
#include <vector>

namespace OpenMMDFT {
namespace QM {

/// d/dR sum_uv P_uv S_uv (the Pulay term of the overlap, with P = energy-weighted density).
Eigen::MatrixXd overlapGradient(const BasisSet& basis, const Eigen::MatrixXd& P, int numAtoms, int threads = 1);
/// d/dR sum_uv P_uv T_uv.
Eigen::MatrixXd kineticGradient(const BasisSet& basis, const Eigen::MatrixXd& P, int numAtoms, int threads = 1);

/// d/dR and d/dC of sum_uv P_uv V_uv, V the potential of the point charges as in pointChargeMatrix
/// (nuclei or MM charges): atomGradient (numAtoms x 3) through the basis functions, chargeGradient
/// (charges x 3) through the operator, i.e. minus the force of the electrons on each charge.
/// Shell pairs whose overlap bound is below threshold are skipped, as in pointChargeMatrix.
void pointChargeGradient(const BasisSet& basis, const std::vector<PointCharge>& charges, const Eigen::MatrixXd& P,
                         int numAtoms, double threshold, Eigen::MatrixXd& atomGradient, Eigen::MatrixXd& chargeGradient,
                         int threads = 1);

/// d/dR of the density-fitted Coulomb energy E_J = 1/2 gamma^T (P|Q)^-1 gamma, gamma_Q = sum_uv (Q|uv) D_uv,
/// given c = (P|Q)^-1 gamma (DensityFittedCoulomb::fitCoefficients, auxiliary basis, pure where it is pure):
/// sum_Q c_Q sum_uv D_uv d(Q|uv) - 1/2 sum_PQ c_P c_Q d(P|Q): the three-centre part by McMurchie and Davidson's
/// Hermite scheme, the metric part from Libint2's integrals. Both bases carry the atom index of every shell.
Eigen::MatrixXd densityFittedCoulombGradient(const BasisSet& basis, const BasisSet& auxiliary, const Eigen::MatrixXd& D,
                                             const Eigen::VectorXd& c, int numAtoms, double threshold, int threads = 1);
/// Its three-centre part, sum_Q c_Q sum_uv D_uv d(Q|uv), on the orbital and the fitting functions' centres: the
/// fitted density as Hermite Gaussians on the fitting centres, the orbital density contracted into each primitive
/// pair's (src/HermiteThreeCentre.cpp); Libint2's raised and lowered integrals beyond the Hermite tables (orbital
/// shells above f with fitting shells above g). Shell pairs whose overlap bound is below threshold are skipped.
Eigen::MatrixXd densityFittingThreeCentreGradient(const BasisSet& basis, const BasisSet& auxiliary, const Eigen::MatrixXd& D,
                                                  const Eigen::VectorXd& c, int numAtoms, double threshold, int threads = 1);
/// Its metric part, -1/2 sum_PQ c_P c_Q d(P|Q).
Eigen::MatrixXd densityFittingMetricGradient(const BasisSet& auxiliary, const Eigen::VectorXd& c, int numAtoms, int threads = 1);
/// The largest l of a fitting shell whose metric gradient this build can compute: densityFittingMetricGradient raises
/// each fitting shell's l by one, within the largest l of the Libint2 library it is built with.
int largestFittingShellL();

/// d/dR of the exact Coulomb energy E_J = 1/2 sum_{uvls} D_uv D_ls (uv|ls), from Libint2's four-centre first
/// derivatives over the unique shell quartets (Schwarz bound times the largest density element below threshold
/// skipped, as in ExactCoulomb::compute).
Eigen::MatrixXd exactCoulombGradient(const BasisSet& basis, const Eigen::MatrixXd& D, int numAtoms, double threshold,
                                     int threads = 1);

} // namespace QM
} // namespace OpenMMDFT
