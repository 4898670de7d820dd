#ifndef OPENMMDFT_OPENCLQMMMKERNELFACTORY_H_
#define OPENMMDFT_OPENCLQMMMKERNELFACTORY_H_

#include "openmmdft/internal/BondGraph.h"
#include "openmm/Context.h"

/** Register the kernel factories with the OpenCL platform (for programs that link this library; tests). */
extern "C" void registerQMMMOpenCLKernelFactories();

/**
 * Run the device classification of the bond graph (classifyBondPathsOnDevice) on the
 * OpenCL device of an existing Context; for tests that compare it with classifyBondPaths().
 */
extern "C" void openmmdftClassifyBondPathsOpenCL(OpenMM::Context& context, const OpenMMDFT::EllpackAdjacency& adjacency,
                                                 OpenMMDFT::BondPathClasses& classes);

#endif
