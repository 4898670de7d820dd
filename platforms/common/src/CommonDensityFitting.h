#ifndef OPENMMDFT_COMMONDENSITYFITTING_H_
#define OPENMMDFT_COMMONDENSITYFITTING_H_

#include "openmmdft/qm/Integrals.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeProgram.h"
#include "DeviceArrayPool.h"
#include "ThreeCentreProgram.h"
#include <functional>
#include <memory>

namespace OpenMMDFT {

/**
 * Density fitting on the GPU platforms, written once against OpenMM's Compute API: the three-centre tensor B of one
 * geometry computed in device memory by McMurchie-Davidson (kernels/qmThreeCentre.cc; or uploaded from the host),
 * the contractions B d and B^T c of every SCF iteration (kernels/qmXC.cc), and the three-centre part of the Coulomb
 * gradient. contractionProgram holds the contraction kernels; integralProgram(basisL, auxL, false) gives the integral
 * kernels compiled for bases up to those l; every device array comes from pool (kept from one geometry to the next).
 */
std::unique_ptr<QM::DensityFittingContractions> createDensityFittingContractions(
    OpenMM::ComputeContext& cc, OpenMM::ComputeProgram contractionProgram,
    ThreeCentreProgramSource integralProgram, std::shared_ptr<DeviceArrayPool> pool);

} // namespace OpenMMDFT

#endif
