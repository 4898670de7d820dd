/* DIIS with a recycled subspace (qmengine/src/DIIS.cpp) on a linear model of the SCF error, e(F) = A (F - F*):
 * pairs (dF, A dF) from "another geometry" let a single extrapolation land on F*, exactly when they describe the
 * same A and to the accuracy of their mismatch otherwise; nearly dependent pairs do not blow the step up. */
#include "openmmdft/qm/DIIS.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include "openmm/OpenMMException.h"
#include <gtest/gtest.h>
#include <cmath>
#include <random>

using namespace OpenMMDFT::QM;

namespace {

constexpr int N = 3; // 3 x 3 "Fock matrices": 9 unknowns

Eigen::MatrixXd randomMatrix(std::mt19937& rng, double scale = 1) {
    std::normal_distribution<double> normal;
    Eigen::MatrixXd m(N, N);
    for (int i = 0; i < N * N; i++)
        m.data()[i] = scale * normal(rng);
    return m;
}

/** e = A vec(F) as a matrix. */
Eigen::MatrixXd apply(const Eigen::MatrixXd& A, const Eigen::MatrixXd& F) {
    Eigen::MatrixXd e(N, N);
    Eigen::Map<Eigen::VectorXd>(e.data(), N * N) = A * Eigen::Map<const Eigen::VectorXd>(F.data(), N * N);
    return e;
}

struct LinearModel {
    Eigen::MatrixXd A, solution;
    explicit LinearModel(std::mt19937& rng) {
        A = Eigen::MatrixXd::Identity(N * N, N * N);
        std::normal_distribution<double> normal;
        for (int i = 0; i < N * N; i++)
            for (int j = 0; j < N * N; j++)
                A(i, j) += 0.3 * normal(rng);
        solution = randomMatrix(rng);
    }
    Eigen::MatrixXd error(const Eigen::MatrixXd& F) const { return apply(A, F - solution); }
};

/** N * N pairs (dF, A dF) with random dF of the given sizes (scale(j) for pair j). */
struct Pairs {
    std::vector<Eigen::MatrixXd> dF, de;
    template <class Scale>
    Pairs(std::mt19937& rng, const Eigen::MatrixXd& A, Scale scale) {
        for (int j = 0; j < N * N; j++) {
            dF.push_back(randomMatrix(rng, scale(j)));
            de.push_back(apply(A, dF.back()));
        }
    }
};

} // namespace

TEST(DIIS, OneEntryWithoutRecycledPairsIsReturnedUnchanged) {
    std::mt19937 rng(1);
    const LinearModel model(rng);
    DIIS diis(8);
    const Eigen::MatrixXd F = randomMatrix(rng);
    EXPECT_EQ(0.0, (diis.extrapolate(F, model.error(F)) - F).norm());
}

TEST(DIIS, RecycledPairsOfTheSameModelSolveItInOneStep) {
    std::mt19937 rng(2);
    const LinearModel model(rng);
    const Pairs pairs(rng, model.A, [](int j) { return 1e-3 * (j + 1); });  // sizes as uneven as an SCF's steps
    DIIS diis(8);
    diis.setRecycled(pairs.dF, pairs.de);
    EXPECT_EQ(N * N, diis.recycledPairs());
    const Eigen::MatrixXd F = randomMatrix(rng);
    EXPECT_LT((diis.extrapolate(F, model.error(F)) - model.solution).norm(), 1e-9 * model.solution.norm());
}

TEST(DIIS, RecycledPairsOfEverySizeCount) {
    // An SCF hands on pairs from 1e-3 (its first steps) down to 1e-9 (its converged tail), and the last iterations
    // of the next SCF need the small ones' directions. Pairs whose sizes span 1e0..1e-8 must all be kept (scaled to
    // unit length before the Gram matrix's cut), and then solve the model in one step.
    std::mt19937 rng(5);
    const LinearModel model(rng);
    const Pairs pairs(rng, model.A, [](int j) { return std::pow(10.0, -j); });
    DIIS diis(8);
    diis.setRecycled(pairs.dF, pairs.de);
    EXPECT_EQ(N * N, diis.recycledPairs());
    const Eigen::MatrixXd F = randomMatrix(rng);
    EXPECT_LT((diis.extrapolate(F, model.error(F)) - model.solution).norm(), 1e-6 * model.solution.norm());
}

TEST(DIIS, MismatchedRecycledPairsGainTheirAccuracy) {
    // Pairs from a model 1e-3 away (another geometry): the first step removes the error to about that level.
    std::mt19937 rng(3);
    const LinearModel model(rng);
    const Eigen::MatrixXd other = model.A + 1e-3 * Eigen::MatrixXd::Random(N * N, N * N);
    const Pairs pairs(rng, other, [](int) { return 0.01; });
    DIIS diis(8);
    diis.setRecycled(pairs.dF, pairs.de);
    const Eigen::MatrixXd F = model.solution + randomMatrix(rng, 1e-2);
    const double before = model.error(F).norm();
    const double after = model.error(diis.extrapolate(F, model.error(F))).norm();
    EXPECT_LT(after, 1e-2 * before);
}

TEST(DIIS, NearlyDependentRecycledPairsStayBounded) {
    // Repeated and nearly repeated pairs (successive SCFs explore similar directions) must not produce a huge step.
    std::mt19937 rng(4);
    const LinearModel model(rng);
    std::vector<Eigen::MatrixXd> dF, de;
    for (int j = 0; j < 4; j++) {
        const Eigen::MatrixXd f = randomMatrix(rng, 1e-2);
        for (double wobble : {0.0, 1e-9, 1e-15}) {
            const Eigen::MatrixXd g = f + wobble * randomMatrix(rng);
            dF.push_back(g);
            de.push_back(apply(model.A, g));
        }
    }
    DIIS diis(8);
    diis.setRecycled(dF, de);
    EXPECT_GE(diis.recycledPairs(), 4);
    EXPECT_LE(diis.recycledPairs(), 8);  // the repeats add (almost) nothing
    const Eigen::MatrixXd F = model.solution + randomMatrix(rng, 1e-2);
    Eigen::MatrixXd next = F;
    for (int it = 0; it < 3; it++) {
        next = diis.extrapolate(next, model.error(next));
        ASSERT_TRUE(next.allFinite());
        EXPECT_LT((next - model.solution).norm(), 10 * (F - model.solution).norm()) << it;
    }
    diis.reset();
    EXPECT_EQ(0, diis.recycledPairs());
}

TEST(DIIS, CompanionsCombineAsTheFockMatrices) {
    // Fock matrices linear in a density-like companion K, F = G(K) = M vec(K) + F0; the recycled pairs carry
    // (M dK, A M dK, dK). The extrapolated Fock matrix must then be G of the combined companion, with and without
    // recycled pairs taking part.
    std::mt19937 rng(11);
    const LinearModel model(rng);
    const Eigen::MatrixXd M = Eigen::MatrixXd::Random(N * N, N * N), F0 = randomMatrix(rng);
    auto fockOf = [&](const Eigen::MatrixXd& K) { return Eigen::MatrixXd(apply(M, K) + F0); };
    std::vector<Eigen::MatrixXd> dK, dF, de;
    for (int j = 0; j < 4; j++) {
        dK.push_back(randomMatrix(rng, 0.1));
        dF.push_back(apply(M, dK.back()));
        de.push_back(apply(model.A, dF.back()));
    }
    for (bool recycling : {false, true}) {
        DIIS diis(8);
        std::vector<const Eigen::MatrixXd*> f, e, k;
        for (int j = 0; j < 4; j++) {
            f.push_back(&dF[j]);
            e.push_back(&de[j]);
            k.push_back(&dK[j]);
        }
        if (recycling)
            diis.setRecycled(f, e, k);
        for (int i = 0; i < 3; i++) {
            const Eigen::MatrixXd K = randomMatrix(rng), F = fockOf(K);
            const Eigen::MatrixXd extrapolated = diis.extrapolate(F, model.error(F), K);
            ASSERT_EQ(K.size(), diis.combinedCompanion().size()) << recycling << " " << i;
            EXPECT_LT((fockOf(diis.combinedCompanion()) - extrapolated).norm(), 1e-10 * extrapolated.norm()) << recycling << " " << i;
            if (i == 0 && !recycling)
                EXPECT_EQ(0.0, (diis.combinedCompanion() - K).norm());  // one entry: the input stands for itself
        }
        // An entry without its companion leaves the combination undefined.
        const Eigen::MatrixXd F = fockOf(randomMatrix(rng));
        diis.extrapolate(F, model.error(F));
        EXPECT_EQ(0, diis.combinedCompanion().size()) << recycling;
    }
    // Recycled pairs without their companions' changes: no combination while they take part.
    DIIS diis(8);
    diis.setRecycled(dF, de);
    const Eigen::MatrixXd K = randomMatrix(rng), F = fockOf(K);
    diis.extrapolate(F, model.error(F), K);
    EXPECT_EQ(0, diis.combinedCompanion().size());
}

TEST(DIIS, PackedPairsExtrapolateAsWholeOnes) {
    // A linear model with an SCF's symmetry, e(F) = B (F - F*) - (B (F - F*))^T: symmetric Fock matrices and
    // companions, antisymmetric errors. DIIS given the pairs as an SCF hands them on (packed by their upper triangles,
    // in single precision) extrapolates as DIIS given the same pairs whole (unpacked from them). Five pairs for the 21 independent error elements keep the extrapolations well conditioned (pairs
    // that span the errors land the second one on F*, and the next ones would fit rounding noise).
    std::mt19937 rng(11);
    std::normal_distribution<double> normal;
    const int n = 7;
    auto symmetric = [&](double scale) {
        Eigen::MatrixXd m(n, n);
        for (int i = 0; i < m.size(); i++)
            m.data()[i] = scale * normal(rng);
        return Eigen::MatrixXd(m + m.transpose());
    };
    Eigen::MatrixXd B = Eigen::MatrixXd::Identity(n, n);
    for (int i = 0; i < B.size(); i++)
        B.data()[i] += 0.2 * normal(rng);
    const Eigen::MatrixXd solution = symmetric(1);
    auto antisymmetricPart = [&](const Eigen::MatrixXd& dF) { return Eigen::MatrixXd(B * dF - (B * dF).transpose()); };
    // The whole matrices of packed ones: the upper triangle's elements scaled back by 1/sqrt(2), mirrored (with a sign
    // for the antisymmetric).
    auto unpack = [n](const PackedPair& p, bool antisymmetric) {
        Eigen::MatrixXd m = Eigen::MatrixXd::Zero(n, n);
        for (int j = 0, k = 0; j < n; j++) {
            for (int i = 0; i < j; i++, k++) {
                m(i, j) = M_SQRT1_2 * p[k];
                m(j, i) = antisymmetric ? -m(i, j) : m(i, j);
            }
            if (!antisymmetric)
                m(j, j) = p[k++];
        }
        return m;
    };
    std::vector<Eigen::MatrixXd> dF, de, dK;
    std::vector<SharedPair> packedF, packedE, packedK;
    for (int j = 0; j < 5; j++) {
        const Eigen::MatrixXd f = symmetric(std::pow(10.0, -(j % 4)));
        packedF.push_back(packedPair(packSymmetric(f)));
        packedE.push_back(packedPair(packAntisymmetric(antisymmetricPart(f))));
        packedK.push_back(packedPair(packSymmetric(0.5 * f)));
        dF.push_back(unpack(*packedF.back(), false));
        de.push_back(unpack(*packedE.back(), true));
        dK.push_back(unpack(*packedK.back(), false));
    }
    auto pointers = [](const std::vector<Eigen::MatrixXd>& list) {
        std::vector<const Eigen::MatrixXd*> p;
        for (const Eigen::MatrixXd& m : list)
            p.push_back(&m);
        return p;
    };
    DIIS whole(6, 2), packed(6, 2, true);
    EXPECT_THROW(whole.setRecycled(packedF, packedE), OpenMM::OpenMMException);  // each takes its own kind
    EXPECT_THROW(packed.setRecycled(pointers(dF), pointers(de)), OpenMM::OpenMMException);
    whole.setRecycled(pointers(dF), pointers(de), pointers(dK));
    packed.setRecycled(packedF, packedE, packedK);
    ASSERT_EQ(whole.recycledPairs(), packed.recycledPairs());
    ASSERT_GT(packed.recycledPairs(), 0);
    // The two take the same pairs by other sums (the unpacked ones rounded again by 1/sqrt(2)); the later
    // extrapolations, near the solution, amplify those roundings to about 1e-11 of F (1.04e-11 in a build without
    // fused multiply-adds): 1e-10, far below the pairs' own single-precision rounding (6e-8).
    Eigen::MatrixXd F = solution + symmetric(0.1);
    for (int it = 0; it < 3; it++) {
        const Eigen::MatrixXd companion = 0.5 * F, error = antisymmetricPart(F - solution);
        const Eigen::MatrixXd a = whole.extrapolate(F, error, companion), b = packed.extrapolate(F, error, companion);
        EXPECT_LT((a - b).cwiseAbs().maxCoeff(), 1e-10 * a.cwiseAbs().maxCoeff()) << it;
        ASSERT_EQ(whole.combinedCompanion().size(), packed.combinedCompanion().size());
        EXPECT_LT((whole.combinedCompanion() - packed.combinedCompanion()).cwiseAbs().maxCoeff(),
                  1e-10 * a.cwiseAbs().maxCoeff()) << it;
        F = b + symmetric(1e-3 / (it + 1));
    }
}
