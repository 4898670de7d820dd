#include "TestUtil.h"
#include "openmmdft/qm/Grid.h"
#include <openmm/OpenMMException.h>
#include <gtest/gtest.h>
#include <cmath>
#include <random>

using namespace OpenMMDFT::QM;
using QMTest::water;

TEST(Grid, RadialGridsIntegrateGaussians) {
    // int_0^inf exp(-a r^2) r^2 dr = sqrt(pi)/(4 a^1.5)
    for (double a : {0.3, 1.0, 30.0}) {
        const double exact = std::sqrt(M_PI) / (4 * std::pow(a, 1.5));
        for (const RadialGrid& g : {treutlerAhlrichsGrid(75, 8, true), beckeGrid(75, 8)}) {
            double sum = 0;
            for (size_t i = 0; i < g.r.size(); i++)
                sum += g.w[i] * std::exp(-a * g.r[i] * g.r[i]);
            EXPECT_NEAR(sum, exact, 1e-8 * exact);
        }
    }
}

TEST(Grid, LebedevIntegratesPolynomials) {
    for (int n : lebedevSizes()) {
        const AngularGrid& g = lebedevGrid(n);
        double w = 0, x2 = 0, x2y2 = 0;
        for (size_t i = 0; i < g.w.size(); i++) {
            const double x = g.xyz[i][0], y = g.xyz[i][1];
            w += g.w[i];
            x2 += g.w[i] * x * x;
            x2y2 += g.w[i] * x * x * y * y;
        }
        EXPECT_NEAR(w, 1.0, 1e-13);
        EXPECT_NEAR(x2, 1.0 / 3, 1e-13);
        if (n >= 14)
            EXPECT_NEAR(x2y2, 1.0 / 15, 1e-13);
    }
    EXPECT_GE(lebedevSizes().back(), 590);
    EXPECT_THROW(lebedevGrid(300), OpenMM::OpenMMException);
}

TEST(Grid, PartitionWeightsSumToOne) {
    std::mt19937 rng(1);
    std::uniform_real_distribution<double> u(-3, 3);
    const auto atoms = water();
    for (AtomicPartition p : {AtomicPartition::Becke, AtomicPartition::StratmannScuseriaFrisch})
        for (AtomicSizeAdjustment adj : {AtomicSizeAdjustment::None, AtomicSizeAdjustment::TreutlerRadii}) {
            GridSettings s;
            s.partition = p;
            s.sizeAdjustment = adj;
            for (int k = 0; k < 50; k++) {
                const double r[3] = {u(rng), u(rng), u(rng)};
                double sum = 0;
                for (int a = 0; a < 3; a++)
                    sum += partitionWeight(atoms, a, r, s);
                EXPECT_NEAR(sum, 1.0, 1e-12);
            }
        }
}

TEST(Grid, GroupsHoldEveryPointOnceAndIntegrateAGaussian) {
    const auto atoms = water();
    BasisSet basis(loadBasisDefinition("def2-SVP", QMENGINE_DATA_DIR), atoms, true);
    // A normalized s Gaussian on each atom integrates to 3 whatever the grouping.
    for (AtomicPartition p : {AtomicPartition::Becke, AtomicPartition::StratmannScuseriaFrisch}) {
        GridSettings s;
        s.radialPoints = 60;
        s.angularPoints = 302;
        s.partition = p;
        MolecularGrid g(atoms, basis, s);
        size_t n = 0, spheres = 0;
        double sum = 0;
        for (const GridBatch& b : g.batches()) {
            n += b.size();
            spheres += b.sphere;
            for (size_t i = 0; i < b.size(); i++)
                for (const QMAtom& a : atoms) {
                    const double dx = b.x[i] - a.xyz[0], dy = b.y[i] - a.xyz[1], dz = b.z[i] - a.xyz[2];
                    sum += b.w[i] * std::pow(2.0 / M_PI, 1.5) * std::exp(-2 * (dx * dx + dy * dy + dz * dz));
                }
        }
        EXPECT_EQ(n, g.numPoints());
        EXPECT_EQ(spheres, 3u);
        EXPECT_NEAR(sum, 3.0, 1e-5);
        EXPECT_LE(g.averageFunctionsPerPoint(), basis.size());
    }
}
