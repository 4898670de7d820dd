#pragma once
// Internal to the engine: the shared shell evaluation (shared/shellValues.cc, also compiled into the GPU platforms'
// kernels) as host C++, and the host's calls of it.
#include "openmmdft/qm/ShellTables.h"
#include <cmath>

namespace OpenMMDFT {
namespace QM {
namespace SharedKernels {

using std::exp;
#define DEVICE inline
#define GLOBAL
#define RESTRICT __restrict
#include "shared/shellValues.cc"
#undef DEVICE
#undef GLOBAL
#undef RESTRICT

} // namespace SharedKernels

/** Shell s's values (and, with gradients, their d/dx, d/dy, d/dz at the point) at point (x, y, z). */
inline void shellValuesAt(const ShellTables& t, int s, double x, double y, double z, double* value, double* gradX = nullptr,
                          double* gradY = nullptr, double* gradZ = nullptr) {
    SharedKernels::shellValues(s, x - t.center[3 * s], y - t.center[3 * s + 1], z - t.center[3 * s + 2], t.l.data(), t.pure.data(),
                               t.primStart.data(), t.numPrim.data(), t.exponent.data(), t.coefficient.data(),
                               t.cartPowers.data(), t.pureMatrix.data(), gradX != nullptr ? 1 : 0, value, gradX, gradY, gradZ);
}

} // namespace QM
} // namespace OpenMMDFT
