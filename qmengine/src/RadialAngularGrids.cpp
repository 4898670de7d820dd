// One-centre quadratures: radial grids and Lebedev tables.
#include "openmmdft/qm/Elements.h"
#include "openmmdft/qm/Grid.h"
#include <openmm/OpenMMException.h>
#include <algorithm>
#include <cmath>
#include <map>
#include <mutex>
#include <string>

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

std::vector<int> prunedAngularSizes(GridPruning pruning, int Z, const RadialGrid& radial, int angularPoints) {
    const int n = (int) radial.r.size();
    std::vector<int> sizes(n, angularPoints);
    if (pruning == GridPruning::TreutlerAhlrichs) {
        // Treutler and Ahlrichs, J. Chem. Phys. 102, 346 (1995): 14 points on the inner third of the shells, 50 up to
        // the inner half (never more than the full grid).
        for (int i = 0; i < n; i++)
            if (i < n / 3)
                sizes[i] = std::min(14, angularPoints);
            else if (i < n / 2)
                sizes[i] = std::min(50, angularPoints);
    }
    else if (pruning == GridPruning::NWChem) {
        // NWChem's scheme as PySCF has it (gen_grid.nwchem_prune): the shell's radius over the atom's Bragg radius,
        // against boundaries per row of the periodic table, picks one of five Lebedev sizes counted from 38 points.
        if (angularPoints < 50)
            return sizes;
        const std::vector<int> all = lebedevSizes();
        const std::vector<int> sizesFrom38(std::find(all.begin(), all.end(), 38), all.end());
        int level[5] = {1, 2, 2, 2, 1};
        if (angularPoints > 50) {
            const auto at = std::find(sizesFrom38.begin(), sizesFrom38.end(), angularPoints);
            if (at == sizesFrom38.end())
                throw OpenMM::OpenMMException("QM: no Lebedev grid with " + std::to_string(angularPoints) + " points");
            const int index = (int) (at - sizesFrom38.begin());
            const int levels[5] = {1, 3, index - 1, index, index - 1};
            std::copy(levels, levels + 5, level);
        }
        static const double boundaries[3][4] = {{0.25, 0.5, 1.0, 4.5}, {0.1667, 0.5, 0.9, 3.5}, {0.1, 0.4, 0.8, 2.5}};
        const double* bound = boundaries[Z <= 2 ? 0 : (Z <= 10 ? 1 : 2)];
        const double atomRadius = braggRadius(Z);
        for (int i = 0; i < n; i++) {
            int place = 0;
            for (int k = 0; k < 4; k++)
                place += (radial.r[i] / atomRadius > bound[k] ? 1 : 0);
            sizes[i] = sizesFrom38[level[place]];
        }
    }
    return sizes;
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
