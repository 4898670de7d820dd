#include "ReferenceQMMMKernelFactory.h"
#include "ReferenceQMMMKernels.h"
#include "ReferenceLeastSquaresKernel.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/ContextImpl.h"
#include "openmm/internal/windowsExport.h"
#include "openmm/reference/ReferencePlatform.h"

using namespace OpenMM;
using namespace OpenMMDFT;

extern "C" OPENMM_EXPORT void registerPlatforms() {
}

/* A static function, so that the exported names below cannot be interposed by another
 * plugin's registerKernelFactories when several are linked into one program. */
static void registerReferenceFactories() {
    // The CPU platform derives from ReferencePlatform and reuses its data layout, so it gets these kernels too.
    for (int i = 0; i < Platform::getNumPlatforms(); i++) {
        Platform& platform = Platform::getPlatform(i);
        if (dynamic_cast<ReferencePlatform*>(&platform) != NULL) {
            ReferenceQMMMKernelFactory* factory = new ReferenceQMMMKernelFactory();
            platform.registerKernelFactory(CalcQMMMForceKernel::Name(), factory);
            platform.registerKernelFactory(SolveLeastSquaresKernel::Name(), factory);
        }
    }
}

extern "C" OPENMM_EXPORT void registerKernelFactories() {
    registerReferenceFactories();
}

extern "C" OPENMM_EXPORT void registerQMMMReferenceKernelFactories() {
    registerReferenceFactories();
}

KernelImpl* ReferenceQMMMKernelFactory::createKernelImpl(std::string name, const Platform& platform, ContextImpl& context) const {
    if (name == CalcQMMMForceKernel::Name())
        // The QM engine uses as many threads as the Context (the CPU platform's Threads property).
        return new ReferenceCalcQMMMForceKernel(name, platform,
                   reinterpret_cast<ReferencePlatform::PlatformData*>(context.getPlatformData())->threads.getNumThreads());
    if (name == SolveLeastSquaresKernel::Name())
        return new ReferenceSolveLeastSquaresKernel(name, platform);
    throw OpenMMException((std::string("openmm-dft: tried to create kernel with illegal kernel name '") + name + "'").c_str());
}
