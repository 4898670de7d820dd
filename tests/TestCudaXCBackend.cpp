/* The device XC back end on OpenMM's CUDA platform against the host back end: the cases of
 * platforms/common/tests/GpuXCBackendTestCases.h. Skips where CUDA cannot run. As for TestCudaQMMMForce,
 * this program is not linked to the CUDA plugin (it needs libcuda.so.1): the plugin is loaded by file and its
 * test hook, which makes the CUDA Context's factory, found with dlsym. */
#include "PluginLoading.h"
#include "openmm/Context.h"
#include "openmm/System.h"
#include "openmm/VerletIntegrator.h"
#include "../platforms/common/tests/GpuXCBackendTestList.h"
#include <dlfcn.h>
#include <memory>
#include <stdexcept>
#include <string>

using namespace OpenMM;
using namespace GpuXCTest;

typedef void (*FactoryHook)(Context&, std::shared_ptr<const XCBackendFactory>&);

/**
 * A CUDA Context in double precision and the XC back end factory of the plugin's test hook; reason says why there is
 * none (the test then skips). The plugin handle is released after the factory.
 */
struct CudaFactory {
    std::unique_ptr<Context> context;
    System system;
    VerletIntegrator integrator{0.001};
    void* plugin = nullptr;
    std::shared_ptr<const XCBackendFactory> factory;
    std::string reason;
    CudaFactory() {
        reason = QMMMTest::loadCudaPluginOnce(QMMMTest::cudaPluginFile());
        if (!reason.empty())
            return;
        system.addParticle(1.0);
        try {
            context.reset(new Context(system, integrator, Platform::getPlatformByName("CUDA"), {{"Precision", "double"}}));
        }
        catch (const std::exception& e) {
            reason = std::string("CUDA platform unavailable: ") + e.what();
            return;
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
    }
    ~CudaFactory() {
        factory.reset();
        if (plugin != nullptr)
            dlclose(plugin);
    }
};

TEST(CudaDeviceArrays, KeptAcrossGeometries) {
    CudaFactory cuda;
    if (!cuda.reason.empty())
        GTEST_SKIP() << cuda.reason;
    testDeviceArraysKeptAcrossGeometries(cuda.factory);  // the allocation count on OpenCL (the same common code)
}

GPU_XC_BACKEND_TESTS(Cuda, CudaFactory, true);
