#pragma once
// Internal to the engine: the three-centre part of the density-fitted Coulomb gradient by Libint2's integrals with
// raised and lowered angular momentum (LibintGradients.cpp). densityFittingThreeCentreGradient (Hermite scheme,
// HermiteThreeCentre.cpp) falls back to it beyond its Hermite tables, and the engine's tests take it as the
// independent reference of the Hermite version. Arguments as densityFittingThreeCentreGradient's.
#include "openmmdft/qm/Basis.h"
#include <Eigen/Dense>

namespace OpenMMDFT {
namespace QM {

Eigen::MatrixXd densityFittingThreeCentreGradientLibint(const BasisSet& basis, const BasisSet& auxiliary, const Eigen::MatrixXd& D,
                                                        const Eigen::VectorXd& c, int numAtoms, double threshold, int threads);

} // namespace QM
} // namespace OpenMMDFT
