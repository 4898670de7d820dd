/* Orbitals by rotation instead of an eigensolver (qmengine/src/OrbitalRotation.cpp): the rotation keeps orbitals
 * orthonormal in a random overlap metric for any amplitudes; the block diagonalization of a Fock matrix from the
 * orbitals of a nearby one gives the occupied space (the density) of Eigen's generalized eigensolver, and refuses
 * where it must (no gap, a large rotation); within the SCF along a short trajectory it makes every orbital update,
 * from the last geometry's orbitals on, and the energies match an SCF from scratch. */
#include "TestUtil.h"
#include "../src/OrbitalRotation.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include <gtest/gtest.h>
#include <cstdio>
#include <random>

using namespace OpenMMDFT::QM;

namespace {

struct Problem {
    int nbf, nocc;
    Eigen::MatrixXd S, F;
    std::mt19937 rng;
    Problem(int nbf, int nocc, unsigned seed) : nbf(nbf), nocc(nocc), rng(seed) {
        const Eigen::MatrixXd a = random(nbf, nbf);
        S = Eigen::MatrixXd::Identity(nbf, nbf) + 0.02 * (a + a.transpose());
        // Eigenvalues spread from -1 to 2 in the metric S: F = S U diag U^T S with U orthonormal in S.
        Eigen::VectorXd values(nbf);
        for (int i = 0; i < nbf; i++)
            values[i] = -1.0 + 3.0 * i / (nbf - 1);
        const Eigen::MatrixXd U = orthonormalIn(S);
        F = S * U * values.asDiagonal() * U.transpose() * S;
    }
    Eigen::MatrixXd random(int rows, int cols) {
        std::normal_distribution<double> normal;
        Eigen::MatrixXd m(rows, cols);
        for (int i = 0; i < m.size(); i++)
            m.data()[i] = normal(rng);
        return m;
    }
    /** A random basis orthonormal in the metric M: M^-1/2 times an orthogonal matrix. */
    Eigen::MatrixXd orthonormalIn(const Eigen::MatrixXd& M) {
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> m(M);
        return m.operatorInverseSqrt() * Eigen::HouseholderQR<Eigen::MatrixXd>(random(nbf, nbf)).householderQ();
    }
    /** Orbitals of A in the metric S, ascending. */
    Eigen::MatrixXd orbitals(const Eigen::MatrixXd& A) const {
        return Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd>(A, S).eigenvectors();
    }
    Eigen::MatrixXd density(const Eigen::MatrixXd& C) const {
        return C.leftCols(nocc) * C.leftCols(nocc).transpose();
    }
    double orthonormalityError(const Eigen::MatrixXd& C) const {
        return (C.transpose() * S * C - Eigen::MatrixXd::Identity(C.cols(), C.cols())).cwiseAbs().maxCoeff();
    }
};

} // namespace

TEST(OrbitalRotation, KeepsOrbitalsOrthonormalForAnyAmplitudes) {
    Problem p(30, 9, 1);
    const Eigen::MatrixXd C = p.orthonormalIn(p.S);
    for (double size : {1e-6, 1e-2, 1.0, 10.0}) {
        const Eigen::MatrixXd t = size * p.random(p.nbf - p.nocc, p.nocc);
        const Eigen::MatrixXd rotated = rotateOccupiedVirtual(C, p.nocc, t);
        EXPECT_LT(p.orthonormalityError(rotated), 1e-12) << size;
        // The occupied columns span C_o + C_v t (a projector in the metric compares spans).
        const Eigen::MatrixXd spanned = C.leftCols(p.nocc) + C.rightCols(p.nbf - p.nocc) * t;
        const Eigen::MatrixXd projector = spanned * (spanned.transpose() * p.S * spanned).inverse() * spanned.transpose();
        EXPECT_LT((p.density(rotated) - projector).cwiseAbs().maxCoeff(), 1e-11) << size;
    }
    // No rotation leaves the orbitals as they are.
    const Eigen::MatrixXd same = rotateOccupiedVirtual(C, p.nocc, Eigen::MatrixXd::Zero(p.nbf - p.nocc, p.nocc));
    EXPECT_LT((same - C).cwiseAbs().maxCoeff(), 1e-14);
}

TEST(OrbitalRotation, BlockDiagonalizationGivesTheEigensolversDensity) {
    Problem p(40, 12, 2);
    const Eigen::MatrixXd noise = p.random(p.nbf, p.nbf);
    for (double change : {1e-6, 1e-4, 1e-3}) {
        // Orbitals of F, and a Fock matrix that moved from it as an SCF's next one does (by less than the gap of
        // 0.077 at the Fermi level; a change of 1e-2 here is not small, and the steps need not contract).
        const Eigen::MatrixXd C = p.orbitals(p.F);
        const Eigen::MatrixXd next = p.F + change * (noise + noise.transpose());
        BlockDiagonalization b;
        ASSERT_TRUE(blockDiagonalize(next, C, p.nocc, 1e-12, 0.2, b)) << change;
        EXPECT_GT(b.steps, 0);
        EXPECT_LT(p.orthonormalityError(b.orbitals), 1e-12) << change;
        const Eigen::MatrixXd G = b.orbitals.transpose() * next * b.orbitals;
        EXPECT_LT(G.bottomLeftCorner(p.nbf - p.nocc, p.nocc).cwiseAbs().maxCoeff(), 1e-11) << change;
        EXPECT_LT((p.density(b.orbitals) - p.density(p.orbitals(next))).cwiseAbs().maxCoeff(), 1e-10) << change;
        // The energies are the diagonal before the rotation: the eigenvalues to second order in the change.
        const Eigen::VectorXd exact = Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd>(next, p.S).eigenvalues();
        Eigen::VectorXd sorted = b.energies;
        std::sort(sorted.data(), sorted.data() + sorted.size());
        EXPECT_LT((sorted - exact).cwiseAbs().maxCoeff(), 100 * change) << change;
    }
}

TEST(OrbitalRotation, RefusesWithoutAGapOrForALargeRotation) {
    Problem p(20, 6, 3);
    Eigen::MatrixXd C = p.orbitals(p.F);
    BlockDiagonalization b;
    b.steps = -1;
    // The highest occupied orbital swapped with the lowest virtual one: the gap in these orbitals is negative.
    Eigen::MatrixXd swapped = C;
    swapped.col(p.nocc - 1).swap(swapped.col(p.nocc));
    EXPECT_FALSE(blockDiagonalize(p.F, swapped, p.nocc, 1e-12, 0.2, b));
    EXPECT_EQ(-1, b.steps);  // left as it was
    // A Fock matrix far from the one of the orbitals: a rotation larger than allowed.
    const Eigen::MatrixXd noise = p.random(p.nbf, p.nbf);
    EXPECT_FALSE(blockDiagonalize(p.F + 0.3 * (noise + noise.transpose()), C, p.nocc, 1e-12, 0.05, b));
    // Nothing to rotate without occupied or virtual orbitals.
    EXPECT_FALSE(blockDiagonalize(p.F, C, 0, 1e-12, 0.2, b));
    EXPECT_FALSE(blockDiagonalize(p.F, C, p.nbf, 1e-12, 0.2, b));
}

TEST(OrbitalRotation, SCFAlongATrajectoryMatchesAnSCFFromScratch) {
    // A water stretched step by step, each SCF from the last one's density, DIIS pairs and orbitals (as in MD): its
    // orbitals come by rotation, and each energy equals that of an SCF from the core guess.
    QMSettings s = QMTest::testSettings("6-31G*");
    s.grid.radialPoints = 40;
    s.grid.angularPoints = 110;
    s.convergence = 1e-8;
    const double A = QMTest::kBohrPerAngstrom;
    auto water = [&](double stretch) {
        return std::vector<QMAtom>{{8, {0, 0, 0}}, {1, {(0.7572 + stretch) * A, 0, 0.5865 * A}}, {1, {-0.7572 * A, 0, 0.5865 * A}}};
    };
    KohnShamLDA engine(s);
    QMResult r = engine.compute(water(0), 0, {});
    EXPECT_LT(r.orbitalRotations, r.iterations - 1);  // from the core guess the first iterations diagonalize
    int rotations = 0;
    for (int k = 1; k <= 3; k++) {
        const DensityGuess guess = r.guess();
        r = engine.compute(water(0.002 * k), 0, {}, &guess);
        rotations += r.orbitalRotations;
        // Every orbital update (one per iteration but the converged last) by rotation, the first one from the last
        // geometry's orbitals (DensityGuess::lowdinOrbitals).
        EXPECT_EQ(r.iterations - 1, r.orbitalRotations) << k;
        std::printf("step %d: %d iterations, %d orbital rotations\n", k, r.iterations, r.orbitalRotations);
        ASSERT_TRUE(r.lowdinOrbitals);
        EXPECT_LT((r.lowdinOrbitals->transpose() * *r.lowdinOrbitals - Eigen::MatrixXd::Identity(r.lowdinOrbitals->cols(), r.lowdinOrbitals->cols())).cwiseAbs().maxCoeff(), 1e-10);
        const QMResult scratch = KohnShamLDA(s).compute(water(0.002 * k), 0, {});
        EXPECT_NEAR(r.total, scratch.total, 1e-9) << k;
    }
    EXPECT_GT(rotations, 0);
}
