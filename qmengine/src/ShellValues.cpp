// The host's evaluation of shells at many points (ShellValues.h): the shared shell evaluation's angular part, fed
// with radial factors formed a chunk of points at a time.
#include "ShellValues.h"
#include "VectorExp.h"
#include <algorithm>

namespace OpenMMDFT {
namespace QM {

void shellValuesAtPoints(const ShellTables& t, int s, const double* x, const double* y, const double* z, int npoints,
                         Eigen::Index ld, double* value, double* gradX, double* gradY, double* gradZ) {
    constexpr int kChunk = 64;  // points whose radial factors are formed together (stack arrays of 6 x 512 bytes)
    const bool withGradients = gradX != nullptr;
    const int l = t.l[s], size = t.pure[s] && l >= 2 ? 2 * l + 1 : (l + 1) * (l + 2) / 2;
    const double cx = t.center[3 * s], cy = t.center[3 * s + 1], cz = t.center[3 * s + 2];
    const double* exponent = &t.exponent[t.primStart[s]];
    const double* coefficient = &t.coefficient[t.primStart[s]];
    const int numPrim = t.numPrim[s];
    double dx[kChunk], dy[kChunk], dz[kChunk], r2[kChunk], radial[kChunk], radialDerivative[kChunk];
    double v[10], g[3][10];  // an f shell's cartesian components at most
    for (int first = 0; first < npoints; first += kChunk) {
        const int n = std::min(kChunk, npoints - first);
        for (int p = 0; p < n; p++) {
            dx[p] = x[first + p] - cx;
            dy[p] = y[first + p] - cy;
            dz[p] = z[first + p] - cz;
            r2[p] = dx[p] * dx[p] + dy[p] * dy[p] + dz[p] * dz[p];
            radial[p] = 0;
            radialDerivative[p] = 0;
        }
        for (int k = 0; k < numPrim; k++) {
            const double a = exponent[k], c = coefficient[k];
            for (int p = 0; p < n; p++) {
                const double term = c * expOfNonPositive(-a * r2[p]);
                radial[p] += term;
                radialDerivative[p] += a * term;
            }
        }
        for (int p = 0; p < n; p++) {
            SharedKernels::shellAngular(l, t.pure[s], dx[p], dy[p], dz[p], radial[p], radialDerivative[p], t.cartPowers.data(),
                                        t.pureMatrix.data(), withGradients ? 1 : 0, v, g[0], g[1], g[2]);
            const Eigen::Index row = first + p;
            for (int m = 0; m < size; m++)
                value[row + m * ld] = v[m];
            if (withGradients)
                for (int m = 0; m < size; m++) {
                    gradX[row + m * ld] = g[0][m];
                    gradY[row + m * ld] = g[1][m];
                    gradZ[row + m * ld] = g[2][m];
                }
        }
    }
}

} // namespace QM
} // namespace OpenMMDFT
