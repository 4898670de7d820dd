/* QMMMForce on the Reference and CPU platforms against OpenMM's NonbondedForce. */
#include "QMMMForceTestCases.h"

extern "C" void registerQMMMReferenceKernelFactories();

using namespace QMMMTest;

class ReferenceQMMMForce : public ::testing::TestWithParam<PlatformSetup> {
public:
    static void SetUpTestSuite() {
        static bool registered = false;
        if (!registered) {
            // The CPU platform is a plugin of OpenMM; load it by file so that no installed copy of openmm-dft is picked up.
            try {
                Platform::loadPluginLibrary(string(OPENMM_PLUGIN_DIR) + "/libOpenMMCPU.so");
            }
            catch (const OpenMMException&) {
            }
            registerQMMMReferenceKernelFactories();
            registered = true;
        }
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
