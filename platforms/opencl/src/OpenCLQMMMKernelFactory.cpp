#include "OpenCLQMMMKernelFactory.h"
#include "CommonQMMMKernels.h"
#include "CommonLeastSquaresKernel.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/internal/windowsExport.h"
#include "openmm/opencl/OpenCLContext.h"
#include "openmm/opencl/OpenCLPlatform.h"

using namespace OpenMM;
using namespace OpenMMDFT;

extern "C" OPENMM_EXPORT void registerPlatforms() {
}

/* A static function, so that the exported names below cannot be interposed by another
 * plugin's registerKernelFactories when several are linked into one program. */
static void registerOpenCLFactories() {
    try {
        Platform& platform = Platform::getPlatformByName("OpenCL");
        OpenCLQMMMKernelFactory* factory = new OpenCLQMMMKernelFactory();
        platform.registerKernelFactory(CalcQMMMForceKernel::Name(), factory);
        platform.registerKernelFactory(SolveLeastSquaresKernel::Name(), factory);
    }
    catch (const std::exception&) {
        // No OpenCL platform in this process: nothing to register.
    }
}

extern "C" OPENMM_EXPORT void registerKernelFactories() {
    registerOpenCLFactories();
}

extern "C" OPENMM_EXPORT void registerQMMMOpenCLKernelFactories() {
    registerOpenCLFactories();
}

static ComputeContext& computeContextOf(ContextImpl& context) {
    OpenCLPlatform::PlatformData* data = static_cast<OpenCLPlatform::PlatformData*>(context.getPlatformData());
    return *data->contexts[0];
}

KernelImpl* OpenCLQMMMKernelFactory::createKernelImpl(std::string name, const Platform& platform, ContextImpl& context) const {
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

extern "C" OPENMM_EXPORT void openmmdftClassifyBondPathsOpenCL(Context& context, const EllpackAdjacency& adjacency, BondPathClasses& classes) {
    ContextImpl& impl = ContextImplAccess().of(context);
    if (impl.getPlatform().getName() != "OpenCL")
        throw OpenMMException("openmmdftClassifyBondPathsOpenCL: the Context does not use the OpenCL platform");
    classes = classifyBondPathsOnDevice(computeContextOf(impl), adjacency);
}
