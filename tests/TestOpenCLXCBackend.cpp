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

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace GpuXCTest;

class OpenCLXCBackend : public ::testing::TestWithParam<Case> {};

/** The factory of an OpenCL Context in double precision (null, with the test skipped, without one). */
static std::shared_ptr<CommonXCBackendFactory> openCLFactory(std::unique_ptr<Context>& context, System& system, VerletIntegrator& integrator) {
    QMMMTest::loadPlatformOnce("libOpenMMOpenCL.so", registerQMMMOpenCLKernelFactories);
    system.addParticle(1.0);
    try {
        context.reset(new Context(system, integrator, Platform::getPlatformByName("OpenCL"), {{"Precision", "double"}}));
    }
    catch (const std::exception& e) {
        return nullptr;
    }
    OpenCLPlatform::PlatformData* data = static_cast<OpenCLPlatform::PlatformData*>(ContextImplAccess().of(*context).getPlatformData());
    ComputeContext& cc = *data->contexts[0];
    if (!CommonXCBackendFactory::supported(cc))
        return nullptr;
    return std::make_shared<CommonXCBackendFactory>(cc);
}

TEST(OpenCLDensityFitting, DeviceIntegralsMatchLibint) {
    std::unique_ptr<Context> context;
    System system;
    VerletIntegrator integrator(0.001);
    auto factory = openCLFactory(context, system, integrator);
    if (!factory)
        GTEST_SKIP() << "no OpenCL device with double precision";
    testDeviceDensityFittingMatchesLibint(factory, "DZVP", true);
    testDeviceDensityFittingMatchesLibint(factory, "DZVP", false);
    testDeviceDensityFittingMatchesLibint(factory, "def2-TZVP", true);
    testDeviceDensityFittingMatchesLibint(factory, "DZVP", true, true);
}

TEST(OpenCLPointCharges, DeviceGradientMatchesHost) {
    std::unique_ptr<Context> context;
    System system;
    VerletIntegrator integrator(0.001);
    auto factory = openCLFactory(context, system, integrator);
    if (!factory)
        GTEST_SKIP() << "no OpenCL device with double precision";
    testDevicePointChargeGradientMatchesHost(factory, "DZVP");
    testDevicePointChargeGradientMatchesHost(factory, "def2-TZVP");
}

TEST_P(OpenCLXCBackend, MatchesTheHostThroughTheEngine) {
    QMMMTest::loadPlatformOnce("libOpenMMOpenCL.so", registerQMMMOpenCLKernelFactories);
    std::unique_ptr<Context> context;
    System system;
    system.addParticle(1.0);
    VerletIntegrator integrator(0.001);
    try {
        context.reset(new Context(system, integrator, Platform::getPlatformByName("OpenCL"), {{"Precision", "double"}}));
    }
    catch (const std::exception& e) {
        GTEST_SKIP() << "no OpenCL device with double precision: " << e.what();
    }
    OpenCLPlatform::PlatformData* data = static_cast<OpenCLPlatform::PlatformData*>(ContextImplAccess().of(*context).getPlatformData());
    ComputeContext& cc = *data->contexts[0];
    ASSERT_TRUE(CommonXCBackendFactory::supported(cc));
    testDeviceXCMatchesHost(std::make_shared<CommonXCBackendFactory>(cc), GetParam());
}

INSTANTIATE_TEST_SUITE_P(Cases, OpenCLXCBackend, ::testing::ValuesIn(allCases()));
