/* The SCF guess of each MD step (qmengine/driver/DensityExtrapolation): Kolafa's ASPC coefficients, exactness
 * for densities that change linearly along the trajectory (ASPC) or as a polynomial of the order's degree
 * (PolynomialExtrapolation), and the rules that restart the history (judged
 * from the QM positions: here atoms moving uniformly, one step of positionsAt() per MD step). */
#include "DensityExtrapolation.h"
#include "openmm/OpenMMException.h"
#include <gtest/gtest.h>

using namespace OpenMMDFT;
using namespace OpenMM;
using namespace std;

namespace {

/** A density that changes linearly with the step: A + step B. */
Eigen::MatrixXd linearDensity(long long step) {
    Eigen::MatrixXd A(2, 2), B(2, 2);
    A << 1.0, 0.2, 0.2, 0.7;
    B << 0.01, -0.003, -0.003, 0.02;
    return A + (double) step * B;
}

vector<Vec3> positionsAt(long long step) {
    return {Vec3(0.001 * step, 0, 0), Vec3(0.1, 0.0005 * step, 0)};
}


} // namespace

TEST(DensityExtrapolation, KolafaCoefficients) {
    // J. Kolafa, J. Comput. Chem. 25, 335 (2004), Table 1 (B_1..B_n for n = 2, 3, 4).
    const vector<vector<double>> expected = {{2, -1}, {2.5, -2, 0.5}, {2.8, -2.8, 1.2, -0.2}};
    for (const auto& b : expected) {
        const vector<double> computed = DensityExtrapolation::aspcCoefficients(b.size());
        ASSERT_EQ(b.size(), computed.size());
        for (size_t i = 0; i < b.size(); i++)
            EXPECT_NEAR(b[i], computed[i], 1e-14);
    }
    for (int n = 1; n <= 7; n++) {
        const vector<double> b = DensityExtrapolation::aspcCoefficients(n);
        double sum = 0, firstMoment = 0;
        for (int i = 1; i <= n; i++) {
            sum += b[i - 1];
            firstMoment += b[i - 1] * i;
        }
        EXPECT_NEAR(1.0, sum, 1e-12) << n;  // a constant density is kept
        if (n >= 2)
            EXPECT_NEAR(0.0, firstMoment, 1e-12) << n;  // a linear trend is continued exactly
    }
}

TEST(DensityExtrapolation, ContinuesALinearTrajectoryExactly) {
    for (int order = 1; order <= 6; order++) {
        DensityExtrapolation history(DensityExtrapolation::ASPC, order);
        int used = -1;
        EXPECT_EQ(nullptr, history.guess(positionsAt(10), used));
        EXPECT_EQ(0, used);
        for (long long step = 10; step < 20; step++) {
            unique_ptr<QM::DensityGuess> guess = history.guess(positionsAt(step), used);
            if (step > 10) {
                ASSERT_NE(nullptr, guess);
                EXPECT_EQ(min<int>(step - 10, order + 1), used);
                // One past density is the previous one; two or more continue the linear trend exactly.
                const Eigen::MatrixXd expected = linearDensity(used == 1 ? step - 1 : step);
                EXPECT_LT((guess->density - expected).cwiseAbs().maxCoeff(), 1e-12) << "order " << order << " step " << step;
            }
            history.record(positionsAt(step), linearDensity(step));
        }
    }
}

TEST(DensityExtrapolation, PolynomialExtrapolationIsExactForPolynomialsOfItsOrder) {
    // D(t) = A + sum_k t^k B_k / k! with degree = order: the guess equals it once order + 1 densities are recorded;
    // with fewer it is exact for the lower degree only (checked here for the full history alone). The guess at
    // degree order + 1 is not exact (the test can fail).
    auto density = [](long long step, int degree) {
        Eigen::MatrixXd D = linearDensity(0);
        double power = 1, factorial = 1;
        for (int k = 1; k <= degree; k++) {
            power *= 0.3 * step;
            factorial *= k;
            Eigen::MatrixXd B(2, 2);
            B << 0.01 * k, -0.002, -0.002, 0.005 * (k % 3);
            D += power / factorial * B;
        }
        return D;
    };
    EXPECT_EQ((vector<double>{4, -6, 4, -1}), DensityExtrapolation::polynomialCoefficients(4));
    for (int order = 1; order <= 6; order++)
        for (int degree : {order, order + 1}) {
            DensityExtrapolation history(DensityExtrapolation::Polynomial, order);
            int used = -1;
            for (long long step = 10; step < 20; step++) {
                unique_ptr<QM::DensityGuess> guess = history.guess(positionsAt(step), used);
                if (step - 10 > order) {
                    ASSERT_NE(nullptr, guess);
                    EXPECT_EQ(order + 1, used);
                    const double error = (guess->density - density(step, degree)).cwiseAbs().maxCoeff();
                    if (degree == order)
                        EXPECT_LT(error, 1e-9) << "order " << order << " step " << step;
                    else
                        EXPECT_GT(error, 1e-6) << "order " << order << " step " << step;
                }
                history.record(positionsAt(step), density(step, degree));
            }
        }
}

TEST(DensityExtrapolation, PreviousDensityUsesTheLastOne) {
    DensityExtrapolation history(DensityExtrapolation::PreviousDensity, 3);
    int used;
    for (long long step = 0; step < 4; step++)
        history.record(positionsAt(step), linearDensity(step));
    unique_ptr<QM::DensityGuess> guess = history.guess(positionsAt(4), used);
    EXPECT_EQ(1, used);
    EXPECT_LT((guess->density - linearDensity(3)).cwiseAbs().maxCoeff(), 1e-15);
}

TEST(DensityExtrapolation, RestartsWhenTheTrajectoryIsBroken) {
    for (DensityExtrapolation::Method method : {DensityExtrapolation::ASPC, DensityExtrapolation::Polynomial}) {
        auto filled = [method]() {
            unique_ptr<DensityExtrapolation> history(new DensityExtrapolation(method, 3));
            for (long long step = 0; step < 4; step++)
                history->record(positionsAt(step), linearDensity(step));
            return history;
        };
        int used;
        // The next step extrapolates from all four.
        EXPECT_NE(nullptr, filled()->guess(positionsAt(4), used));
        EXPECT_EQ(4, used);
        // Not a continuation: the last density alone.
        filled()->guess(positionsAt(9), used);  // setPositions to another geometry
        EXPECT_EQ(1, used);
        filled()->guess(positionsAt(8), used);  // five steps at once (unequal spacing)
        EXPECT_EQ(1, used);
        filled()->guess(positionsAt(0), used);  // back to an earlier state (a loaded checkpoint)
        EXPECT_EQ(1, used);
        filled()->guess(positionsAt(3), used);  // the newest point again: its own density
        EXPECT_EQ(1, used);
        vector<Vec3> far = positionsAt(4);
        far[1][2] += 2 * DensityExtrapolation::MAX_STEP_DISPLACEMENT;
        filled()->guess(far, used);  // a jump no MD step makes
        EXPECT_EQ(1, used);

        // Recording such an evaluation starts a new history from it.
        unique_ptr<DensityExtrapolation> history = filled();
        history->record(positionsAt(9), linearDensity(9));
        unique_ptr<QM::DensityGuess> guess = history->guess(positionsAt(10), used);
        EXPECT_EQ(1, used);
        EXPECT_LT((guess->density - linearDensity(9)).cwiseAbs().maxCoeff(), 1e-15);

        // Evaluating the newest point again (getState between steps) keeps the history.
        history = filled();
        history->record(positionsAt(3), linearDensity(3));
        history->guess(positionsAt(4), used);
        EXPECT_EQ(4, used);

        history = filled();
        history->clear();
        EXPECT_EQ(nullptr, history->guess(positionsAt(4), used));
    }
}

TEST(DensityExtrapolation, RefusesBadOrders) {
    EXPECT_THROW(DensityExtrapolation(DensityExtrapolation::ASPC, 0), OpenMMException);
    EXPECT_THROW(DensityExtrapolation(DensityExtrapolation::ASPC, 7), OpenMMException);
    EXPECT_THROW(DensityExtrapolation(DensityExtrapolation::Polynomial, 0), OpenMMException);
    EXPECT_THROW(DensityExtrapolation(DensityExtrapolation::Polynomial, 7), OpenMMException);
    EXPECT_THROW(DensityExtrapolation(DensityExtrapolation::XLBOMD, 2), OpenMMException);
    EXPECT_THROW(DensityExtrapolation(DensityExtrapolation::XLBOMD, 8), OpenMMException);
}

// XL-BOMD's auxiliary density: started from the first density, it stays there while the density does not change
// (sum c_k = 0), and for a linearly changing density it approaches the trajectory with a lag that the
// dissipation damps; whatever K, the guess is a finite, close continuation (within two steps' change here).
TEST(DensityExtrapolation, XLBOMDFollowsTheDensity) {
    for (int K = 3; K <= 7; K++) {
        DensityExtrapolation still(DensityExtrapolation::XLBOMD, K);
        int used;
        for (long long step = 0; step < 12; step++) {
            if (step > 0) {
                unique_ptr<QM::DensityGuess> guess = still.guess(positionsAt(step), used);
                EXPECT_LT((guess->density - linearDensity(0)).cwiseAbs().maxCoeff(), 1e-13) << "K " << K;
                EXPECT_EQ(K, used);
            }
            still.record(positionsAt(step), linearDensity(0));
        }
        DensityExtrapolation moving(DensityExtrapolation::XLBOMD, K);
        double worst = 0;
        for (long long step = 0; step < 40; step++) {
            if (step > 0) {
                unique_ptr<QM::DensityGuess> guess = moving.guess(positionsAt(step), used);
                worst = max(worst, (guess->density - linearDensity(step)).cwiseAbs().maxCoeff());
            }
            moving.record(positionsAt(step), linearDensity(step));
        }
        const double oneStep = (linearDensity(1) - linearDensity(0)).cwiseAbs().maxCoeff();
        EXPECT_LT(worst, 2 * oneStep) << "K " << K;
        // A broken trajectory restarts it from the newest density.
        unique_ptr<QM::DensityGuess> guess = moving.guess(positionsAt(100), used);
        EXPECT_EQ(1, used);
        EXPECT_LT((guess->density - linearDensity(39)).cwiseAbs().maxCoeff(), 1e-15);
    }
}

TEST(DensityExtrapolation, CarriesTheSCFSubspaceAlongTheTrajectoryOnly) {
    // The DIIS pairs of the newest SCF go with the guess while the trajectory continues, and at the same point
    // again; a jump or clear() leave them out (they describe another geometry).
    const vector<QM::SharedPair> focks = {std::make_shared<const QM::PackedPair>(QM::PackedPair::Ones(3))},
                                 errors = {std::make_shared<const QM::PackedPair>(2 * QM::PackedPair::Ones(3))};
    for (DensityExtrapolation::Method method : {DensityExtrapolation::PreviousDensity, DensityExtrapolation::ASPC, DensityExtrapolation::XLBOMD,
                                                DensityExtrapolation::Polynomial}) {
        DensityExtrapolation history(method, 3);
        for (long long step = 0; step < 4; step++)
            history.record(positionsAt(step), linearDensity(step), focks, errors);
        int used;
        unique_ptr<QM::DensityGuess> next = history.guess(positionsAt(4), used);
        ASSERT_EQ(1u, next->fockChanges.size()) << method;
        EXPECT_EQ(2.0f, (*next->errorChanges[0])(1));
        EXPECT_EQ(focks[0].get(), next->fockChanges[0].get()) << method;  // shared with the history, not copied
        EXPECT_EQ(1u, history.guess(positionsAt(3), used)->fockChanges.size()) << method;
        vector<Vec3> far = positionsAt(4);
        far[1][2] += 2 * DensityExtrapolation::MAX_STEP_DISPLACEMENT;
        EXPECT_TRUE(history.guess(far, used)->fockChanges.empty()) << method;
        // A record without pairs (recycling off) hands none on.
        history.record(positionsAt(4), linearDensity(4));
        EXPECT_TRUE(history.guess(positionsAt(5), used)->fockChanges.empty()) << method;
    }
}

TEST(DensityExtrapolation, TakesTheTrajectoryUpAgainAfterAnExcursion) {
    // A Monte Carlo barostat evaluates a trial geometry between two steps; when the trial is rejected the trajectory
    // goes on where it was. Its history and DIIS pairs were set aside, not lost: the next guess extrapolates as if
    // the excursion had not happened, and a second excursion sets aside the same trajectory again.
    const vector<QM::SharedPair> focks = {std::make_shared<const QM::PackedPair>(QM::PackedPair::Ones(3))},
                                 errors = {std::make_shared<const QM::PackedPair>(2 * QM::PackedPair::Ones(3))};
    for (DensityExtrapolation::Method method : {DensityExtrapolation::ASPC, DensityExtrapolation::Polynomial, DensityExtrapolation::XLBOMD}) {
        DensityExtrapolation history(method, 3);
        for (long long step = 0; step < 6; step++)
            history.record(positionsAt(step), linearDensity(step), focks, errors);
        int used, usedBefore;
        const Eigen::MatrixXd before = history.guess(positionsAt(6), usedBefore)->density;
        for (int excursion = 0; excursion < 2; excursion++) {
            vector<Vec3> trial = positionsAt(5);
            for (Vec3& x : trial)
                x *= 1.01;  // the barostat scales the coordinates
            trial[1][2] += 0.01;
            EXPECT_EQ(1, [&] { history.guess(trial, used); return used; }()) << method;
            history.record(trial, 2 * linearDensity(5));  // a different density there, no pairs
            unique_ptr<QM::DensityGuess> resumed = history.guess(positionsAt(6), used);
            EXPECT_EQ(usedBefore, used) << method;
            EXPECT_EQ(0.0, (resumed->density - before).cwiseAbs().maxCoeff()) << method;
            EXPECT_EQ(1u, resumed->fockChanges.size()) << method;
        }
        // Going on from there records onto the resumed trajectory.
        history.record(positionsAt(6), linearDensity(6), focks, errors);
        if (method != DensityExtrapolation::XLBOMD)
            EXPECT_LT((history.guess(positionsAt(7), used)->density - linearDensity(7)).cwiseAbs().maxCoeff(), 1e-12)
                << method;
        // clear() forgets the trajectory set aside too.
        history.clear();
        EXPECT_EQ(nullptr, history.guess(positionsAt(7), used));
    }
}
