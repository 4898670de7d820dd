#ifndef OPENMMDFT_COMMONQMMMKERNELFACTORY_H_
#define OPENMMDFT_COMMONQMMMKERNELFACTORY_H_

#include "openmmdft/internal/BondGraph.h"
#include "openmm/Context.h"
#include "openmm/KernelFactory.h"
#include "openmm/common/ComputeContext.h"
#include "CommonXCBackend.h"
#include <string>

namespace OpenMMDFT {

/** How a platform wrapper (OpenCL, CUDA) reaches the ComputeContext of a Context. */
typedef OpenMM::ComputeContext& (*ComputeContextOf)(OpenMM::ContextImpl& context);

/**
 * Creates the plugin's common (Compute API) kernels on a platform built on ComputeContext.
 * The OpenCL and CUDA libraries differ only in the platform name and in how they reach
 * the ComputeContext, which they pass in.
 */
class CommonQMMMKernelFactory : public OpenMM::KernelFactory {
public:
    /** deviceInverse: the platform's own inverse for the density fitting's metric (null: the host's). */
    explicit CommonQMMMKernelFactory(ComputeContextOf computeContextOf, DeviceSymmetricInverse deviceInverse = nullptr)
        : computeContextOf(computeContextOf), deviceInverse(deviceInverse) {
    }
    OpenMM::KernelImpl* createKernelImpl(std::string name, const OpenMM::Platform& platform, OpenMM::ContextImpl& context) const;
    /** Register a factory for every kernel of the plugin with the named platform, if it exists in this process. */
    static void registerWith(const std::string& platformName, ComputeContextOf computeContextOf,
                             DeviceSymmetricInverse deviceInverse = nullptr);
private:
    ComputeContextOf computeContextOf;
    DeviceSymmetricInverse deviceInverse;
};

/**
 * Run the device classification of the bond graph in an existing Context of the named platform
 * (for tests that compare it with classifyBondPaths()).
 */
BondPathClasses classifyBondPathsInContext(OpenMM::Context& context, const EllpackAdjacency& adjacency,
                                           const std::string& platformName, ComputeContextOf computeContextOf);

} // namespace OpenMMDFT

#endif
