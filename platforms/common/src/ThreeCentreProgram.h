#ifndef OPENMMDFT_THREECENTREPROGRAM_H_
#define OPENMMDFT_THREECENTREPROGRAM_H_

#include <map>
#include <string>

namespace OpenMMDFT {

/// Fixed-point scale of the three-centre gradient sums: 2^44, so that each term is rounded to 3e-14 Eh/bohr and a
/// component may reach 5e5 Eh/bohr.
constexpr double THREE_CENTRE_GRADIENT_SCALE = 17592186044416.0;

/** The defines of kernels/qmThreeCentre.cc for orbital shells up to basisL and fitting shells up to auxL. */
std::map<std::string, std::string> threeCentreDefines(int basisL, int auxL);

} // namespace OpenMMDFT

#endif
