#pragma once
// Temporary on/off switches read from the environment, for measuring two variants against each other on a GPU
// machine in one run (tools/run-gpu-checks.sh ENV_AB); the engine and the platforms read them the same way.
#include <cstdlib>
#include <cstring>

namespace OpenMMDFT {
namespace QM {

/** Whether the environment variable name is set to 1. */
inline bool environmentSwitchOn(const char* name) {
    const char* value = std::getenv(name);
    return value != nullptr && std::strcmp(value, "1") == 0;
}

} // namespace QM
} // namespace OpenMMDFT
