// McMurchie-Davidson Hermite expansions and Coulomb integrals (HermiteGaussians.h).
#include "HermiteGaussians.h"
#include <algorithm>
#include <array>
#include <vector>

namespace OpenMMDFT {
namespace QM {

namespace {

/** The compact ordering of (t, u, v) up to kMaxHermiteOrder, and for each entry of order >= 1 the recursion that
 * builds it: lower the first nonzero index d by one (parent) and by two (grandparent, times that index - 1). */
struct HermiteTable {
    std::vector<std::array<int, 3>> triples;
    std::vector<int> direction, parent, grandparent, multiplier;
    int index[kMaxHermiteOrder + 1][kMaxHermiteOrder + 1][kMaxHermiteOrder + 1];
    HermiteTable() {
        for (int N = 0; N <= kMaxHermiteOrder; N++)
            for (int t = N; t >= 0; t--)
                for (int u = N - t; u >= 0; u--) {
                    const int v = N - t - u;
                    index[t][u][v] = (int) triples.size();
                    triples.push_back({t, u, v});
                }
        for (const auto& tuv : triples) {
            int d = (tuv[0] > 0 ? 0 : tuv[1] > 0 ? 1 : 2);
            if (tuv[0] + tuv[1] + tuv[2] == 0) {
                direction.push_back(-1);
                parent.push_back(-1);
                grandparent.push_back(-1);
                multiplier.push_back(0);
                continue;
            }
            std::array<int, 3> down = tuv;
            down[d]--;
            direction.push_back(d);
            parent.push_back(index[down[0]][down[1]][down[2]]);
            multiplier.push_back(tuv[d] - 1);
            if (tuv[d] >= 2) {
                down[d]--;
                grandparent.push_back(index[down[0]][down[1]][down[2]]);
            }
            else
                grandparent.push_back(-1);
        }
    }
};

const HermiteTable& table() {
    static const HermiteTable hermite;
    return hermite;
}

} // namespace

int hermiteIndex(int t, int u, int v) {
    return table().index[t][u][v];
}

void hermiteTriple(int k, int& t, int& u, int& v) {
    const auto& tuv = table().triples[k];
    t = tuv[0];
    u = tuv[1];
    v = tuv[2];
}

void hermiteExpansion(int iMax, int jMax, double p, double PA, double PB, double* E) {
    const int T = iMax + jMax + 1;
    auto at = [&](int i, int j, int t) -> double& { return E[(i * (jMax + 1) + j) * T + t]; };
    for (int k = 0; k < (iMax + 1) * (jMax + 1) * T; k++)
        E[k] = 0;
    const double half = 0.5 / p;
    at(0, 0, 0) = 1;
    // E^(i+1)j_t = E^ij_(t-1) / (2p) + PA E^ij_t + (t+1) E^ij_(t+1), and the same in j with PB.
    for (int i = 0; i <= iMax; i++) {
        if (i > 0)
            for (int t = 0; t <= i; t++)
                at(i, 0, t) = (t > 0 ? half * at(i - 1, 0, t - 1) : 0.0) + PA * at(i - 1, 0, t) +
                              (t + 1 <= i - 1 ? (t + 1) * at(i - 1, 0, t + 1) : 0.0);
        for (int j = 1; j <= jMax; j++)
            for (int t = 0; t <= i + j; t++)
                at(i, j, t) = (t > 0 ? half * at(i, j - 1, t - 1) : 0.0) + (t <= i + j - 1 ? PB * at(i, j - 1, t) : 0.0) +
                              (t + 1 <= i + j - 1 ? (t + 1) * at(i, j - 1, t + 1) : 0.0);
    }
}

namespace {

/** R_tuv from the scaled R^n_000 = (-2p)^n F_n already in work[n * count * B + lane]: the recursion over the
 * compact entries, each step one operation across the lanes. */
void hermiteRecursion(int L, const double* PC, double* work, double* R) {
    constexpr int B = kHermiteBlock;
    const HermiteTable& h = table();
    const int count = hermiteCount(L);
    for (int k = 1; k < count; k++) {
        const auto& tuv = h.triples[k];
        const int N = tuv[0] + tuv[1] + tuv[2];
        const int up = h.parent[k], up2 = h.grandparent[k];
        const double m = h.multiplier[k];
        const double* x = PC + h.direction[k] * B;
        for (int n = 0; n <= L - N; n++) {
            double* out = work + (n * count + k) * B;
            const double* parent = work + ((n + 1) * count + up) * B;
            if (up2 >= 0) {
                const double* grandparent = work + ((n + 1) * count + up2) * B;
                for (int lane = 0; lane < B; lane++)
                    out[lane] = x[lane] * parent[lane] + m * grandparent[lane];
            }
            else
                for (int lane = 0; lane < B; lane++)
                    out[lane] = x[lane] * parent[lane];
        }
    }
    std::copy(work, work + count * B, R);
}

/// work[(n * count + k) * B + lane] = R^n of entry k; entries of order N are needed for n <= L - N only. Per thread,
/// sized for the largest order (hundreds of kilobytes: not for the stack).
double* recursionWork() {
    thread_local std::vector<double> work((size_t) (kMaxHermiteOrder + 1) * hermiteCount(kMaxHermiteOrder) * kHermiteBlock);
    return work.data();
}

} // namespace

void hermiteCoulombBlock(int L, double p, const double* PC, const double* F, double* R) {
    constexpr int B = kHermiteBlock;
    double* work = recursionWork();
    const int count = hermiteCount(L);
    double scale = 1;
    for (int n = 0; n <= L; n++) {
        for (int lane = 0; lane < B; lane++)
            work[n * count * B + lane] = scale * F[n * B + lane];
        scale *= -2 * p;
    }
    hermiteRecursion(L, PC, work, R);
}

void hermiteCoulombBlock(int L, const double* p, const double* PC, const double* F, double* R) {
    constexpr int B = kHermiteBlock;
    double* work = recursionWork();
    const int count = hermiteCount(L);
    double scale[B];
    for (int lane = 0; lane < B; lane++)
        scale[lane] = 1;
    for (int n = 0; n <= L; n++)
        for (int lane = 0; lane < B; lane++) {
            work[n * count * B + lane] = scale[lane] * F[n * B + lane];
            scale[lane] *= -2 * p[lane];
        }
    hermiteRecursion(L, PC, work, R);
}

} // namespace QM
} // namespace OpenMMDFT
