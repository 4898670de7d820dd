#include "OpenCLQMMMKernelFactory.h"
#include "CommonQMMMKernelFactory.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/internal/windowsExport.h"
#include "openmm/opencl/OpenCLContext.h"
#include "openmm/opencl/OpenCLPlatform.h"

/* The OpenCL platform library: a thin wrapper that hands OpenCL's ComputeContext to the
 * common kernels (platforms/common). */

using namespace OpenMM;
using namespace OpenMMDFT;

static ComputeContext& computeContextOf(ContextImpl& context) {
    OpenCLPlatform::PlatformData* data = static_cast<OpenCLPlatform::PlatformData*>(context.getPlatformData());
    return *data->contexts[0];
}

extern "C" OPENMM_EXPORT void registerPlatforms() {
}

extern "C" OPENMM_EXPORT void registerKernelFactories() {
    CommonQMMMKernelFactory::registerWith("OpenCL", computeContextOf);
}

extern "C" OPENMM_EXPORT void registerQMMMOpenCLKernelFactories() {
    CommonQMMMKernelFactory::registerWith("OpenCL", computeContextOf);
}

extern "C" OPENMM_EXPORT void openmmdftClassifyBondPathsOpenCL(Context& context, const EllpackAdjacency& adjacency, BondPathClasses& classes) {
    classes = classifyBondPathsInContext(context, adjacency, "OpenCL", computeContextOf);
}
