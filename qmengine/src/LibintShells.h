#pragma once
// Internal to the engine: our shells as Libint2 sees them, shared by LibintIntegrals.cpp and
// LibintGradients.cpp (the only translation units that include Libint's headers).
#include "ShellPairScreening.h"
#include "openmmdft/qm/Basis.h"
#include <libint2.hpp>
#include <vector>

namespace OpenMMDFT {
namespace QM {

void ensureLibintInitialized();
/// A cartesian libint shell with our coefficients as they are (normalization already embedded, no renormalization).
libint2::Shell toLibint(const Shell& shell);
std::vector<libint2::Shell> toLibint(const BasisSet& basis);
int maxNprim(const std::vector<libint2::Shell>& shells);
int maxL(const std::vector<libint2::Shell>& shells);
/// Libint's primitive-pair data of every shell with the unit shell (the bra of three-centre integrals), at the
/// precision of the engine that uses them, so that the engine need not make them in every call.
std::vector<libint2::ShellPair> withUnitShell(const std::vector<libint2::Shell>& shells, double precision);
/// Schwarz factors sqrt(max |(ab|ab)|) per shell pair, on up to `threads` threads (0: all hardware threads).
Eigen::MatrixXd schwarz(const std::vector<libint2::Shell>& shells, int threads);
/// The largest |D| element of every shell pair's block of a cartesian AO matrix D, for screening.
Eigen::MatrixXd shellPairMaxima(const BasisSet& basis, const std::vector<libint2::Shell>& shells, const Eigen::MatrixXd& D);

} // namespace QM
} // namespace OpenMMDFT
