#pragma once
// Internal to the engine: the wall clock of its phase timings (QMResult::timings).
#include <chrono>

namespace OpenMMDFT {
namespace QM {

/// Seconds on a steady clock, for differences.
inline double seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

} // namespace QM
} // namespace OpenMMDFT
