// One-centre quadratures: radial grids and Lebedev tables.
#include "openmmdft/qm/Elements.h"
#include "openmmdft/qm/Grid.h"
#include <openmm/OpenMMException.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>

namespace OpenMMDFT {
namespace QM {

namespace {
#include "lebedev.inc"
}

RadialGrid treutlerAhlrichsGrid(int n, int Z, bool atomicXi) {
    if (n < 1)
        throw OpenMM::OpenMMException("QM: number of radial points must be positive");
    const double xi = atomicXi ? treutlerXi(Z) : 1.0;
    RadialGrid g;
    g.r.resize(n);
    g.w.resize(n);
    const double step = M_PI / (n + 1), c = xi / std::log(2.0);
    // x_i = cos(i pi/(n+1)); r = xi/ln2 (1+x)^0.6 ln(2/(1-x)); Chebyshev (2nd kind) weights
    // turned into plain weights by dividing out sqrt(1-x^2).
    for (int i = 1; i <= n; i++) {
        const double x = std::cos(i * step), s = std::sin(i * step);
        const double r = -c * std::pow(1 + x, 0.6) * std::log((1 - x) / 2);
        const double drdx = c * std::pow(1 + x, 0.6) * (-0.6 / (1 + x) * std::log((1 - x) / 2) + 1 / (1 - x));
        g.r[n - i] = r; // reverse so that r increases
        g.w[n - i] = step * s * drdx * r * r;
    }
    return g;
}

RadialGrid beckeGrid(int n, int Z) {
    if (n < 1)
        throw OpenMM::OpenMMException("QM: number of radial points must be positive");
    const double rm = Z == 1 ? braggRadius(Z) : 0.5 * braggRadius(Z);
    RadialGrid g;
    g.r.resize(n);
    g.w.resize(n);
    for (int i = 1; i <= n; i++) {
        const double t = std::cos(i * M_PI / (n + 1));
        const double r = rm * (1 + t) / (1 - t);
        const double w = M_PI / (n + 1) * std::sin(i * M_PI / (n + 1)) * 2 * rm / ((1 - t) * (1 - t));
        g.r[n - i] = r;
        g.w[n - i] = w * r * r;
    }
    return g;
}

std::vector<int> lebedevSizes() {
    return std::vector<int>(std::begin(kLebedevSizes), std::end(kLebedevSizes));
}

const AngularGrid& lebedevGrid(int npoints) {
    static std::mutex mutex;
    static std::map<int, AngularGrid> cache;
    std::lock_guard<std::mutex> lock(mutex);
    auto it = cache.find(npoints);
    if (it != cache.end())
        return it->second;
    size_t start = 0;
    for (int n : kLebedevSizes) {
        if (n == npoints) {
            AngularGrid g;
            for (int i = 0; i < n; i++) {
                const double* p = kLebedevPoints[start + i];
                g.xyz.push_back({p[0], p[1], p[2]});
                g.w.push_back(p[3]);
            }
            return cache[npoints] = g;
        }
        start += n;
    }
    std::string sizes;
    for (int n : kLebedevSizes)
        sizes += " " + std::to_string(n);
    throw OpenMM::OpenMMException("QM: no Lebedev grid with " + std::to_string(npoints) +
                                  " points; available:" + sizes);
}

} // namespace QM
} // namespace OpenMMDFT
