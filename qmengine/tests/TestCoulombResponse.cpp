/* The Coulomb-response step (qmengine/src/CoulombResponse.cpp) against a direct solve of its linear equations, on a
 * model with a Coulomb operator J[D] = sum_k L_k tr(L_k D) (symmetric L_k: positive semidefinite, as a Coulomb
 * kernel is) and orbitals orthonormal in a random overlap metric; then within the SCF, where it must leave the
 * converged energy as it is and take fewer iterations. */
#include "TestUtil.h"
#include "../src/CoulombResponse.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include <gtest/gtest.h>
#include <cstdio>
#include <random>

using namespace OpenMMDFT::QM;

namespace {

struct Model {
    int nbf = 7, nocc = 3;
    Eigen::MatrixXd S, C, mismatch;
    Eigen::VectorXd eps;
    std::vector<Eigen::MatrixXd> L;
    explicit Model(unsigned seed) {
        std::mt19937 rng(seed);
        std::normal_distribution<double> normal;
        auto random = [&](int rows, int cols) {
            Eigen::MatrixXd m(rows, cols);
            for (int i = 0; i < m.size(); i++)
                m.data()[i] = normal(rng);
            return m;
        };
        const Eigen::MatrixXd a = random(nbf, nbf);
        S = Eigen::MatrixXd::Identity(nbf, nbf) + 0.05 * (a + a.transpose());
        // Orbitals orthonormal in S: S^-1/2 times an orthogonal matrix.
        Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> s(S);
        C = s.operatorInverseSqrt() * Eigen::HouseholderQR<Eigen::MatrixXd>(random(nbf, nbf)).householderQ();
        eps.resize(nbf);
        for (int i = 0; i < nbf; i++)
            eps[i] = -1.0 + 0.3 * i;
        for (int k = 0; k < 5; k++) {
            const Eigen::MatrixXd b = random(nbf, nbf);
            L.push_back(0.1 * (b + b.transpose()));
        }
        const Eigen::MatrixXd m = random(nbf, nbf);
        mismatch = 1e-3 * (m + m.transpose());
    }
    Eigen::MatrixXd coulomb(const Eigen::MatrixXd& D) const {
        Eigen::MatrixXd J = Eigen::MatrixXd::Zero(nbf, nbf);
        for (const Eigen::MatrixXd& l : L)
            J += l * l.cwiseProduct(D).sum();
        return J;
    }
};

/** 6-31G* on a coarse grid, SCF to 1e-8: enough to count iterations. */
QMSettings coarseSettings() {
    QMSettings s = QMTest::testSettings("6-31G*");
    s.grid.radialPoints = 40;
    s.grid.angularPoints = 110;
    s.convergence = 1e-8;
    return s;
}

} // namespace

TEST(CoulombResponse, SolvesItsLinearEquations) {
    const Model model(3);
    const int nocc = model.nocc, nvirt = model.nbf - nocc;
    const Eigen::MatrixXd occupied = model.C.leftCols(nocc), virtuals = model.C.rightCols(nvirt);
    // The equations (eps_a - eps_i) t_ai + C_a^T J[dD(t)] C_i = -C_a^T mismatch C_i as a dense matrix, column by
    // column of the amplitudes' unit vectors.
    const int n = nvirt * nocc;
    Eigen::MatrixXd A(n, n);
    for (int col = 0; col < n; col++) {
        Eigen::MatrixXd t = Eigen::MatrixXd::Zero(nvirt, nocc);
        t.data()[col] = 1;
        const Eigen::MatrixXd half = virtuals * t * occupied.transpose();
        Eigen::MatrixXd column = virtuals.transpose() * model.coulomb(2 * (half + half.transpose())) * occupied;
        for (int a = 0; a < nvirt; a++)
            for (int i = 0; i < nocc; i++)
                column(a, i) += (model.eps[nocc + a] - model.eps[i]) * t(a, i);
        A.col(col) = Eigen::Map<const Eigen::VectorXd>(column.data(), n);
    }
    const Eigen::MatrixXd g = virtuals.transpose() * model.mismatch * occupied;
    Eigen::MatrixXd t(nvirt, nocc);
    Eigen::Map<Eigen::VectorXd>(t.data(), n) = A.llt().solve(-Eigen::Map<const Eigen::VectorXd>(g.data(), n));
    Eigen::MatrixXd expected = occupied + virtuals * t;
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> metric(expected.transpose() * model.S * expected);
    expected = expected * metric.operatorInverseSqrt();

    auto coulomb = [&](const Eigen::MatrixXd& D) { return model.coulomb(D); };
    const CoulombResponseStep step = coulombResponse(model.C, model.eps, nocc, model.mismatch, coulomb, n, 1e-14);
    EXPECT_LE(step.coulombBuilds, n);
    EXPECT_GT(step.coulombBuilds, 1);
    EXPECT_LT((step.occupied - expected).norm(), 1e-10 * expected.norm());
    // Orthonormal in S (an idempotent density).
    EXPECT_LT((step.occupied.transpose() * model.S * step.occupied - Eigen::MatrixXd::Identity(nocc, nocc)).norm(), 1e-12);
    // The step moved the orbitals: the response is not the Roothaan step.
    EXPECT_GT((step.occupied - occupied).norm(), 1e-5);
    // Fewer steps stop early with one Coulomb build each.
    EXPECT_EQ(1, coulombResponse(model.C, model.eps, nocc, model.mismatch, coulomb, 1, 1e-14).coulombBuilds);
}

TEST(CoulombResponse, CoulombBuildsOfHeldDensitiesTakeTheSameSteps) {
    // The conjugate-gradient steps' densities handed over held (as a device builds J beside them): the caller's
    // builder gets H with dD = 4 (H + H^T) / 2 and must give the same step as the host's builds of dD.
    const Model model(5);
    auto coulomb = [&](const Eigen::MatrixXd& D) { return model.coulomb(D); };
    int heldBuilds = 0;
    const HeldCoulomb held = [&](const MatrixProducts& m, const Held& H, double scale) {
        heldBuilds++;
        const Eigen::MatrixXd h = m.fetch(H);
        return m.hold(model.coulomb((0.5 * scale) * (h + h.transpose())));
    };
    const CoulombResponseStep plain = coulombResponse(model.C, model.eps, model.nocc, model.mismatch, coulomb, 3, 1e-14);
    const CoulombResponseStep step =
        coulombResponse(model.C, model.eps, model.nocc, model.mismatch, coulomb, 3, 1e-14, &hostMatrixProducts(), held);
    EXPECT_EQ(3, step.coulombBuilds);
    EXPECT_EQ(3, heldBuilds);
    EXPECT_LT((step.occupied - plain.occupied).norm(), 1e-13 * plain.occupied.norm());
    EXPECT_GT((step.occupied - model.C.leftCols(model.nocc)).norm(), 1e-5);
}

TEST(CoulombResponse, NoGapOrNoMismatchLeavesTheOrbitals) {
    Model model(4);
    auto coulomb = [&](const Eigen::MatrixXd& D) { return model.coulomb(D); };
    const Eigen::MatrixXd occupied = model.C.leftCols(model.nocc);
    const CoulombResponseStep none = coulombResponse(model.C, model.eps, model.nocc, Eigen::MatrixXd::Zero(7, 7), coulomb, 5, 0.05);
    EXPECT_EQ(0.0, (none.occupied - occupied).norm());
    model.eps[model.nocc] = model.eps[model.nocc - 1];  // degenerate at the Fermi level
    const CoulombResponseStep degenerate = coulombResponse(model.C, model.eps, model.nocc, model.mismatch, coulomb, 5, 0.05);
    EXPECT_EQ(0.0, (degenerate.occupied - occupied).norm());
    EXPECT_EQ(0, degenerate.coulombBuilds);
}

TEST(CoulombResponse, SameEnergyInFewerSCFIterations) {
    // Four waters from atomic densities (where charge moves between molecules): the SCF with the response step must
    // converge to the same energy, in fewer iterations, with density fitting and with exact Coulomb.
    const double A = QMTest::kBohrPerAngstrom;
    std::vector<QMAtom> atoms;
    for (int w = 0; w < 4; w++) {
        const double x = 2.9 * A * (w % 2), y = 2.9 * A * (w / 2);
        atoms.push_back({8, {x, y, 0}});
        atoms.push_back({1, {x + 0.7572 * A, y, 0.5865 * A}});
        atoms.push_back({1, {x - 0.7572 * A, y, 0.5865 * A}});
    }
    for (CoulombMethod method : {CoulombMethod::DensityFitting, CoulombMethod::Exact}) {
        QMSettings s = coarseSettings();
        s.coulomb = method;
        s.coulombResponseSteps = 0;
        const QMResult plain = KohnShamLDA(s).compute(atoms, 0, {});
        s.coulombResponseSteps = 2;
        const QMResult corrected = KohnShamLDA(s).compute(atoms, 0, {});
        EXPECT_NEAR(corrected.total, plain.total, 1e-9) << (int) method;
        EXPECT_LT(corrected.iterations, plain.iterations) << (int) method;
        std::printf("%s: %d SCF iterations without the response step, %d with it\n", method == CoulombMethod::Exact ? "exact J" : "DF", plain.iterations, corrected.iterations);
        EXPECT_GT(corrected.coulombResponseBuilds, 0) << (int) method;
        EXPECT_EQ(0, plain.coulombResponseBuilds) << (int) method;
        EXPECT_EQ(0, plain.restarts + corrected.restarts) << (int) method;
    }
}

TEST(CoulombResponse, RecycledPairsCarryTheirCoulombChanges) {
    // Along a trajectory the next SCF needs J of the recycled pairs' densities: a result hands on one Coulomb change
    // per pair (this SCF's and those it recycled), and none without the response step.
    QMSettings s = coarseSettings();
    const double A = QMTest::kBohrPerAngstrom;
    auto water = [&](double stretch) {
        return std::vector<QMAtom>{{8, {0, 0, 0}}, {1, {(0.7572 + stretch) * A, 0, 0.5865 * A}}, {1, {-0.7572 * A, 0, 0.5865 * A}}};
    };
    for (int steps : {0, 2}) {
        s.coulombResponseSteps = steps;
        KohnShamLDA engine(s);
        QMResult r = engine.compute(water(0), 0, {});
        for (int k = 1; k <= 3; k++) {
            const DensityGuess guess = r.guess();
            r = engine.compute(water(0.002 * k), 0, {}, &guess);
            ASSERT_FALSE(r.fockChanges.empty());
            EXPECT_EQ(steps > 0 ? r.fockChanges.size() : 0u, r.coulombChanges.size()) << steps << " " << k;
            EXPECT_GT(r.recycledPairs, 0);
        }
        if (steps > 0)  // the changes belong to their pairs: J is linear, dJ of a pair is J of its density change
            for (const SharedPair& dJ : r.coulombChanges)
                EXPECT_TRUE(dJ->allFinite());
    }
}

TEST(CoulombResponse, SmallGapFromAtomicDensitiesStillConverges) {
    // LiF at 3 A (near the ionic/covalent crossing, a small HOMO-LUMO gap) from atomic densities: the response step
    // taken at an SCF error of 0.03 once overshot (the error went to 1) and all three attempts failed, where the SCF
    // without it converged in 16 iterations. It now waits for errors below 1e-2 and stops after a step that raised the
    // error.
    QMSettings s = coarseSettings();
    const double A = QMTest::kBohrPerAngstrom;
    const std::vector<QMAtom> lif = {{3, {0, 0, 0}}, {9, {3.0 * A, 0, 0}}};
    s.coulombResponseSteps = 0;
    const QMResult plain = KohnShamLDA(s).compute(lif, 0, {});
    s.coulombResponseSteps = 2;
    const QMResult corrected = KohnShamLDA(s).compute(lif, 0, {});
    EXPECT_EQ(0, plain.restarts + corrected.restarts);
    EXPECT_LE(corrected.iterations, plain.iterations);
    EXPECT_NEAR(corrected.total, plain.total, 1e-9);
}

TEST(CoulombResponse, ARepeatedIterateTakesAPlainStep) {
    // H2 in 6-31G* has a small space of symmetry-allowed orbital rotations: DIIS's subspace covers it, extrapolates to
    // the same Fock matrix again and again, and the SCF repeated one iterate (error 2.2e-7 with the response step,
    // 2.5e-10 without) until the subspace's entries were pushed out (11 iterations instead of 5). A repeated error now
    // takes a plain Roothaan step, and DIIS goes on from the next iterate.
    QMSettings s = coarseSettings();
    const std::vector<QMAtom> h2 = {{1, {0, 0, 0}}, {1, {0.74 * QMTest::kBohrPerAngstrom, 0, 0}}};
    for (double convergence : {1e-8, 1e-10}) {
        s.convergence = convergence;
        for (int steps : {0, 2}) {
            s.coulombResponseSteps = steps;
            const QMResult r = KohnShamLDA(s).compute(h2, 0, {});
            EXPECT_LE(r.iterations, convergence > 1e-9 ? 6 : 8) << convergence << " " << steps;
        }
    }
}
