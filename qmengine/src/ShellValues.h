#pragma once
// Internal to the engine: the shared shell evaluation (shared/shellValues.cc, also compiled into the GPU platforms'
// kernels) as host C++, and the host's calls of it.
#include "openmmdft/qm/ShellTables.h"
#include <Eigen/Core>
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
                               t.pureMatrix.data(), gradX != nullptr ? 1 : 0, value, gradX, gradY, gradZ);
}

/**
 * Shell s's values at npoints points, written to value[p + m ld] for its functions m (a column-major block, such as
 * Eigen's phi.col(first).data() with ld = phi.rows()); with gradX (then gradY, gradZ too) also their d/dx, d/dy,
 * d/dz, laid out the same way. The radial factors of a chunk of points are formed together (a loop the compiler
 * vectorizes, with a vectorizable exp), the angular part point by point by the shared shellAngular.
 */
void shellValuesAtPoints(const ShellTables& t, int s, const double* x, const double* y, const double* z, int npoints,
                         Eigen::Index ld, double* value, double* gradX = nullptr, double* gradY = nullptr, double* gradZ = nullptr);

} // namespace QM
} // namespace OpenMMDFT
