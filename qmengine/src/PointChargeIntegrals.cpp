// Integrals of point charges (nuclei or MM charges) with Gaussian products, and their derivatives
// (pointChargeMatrix in Integrals.h, pointChargeGradient in IntegralGradients.h), by McMurchie and Davidson's
// Hermite scheme (HermiteGaussians.h). Each primitive pair is expanded once; then every charge costs one Boys
// function and one Hermite recursion, summed over the charges before the expansion is contracted back (the matrix)
// or after the density has been contracted into it (the gradient). The charges go eight at a time (ChargeBlocks), so
// that the Boys function of far charges and the Hermite recursion run as vector operations across them. With many MM
// charges this replaces a Libint call per charge, shell pair and raised/lowered angular momentum.
#include "BoysFunction.h"
#include "PrimitivePairs.h"
#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include "openmmdft/qm/IntegralGradients.h"
#include "openmmdft/qm/Integrals.h"
#include <openmm/OpenMMException.h>
#include <algorithm>
#include <array>
#include <cmath>
#include <string>
#include <vector>

namespace OpenMMDFT {
namespace QM {

using OpenMM::OpenMMException;

namespace {

/// Charges taken together in the inner loops (the lanes of hermiteCoulombBlock).
constexpr int kBlock = kHermiteBlock;
static_assert(kBlock == kBoysBlock, "Boys and Hermite blocks hold the same charges");

/** The charges in lane-innermost blocks of kBlock: xyz[(b * 3 + d) * kBlock + lane], q[b * kBlock + lane]. The last
 * block is filled up with copies of the last charge with q = 0, which add nothing. */
struct ChargeBlocks {
    int count = 0, blocks = 0;
    std::vector<double> xyz, q;
    explicit ChargeBlocks(const std::vector<PointCharge>& charges)
        : count((int) charges.size()), blocks((count + kBlock - 1) / kBlock),
          xyz(3 * (size_t) blocks * kBlock), q((size_t) blocks * kBlock, 0.0) {
        for (int i = 0; i < blocks * kBlock; i++) {
            const PointCharge& c = charges[std::min(i, count - 1)];
            const int b = i / kBlock, lane = i % kBlock;
            for (int d = 0; d < 3; d++)
                xyz[(b * 3 + d) * kBlock + lane] = c.xyz[d];
            if (i < count)
                q[i] = c.charge;
        }
    }
};

/** R_k(p, P - C) of the pair at the charges of block b, R[k * kBlock + lane], k < hermiteCount(L). */
void hermiteCoulombAt(const PrimitivePair& pp, int L, const ChargeBlocks& charges, int b, double* R) {
    alignas(64) double PC[3 * kBlock], T[kBlock], F[(kMaxHermiteOrder + 1) * kBlock];
    const double* C = &charges.xyz[(size_t) b * 3 * kBlock];
    for (int lane = 0; lane < kBlock; lane++) {
        double r2 = 0;
        for (int d = 0; d < 3; d++) {
            PC[d * kBlock + lane] = pp.P[d] - C[d * kBlock + lane];
            r2 += PC[d * kBlock + lane] * PC[d * kBlock + lane];
        }
        T[lane] = pp.p * r2;
    }
    boysFunctionBlock(L, T, F);
    hermiteCoulombBlock(L, pp.p, PC, F, R);
}

/** W_k = sum_C (-q_C) (2 pi / p) R_k(p, P - C) for the Hermite functions of order <= L. */
void chargePotentials(const PrimitivePair& pp, int L, const ChargeBlocks& charges, double* W) {
    const int count = hermiteCount(L);
    alignas(64) double R[hermiteCount(kMaxHermiteOrder) * kBlock], sums[hermiteCount(kMaxHermiteOrder) * kBlock];
    std::fill(sums, sums + count * kBlock, 0.0);
    const double factor = 2 * M_PI / pp.p;
    for (int b = 0; b < charges.blocks; b++) {
        hermiteCoulombAt(pp, L, charges, b, R);
        const double* q = &charges.q[(size_t) b * kBlock];
        for (int k = 0; k < count; k++)
            for (int lane = 0; lane < kBlock; lane++)
                sums[k * kBlock + lane] -= q[lane] * R[k * kBlock + lane];
    }
    for (int k = 0; k < count; k++) {
        double sum = 0;
        for (int lane = 0; lane < kBlock; lane++)
            sum += sums[k * kBlock + lane];
        W[k] = factor * sum;
    }
}

/** The Hermite tables reach order kMaxHermiteOrder: pairs of the basis's highest shells, raised once for the gradient,
 * and the charge's derivative. */
void checkAngularMomentum(const BasisSet& basis) {
    if (2 * basis.maxL() + 2 > kMaxHermiteOrder)
        throw OpenMMException("QM: point-charge integrals handle shells up to l = " + std::to_string((kMaxHermiteOrder - 2) / 2) +
                              " (the basis has l = " + std::to_string(basis.maxL()) + ")");
}

} // namespace

Eigen::MatrixXd pointChargeMatrix(const BasisSet& basis, const std::vector<PointCharge>& charges, double threshold, int threads) {
    checkAngularMomentum(basis);
    const int n = basis.cartesianSize(), ns = basis.numShells();
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(n, n);
    if (charges.empty())
        return Eigen::MatrixXd::Zero(basis.size(), basis.size());
    const ChargeBlocks blocks(charges);
    // Each pair writes its block (s1, s2 <= s1) and the transpose.
    forEachShellPair(basis, threshold, std::max(1, std::min(resolveThreads(threads), ns)), [&](int s1, int s2, int) {
        const Shell& a = basis.shells()[s1];
        const Shell& b = basis.shells()[s2];
        const auto& ca = cartesianComponents(a.l);
        const auto& cb = cartesianComponents(b.l);
        double W[hermiteCount(kMaxHermiteOrder)];
        const int L = a.l + b.l, o1 = basis.cartesianOffset(s1), o2 = basis.cartesianOffset(s2);
        std::vector<double> block(ca.size() * cb.size(), 0.0);
        for (const PrimitivePair& pp : primitivePairs(a, b, 0)) {
            chargePotentials(pp, L, blocks, W);
            for (size_t i = 0; i < ca.size(); i++)
                for (size_t j = 0; j < cb.size(); j++) {
                    double sum = 0;
                    for (int t = 0; t <= ca[i][0] + cb[j][0]; t++)
                        for (int u = 0; u <= ca[i][1] + cb[j][1]; u++) {
                            const double xy = pp.e(0, ca[i][0], cb[j][0], t) * pp.e(1, ca[i][1], cb[j][1], u);
                            for (int v = 0; v <= ca[i][2] + cb[j][2]; v++)
                                sum += xy * pp.e(2, ca[i][2], cb[j][2], v) * W[hermiteIndex(t, u, v)];
                        }
                    block[i * cb.size() + j] += pp.K * sum;
                }
        }
        for (size_t i = 0; i < ca.size(); i++)
            for (size_t j = 0; j < cb.size(); j++) {
                M(o1 + i, o2 + j) = block[i * cb.size() + j];
                M(o2 + j, o1 + i) = block[i * cb.size() + j];
            }
    });
    return fromCartesianBasis(basis, M);
}

void pointChargeGradient(const BasisSet& basis, const std::vector<PointCharge>& charges, const Eigen::MatrixXd& P, int numAtoms,
                         double threshold, Eigen::MatrixXd& atomGradient, Eigen::MatrixXd& chargeGradient, int threads) {
    atomGradient = Eigen::MatrixXd::Zero(numAtoms, 3);
    chargeGradient = Eigen::MatrixXd::Zero((int) charges.size(), 3);
    if (charges.empty())
        return;
    checkAngularMomentum(basis);
    const int ns = basis.numShells(), nc = (int) charges.size();
    const Eigen::MatrixXd Pc = toCartesianBasis(basis, P);
    const ChargeBlocks blocks(charges);
    threads = std::max(1, std::min(resolveThreads(threads), ns));
    std::vector<Eigen::MatrixXd> atomPart(threads, Eigen::MatrixXd::Zero(numAtoms, 3));
    std::vector<std::vector<double>> chargePart(threads, std::vector<double>(3 * (size_t) nc, 0.0));
    // E = sum_ab P_ab V_ab over unique shell pairs (off-diagonal blocks twice). Per primitive pair the density is
    // contracted into Hermite coefficients D (for the charge's position) and D^A_d (for the bra centre A:
    // d/dA_d x_A^i e^(-a x_A^2) = 2a x_A^(i+1) e^.. - i x_A^(i-1) e^..); then per charge
    //   dE/dC_d = w sum_k D_k dR_k/dC_d = -w sum_k D_k R_(k + e_d),   dE/dA_d = w sum_k D^A_d,k R_k,
    // with w = -q (2 pi / p), and the ket centre B from translational invariance: dE/dB = -(dE/dA + sum_C dE/dC).
    forEachShellPair(basis, threshold, threads, [&](int s1, int s2, int thread) {
        const Shell& a = basis.shells()[s1];
        const Shell& b = basis.shells()[s2];
        Eigen::MatrixXd& gAtoms = atomPart[thread];
        std::vector<double>& gCharges = chargePart[thread];
        alignas(64) double R[hermiteCount(kMaxHermiteOrder) * kBlock];
        const int L = a.l + b.l, o1 = basis.cartesianOffset(s1), o2 = basis.cartesianOffset(s2);
        const double pairFactor = (s1 == s2 ? 1.0 : 2.0);
        const int countL = hermiteCount(L), countL1 = hermiteCount(L + 1);
        std::vector<double> D(countL), DA(3 * (size_t) countL1);
        const std::vector<int> shifted = raisedHermiteIndices(L);  // index of k + e_d
        for (const PrimitivePair& pp : primitivePairs(a, b, 1)) {
            contractPairDensity(pp, a, b, Pc, o1, o2, pairFactor, D.data(), DA.data());
            // Per charge: dE/dC_d = w toC_d with toC_d = -sum_k D_k R_(k + e_d), w = -q (2 pi / p). The pair's own
            // sums need only S_k = sum_C w R_k: dE/dA_d = sum_k D^A_d,k S_k and sum_C dE/dC_d = -sum_k D_k S_(k + e_d).
            const double factor = 2 * M_PI / pp.p;
            alignas(64) double S[hermiteCount(kMaxHermiteOrder) * kBlock];
            std::fill(S, S + countL1 * kBlock, 0.0);
            for (int blk = 0; blk < blocks.blocks; blk++) {
                hermiteCoulombAt(pp, L + 1, blocks, blk, R);
                alignas(64) double toC[3 * kBlock] = {}, w[kBlock];
                for (int lane = 0; lane < kBlock; lane++)
                    w[lane] = -blocks.q[(size_t) blk * kBlock + lane] * factor;
                for (int k = 0; k < countL1; k++)
                    for (int lane = 0; lane < kBlock; lane++)
                        S[k * kBlock + lane] += w[lane] * R[k * kBlock + lane];
                for (int k = 0; k < countL; k++)
                    for (int d = 0; d < 3; d++) {
                        const double* Rk = R + shifted[3 * k + d] * kBlock;
                        for (int lane = 0; lane < kBlock; lane++)
                            toC[d * kBlock + lane] -= D[k] * Rk[lane];
                    }
                const int first = blk * kBlock, lanes = std::min(kBlock, nc - first);
                for (int lane = 0; lane < lanes; lane++)
                    for (int d = 0; d < 3; d++)
                        gCharges[3 * (size_t) (first + lane) + d] += w[lane] * toC[d * kBlock + lane];
            }
            double sums[hermiteCount(kMaxHermiteOrder)];
            for (int k = 0; k < countL1; k++) {
                sums[k] = 0;
                for (int lane = 0; lane < kBlock; lane++)
                    sums[k] += S[k * kBlock + lane];
            }
            double gA[3] = {0, 0, 0}, gC[3] = {0, 0, 0};
            for (int d = 0; d < 3; d++) {
                for (int k = 0; k < countL1; k++)
                    gA[d] += DA[d * countL1 + k] * sums[k];
                for (int k = 0; k < countL; k++)
                    gC[d] -= D[k] * sums[shifted[3 * k + d]];
            }
            for (int d = 0; d < 3; d++) {
                gAtoms(a.atom, d) += gA[d];
                gAtoms(b.atom, d) -= gA[d] + gC[d];
            }
        }
    });
    for (int t = 0; t < threads; t++) {
        atomGradient += atomPart[t];
        for (int c = 0; c < nc; c++)
            for (int d = 0; d < 3; d++)
                chargeGradient(c, d) += chargePart[t][3 * (size_t) c + d];
    }
}

} // namespace QM
} // namespace OpenMMDFT
