#ifndef OPENMMDFT_THREECENTREPROGRAM_H_
#define OPENMMDFT_THREECENTREPROGRAM_H_

#include "openmm/common/ComputeProgram.h"
#include <functional>
#include <map>
#include <string>

namespace OpenMMDFT {

/// Fixed-point scale of the three-centre gradient sums: 2^44, so that each term is rounded to 3e-14 Eh/bohr and a
/// component may reach 5e5 Eh/bohr.
constexpr double THREE_CENTRE_GRADIENT_SCALE = 17592186044416.0;

/// Centres per work item of the gradient kernel at most, point charges and atoms of fitting shells: the kernel keeps
/// their gradients in private memory and adds them to the sums once per item, not once per primitive pair. Runs of
/// fitting shells long enough for the item target span about 7 atoms of 24 waters; 8 keep the private stack as it
/// was with one atom per item (16 took 384 bytes more).
constexpr int THREE_CENTRE_MAX_CHARGES_PER_ITEM = 16;
constexpr int THREE_CENTRE_MAX_FITTING_CENTRES_PER_ITEM = 8;

/// Work-group size of every launch of the program's integral kernels (their CUDA register bound assumes it): 128, so
/// that the work groups OpenMM launches (6 per multiprocessor on CUDA) fill the 512 threads a multiprocessor holds at
/// 128 registers (64: 384).
constexpr int THREE_CENTRE_GROUP_SIZE = 128;

/**
 * The defines of kernels/qmThreeCentre.cc for orbital shells up to basisL and fitting shells up to auxL; pointCharges
 * compiles the gradient kernel for point charges instead of fitting functions. A compile-time choice: with it as a
 * run-time flag in one kernel the density-fitting gradient ran 4.8x slower on an H200 (0.76 s against 0.16 s for 24
 * waters in DZVP), though the instructions of the fitting path were nearly the same.
 */
std::map<std::string, std::string> threeCentreDefines(int basisL, int auxL, bool pointCharges);

/** The compiled three-centre program for (basisL, auxL, pointCharges), made once per Context by its owner. */
using ThreeCentreProgramSource = std::function<OpenMM::ComputeProgram(int basisL, int auxL, bool pointCharges)>;

} // namespace OpenMMDFT

#endif
