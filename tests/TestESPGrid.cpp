/* ESP sampling grids: CHELPG spacing, margin and vdW exclusion; Merz-Kollman shells and density. */
#include "openmmdft/internal/ESPGrid.h"
#include "openmm/OpenMMException.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

// Methanol (nm): C, O, H (methyl) x3, H (hydroxyl).
static const vector<Vec3> METHANOL = {Vec3(-0.0046520, 0.0663395, 0), Vec3(-0.0046520, -0.0755395, 0),
                                      Vec3(-0.1086190, 0.0975969, 0), Vec3(0.0437720, 0.1071990, 0.0889415),
                                      Vec3(0.0437720, 0.1071990, -0.0889415), Vec3(0.0861066, -0.1081311, 0)};
static const vector<int> METHANOL_Z = {6, 8, 1, 1, 1, 1};

static double nearestScaled(const Vec3& p, const vector<Vec3>& atoms, const vector<double>& radii, double& nearest) {
    double best = 1e300;
    nearest = 1e300;
    for (size_t a = 0; a < atoms.size(); a++) {
        double d = sqrt((p - atoms[a]).dot(p - atoms[a]));
        best = min(best, d / radii[a]);
        nearest = min(nearest, d);
    }
    return best;
}

TEST(ESPGrid, Radii) {
    EXPECT_DOUBLE_EQ(chelpgRadius(1), 0.145);
    EXPECT_DOUBLE_EQ(chelpgRadius(8), 0.17);
    EXPECT_DOUBLE_EQ(merzKollmanRadius(8), 0.14);
    EXPECT_DOUBLE_EQ(merzKollmanRadius(6), 0.15);
    EXPECT_THROW(chelpgRadius(26), OpenMMException);
    EXPECT_THROW(merzKollmanRadius(0), OpenMMException);
}

TEST(ESPGrid, CHELPGSpacingMarginAndExclusion) {
    vector<Vec3> points = chelpgGrid(METHANOL, METHANOL_Z);
    ASSERT_GT(points.size(), 1000u);
    vector<double> radii;
    for (int z : METHANOL_Z)
        radii.push_back(chelpgRadius(z));
    double farthest = 0;
    for (const Vec3& p : points) {
        double nearest;
        // Outside every CHELPG radius, within 2.8 A of some nucleus.
        EXPECT_GE(nearestScaled(p, METHANOL, radii, nearest), 1.0);
        EXPECT_LE(nearest, 0.28 + 1e-12);
        farthest = max(farthest, nearest);
        // On a 0.3 A lattice: offsets from the first point are whole multiples of the spacing.
        for (int d = 0; d < 3; d++) {
            double steps = (p[d] - points[0][d]) / 0.03;
            EXPECT_NEAR(steps, round(steps), 1e-9);
        }
    }
    // The lattice reaches the 2.8 A margin (to within one cell diagonal).
    EXPECT_GT(farthest, 0.28 - 0.03 * sqrt(3.0));
    // Neighbours one spacing apart exist (the lattice is not coarser than asked).
    double closest = 1e300;
    for (size_t i = 1; i < points.size(); i++)
        closest = min(closest, sqrt((points[i] - points[0]).dot(points[i] - points[0])));
    EXPECT_NEAR(closest, 0.03, 1e-12);
}

TEST(ESPGrid, CHELPGSingleAtomIsSymmetricShell) {
    vector<Vec3> points = chelpgGrid({Vec3(1, 2, 3)}, {8});
    // Every lattice point between 1.7 and 2.8 A of the atom, no other: count them directly.
    int expected = 0;
    for (int i = -9; i <= 9; i++)
        for (int j = -9; j <= 9; j++)
            for (int k = -9; k <= 9; k++) {
                double r = 0.03 * sqrt((double) (i * i + j * j + k * k));
                expected += (r >= 0.17 && r <= 0.28 + 1e-12);
            }
    EXPECT_EQ((int) points.size(), expected);
}

TEST(ESPGrid, MerzKollmanShellsAndDensity) {
    // One atom: four full shells with round(4 pi R^2) points per A^2.
    vector<Vec3> single = merzKollmanGrid({Vec3(0, 0, 0)}, {8});
    int expected = 0;
    for (double s : {1.4, 1.6, 1.8, 2.0})
        expected += (int) lround(4 * M_PI * pow(s * 1.40, 2));
    EXPECT_EQ((int) single.size(), expected);
    // Methanol: every point lies on some shell of some atom and inside no sphere of its own scale.
    vector<Vec3> points = merzKollmanGrid(METHANOL, METHANOL_Z);
    vector<double> radii;
    for (int z : METHANOL_Z)
        radii.push_back(merzKollmanRadius(z));
    int onShell[4] = {0, 0, 0, 0};
    for (const Vec3& p : points) {
        double nearest;
        double s = nearestScaled(p, METHANOL, radii, nearest);
        int shell = -1;
        for (int k = 0; k < 4; k++)
            if (fabs(s - (1.4 + 0.2 * k)) < 1e-9)
                shell = k;
        ASSERT_GE(shell, 0) << "point at " << s << " x the nearest MK radius";
        onShell[shell]++;
    }
    for (int k = 0; k < 4; k++)
        EXPECT_GT(onShell[k], 0);
    // Outer shells overlap less and are larger: more points.
    EXPECT_LT(onShell[0], onShell[3]);
}

TEST(ESPGrid, BadInput) {
    EXPECT_THROW(chelpgGrid({}, {}), OpenMMException);
    EXPECT_THROW(chelpgGrid({Vec3()}, {1, 1}), OpenMMException);
    EXPECT_THROW(merzKollmanGrid({Vec3()}, {92}), OpenMMException);
    EXPECT_THROW(chelpgGrid({Vec3()}, {1}, -0.03), OpenMMException);
}

/** The call must throw an OpenMMException whose message contains every fragment. */
template <class F>
static void expectError(F call, const vector<string>& fragments) {
    try {
        call();
        ADD_FAILURE() << "no exception; expected one containing '" << fragments[0] << "'";
    }
    catch (const OpenMMException& e) {
        for (const string& f : fragments)
            EXPECT_NE(string(e.what()).find(f), string::npos) << "'" << f << "' missing from: " << e.what();
    }
}

TEST(ESPGrid, NonFinitePositionsAreErrorsNotEmptyGrids) {
    const double nan = numeric_limits<double>::quiet_NaN(), inf = numeric_limits<double>::infinity();
    for (const Vec3& bad : {Vec3(nan, 0, 0), Vec3(0, inf, 0), Vec3(0, 0, -inf)}) {
        // First atom (sets the bounding box) and a later one (min/max skip a NaN there).
        for (int index : {0, 2}) {
            vector<Vec3> positions = METHANOL;
            positions[index] = bad;
            const string atom = "atom " + to_string(index);
            expectError([&] { chelpgGrid(positions, METHANOL_Z); }, {"ESP grid", atom, "not finite"});
            expectError([&] { merzKollmanGrid(positions, METHANOL_Z); }, {"ESP grid", atom, "not finite"});
        }
    }
}

TEST(ESPGrid, EmptyOrMismatchedAtomListsAreErrors) {
    expectError([] { chelpgGrid({}, {}); }, {"ESP grid", "no atoms"});
    expectError([] { merzKollmanGrid({}, {}); }, {"ESP grid", "no atoms"});
    expectError([] { chelpgGrid({Vec3()}, {1, 1}); }, {"1 positions", "2 atomic numbers"});
    expectError([] { merzKollmanGrid({Vec3(), Vec3(1, 0, 0)}, {1}); }, {"2 positions", "1 atomic numbers"});
}

TEST(ESPGrid, ElementsWithoutRadiusNameAtomAndNumber) {
    for (int z : {0, -1, 19, 26, 119}) {
        expectError([&] { chelpgGrid({Vec3(), Vec3(0.1, 0, 0)}, {8, z}); },
                    {"CHELPG", "atomic number " + to_string(z), "atom 1"});
        expectError([&] { merzKollmanGrid({Vec3(), Vec3(0.1, 0, 0)}, {8, z}); },
                    {"Merz-Kollman", "atomic number " + to_string(z), "atom 1"});
    }
}

TEST(ESPGrid, BadGridParametersAreErrors) {
    const double nan = numeric_limits<double>::quiet_NaN(), inf = numeric_limits<double>::infinity();
    for (double bad : {0.0, -0.03, nan, inf}) {
        expectError([&] { chelpgGrid(METHANOL, METHANOL_Z, bad, 0.28); }, {"spacing"});
        expectError([&] { chelpgGrid(METHANOL, METHANOL_Z, 0.03, bad); }, {"margin"});
        expectError([&] { merzKollmanGrid(METHANOL, METHANOL_Z, {1.4, bad}); }, {"scale"});
        expectError([&] { merzKollmanGrid(METHANOL, METHANOL_Z, {1.4}, bad); }, {"density"});
    }
    expectError([] { merzKollmanGrid(METHANOL, METHANOL_Z, {}); }, {"at least one shell"});
}

TEST(ESPGrid, OversizedGridsAreErrorsNotOverflows) {
    // Atoms a kilometre apart (e.g. coordinates in the wrong unit) or a vanishing spacing would
    // overflow the lattice counts, or run for ever.
    expectError([] { chelpgGrid({Vec3(), Vec3(1e12, 0, 0)}, {1, 1}); }, {"CHELPG", "points"});
    expectError([] { chelpgGrid(METHANOL, METHANOL_Z, 1e-9, 0.28); }, {"CHELPG", "points"});
    expectError([] { merzKollmanGrid(METHANOL, METHANOL_Z, {1.4}, 1e300); }, {"Merz-Kollman", "points"});
    expectError([] { merzKollmanGrid(METHANOL, METHANOL_Z, {1e200}); }, {"Merz-Kollman", "points"});
}
