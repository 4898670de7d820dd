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

/** Empty when a Context can be created with these properties, otherwise why not. */
string openCLUnavailable(const std::map<string, string>& properties) {
    static std::map<std::map<string, string>, string> cache;
    auto found = cache.find(properties);
    if (found != cache.end())
        return found->second;
    string reason;
    try {
        Platform& platform = Platform::getPlatformByName("OpenCL");
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

class OpenCLQMMMForce : public ::testing::TestWithParam<PlatformSetup> {
public:
    void SetUp() override {
        registerOpenCL();
        string reason = openCLUnavailable(GetParam().properties);
        if (!reason.empty())
            GTEST_SKIP() << "OpenCL platform unavailable with these properties: " << reason;
    }
};

/* Tolerances.  single and mixed evaluate pairs in float: 1e-5 relative energy, 1e-4 of the
 * largest force component.  double (PoCL and GPUs with fp64) evaluates pairs in double and
 * accumulates forces in 64-bit fixed point (resolution 2^-32 kJ/mol/nm): 1e-10 holds. */
static PlatformSetup singleSetup{"OpenCL", {{"Precision", "single"}}, 1e-5, 1e-4};
static PlatformSetup mixedSetup{"OpenCL", {{"Precision", "mixed"}}, 1e-5, 1e-4};
static PlatformSetup doubleSetup{"OpenCL", {{"Precision", "double"}}, 1e-10, 1e-10};

/* The finite-difference check takes a central difference of energies 2e-4 nm apart: in float
 * the energy is good to ~1e-7 relative, which limits it to ~1e-3; in double 1e-6 holds. */
static double finiteDifferenceTolerance(const PlatformSetup& setup) {
    return setup.properties.at("Precision") == "double" ? 1e-6 : 2e-3;
}

TEST_P(OpenCLQMMMForce, Topologies) { testTopologies(GetParam()); }
TEST_P(OpenCLQMMMForce, NoBonds) { testNoBonds(GetParam()); }
TEST_P(OpenCLQMMMForce, PeriodicWaterBox) {
    // In single precision OpenMM's nonbonded kernel sums pair energies in float.  For the
    // non-periodic box (molecules split at the faces, no images: large cancelling terms) OpenMM's
    // own NonbondedForce misses the Reference energy by 1.9e-5 relative on PoCL, and QMMMForce,
    // which runs the same kernel, matches NonbondedForce bit for bit.  So in single precision
    // this case compares with NonbondedForce on the same platform (WaterBoxSamePlatform) instead.
    if (GetParam().properties.at("Precision") == "single")
        GTEST_SKIP() << "single precision: 1e-5 against Reference is beyond OpenMM's own NonbondedForce here; see WaterBoxSamePlatform";
    testPeriodicWaterBox(GetParam());
}
TEST_P(OpenCLQMMMForce, WaterBoxSamePlatform) { QMMMDeviceTest::testWaterBoxAgainstSamePlatform(GetParam()); }
TEST_P(OpenCLQMMMForce, ReorderingIdenticalMolecules) { QMMMDeviceTest::testReorderingIdenticalMolecules(GetParam()); }
TEST_P(OpenCLQMMMForce, SharedExclusionsWithNonbondedForce) { QMMMDeviceTest::testSharedExclusionsWithNonbondedForce(GetParam()); }
TEST_P(OpenCLQMMMForce, FiniteDifference) { testFiniteDifference(GetParam(), finiteDifferenceTolerance(GetParam())); }
TEST_P(OpenCLQMMMForce, UpdateParameters) { testUpdateParameters(GetParam()); }
TEST_P(OpenCLQMMMForce, ForceGroups) { testForceGroups(GetParam()); }
TEST_P(OpenCLQMMMForce, BadInput) { testBadInput(GetParam()); }
TEST_P(OpenCLQMMMForce, QMRegionAgainstReference) {
    // The bounds: double 1e-8 Eh and 1e-7 Eh/bohr; mixed and single (MM pairs in float) 1e-6 and 1e-5.
    bool isDouble = GetParam().properties.at("Precision") == "double";
    QMMMDeviceTest::testQMRegionAgainstReference(GetParam(), isDouble ? 1e-8 : 1e-6, isDouble ? 1e-7 : 1e-5);
}

INSTANTIATE_TEST_SUITE_P(Precisions, OpenCLQMMMForce, ::testing::Values(singleSetup, mixedSetup, doubleSetup),
                         [](const ::testing::TestParamInfo<PlatformSetup>& info) { return info.param.properties.at("Precision"); });

/** The classes computed on the device (A^2, A^3 in ELLPACK form) equal classifyBondPaths(). */
TEST(OpenCLQMMMBondGraph, DeviceClassificationMatchesCPU) {
    registerOpenCL();
    std::map<string, string> properties;
    string reason = openCLUnavailable(properties);
    if (!reason.empty())
        GTEST_SKIP() << "OpenCL platform unavailable: " << reason;
    System system;
    system.addParticle(1.0);
    VerletIntegrator integrator(0.001);
    Context context(system, integrator, Platform::getPlatformByName("OpenCL"));
    QMMMDeviceTest::testDeviceClassification(context, openmmdftClassifyBondPathsOpenCL);
}
