#ifndef OPENMMDFT_MINIMIZERDETECTION_H_
#define OPENMMDFT_MINIMIZERDETECTION_H_

#include "openmmdft/internal/windowsExportDFT.h"

namespace OpenMMDFT {

/**
 * Whether the calling thread is inside OpenMM's LocalEnergyMinimizer (one of its functions is on the
 * call stack). OpenMM's kernel interface does not say why forces are evaluated, and the minimizer's
 * calls look exactly like getState(getEnergy=True, getForces=True). The difference matters when the SCF
 * fails: L-BFGS treats an energy of +infinity as a rejected trial step and shortens it, while anywhere
 * else the failure must raise. The answer comes from the return addresses of the stack (glibc's
 * backtrace) named with dladdr and matched against the minimizer's exported functions; when a frame
 * cannot be named the answer is false, so a failure raises (fails closed).
 */
OPENMM_EXPORT_DFT bool insideEnergyMinimization();

} // namespace OpenMMDFT

#endif
