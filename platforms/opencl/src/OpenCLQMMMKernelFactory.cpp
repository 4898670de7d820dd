#include "OpenCLQMMMKernelFactory.h"
#include "CommonQMMMKernelFactory.h"
#include "CommonXCBackend.h"
#include "openmmdft/internal/ContextImplAccess.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/internal/windowsExport.h"
#include "openmm/opencl/OpenCLContext.h"
#include "openmm/opencl/OpenCLPlatform.h"
#include <memory>

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

/* Benchmark hook: the device XC back end factory of an OpenCL Context (its matrix products, for
 * benchmarks/BenchMatrixProducts, which loads this library by file as it does CUDA's). Empty where the device cannot
 * run it (no double precision). */
extern "C" OPENMM_EXPORT void openmmdftOpenCLXCBackendFactory(Context& context, std::shared_ptr<const QM::XCBackendFactory>& factory) {
    ComputeContext& cc = computeContextOf(ContextImplAccess().of(context));
    if (CommonXCBackendFactory::supported(cc))
        factory = std::make_shared<CommonXCBackendFactory>(cc);
    else
        factory.reset();
}
