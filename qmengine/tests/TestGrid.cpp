#include "TestUtil.h"
#include "openmmdft/qm/Grid.h"
#include <openmm/OpenMMException.h>
#include <gtest/gtest.h>
#include <algorithm>
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
    // A normalized s Gaussian on each atom integrates to 3 whatever the grouping. Cubes of 0.02 bohr: more of them in
    // the points' bounding box than the flat table of cube numbers takes (the hash map's path).
    for (AtomicPartition p : {AtomicPartition::Becke, AtomicPartition::StratmannScuseriaFrisch})
    for (double edge : {3.0, 0.02}) {
        GridSettings s;
        s.radialPoints = 60;
        s.angularPoints = 302;
        s.partition = p;
        s.cubeEdge = edge;
        MolecularGrid g(atoms, basis, s);
        size_t n = 0, spheres = 0;
        double sum = 0;
        for (const GridBatch& b : g.batches()) {
            n += b.size();
            spheres += b.sphere;
            for (size_t i = 0; i < b.size(); i++) {
                if (!b.sphere)  // in its cube
                    EXPECT_LE(std::max({std::abs(b.x[i] - b.center[0]), std::abs(b.y[i] - b.center[1]), std::abs(b.z[i] - b.center[2])}),
                              0.5 * edge * (1 + 1e-9));
                for (const QMAtom& a : atoms) {
                    const double dx = b.x[i] - a.xyz[0], dy = b.y[i] - a.xyz[1], dz = b.z[i] - a.xyz[2];
                    sum += b.w[i] * std::pow(2.0 / M_PI, 1.5) * std::exp(-2 * (dx * dx + dy * dy + dz * dz));
                }
            }
        }
        EXPECT_EQ(n, g.numPoints());
        EXPECT_EQ(spheres, 3u);
        EXPECT_NEAR(sum, 3.0, 1e-5);
        EXPECT_LE(g.averageFunctionsPerPoint(), basis.size());
    }
}

namespace {

/// Eight waters on a 3 x 3 x 3 Angstrom lattice with a twist, so distances are not degenerate (bohr).
std::vector<QMAtom> waterCluster() {
    std::vector<QMAtom> atoms;
    const auto one = water();
    for (int k = 0; k < 8; k++)
        for (const QMAtom& a : one) {
            QMAtom b = a;
            const double shift[3] = {3.0 * (k & 1) + 0.2 * k, 3.0 * ((k >> 1) & 1) - 0.1 * k, 3.0 * (k >> 2) + 0.05 * k * k};
            for (int d = 0; d < 3; d++)
                b.xyz[d] += shift[d] * QMTest::kBohrPerAngstrom;
            atoms.push_back(b);
        }
    return atoms;
}

/// Becke's partition written out without any screening: W_A = P_A / sum_c P_c, P_c = prod_{d != c} s(nu_cd).
double unscreenedWeight(const std::vector<QMAtom>& atoms, int A, const double r[3], AtomicPartition partition) {
    const int n = (int) atoms.size();
    auto dist = [&](int i) {
        return std::sqrt(std::pow(r[0] - atoms[i].xyz[0], 2) + std::pow(r[1] - atoms[i].xyz[1], 2) + std::pow(r[2] - atoms[i].xyz[2], 2));
    };
    double total = 0, own = 0;
    for (int c = 0; c < n; c++) {
        double P = 1;
        for (int d = 0; d < n; d++) {
            if (d == c)
                continue;
            const double R = std::sqrt(std::pow(atoms[c].xyz[0] - atoms[d].xyz[0], 2) + std::pow(atoms[c].xyz[1] - atoms[d].xyz[1], 2) +
                                       std::pow(atoms[c].xyz[2] - atoms[d].xyz[2], 2));
            P *= cellFunction(partition, (dist(c) - dist(d)) / R);
        }
        total += P;
        if (c == A)
            own = P;
    }
    return own / total;
}

} // namespace

// The cell screening (a cell left out when its product falls below 1e-16 of the parent's, or its factor s(nu_cA)
// below 1e-15) changes weights only at the level of double rounding, and the derivatives stay those of the
// unscreened partition.
TEST(Grid, ScreenedPartitionMatchesTheUnscreenedFormula) {
    const auto atoms = waterCluster();
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> u(-1, 1);
    for (AtomicPartition partition : {AtomicPartition::Becke, AtomicPartition::StratmannScuseriaFrisch}) {
        GridSettings s;
        s.partition = partition;
        const PartitionWeightDerivatives derivatives(atoms, s);
        std::vector<double> dW;
        for (int k = 0; k < 200; k++) {
            const int A = k % (int) atoms.size();
            const double scale = 0.3 + 3.0 * (k % 7) / 6; // from near the nucleus to between molecules
            double r[3];
            for (int d = 0; d < 3; d++)
                r[d] = atoms[A].xyz[d] + scale * u(rng);
            const double plain = unscreenedWeight(atoms, A, r, partition);
            // Relative 1e-14 from the relative cutoff; absolute 1e-16 from the older absolute screen s(nu_cA) < 1e-15
            // (it matters only where W_A itself is tiny).
            EXPECT_NEAR(partitionWeight(atoms, A, r, s), plain, 1e-14 * plain + 1e-16);
            const double W = derivatives.compute(A, r, dW);
            EXPECT_NEAR(W, plain, 1e-14 * plain + 1e-16);
            if (plain < 1e-10)
                continue;
            // dW_A/dR_B by central differences of the unscreened formula, the point held fixed.
            const double h = 1e-5;
            for (int B = 0; B < (int) atoms.size(); B += 5)
                for (int d = 0; d < 3; d++) {
                    auto moved = atoms;
                    moved[B].xyz[d] += h;
                    const double up = unscreenedWeight(moved, A, r, partition);
                    moved[B].xyz[d] -= 2 * h;
                    const double down = unscreenedWeight(moved, A, r, partition);
                    EXPECT_NEAR(dW[3 * B + d], (up - down) / (2 * h), 2e-8) << "point " << k << " atom " << B << " direction " << d;
                }
        }
    }
}

TEST(Grid, WeightsFirstThenGroupingMakeTheSameGrid) {
    // The GPU path makes the partition weights before the fitting tensor and groups the points afterwards: the grid
    // must be the one made in one go, bit for bit, and weights for other atoms or settings are refused.
    const auto atoms = water();
    BasisSet basis(loadBasisDefinition("def2-SVP", QMENGINE_DATA_DIR), atoms, true);
    GridSettings s;
    s.radialPoints = 40;
    s.angularPoints = 110;
    s.pruning = GridPruning::NWChem;
    const MolecularGrid whole(atoms, basis, s, 2);
    const MolecularGrid split(atoms, basis, s, 2, atomicGridWeights(atoms, s, 2));
    ASSERT_EQ(whole.batches().size(), split.batches().size());
    ASSERT_EQ(whole.numPoints(), split.numPoints());
    for (size_t k = 0; k < whole.batches().size(); k++) {
        const GridBatch &a = whole.batches()[k], &b = split.batches()[k];
        EXPECT_EQ(a.x, b.x) << k;
        EXPECT_EQ(a.y, b.y) << k;
        EXPECT_EQ(a.z, b.z) << k;
        EXPECT_EQ(a.w, b.w) << k;
        EXPECT_EQ(a.shells, b.shells) << k;
    }
    GridSettings other = s;
    other.radialPoints = 41;
    EXPECT_THROW(MolecularGrid(atoms, basis, other, 2, atomicGridWeights(atoms, s, 2)), OpenMM::OpenMMException);
    auto fewer = atoms;
    fewer.pop_back();
    EXPECT_THROW(MolecularGrid(atoms, basis, s, 2, atomicGridWeights(fewer, s, 2)), OpenMM::OpenMMException);
}
