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
#include <stdexcept>
#include <string>

using namespace OpenMM;
using namespace GpuXCTest;

typedef void (*FactoryHook)(Context&, std::shared_ptr<const XCBackendFactory>&);

class CudaXCBackend : public ::testing::TestWithParam<Case> {};

/** A CUDA Context in double precision and its factory from the plugin's hook; the reason to skip when there is none. */
static std::string cudaFactory(std::unique_ptr<Context>& context, System& system, VerletIntegrator& integrator, void*& plugin,
                               std::shared_ptr<const XCBackendFactory>& factory) {
    const std::string& reason = QMMMTest::loadCudaPluginOnce(QMMMTest::cudaPluginFile());
    if (!reason.empty())
        return reason;
    system.addParticle(1.0);
    try {
        context.reset(new Context(system, integrator, Platform::getPlatformByName("CUDA"), {{"Precision", "double"}}));
    }
    catch (const std::exception& e) {
        return std::string("CUDA platform unavailable: ") + e.what();
    }
    plugin = dlopen(QMMMTest::cudaPluginFile().c_str(), RTLD_LAZY | RTLD_NOLOAD);
    if (plugin == nullptr)
        throw std::runtime_error(dlerror());
    FactoryHook hook = (FactoryHook) dlsym(plugin, "openmmdftCudaXCBackendFactory");
    if (hook == nullptr)
        throw std::runtime_error(dlerror());
    hook(*context, factory);
    if (factory == nullptr)
        throw std::runtime_error("the CUDA device has no double precision");
    return "";
}

TEST(CudaDensityFitting, DeviceIntegralsMatchLibint) {
    std::unique_ptr<Context> context;
    System system;
    VerletIntegrator integrator(0.001);
    void* plugin = nullptr;
    std::shared_ptr<const XCBackendFactory> factory;
    const std::string reason = cudaFactory(context, system, integrator, plugin, factory);
    if (!reason.empty())
        GTEST_SKIP() << reason;
    testDeviceDensityFittingMatchesLibint(factory, "DZVP", true);
    testDeviceDensityFittingMatchesLibint(factory, "DZVP", false);
    testDeviceDensityFittingMatchesLibint(factory, "def2-TZVP", true);
    testDeviceDensityFittingMatchesLibint(factory, "DZVP", true, true);
    factory.reset();
    dlclose(plugin);
}

TEST(CudaPointCharges, DeviceGradientMatchesHost) {
    std::unique_ptr<Context> context;
    System system;
    VerletIntegrator integrator(0.001);
    void* plugin = nullptr;
    std::shared_ptr<const XCBackendFactory> factory;
    const std::string reason = cudaFactory(context, system, integrator, plugin, factory);
    if (!reason.empty())
        GTEST_SKIP() << reason;
    testDevicePointChargeGradientMatchesHost(factory, "DZVP");
    testDevicePointChargeGradientMatchesHost(factory, "def2-TZVP");
    factory.reset();
    dlclose(plugin);
}

TEST_P(CudaXCBackend, MatchesTheHostThroughTheEngine) {
    std::unique_ptr<Context> context;
    System system;
    VerletIntegrator integrator(0.001);
    void* plugin = nullptr;
    std::shared_ptr<const XCBackendFactory> factory;
    const std::string reason = cudaFactory(context, system, integrator, plugin, factory);
    if (!reason.empty())
        GTEST_SKIP() << reason;
    testDeviceXCMatchesHost(factory, GetParam());
    factory.reset();
    dlclose(plugin);
}

INSTANTIATE_TEST_SUITE_P(Cases, CudaXCBackend, ::testing::ValuesIn(allCases()));
