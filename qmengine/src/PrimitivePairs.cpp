// Primitive pairs in Hermite Gaussians and the density contracted into them (PrimitivePairs.h).
#include "PrimitivePairs.h"
#include "openmmdft/qm/Angular.h"
#include <algorithm>
#include <cmath>

namespace OpenMMDFT {
namespace QM {

std::vector<PrimitivePair> primitivePairs(const Shell& a, const Shell& b, int raise) {
    std::vector<PrimitivePair> pairs;
    double AB2 = 0;
    for (int d = 0; d < 3; d++)
        AB2 += (a.center[d] - b.center[d]) * (a.center[d] - b.center[d]);
    for (size_t i = 0; i < a.exponents.size(); i++)
        for (size_t j = 0; j < b.exponents.size(); j++) {
            PrimitivePair pp;
            pp.alpha = a.exponents[i];
            const double beta = b.exponents[j];
            pp.p = pp.alpha + beta;
            pp.K = a.coefficients[i] * b.coefficients[j] * std::exp(-pp.alpha * beta / pp.p * AB2);
            if (std::abs(pp.K) * std::pow(M_PI / pp.p, 1.5) < kPrimitivePairCutoff)
                continue;
            pp.iMax = a.l + raise;
            pp.jMax = b.l;
            for (int d = 0; d < 3; d++) {
                pp.P[d] = (pp.alpha * a.center[d] + beta * b.center[d]) / pp.p;
                pp.E[d].resize((size_t) (pp.iMax + 1) * (pp.jMax + 1) * (pp.iMax + pp.jMax + 1));
                hermiteExpansion(pp.iMax, pp.jMax, pp.p, pp.P[d] - a.center[d], pp.P[d] - b.center[d], pp.E[d].data());
            }
            pairs.push_back(std::move(pp));
        }
    return pairs;
}

void contractPairDensity(const PrimitivePair& pp, const Shell& a, const Shell& b, const Eigen::MatrixXd& Pc, int o1, int o2,
                         double pairFactor, double* D, double* DA) {
    const auto& ca = cartesianComponents(a.l);
    const auto& cb = cartesianComponents(b.l);
    const int L = a.l + b.l, countL = hermiteCount(L), countL1 = hermiteCount(L + 1);
    std::fill(D, D + countL, 0.0);
    std::fill(DA, DA + 3 * countL1, 0.0);
    for (size_t i = 0; i < ca.size(); i++)
        for (size_t j = 0; j < cb.size(); j++) {
            const double density = pairFactor * pp.K * Pc(o1 + i, o2 + j);
            if (density == 0)
                continue;
            const int ai[3] = {ca[i][0], ca[i][1], ca[i][2]}, bj[3] = {cb[j][0], cb[j][1], cb[j][2]};
            for (int t = 0; t <= ai[0] + bj[0] + 1; t++)
                for (int u = 0; u <= ai[1] + bj[1] + 1; u++)
                    for (int v = 0; v <= ai[2] + bj[2] + 1 && t + u + v <= L + 1; v++) {
                        // Only one direction is raised, so terms beyond order L + 1 vanish.
                        const int tuv[3] = {t, u, v};
                        // Plain factors, and the bra-derivative factor 2a E^(i+1)j - i E^(i-1)j per direction.
                        double plain[3], raised[3];
                        for (int d = 0; d < 3; d++) {
                            const int top = ai[d] + bj[d];
                            plain[d] = (tuv[d] <= top ? pp.e(d, ai[d], bj[d], tuv[d]) : 0.0);
                            raised[d] = 2 * pp.alpha * pp.e(d, ai[d] + 1, bj[d], tuv[d]);
                            if (ai[d] > 0 && tuv[d] <= top - 1)
                                raised[d] -= ai[d] * pp.e(d, ai[d] - 1, bj[d], tuv[d]);
                        }
                        const int k = hermiteIndex(t, u, v);
                        if (k < countL)
                            D[k] += density * plain[0] * plain[1] * plain[2];
                        DA[k] += density * raised[0] * plain[1] * plain[2];
                        DA[countL1 + k] += density * plain[0] * raised[1] * plain[2];
                        DA[2 * countL1 + k] += density * plain[0] * plain[1] * raised[2];
                    }
        }
}

std::vector<int> raisedHermiteIndices(int L) {
    std::vector<int> shifted(3 * (size_t) hermiteCount(L));
    for (int k = 0; k < hermiteCount(L); k++) {
        int t, u, v;
        hermiteTriple(k, t, u, v);
        shifted[3 * k] = hermiteIndex(t + 1, u, v);
        shifted[3 * k + 1] = hermiteIndex(t, u + 1, v);
        shifted[3 * k + 2] = hermiteIndex(t, u, v + 1);
    }
    return shifted;
}

} // namespace QM
} // namespace OpenMMDFT
