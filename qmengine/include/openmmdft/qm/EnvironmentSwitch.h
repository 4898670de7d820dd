#pragma once
// Temporary settings read from the environment, for measuring variants against each other on a GPU machine in one run
// (tools/run-gpu-checks.sh ENV_AB); each is removed once a lease has decided it (docs/PERFORMANCE.md says which).
#include <cstdlib>

namespace OpenMMDFT {
namespace QM {

/** The environment variable name as a positive integer, else fallback (unset, empty or not a positive number). */
inline int environmentCount(const char* name, int fallback) {
    const char* value = std::getenv(name);
    if (value == nullptr)
        return fallback;
    char* end = nullptr;
    const long count = std::strtol(value, &end, 10);
    return (end != value && *end == '\0' && count > 0 && count < 100000) ? (int) count : fallback;
}

} // namespace QM
} // namespace OpenMMDFT
