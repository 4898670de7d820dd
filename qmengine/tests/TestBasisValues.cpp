// The host's evaluation of basis functions on many points (ShellValues.h) and its vectorizable exponential
// (VectorExp.h): against std::exp, against the shared one-point shell evaluation that the GPU kernels also compile,
// and the gradients against central differences of the values.
#include "TestUtil.h"
#include "../src/ShellValues.h"
#include "../src/VectorExp.h"
#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/Basis.h"
#include <gtest/gtest.h>
#include <cmath>
#include <random>

using namespace QMTest;

TEST(VectorExp, WithinTwoUlpOfStdExp) {
    // Every argument the Gaussians and Boys functions give it: dense near 0, then out to the underflow limit.
    double worst = 0;
    for (int i = 0; i <= 2000000; i++) {
        const double x = i < 1000000 ? -1e-6 * i : -1.0 - 707.0 * (i - 1000000) / 1000000.0;
        const double exact = std::exp(x);
        worst = std::max(worst, std::abs(expOfNonPositive(x) - exact) / exact);
    }
    EXPECT_LT(worst, 4.5e-16);  // 2 ulp
    EXPECT_EQ(expOfNonPositive(0.0), 1.0);
    EXPECT_EQ(expOfNonPositive(-709.0), 0.0);  // below the documented range: 0 (e^-709 ~ 1.2e-308)
    EXPECT_EQ(expOfNonPositive(-1e10), 0.0);
}

namespace {
/// Points scattered around the water, some on its nuclei, more than one chunk of the chunked evaluation.
void testPoints(const std::vector<QMAtom>& atoms, int n, std::vector<double>& x, std::vector<double>& y, std::vector<double>& z) {
    std::mt19937 rng(7);
    std::normal_distribution<double> offset(0.0, 1.5);
    for (int p = 0; p < n; p++) {
        const QMAtom& a = atoms[p % atoms.size()];
        const bool onNucleus = p < (int) atoms.size();
        x.push_back(a.xyz[0] + (onNucleus ? 0.0 : offset(rng)));
        y.push_back(a.xyz[1] + (onNucleus ? 0.0 : offset(rng)));
        z.push_back(a.xyz[2] + (onNucleus ? 0.0 : offset(rng)));
    }
}
} // namespace

/** The shared evaluation's cartesian powers, worked out from the component's index (so that a GPU keeps them in
 * registers), are the engine's order of cartesian components (libint's), for every l it evaluates. */
TEST(BasisValues, CartesianPowersInTheEnginesOrder) {
    for (int l = 0; l <= 3; l++) {
        const auto& components = cartesianComponents(l);
        ASSERT_EQ((int) components.size(), (l + 1) * (l + 2) / 2);
        for (int c = 0; c < (int) components.size(); c++) {
            int a, b, e;
            SharedKernels::cartesianPowersOf(l, c, &a, &b, &e);
            EXPECT_EQ(components[c][0], a) << "l " << l << " component " << c;
            EXPECT_EQ(components[c][1], b) << "l " << l << " component " << c;
            EXPECT_EQ(components[c][2], e) << "l " << l << " component " << c;
        }
    }
}

TEST(BasisValues, ChunkedPointsMatchTheSharedOnePointEvaluation) {
    const auto atoms = water();
    std::vector<double> x, y, z;
    testPoints(atoms, 150, x, y, z);
    const int n = (int) x.size();
    for (const char* name : {"6-31G*", "def2-TZVP"})  // s to f shells, contracted and single primitives
        for (bool pure : {false, true}) {
            const BasisSet basis(loadBasisDefinition(name, QMENGINE_DATA_DIR), atoms, pure);
            const ShellTables tables(basis);
            for (int s = 0; s < basis.numShells(); s++) {
                const int size = basis.shells()[s].size();
                Eigen::MatrixXd v(n, size), gx(n, size), gy(n, size), gz(n, size), valuesOnly(n, size);
                shellValuesAtPoints(tables, s, x.data(), y.data(), z.data(), n, n, v.data(), gx.data(), gy.data(), gz.data());
                shellValuesAtPoints(tables, s, x.data(), y.data(), z.data(), n, n, valuesOnly.data());
                for (int p = 0; p < n; p++) {
                    double one[10], ox[10], oy[10], oz[10];
                    shellValuesAt(tables, s, x[p], y[p], z[p], one, ox, oy, oz);
                    for (int m = 0; m < size; m++) {
                        // The exponentials differ by an ulp or two; the sums and products are the same.
                        const double scale = 1e-14 * (1 + std::abs(one[m]));
                        ASSERT_NEAR(v(p, m), one[m], scale) << name << " shell " << s << " point " << p;
                        ASSERT_EQ(valuesOnly(p, m), v(p, m));
                        ASSERT_NEAR(gx(p, m), ox[m], 1e-14 * (1 + std::abs(ox[m])));
                        ASSERT_NEAR(gy(p, m), oy[m], 1e-14 * (1 + std::abs(oy[m])));
                        ASSERT_NEAR(gz(p, m), oz[m], 1e-14 * (1 + std::abs(oz[m])));
                    }
                }
            }
        }
}

TEST(BasisValues, GradientsMatchCentralDifferences) {
    const auto atoms = water();
    std::vector<double> x, y, z;
    testPoints(atoms, 90, x, y, z);
    const int n = (int) x.size();
    const double h = 1e-5;
    const BasisSet basis(loadBasisDefinition("def2-TZVP", QMENGINE_DATA_DIR), atoms, true);
    const ShellTables tables(basis);
    for (int s = 0; s < basis.numShells(); s++) {
        const int size = basis.shells()[s].size();
        Eigen::MatrixXd v(n, size), g[3] = {Eigen::MatrixXd(n, size), Eigen::MatrixXd(n, size), Eigen::MatrixXd(n, size)};
        shellValuesAtPoints(tables, s, x.data(), y.data(), z.data(), n, n, v.data(), g[0].data(), g[1].data(), g[2].data());
        for (int d = 0; d < 3; d++) {
            std::vector<double> plus[3] = {x, y, z}, minus[3] = {x, y, z};
            for (int p = 0; p < n; p++) {
                plus[d][p] += h;
                minus[d][p] -= h;
            }
            Eigen::MatrixXd vp(n, size), vm(n, size);
            shellValuesAtPoints(tables, s, plus[0].data(), plus[1].data(), plus[2].data(), n, n, vp.data());
            shellValuesAtPoints(tables, s, minus[0].data(), minus[1].data(), minus[2].data(), n, n, vm.data());
            const Eigen::MatrixXd difference = (vp - vm) / (2 * h);
            // Central differences of step 1e-5 bohr: error ~ h^2 |f'''| (steep core functions) plus 1e-16 / h.
            EXPECT_LT((difference - g[d]).cwiseAbs().maxCoeff(), 2e-6 * (1 + g[d].cwiseAbs().maxCoeff()))
                << "shell " << s << " direction " << d;
        }
    }
}
