#pragma once
// Internal to the engine: the primitive pairs of a shell pair expanded in Hermite Gaussians (McMurchie and Davidson,
// J. Comput. Phys. 26, 218 (1978); HermiteGaussians.h), and a density contracted into them, for the Hermite-scheme
// integrals with point charges (PointChargeIntegrals.cpp) and with fitting functions (HermiteThreeCentre.cpp).
#include "HermiteGaussians.h"
#include "Parallel.h"
#include "ShellPairScreening.h"
#include "openmmdft/qm/Basis.h"
#include <Eigen/Dense>
#include <vector>

namespace OpenMMDFT {
namespace QM {

/** One primitive pair of a shell pair: exponent sum, bra exponent, centre, contraction prefactor and the three 1D
 * expansions (iMax = l_a + raise, jMax = l_b). */
struct PrimitivePair {
    double p, alpha, P[3], K;
    int iMax, jMax;
    std::vector<double> E[3];
    const double& e(int d, int i, int j, int t) const {
        return E[d][(i * (jMax + 1) + j) * (iMax + jMax + 1) + t];
    }
};

/// Primitive pairs whose |c_a c_b| exp(-mu R_AB^2) (pi/p)^(3/2), the size of their charge, is below this are skipped.
constexpr double kPrimitivePairCutoff = 1e-20;

/** The primitive pairs of shells a and b that survive the cutoff, with the bra's angular momentum raised by raise. */
std::vector<PrimitivePair> primitivePairs(const Shell& a, const Shell& b, int raise);

/**
 * The density block P_ab of the cartesian shell pair (a at rows o1, b at columns o2 of Pc, times pairFactor)
 * contracted into the Hermite functions of primitive pair pp (made with raise = 1), order <= L = l_a + l_b:
 *   D_k = sum_ab P_ab K E^a E^b (the pair's charge distribution), and for the bra centre A, order <= L + 1,
 *   DA[d * hermiteCount(L + 1) + k] = sum_ab P_ab K (2 alpha E^(a+1_d) - a_d E^(a-1_d)) E^b, from
 *   d/dA_d x_A^i e^(-alpha x_A^2) = 2 alpha x_A^(i+1) e^.. - i x_A^(i-1) e^.. .
 * D has hermiteCount(L) entries, DA 3 hermiteCount(L + 1); both are overwritten.
 */
void contractPairDensity(const PrimitivePair& pp, const Shell& a, const Shell& b, const Eigen::MatrixXd& Pc, int o1, int o2,
                         double pairFactor, double* D, double* DA);

/** body(s1, s2, thread) for every shell pair s2 <= s1 whose overlap bound reaches threshold (all if it is 0); threads
 * take bra shells s1, so the blocks (s1, s2) one thread writes are its own. The shells go round robin (thread t takes
 * s1 = t, t + threads, ...), so sums kept per thread are the same bits on every run. */
template <class Body>
void forEachShellPair(const BasisSet& basis, double threshold, int threads, Body body) {
    parallelForRoundRobin(basis.numShells(), threads, [&](int s1, int thread) {
        for (int s2 = 0; s2 <= s1; s2++)
            if (threshold <= 0 || pairOverlapBound(basis.shells()[s1], basis.shells()[s2]) >= threshold)
                body(s1, s2, thread);
    });
}

/// For the Hermite entries k of order <= L: the index of k + e_d, at shifted[3 k + d].
std::vector<int> raisedHermiteIndices(int L);

} // namespace QM
} // namespace OpenMMDFT
