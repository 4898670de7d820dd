/* QMMMForce on OpenMM's OpenCL platform (the common Compute API kernels) against OpenMM's
 * NonbondedForce on the Reference platform, in single, mixed and double precision, and the
 * device classification of the bond graph against classifyBondPaths(). */
#include "PluginLoading.h"
#include "QMMMForceTestCases.h"
#include "OpenCLQMMMKernelFactory.h"
#include "../platforms/common/tests/GpuQMMMTestCases.h"

using namespace QMMMTest;

namespace {

/** Load OpenMM's OpenCL platform by file and register this plugin's kernels; once. */
void registerOpenCL() {
    loadPlatformOnce("libOpenMMOpenCL.so", registerQMMMOpenCLKernelFactories);
}

} // namespace

class OpenCLQMMMForce : public ::testing::TestWithParam<PlatformSetup> {
public:
    void SetUp() override {
        registerOpenCL();
        string reason = QMMMDeviceTest::platformUnavailable("OpenCL", GetParam().properties);
        if (!reason.empty())
            GTEST_SKIP() << "OpenCL platform unavailable with these properties: " << reason;
    }
};

QMMM_DEVICE_FORCE_TESTS(OpenCLQMMMForce, "OpenCL");

/** The classes computed on the device (A^2, A^3 in ELLPACK form) equal classifyBondPaths(). */
TEST(OpenCLQMMMBondGraph, DeviceClassificationMatchesCPU) {
    registerOpenCL();
    std::map<string, string> properties;
    string reason = QMMMDeviceTest::platformUnavailable("OpenCL", properties);
    if (!reason.empty())
        GTEST_SKIP() << "OpenCL platform unavailable: " << reason;
    System system;
    system.addParticle(1.0);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, Platform::getPlatformByName("OpenCL"));
    QMMMDeviceTest::testDeviceClassification(context, openmmdftClassifyBondPathsOpenCL);
}
