/* QMMMForce on OpenMM's CUDA platform (the common Compute API kernels) against OpenMM's
 * NonbondedForce on the Reference platform, in single, mixed and double precision, and the
 * device classification of the bond graph against classifyBondPaths().
 *
 * Every test skips cleanly where CUDA cannot run.  The plugin library needs libcuda.so.1,
 * which machines without a GPU driver lack, so this program is not linked to it (see
 * platforms/cuda/CMakeLists.txt): it loads OpenMM's CUDA platform and then the plugin by
 * file (OPENMMDFT_CUDA_PLUGIN) at run time, and finds its test hook with dlsym. */
#include "PluginLoading.h"
#include "QMMMForceTestCases.h"
#include "../platforms/common/tests/GpuQMMMTestCases.h"
#include <dlfcn.h>

using namespace QMMMTest;

namespace {

typedef void (*ClassifyFunction)(Context&, const EllpackAdjacency&, BondPathClasses&);

const string& loadCuda() {
    return QMMMTest::loadCudaPluginOnce(QMMMTest::cudaPluginFile());
}

/** Empty when a CUDA Context can be made with these properties (the plugin loaded), otherwise why not. */
string cudaUnavailable(const std::map<string, string>& properties) {
    if (!loadCuda().empty())
        return loadCuda();
    return QMMMDeviceTest::platformUnavailable("CUDA", properties);
}

} // namespace

class CudaQMMMForce : public ::testing::TestWithParam<PlatformSetup> {
public:
    void SetUp() override {
        string reason = cudaUnavailable(GetParam().properties);
        if (!reason.empty())
            GTEST_SKIP() << "CUDA platform unavailable: " << reason;
    }
};

QMMM_DEVICE_FORCE_TESTS(CudaQMMMForce, "CUDA");

/** The classes computed on the device (A^2, A^3 in ELLPACK form) equal classifyBondPaths(). */
TEST(CudaQMMMBondGraph, DeviceClassificationMatchesCPU) {
    std::map<string, string> properties;
    string reason = cudaUnavailable(properties);
    if (!reason.empty())
        GTEST_SKIP() << "CUDA platform unavailable: " << reason;
    void* plugin = dlopen(cudaPluginFile().c_str(), RTLD_LAZY | RTLD_NOLOAD);
    ASSERT_NE(plugin, nullptr) << dlerror();
    ClassifyFunction classify = (ClassifyFunction) dlsym(plugin, "openmmdftClassifyBondPathsCuda");
    ASSERT_NE(classify, nullptr) << dlerror();
    System system;
    system.addParticle(1.0);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, Platform::getPlatformByName("CUDA"));
    QMMMDeviceTest::testDeviceClassification(context, classify);
    dlclose(plugin);
}
