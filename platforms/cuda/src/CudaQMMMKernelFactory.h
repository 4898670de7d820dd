#ifndef OPENMMDFT_CUDAQMMMKERNELFACTORY_H_
#define OPENMMDFT_CUDAQMMMKERNELFACTORY_H_

#include "openmmdft/internal/BondGraph.h"
#include "openmm/Context.h"

/** Register the kernel factories with the CUDA platform (for programs that link this library; tests). */
extern "C" void registerQMMMCudaKernelFactories();

/**
 * Run the device classification of the bond graph (classifyBondPathsOnDevice) on the
 * CUDA device of an existing Context; for tests that compare it with classifyBondPaths().
 */
extern "C" void openmmdftClassifyBondPathsCuda(OpenMM::Context& context, const OpenMMDFT::EllpackAdjacency& adjacency,
                                                 OpenMMDFT::BondPathClasses& classes);

#endif
