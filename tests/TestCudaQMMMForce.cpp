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

/** Empty when a Context can be created with these properties, otherwise why not. */
string cudaUnavailable(const std::map<string, string>& properties) {
    if (!loadCuda().empty())
        return loadCuda();
    static std::map<std::map<string, string>, string> cache;
    auto found = cache.find(properties);
    if (found != cache.end())
        return found->second;
    string reason;
    try {
        Platform& platform = Platform::getPlatformByName("CUDA");
        System system;
        system.addParticle(1.0);
        VerletIntegrator integrator(0.001);
        Context context(system, integrator, platform, properties);
    }
    catch (const std::exception& e) {
        reason = e.what();
    }
    cache[properties] = reason;
    return reason;
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

/* Tolerances as for OpenCL: single and mixed evaluate pairs in float, double in double with
 * forces accumulated in 64-bit fixed point. */
static PlatformSetup singleSetup{"CUDA", {{"Precision", "single"}}, 1e-5, 1e-4};
static PlatformSetup mixedSetup{"CUDA", {{"Precision", "mixed"}}, 1e-5, 1e-4};
static PlatformSetup doubleSetup{"CUDA", {{"Precision", "double"}}, 1e-10, 1e-10};

static double finiteDifferenceTolerance(const PlatformSetup& setup) {
    return setup.properties.at("Precision") == "double" ? 1e-6 : 2e-3;
}

TEST_P(CudaQMMMForce, Topologies) { testTopologies(GetParam()); }
TEST_P(CudaQMMMForce, NoBonds) { testNoBonds(GetParam()); }
TEST_P(CudaQMMMForce, PeriodicWaterBox) {
    // In single precision OpenMM's nonbonded kernel sums pair energies in float.  For the
    // non-periodic box (molecules split at the faces, no images: large cancelling terms) OpenMM's
    // own NonbondedForce misses the Reference energy by 1.9e-5 relative on PoCL, and QMMMForce,
    // which runs the same kernel, matches NonbondedForce bit for bit.  So in single precision
    // this case compares with NonbondedForce on the same platform (WaterBoxSamePlatform) instead.
    if (GetParam().properties.at("Precision") == "single")
        GTEST_SKIP() << "single precision: 1e-5 against Reference is beyond OpenMM's own NonbondedForce here; see WaterBoxSamePlatform";
    testPeriodicWaterBox(GetParam());
}
TEST_P(CudaQMMMForce, WaterBoxSamePlatform) { QMMMDeviceTest::testWaterBoxAgainstSamePlatform(GetParam()); }
TEST_P(CudaQMMMForce, ReorderingIdenticalMolecules) { QMMMDeviceTest::testReorderingIdenticalMolecules(GetParam()); }
TEST_P(CudaQMMMForce, SharedExclusionsWithNonbondedForce) { QMMMDeviceTest::testSharedExclusionsWithNonbondedForce(GetParam()); }
TEST_P(CudaQMMMForce, FiniteDifference) { testFiniteDifference(GetParam(), finiteDifferenceTolerance(GetParam())); }
TEST_P(CudaQMMMForce, UpdateParameters) { testUpdateParameters(GetParam()); }
TEST_P(CudaQMMMForce, ForceGroups) { testForceGroups(GetParam()); }
TEST_P(CudaQMMMForce, BadInput) { testBadInput(GetParam()); }
TEST_P(CudaQMMMForce, QMRegionAgainstReference) {
    // The bounds: double 1e-8 Eh and 1e-7 Eh/bohr; mixed and single (MM pairs in float) 1e-6 and 1e-5.
    bool isDouble = GetParam().properties.at("Precision") == "double";
    QMMMDeviceTest::testQMRegionAgainstReference(GetParam(), isDouble ? 1e-8 : 1e-6, isDouble ? 1e-7 : 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Precisions, CudaQMMMForce, ::testing::Values(singleSetup, mixedSetup, doubleSetup),
                         [](const ::testing::TestParamInfo<PlatformSetup>& info) { return info.param.properties.at("Precision"); });

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
