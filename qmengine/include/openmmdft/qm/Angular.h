#pragma once
// Angular parts of Gaussian shells: order of cartesian components and the
// cartesian -> real solid harmonic transformation. The engine computes every
// integral over cartesian shells and applies these matrices itself, so that the
// integral library and the grid code cannot disagree about pure functions.
#include <Eigen/Dense>
#include <array>
#include <vector>

namespace OpenMMDFT {
namespace QM {

class BasisSet;

/// Exponents (lx, ly, lz) of the cartesian components of a shell in libint's
/// standard order: xx, xy, xz, yy, yz, zz for l = 2.
const std::vector<std::array<int, 3>>& cartesianComponents(int l);

/// (2l+1) x (l+1)(l+2)/2 matrix: rows m = -l..l, unit-normalized real solid harmonics
/// expressed in cartesian components that all carry the x^l normalization.
const Eigen::MatrixXd& cartesianToPure(int l);

/// Block-diagonal nbf x ncart matrix of the whole basis (identity blocks for cartesian shells):
/// M = T Mcart T^T for operators, Dcart = T^T D T for densities.
Eigen::MatrixXd basisTransform(const BasisSet& basis);
/// T^T M T: a matrix over the basis's own functions taken to the all-cartesian basis, shell block by shell block
/// (T is block diagonal, so this costs O(n^2) where the dense product costs O(n^3); M itself where no shell is pure).
Eigen::MatrixXd toCartesianBasis(const BasisSet& basis, const Eigen::MatrixXd& M);
/// T M T^T: a matrix over the all-cartesian basis taken back to the basis's own functions, block by block.
Eigen::MatrixXd fromCartesianBasis(const BasisSet& basis, const Eigen::MatrixXd& M);

} // namespace QM
} // namespace OpenMMDFT
