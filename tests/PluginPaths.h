#ifndef OPENMMDFT_TESTS_PLUGINPATHS_H_
#define OPENMMDFT_TESTS_PLUGINPATHS_H_

/* Where the C++ tests and benchmarks find OpenMM's platform plugins and openmm-dft's CUDA plugin: the
 * build's paths (compile-time definitions), unless the environment names others. The environment is
 * how a bundle of prebuilt test programs runs on another machine (tools/device-bundle.sh). */

#include <cstdlib>
#include <string>

namespace QMMMTest {

/** OpenMM's plugin folder: $OPENMMDFT_OPENMM_PLUGIN_DIR, else the one this build used. */
inline std::string openmmPluginDir() {
    const char* dir = std::getenv("OPENMMDFT_OPENMM_PLUGIN_DIR");
    return (dir != nullptr && *dir != '\0') ? dir : OPENMM_PLUGIN_DIR;
}

#ifdef OPENMMDFT_CUDA_PLUGIN
/** openmm-dft's CUDA plugin library: $OPENMMDFT_CUDA_PLUGIN_FILE, else the one this build made. */
inline std::string cudaPluginFile() {
    const char* file = std::getenv("OPENMMDFT_CUDA_PLUGIN_FILE");
    return (file != nullptr && *file != '\0') ? file : OPENMMDFT_CUDA_PLUGIN;
}
#endif

} // namespace QMMMTest

#endif
