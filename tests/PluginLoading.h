#ifndef OPENMMDFT_TESTS_PLUGINLOADING_H_
#define OPENMMDFT_TESTS_PLUGINLOADING_H_

/* How the C++ tests make a platform usable: OpenMM's own platform plugin is loaded by file,
 * not from the plugin directory, so that no installed copy of openmm-dft is picked up; then
 * the kernels of the openmm-dft library the test links are registered. Once per process. */

#include "PluginPaths.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include <cstdlib>
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

/** OpenMM's platform plugin `openmmPluginFile` from openmmPluginDir(), if it loads (the CPU platform for benchmarks). */
inline void loadOpenMMPluginIfPresent(const std::string& openmmPluginFile) {
    try {
        OpenMM::Platform::loadPluginLibrary(openmmPluginDir() + "/" + openmmPluginFile);
    }
    catch (const OpenMM::OpenMMException&) {
    }
}

/**
 * OpenMM's platform plugin `openmmPluginFile` (in openmmPluginDir()), then openmm-dft's plugin for that platform by
 * file: $environmentVariable if set, else pluginFile. Programs load the GPU plugins this way rather than linking
 * them: one linked to OpenMM's OpenCL platform that then loads its CUDA platform binds both to one set of global
 * kernel sources, constructed and destroyed twice. Empty once both are loaded, otherwise why not.
 */
inline std::string loadPluginsByFile(const std::string& openmmPluginFile, const std::string& pluginFile, const char* environmentVariable) {
    const char* file = std::getenv(environmentVariable);
    try {
        OpenMM::Platform::loadPluginLibrary(openmmPluginDir() + "/" + openmmPluginFile);
        OpenMM::Platform::loadPluginLibrary(file != nullptr && *file != '\0' ? std::string(file) : pluginFile);
    }
    catch (const OpenMM::OpenMMException& e) {
        return e.what();
    }
    return "";
}

} // namespace QMMMTest

#endif
