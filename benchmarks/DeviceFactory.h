#ifndef OPENMMDFT_BENCHMARKS_DEVICEFACTORY_H_
#define OPENMMDFT_BENCHMARKS_DEVICEFACTORY_H_
/* A GPU platform's QM back end factory for the benchmarks that time the device's parts alone: a one-particle Context of
 * the platform in double precision, and the factory that the plugin (loaded by file, as BenchQMRegion loads it) hands
 * out through its hook openmmdft<Platform>XCBackendFactory. */
#include "../tests/PluginLoading.h"
#include "openmmdft/qm/XCBackend.h"
#include "openmm/Context.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include "openmm/System.h"
#include "openmm/VerletIntegrator.h"
#include <cstdlib>
#include <dlfcn.h>
#include <memory>
#include <string>

namespace BenchDevice {

struct DevicePlatform {
    OpenMM::System system;
    OpenMM::VerletIntegrator integrator{0.001};
    std::unique_ptr<OpenMM::Context> context;
    std::shared_ptr<const OpenMMDFT::QM::XCBackendFactory> factory;
    /** The device's name as the platform reports it. */
    std::string deviceName() const {
        const bool cuda = context->getPlatform().getName() == "CUDA";
        return context->getPlatform().getPropertyValue(*context, cuda ? "DeviceIndex" : "OpenCLPlatformName");
    }
};

/** Opens platformName ("CUDA" or "OpenCL"); an empty string, or why not. */
inline std::string openDevicePlatform(const std::string& platformName, DevicePlatform& device) {
    typedef void (*FactoryHook)(OpenMM::Context&, std::shared_ptr<const OpenMMDFT::QM::XCBackendFactory>&);
    if (platformName != "CUDA" && platformName != "OpenCL")
        return "the platform must be CUDA or OpenCL";
    const bool cuda = platformName == "CUDA";
    const std::string pluginFile = cuda ? OPENMMDFT_CUDA_PLUGIN : OPENMMDFT_OPENCL_PLUGIN;
    const char* variable = cuda ? "OPENMMDFT_CUDA_PLUGIN_FILE" : "OPENMMDFT_OPENCL_PLUGIN_FILE";
    const std::string reason = QMMMTest::loadPluginsByFile(cuda ? "libOpenMMCUDA.so" : "libOpenMMOpenCL.so", pluginFile, variable);
    if (!reason.empty())
        return platformName + " platform unavailable: " + reason;
    device.system.addParticle(1.0);
    try {
        device.context.reset(new OpenMM::Context(device.system, device.integrator, OpenMM::Platform::getPlatformByName(platformName),
                                                 {{"Precision", "double"}}));
    }
    catch (const OpenMM::OpenMMException& e) {
        return "no " + platformName + " Context: " + e.what();
    }
    const char* file = std::getenv(variable);
    void* plugin = dlopen(file != nullptr && *file != '\0' ? file : pluginFile.c_str(), RTLD_LAZY | RTLD_NOLOAD);
    FactoryHook hook = plugin ? (FactoryHook) dlsym(plugin, cuda ? "openmmdftCudaXCBackendFactory" : "openmmdftOpenCLXCBackendFactory")
                              : nullptr;
    if (hook == nullptr)
        return "the " + platformName + " plugin has no factory hook";
    hook(*device.context, device.factory);
    if (!device.factory)
        return "the " + platformName + " device has no double precision";
    return "";
}

} // namespace BenchDevice

#endif
