#ifndef OPENMMDFT_TESTS_PLUGINLOADING_H_
#define OPENMMDFT_TESTS_PLUGINLOADING_H_

/* How the C++ tests make a platform usable: OpenMM's own platform plugin is loaded by file,
 * not from the plugin directory, so that no installed copy of openmm-dft is picked up; then
 * the kernels of the openmm-dft library the test links are registered. Once per process. */

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
        OpenMM::Platform::loadPluginLibrary(std::string(OPENMM_PLUGIN_DIR) + "/" + openmmPluginFile);
    }
    catch (const OpenMM::OpenMMException&) {
        // No such platform here (no OpenCL device, no CUDA driver): the tests report or skip it.
    }
    registerKernels();
}

} // namespace QMMMTest

#endif
