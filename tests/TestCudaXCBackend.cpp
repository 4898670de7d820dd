/* The device XC back end on OpenMM's CUDA platform against the host back end: the cases of
 * platforms/common/tests/GpuXCBackendTestCases.h. Skips where CUDA cannot run. As for TestCudaQMMMForce,
 * this program is not linked to the CUDA plugin (it needs libcuda.so.1): the plugin is loaded by file and its
 * test hook, which makes the CUDA Context's factory, found with dlsym. */
#include "PluginLoading.h"
#include "openmm/Context.h"
#include "openmm/System.h"
#include "openmm/VerletIntegrator.h"
#include "../platforms/common/tests/GpuXCBackendTestCases.h"
#include <dlfcn.h>
#include <memory>

using namespace OpenMM;
using namespace GpuXCTest;

typedef void (*FactoryHook)(Context&, std::shared_ptr<const XCBackendFactory>&);

class CudaXCBackend : public ::testing::TestWithParam<Case> {};

TEST_P(CudaXCBackend, MatchesTheHostThroughTheEngine) {
    const std::string& reason = QMMMTest::loadCudaPluginOnce(QMMMTest::cudaPluginFile());
    if (!reason.empty())
        GTEST_SKIP() << reason;
    std::unique_ptr<Context> context;
    System system;
    system.addParticle(1.0);
    VerletIntegrator integrator(0.001);
    try {
        context.reset(new Context(system, integrator, Platform::getPlatformByName("CUDA"), {{"Precision", "double"}}));
    }
    catch (const std::exception& e) {
        GTEST_SKIP() << "CUDA platform unavailable: " << e.what();
    }
    void* plugin = dlopen(QMMMTest::cudaPluginFile().c_str(), RTLD_LAZY | RTLD_NOLOAD);
    ASSERT_NE(plugin, nullptr) << dlerror();
    FactoryHook hook = (FactoryHook) dlsym(plugin, "openmmdftCudaXCBackendFactory");
    ASSERT_NE(hook, nullptr) << dlerror();
    std::shared_ptr<const XCBackendFactory> factory;
    hook(*context, factory);
    ASSERT_TRUE(factory != nullptr) << "the CUDA device has no double precision";
    testDeviceXCMatchesHost(factory, GetParam());
    factory.reset();
    dlclose(plugin);
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaXCBackend, ::testing::ValuesIn(allCases()));
