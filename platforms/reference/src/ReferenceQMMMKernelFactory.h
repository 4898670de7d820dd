#ifndef OPENMMDFT_REFERENCEQMMMKERNELFACTORY_H_
#define OPENMMDFT_REFERENCEQMMMKERNELFACTORY_H_

#include "openmm/KernelFactory.h"

namespace OpenMMDFT {

/** Creates the double-precision CPU kernels of the plugin, for Reference and every platform derived from it. */
class ReferenceQMMMKernelFactory : public OpenMM::KernelFactory {
public:
    OpenMM::KernelImpl* createKernelImpl(std::string name, const OpenMM::Platform& platform, OpenMM::ContextImpl& context) const;
};

} // namespace OpenMMDFT

#endif
