#include "CommonQMMMKernelFactory.h"
#include "CommonLeastSquaresKernel.h"
#include "CommonQMMMKernels.h"
#include "openmm/OpenMMException.h"
#include "openmm/internal/ContextImpl.h"
#include "openmmdft/internal/ContextImplAccess.h"

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

KernelImpl* CommonQMMMKernelFactory::createKernelImpl(string name, const Platform& platform, ContextImpl& context) const {
    ComputeContext& cc = computeContextOf(context);
    if (name == CalcQMMMForceKernel::Name())
        return new CommonCalcQMMMForceKernel(name, platform, cc, context.getSystem(), deviceInverse);
    if (name == SolveLeastSquaresKernel::Name())
        return new CommonSolveLeastSquaresKernel(name, platform, cc);
    throw OpenMMException("openmm-dft: tried to create kernel with illegal kernel name '" + name + "'");
}

void CommonQMMMKernelFactory::registerWith(const string& platformName, ComputeContextOf computeContextOf,
                                           DeviceSymmetricInverse deviceInverse) {
    try {
        Platform& platform = Platform::getPlatformByName(platformName);
        CommonQMMMKernelFactory* factory = new CommonQMMMKernelFactory(computeContextOf, deviceInverse);
        platform.registerKernelFactory(CalcQMMMForceKernel::Name(), factory);
        platform.registerKernelFactory(SolveLeastSquaresKernel::Name(), factory);
    }
    catch (const std::exception&) {
        // This platform is not in this process: nothing to register.
    }
}

BondPathClasses OpenMMDFT::classifyBondPathsInContext(Context& context, const EllpackAdjacency& adjacency, const string& platformName,
                                                      ComputeContextOf computeContextOf) {
    ContextImpl& impl = ContextImplAccess().of(context);
    if (impl.getPlatform().getName() != platformName)
        throw OpenMMException("classifyBondPathsInContext: the Context does not use the " + platformName + " platform");
    return classifyBondPathsOnDevice(computeContextOf(impl), adjacency);
}
