#ifndef OPENMMDFT_TESTS_PLUGINLOADING_H_
#define OPENMMDFT_TESTS_PLUGINLOADING_H_

/* How the C++ tests make a platform usable: OpenMM's own platform plugin is loaded by file,
 * not from the plugin directory, so that no installed copy of openmm-dft is picked up; then
 * the kernels of the openmm-dft library the test links are registered. Once per process. */

#include "PluginPaths.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include <set>
#include <string>

namespace QMMMTest {

inline void loadPlatformOnce(const std::string& openmmPluginFile, void (*registerKernels)()) {
    static std::set<std::string> loaded;
    if (!loaded.insert(openmmPluginFile).second)
        return;
    try {
        OpenMM::Platform::loadPluginLibrary(openmmPluginDir() + "/" + openmmPluginFile);
    }
    catch (const OpenMM::OpenMMException&) {
        // No such platform here (no OpenCL device, no CUDA driver): the tests report or skip it.
    }
    registerKernels();
}

/**
 * OpenMM's CUDA platform, then the openmm-dft CUDA plugin by file (its registerKernelFactories() runs on
 * loading). The plugin needs the driver (libcuda.so.1), which machines without a GPU lack, so test programs
 * are not linked to it. Empty once both are loaded, otherwise why not. Once per process.
 */
inline const std::string& loadCudaPluginOnce(const std::string& pluginFile) {
    static bool tried = false;
    static std::string reason;
    if (!tried) {
        tried = true;
        try {
            OpenMM::Platform::loadPluginLibrary(openmmPluginDir() + "/libOpenMMCUDA.so");
            OpenMM::Platform::loadPluginLibrary(pluginFile);
        }
        catch (const OpenMM::OpenMMException& e) {
            reason = std::string("OpenMM's CUDA platform cannot be loaded (no CUDA driver?): ") + e.what();
        }
    }
    return reason;
}

} // namespace QMMMTest

#endif
