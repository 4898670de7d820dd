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
        // s and p shells (most of a basis) by whole columns, in vector instructions; the same formulas as
        // shellAngular (p shells are cartesian x, y, z there too), which takes the higher shells point by point.
        if (l == 0) {
            double* __restrict v0 = value + first;
            for (int p = 0; p < n; p++)
                v0[p] = radial[p];
            if (withGradients)
                for (int p = 0; p < n; p++) {
                    const double slope = -2.0 * radialDerivative[p];
                    gradX[first + p] = slope * dx[p];
                    gradY[first + p] = slope * dy[p];
                    gradZ[first + p] = slope * dz[p];
                }
            continue;
        }
        if (l == 1) {
            const double* d[3] = {dx, dy, dz};
            for (int m = 0; m < 3; m++) {
                const double* __restrict own = d[m];
                double* __restrict v = value + first + m * ld;
                for (int p = 0; p < n; p++)
                    v[p] = radial[p] * own[p];
                if (withGradients) {
                    // d/dx_k [R x_m] = delta_km R - 2 x_m x_k sum c a e^(-a r2)
                    double* __restrict g[3] = {gradX + first + m * ld, gradY + first + m * ld, gradZ + first + m * ld};
                    for (int k = 0; k < 3; k++) {
                        const double* __restrict other = d[k];
                        double* __restrict out = g[k];
                        for (int p = 0; p < n; p++)
                            out[p] = (k == m ? radial[p] : 0.0) - 2.0 * own[p] * other[p] * radialDerivative[p];
                    }
                }
            }
            continue;
        }
        for (int p = 0; p < n; p++) {
            SharedKernels::shellAngular(l, t.pure[s], dx[p], dy[p], dz[p], radial[p], radialDerivative[p], t.pureMatrix.data(),
                                        withGradients ? 1 : 0, v, g[0], g[1], g[2]);
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
