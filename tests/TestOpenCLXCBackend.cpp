/* The device XC back end on OpenMM's OpenCL platform (PoCL in CI) against the host back end: the cases of
 * platforms/common/tests/GpuXCBackendTestCases.h, with the factory of this program's OpenCL Context. */
#include "PluginLoading.h"
#include "CommonXCBackend.h"
#include "OpenCLQMMMKernelFactory.h"
#include "openmmdft/internal/ContextImplAccess.h"
#include "openmm/Context.h"
#include "openmm/System.h"
#include "openmm/VerletIntegrator.h"
#include "openmm/opencl/OpenCLContext.h"
#include "openmm/opencl/OpenCLPlatform.h"
#include "../platforms/common/tests/GpuXCBackendTestCases.h"
#include <memory>
#include <string>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace GpuXCTest;

class OpenCLXCBackend : public ::testing::TestWithParam<Case> {};

/** An OpenCL Context in double precision and its XC back end factory; reason says why there is none (the test skips). */
struct OpenCLFactory {
    std::unique_ptr<Context> context;
    System system;
    VerletIntegrator integrator{0.001};
    std::shared_ptr<CommonXCBackendFactory> factory;
    std::string reason;
    OpenCLFactory() {
        QMMMTest::loadPlatformOnce("libOpenMMOpenCL.so", registerQMMMOpenCLKernelFactories);
        system.addParticle(1.0);
        try {
            context.reset(new Context(system, integrator, Platform::getPlatformByName("OpenCL"), {{"Precision", "double"}}));
        }
        catch (const std::exception& e) {
            reason = std::string("no OpenCL device with double precision: ") + e.what();
            return;
        }
        OpenCLPlatform::PlatformData* data = static_cast<OpenCLPlatform::PlatformData*>(ContextImplAccess().of(*context).getPlatformData());
        ComputeContext& cc = *data->contexts[0];
        if (!CommonXCBackendFactory::supported(cc))
            reason = "the OpenCL device has no double precision";
        else
            factory = std::make_shared<CommonXCBackendFactory>(cc);
    }
};

TEST(OpenCLDensityFitting, DeviceIntegralsMatchLibint) {
    OpenCLFactory openCL;
    if (!openCL.reason.empty())
        GTEST_SKIP() << openCL.reason;
    testDeviceDensityFittingCases(openCL.factory);
}

TEST(OpenCLPointCharges, DeviceMatrixAndGradientMatchHost) {
    OpenCLFactory openCL;
    if (!openCL.reason.empty())
        GTEST_SKIP() << openCL.reason;
    testDevicePointChargeCases(openCL.factory);
}

TEST_P(OpenCLXCBackend, MatchesTheHostThroughTheEngine) {
    OpenCLFactory openCL;
    if (!openCL.reason.empty())
        GTEST_SKIP() << openCL.reason;
    testDeviceXCMatchesHost(openCL.factory, GetParam());
}

INSTANTIATE_TEST_SUITE_P(Cases, OpenCLXCBackend, ::testing::ValuesIn(allCases()));
