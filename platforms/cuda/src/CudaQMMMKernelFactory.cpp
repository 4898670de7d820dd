#include "CudaQMMMKernelFactory.h"
#include "CommonQMMMKernelFactory.h"
#include "CommonXCBackend.h"
#include "CudaMetricInverse.h"
#include "openmmdft/internal/ContextImplAccess.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/internal/windowsExport.h"
#include "openmm/cuda/CudaContext.h"
#include "openmm/cuda/CudaPlatform.h"

/* The CUDA platform library: a thin wrapper that hands CUDA's ComputeContext to the
 * common kernels (platforms/common). */

using namespace OpenMM;
using namespace OpenMMDFT;

static ComputeContext& computeContextOf(ContextImpl& context) {
    CudaPlatform::PlatformData* data = static_cast<CudaPlatform::PlatformData*>(context.getPlatformData());
    return *data->contexts[0];
}

extern "C" OPENMM_EXPORT void registerPlatforms() {
}

extern "C" OPENMM_EXPORT void registerKernelFactories() {
    CommonQMMMKernelFactory::registerWith("CUDA", computeContextOf, cudaSymmetricPositiveDefiniteInverse);
}

extern "C" OPENMM_EXPORT void registerQMMMCudaKernelFactories() {
    CommonQMMMKernelFactory::registerWith("CUDA", computeContextOf, cudaSymmetricPositiveDefiniteInverse);
}

extern "C" OPENMM_EXPORT void openmmdftClassifyBondPathsCuda(Context& context, const EllpackAdjacency& adjacency, BondPathClasses& classes) {
    classes = classifyBondPathsInContext(context, adjacency, "CUDA", computeContextOf);
}

/* Test hook: the device XC back end of a CUDA Context, for the device-against-host XC tests
 * (platforms/common/tests/GpuXCBackendTestCases.h), which cannot link this library, with the metric's inverse on the
 * GPU (cuSOLVER), as the plugin's kernels have it. Empty where the device cannot run it (no double precision). */
extern "C" OPENMM_EXPORT void openmmdftCudaXCBackendFactory(Context& context, std::shared_ptr<const QM::XCBackendFactory>& factory) {
    ComputeContext& cc = computeContextOf(ContextImplAccess().of(context));
    if (CommonXCBackendFactory::supported(cc))
        factory = std::make_shared<CommonXCBackendFactory>(cc, cudaSymmetricPositiveDefiniteInverse);
    else
        factory.reset();
}
