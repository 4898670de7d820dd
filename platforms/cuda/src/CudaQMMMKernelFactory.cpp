#include "CudaQMMMKernelFactory.h"
#include "CommonQMMMKernels.h"
#include "CommonLeastSquaresKernel.h"
#include "openmm/OpenMMException.h"
#include "openmm/cuda/CudaContext.h"
#include "openmm/cuda/CudaPlatform.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/internal/windowsExport.h"

using namespace OpenMM;
using namespace OpenMMDFT;

extern "C" OPENMM_EXPORT void registerPlatforms() {
}

/* A static function, so that the exported names below cannot be interposed by another
 * plugin's registerKernelFactories when several are linked into one program. */
static void registerCudaFactories() {
    try {
        Platform& platform = Platform::getPlatformByName("CUDA");
        CudaQMMMKernelFactory* factory = new CudaQMMMKernelFactory();
        platform.registerKernelFactory(CalcQMMMForceKernel::Name(), factory);
        platform.registerKernelFactory(SolveLeastSquaresKernel::Name(), factory);
    }
    catch (const std::exception&) {
        // No CUDA platform in this process: nothing to register.
    }
}

extern "C" OPENMM_EXPORT void registerKernelFactories() {
    registerCudaFactories();
}

extern "C" OPENMM_EXPORT void registerQMMMCudaKernelFactories() {
    registerCudaFactories();
}

static ComputeContext& computeContextOf(ContextImpl& context) {
    CudaPlatform::PlatformData* data = static_cast<CudaPlatform::PlatformData*>(context.getPlatformData());
    return *data->contexts[0];
}

KernelImpl* CudaQMMMKernelFactory::createKernelImpl(std::string name, const Platform& platform, ContextImpl& context) const {
    ComputeContext& cc = computeContextOf(context);
    if (name == CalcQMMMForceKernel::Name())
        return new CommonCalcQMMMForceKernel(name, platform, cc, context.getSystem());
    if (name == SolveLeastSquaresKernel::Name())
        return new CommonSolveLeastSquaresKernel(name, platform, cc);
    throw OpenMMException((std::string("openmm-dft: tried to create kernel with illegal kernel name '") + name + "'").c_str());
}

namespace {
/** Reaches a Context's ContextImpl through Force's protected accessor. */
class ContextImplAccess : public QMMMForce {
public:
    ContextImpl& of(Context& context) const {
        return getContextImpl(context);
    }
};
} // namespace

extern "C" OPENMM_EXPORT void openmmdftClassifyBondPathsCuda(Context& context, const EllpackAdjacency& adjacency, BondPathClasses& classes) {
    ContextImpl& impl = ContextImplAccess().of(context);
    if (impl.getPlatform().getName() != "CUDA")
        throw OpenMMException("openmmdftClassifyBondPathsCuda: the Context does not use the CUDA platform");
    classes = classifyBondPathsOnDevice(computeContextOf(impl), adjacency);
}
