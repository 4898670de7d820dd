// The three-centre part of the density-fitted Coulomb gradient, sum_Q c_Q sum_uv D_uv d(Q|uv)
// (densityFittingThreeCentreGradient in IntegralGradients.h), by McMurchie and Davidson's Hermite scheme
// (J. Comput. Phys. 26, 218 (1978); Helgaker, Jorgensen and Olsen, "Molecular Electronic-Structure Theory", 9.9).
// The fitted density sum_Q c_Q chi_Q is a sum of Hermite Gaussians on the fitting centres, one coefficient vector per
// primitive; the orbital density D is contracted into each primitive pair's Hermite functions once. Between two
// Hermite Gaussians (Lambda_k(p, P) | Lambda_m(q, Q)) = 2 pi^(5/2) / (p q sqrt(p + q)) (-1)^|m| R_(k+m)(pq / (p + q), P - Q)
// (Helgaker et al. 9.9.33), so every pair of primitives costs one Boys function and one Hermite recursion, taken
// eight fitting primitives at a time (HermiteGaussians.h), as the point-charge integrals take eight charges.
#include "BoysFunction.h"
#include "LibintThreeCentreGradient.h"
#include "PrimitivePairs.h"
#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/IntegralGradients.h"
#include <algorithm>
#include <cmath>
#include <vector>

namespace OpenMMDFT {
namespace QM {

namespace {

constexpr int kBlock = kHermiteBlock;
static_assert(kBlock == kBoysBlock, "Boys and Hermite blocks hold the same fitting primitives");

/**
 * The fitted density as Hermite Gaussians: every primitive of every fitting shell, its cartesian coefficients c
 * folded in, in lane-innermost blocks of kBlock primitives of one angular momentum l. For a primitive of exponent q
 * and contraction coefficient d on centre C: sum_comp c_comp d x^a y^b z^e e^(-q r^2) = sum_m h_m Lambda_m(q, C),
 * h_m = d sum_comp c_comp E^a_t E^b_u E^e_v (the one-centre expansions), stored as (-1)^|m| h_m, the sign of
 * the Coulomb integral. Unused lanes have h = 0.
 */
struct FittedDensityBlocks {
    std::vector<int> l, hStart;  ///< per block: its angular momentum and where its h starts
    std::vector<double> xyz;     ///< [(block * 3 + d) * kBlock + lane]
    std::vector<double> q;       ///< exponent, [block * kBlock + lane]
    std::vector<double> h;       ///< [hStart + m * kBlock + lane]
    std::vector<int> atom;       ///< [block * kBlock + lane], -1 for an unused lane
    int maxL = 0;

    FittedDensityBlocks(const BasisSet& aux, const Eigen::VectorXd& cartesianCoefficients) {
        for (int lq = 0; lq <= aux.maxL(); lq++) {
            const int count = hermiteCount(lq);
            const auto& comps = cartesianComponents(lq);
            std::vector<double> E((size_t) (lq + 1) * (lq + 1));  // E[i (lq + 1) + t] of x^i e^(-q x^2)
            int lane = kBlock;
            for (int s = 0; s < aux.numShells(); s++) {
                const Shell& sh = aux.shells()[s];
                if (sh.l != lq)
                    continue;
                for (size_t k = 0; k < sh.exponents.size(); k++) {
                    if (lane == kBlock) {  // a new block, unused lanes zero
                        l.push_back(lq);
                        hStart.push_back((int) h.size());
                        xyz.resize(xyz.size() + 3 * kBlock, 0.0);
                        q.resize(q.size() + kBlock, 1.0);
                        atom.resize(atom.size() + kBlock, -1);
                        h.resize(h.size() + (size_t) count * kBlock, 0.0);
                        lane = 0;
                    }
                    const size_t b = l.size() - 1;
                    hermiteExpansion(lq, 0, sh.exponents[k], 0.0, 0.0, E.data());
                    for (int d = 0; d < 3; d++)
                        xyz[(b * 3 + d) * kBlock + lane] = sh.center[d];
                    q[b * kBlock + lane] = sh.exponents[k];
                    atom[b * kBlock + lane] = sh.atom;
                    double* hb = &h[hStart[b]];
                    for (size_t comp = 0; comp < comps.size(); comp++) {
                        const double weight = sh.coefficients[k] * cartesianCoefficients[aux.cartesianOffset(s) + (int) comp];
                        const int a = comps[comp][0], bb = comps[comp][1], e = comps[comp][2];
                        for (int t = 0; t <= a; t++)
                            for (int u = 0; u <= bb; u++)
                                for (int v = 0; v <= e; v++) {
                                    const double sign = ((t + u + v) % 2 == 0 ? 1.0 : -1.0);
                                    hb[hermiteIndex(t, u, v) * kBlock + lane] +=
                                        sign * weight * E[a * (lq + 1) + t] * E[bb * (lq + 1) + u] * E[e * (lq + 1) + v];
                                }
                    }
                    lane++;
                }
            }
            maxL = std::max(maxL, lq);
        }
    }
    int blocks() const { return (int) l.size(); }
};

} // namespace

Eigen::MatrixXd densityFittingThreeCentreGradient(const BasisSet& basis, const BasisSet& auxiliary, const Eigen::MatrixXd& D,
                                                  const Eigen::VectorXd& c, int numAtoms, double threshold, int threads) {
    // A pair of the basis's highest shells, raised once for the gradient, with the highest fitting shell.
    if (2 * basis.maxL() + 1 + auxiliary.maxL() > kMaxHermiteOrder)
        return densityFittingThreeCentreGradientLibint(basis, auxiliary, D, c, numAtoms, threshold, threads);
    const Eigen::MatrixXd Pc = toCartesianBasis(basis, D);
    const FittedDensityBlocks fitted(auxiliary, basisTransform(auxiliary).transpose() * c);
    threads = std::max(1, std::min(resolveThreads(threads), basis.numShells()));
    std::vector<Eigen::MatrixXd> part(threads, Eigen::MatrixXd::Zero(numAtoms, 3));
    const double twoPi52 = 2 * std::pow(M_PI, 2.5);
    // Over unique shell pairs (off-diagonal blocks twice), per primitive pair: D_k and D^A_d,k (contractPairDensity);
    // per fitting primitive j, its potential in the pair's Hermite functions V^j_k = f_j sum_m h_m R_(k+m),
    // f_j = 2 pi^(5/2) / (p q sqrt(p + q)); then
    //   dE/dC_j,d = -sum_k D_k V^j_(k + e_d)   (d/dC R(P - C) = -R raised),   dE/dA_d = sum_k D^A_d,k S_k,
    // with S_k = sum_j V^j_k, and the ket centre B from translational invariance: dE/dB = -(dE/dA + sum_j dE/dC_j).
    forEachShellPair(basis, threshold, threads, [&](int s1, int s2, int thread) {
        const Shell& a = basis.shells()[s1];
        const Shell& b = basis.shells()[s2];
        Eigen::MatrixXd& g = part[thread];
        const int L = a.l + b.l, o1 = basis.cartesianOffset(s1), o2 = basis.cartesianOffset(s2);
        const int countL = hermiteCount(L), countL1 = hermiteCount(L + 1);
        const double pairFactor = (s1 == s2 ? 1.0 : 2.0);
        std::vector<double> Dk(countL), DA(3 * (size_t) countL1);
        const std::vector<int> shifted = raisedHermiteIndices(L);
        // sumIndex[lq][k * hermiteCount(lq) + m]: the entry k + m, for k of order <= L + 1.
        std::vector<std::vector<int>> sumIndex(fitted.maxL + 1);
        for (int lq = 0; lq <= fitted.maxL; lq++) {
            const int count = hermiteCount(lq);
            sumIndex[lq].resize((size_t) countL1 * count);
            for (int k = 0; k < countL1; k++)
                for (int m = 0; m < count; m++) {
                    int t, u, v, t2, u2, v2;
                    hermiteTriple(k, t, u, v);
                    hermiteTriple(m, t2, u2, v2);
                    sumIndex[lq][(size_t) k * count + m] = hermiteIndex(t + t2, u + u2, v + v2);
                }
        }
        alignas(64) double R[hermiteCount(kMaxHermiteOrder) * kBlock], V[hermiteCount(kMaxHermiteOrder) * kBlock],
            S[hermiteCount(kMaxHermiteOrder) * kBlock];
        for (const PrimitivePair& pp : primitivePairs(a, b, 1)) {
            contractPairDensity(pp, a, b, Pc, o1, o2, pairFactor, Dk.data(), DA.data());
            std::fill(S, S + countL1 * kBlock, 0.0);
            for (int blk = 0; blk < fitted.blocks(); blk++) {
                const int lq = fitted.l[blk], count = hermiteCount(lq), order = L + 1 + lq;
                alignas(64) double PC[3 * kBlock], T[kBlock], reduced[kBlock], factor[kBlock],
                    F[(kMaxHermiteOrder + 1) * kBlock];
                const double* C = &fitted.xyz[(size_t) blk * 3 * kBlock];
                const double* q = &fitted.q[(size_t) blk * kBlock];
                for (int lane = 0; lane < kBlock; lane++) {
                    double r2 = 0;
                    for (int d = 0; d < 3; d++) {
                        PC[d * kBlock + lane] = pp.P[d] - C[d * kBlock + lane];
                        r2 += PC[d * kBlock + lane] * PC[d * kBlock + lane];
                    }
                    reduced[lane] = pp.p * q[lane] / (pp.p + q[lane]);
                    factor[lane] = twoPi52 / (pp.p * q[lane] * std::sqrt(pp.p + q[lane]));
                    T[lane] = reduced[lane] * r2;
                }
                boysFunctionBlock(order, T, F);
                hermiteCoulombBlock(order, reduced, PC, F, R);
                const double* h = &fitted.h[fitted.hStart[blk]];
                const int* sum = sumIndex[lq].data();
                for (int k = 0; k < countL1; k++) {
                    double* Vk = V + k * kBlock;
                    for (int lane = 0; lane < kBlock; lane++)
                        Vk[lane] = 0;
                    for (int m = 0; m < count; m++) {
                        const double* Rkm = R + sum[(size_t) k * count + m] * kBlock;
                        const double* hm = h + m * kBlock;
                        for (int lane = 0; lane < kBlock; lane++)
                            Vk[lane] += hm[lane] * Rkm[lane];
                    }
                    for (int lane = 0; lane < kBlock; lane++) {
                        Vk[lane] *= factor[lane];
                        S[k * kBlock + lane] += Vk[lane];
                    }
                }
                alignas(64) double toC[3 * kBlock] = {};
                for (int k = 0; k < countL; k++)
                    for (int d = 0; d < 3; d++) {
                        const double* Vk = V + shifted[3 * k + d] * kBlock;
                        for (int lane = 0; lane < kBlock; lane++)
                            toC[d * kBlock + lane] -= Dk[k] * Vk[lane];
                    }
                const int* atom = &fitted.atom[(size_t) blk * kBlock];
                for (int lane = 0; lane < kBlock && atom[lane] >= 0; lane++)
                    for (int d = 0; d < 3; d++)
                        g(atom[lane], d) += toC[d * kBlock + lane];
            }
            double sums[hermiteCount(kMaxHermiteOrder)];
            for (int k = 0; k < countL1; k++) {
                sums[k] = 0;
                for (int lane = 0; lane < kBlock; lane++)
                    sums[k] += S[k * kBlock + lane];
            }
            for (int d = 0; d < 3; d++) {
                double gA = 0, gC = 0;
                for (int k = 0; k < countL1; k++)
                    gA += DA[d * countL1 + k] * sums[k];
                for (int k = 0; k < countL; k++)
                    gC -= Dk[k] * sums[shifted[3 * k + d]];
                g(a.atom, d) += gA;
                g(b.atom, d) -= gA + gC;
            }
        }
    });
    Eigen::MatrixXd G = Eigen::MatrixXd::Zero(numAtoms, 3);
    for (const auto& p : part)
        G += p;
    return G;
}

} // namespace QM
} // namespace OpenMMDFT
