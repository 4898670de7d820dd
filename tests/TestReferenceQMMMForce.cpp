/* QMMMForce on the Reference and CPU platforms against OpenMM's NonbondedForce. */
#include "PluginLoading.h"
#include "QMMMForceTestCases.h"

extern "C" void registerQMMMReferenceKernelFactories();

using namespace QMMMTest;

class ReferenceQMMMForce : public ::testing::TestWithParam<PlatformSetup> {
public:
    static void SetUpTestSuite() {
        loadPlatformOnce("libOpenMMCPU.so", registerQMMMReferenceKernelFactories);
    }
};

static PlatformSetup referenceSetup{"Reference", {}, 1e-10, 1e-10};
static PlatformSetup cpuSetup{"CPU", {{"Threads", "2"}}, 1e-10, 1e-10};

TEST_P(ReferenceQMMMForce, Topologies) { testTopologies(GetParam()); }
TEST_P(ReferenceQMMMForce, NoBonds) { testNoBonds(GetParam()); }
TEST_P(ReferenceQMMMForce, PeriodicWaterBox) { testPeriodicWaterBox(GetParam()); }
TEST_P(ReferenceQMMMForce, FiniteDifference) { testFiniteDifference(GetParam(), 1e-6); }
TEST_P(ReferenceQMMMForce, UpdateParameters) { testUpdateParameters(GetParam()); }
TEST_P(ReferenceQMMMForce, ForceGroups) { testForceGroups(GetParam()); }
TEST_P(ReferenceQMMMForce, BadInput) { testBadInput(GetParam()); }
TEST(QMMMForceSerialization, RoundTrip) { testSerializationRoundTrip(); }

INSTANTIATE_TEST_SUITE_P(Platforms, ReferenceQMMMForce, ::testing::Values(referenceSetup, cpuSetup),
                         [](const ::testing::TestParamInfo<PlatformSetup>& info) { return info.param.name; });
