/* The McMurchie-Davidson point-charge integrals (src/PointChargeIntegrals.cpp) against an independent code,
 * Libint2's nuclear-attraction engine, and the Boys function against direct quadrature.
 * Bounds: 1e-12 absolute on matrix elements (Libint's own precision is ~1e-15), 1e-13 relative on F_m(T) against
 * the quadrature and 4e-15 against the closed form of F_0. */
#include "TestUtil.h"
#include "../src/BoysFunction.h"
#include "../src/LibintShells.h"
#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/IntegralGradients.h"
#include "openmmdft/qm/Integrals.h"
#include <gtest/gtest.h>
#include <cmath>
#include <random>

using namespace OpenMMDFT::QM;
using QMTest::water;

namespace {

/** F_m(T) by composite Simpson quadrature of t^(2m) exp(-T t^2) on [0, 1] in long double. */
double boysByQuadrature(int m, double T) {
    const int intervals = 40000;
    const long double h = 1.0L / intervals;
    long double sum = 0;
    for (int i = 0; i <= intervals; i++) {
        const long double t = i * h, f = std::pow(t, 2 * m) * std::exp(-(long double) T * t * t);
        sum += f * (i == 0 || i == intervals ? 1 : (i % 2 == 1 ? 4 : 2));
    }
    return (double) (sum * h / 3);
}

/** Libint2's potential of the charges, -sum_C q_C <a|1/|r - C||b>, over the cartesian shells of basis. */
Eigen::MatrixXd libintPointChargeMatrix(const BasisSet& basis, const std::vector<PointCharge>& charges) {
    ensureLibintInitialized();
    const auto shells = toLibint(basis);
    libint2::Engine engine(libint2::Operator::nuclear, basis.maxPrimitives(), basis.maxL(), 0);
    std::vector<std::pair<double, std::array<double, 3>>> q;
    for (const PointCharge& c : charges)
        q.push_back({c.charge, {c.xyz[0], c.xyz[1], c.xyz[2]}});
    engine.set_params(q);
    Eigen::MatrixXd M = Eigen::MatrixXd::Zero(basis.cartesianSize(), basis.cartesianSize());
    for (int s1 = 0; s1 < basis.numShells(); s1++)
        for (int s2 = 0; s2 < basis.numShells(); s2++) {
            engine.compute(shells[s1], shells[s2]);
            const int n1 = (int) shells[s1].size(), n2 = (int) shells[s2].size();
            for (int i = 0; i < n1; i++)
                for (int j = 0; j < n2; j++)
                    M(basis.cartesianOffset(s1) + i, basis.cartesianOffset(s2) + j) = engine.results()[0][i * n2 + j];
        }
    return M;
}

/** The nuclei, a charge on a nucleus, and charges from 0.3 to 60 bohr away (Boys arguments from 0 to far beyond
 * the tabulated range). */
std::vector<PointCharge> testCharges(const std::vector<QMAtom>& atoms) {
    std::vector<PointCharge> charges;
    for (const QMAtom& a : atoms)
        charges.push_back({{a.xyz[0], a.xyz[1], a.xyz[2]}, (double) a.Z});
    charges.push_back({{atoms[0].xyz[0], atoms[0].xyz[1], atoms[0].xyz[2]}, -0.3});
    std::mt19937 rng(5);
    std::normal_distribution<double> normal;
    std::uniform_real_distribution<double> radius(0.3, 60.0), charge(-1.0, 1.0);
    for (int i = 0; i < 150; i++) {
        double u[3] = {normal(rng), normal(rng), normal(rng)};
        const double norm = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]), r = radius(rng);
        charges.push_back({{u[0] / norm * r, u[1] / norm * r, u[2] / norm * r}, charge(rng)});
    }
    return charges;
}

} // namespace

TEST(BoysFunction, MatchesQuadrature) {
    double F[kMaxBoysOrder + 1];
    for (double T : {0.0, 1e-3, 0.3, 2.7, 10.0, 29.99, 44.99, 45.01, 60.0, 99.9, 100.1, 200.0}) {
        boysFunction(kMaxBoysOrder, T, F);
        for (int m = 0; m <= kMaxBoysOrder; m++) {
            const double expected = (T == 0 ? 1.0 / (2 * m + 1) : boysByQuadrature(m, T));
            EXPECT_NEAR(F[m], expected, 1e-13 * expected) << "m = " << m << ", T = " << T;
        }
        // F_0 in closed form.
        const double F0 = (T == 0 ? 1.0 : 0.5 * std::sqrt(M_PI / T) * std::erf(std::sqrt(T)));
        EXPECT_NEAR(F[0], F0, 4e-15 * F0);
    }
}

TEST(BoysFunction, BlocksMatchQuadrature) {
    // A block on both sides of the table's end (the lane-by-lane path) and one wholly beyond it (the lane-parallel
    // upward recursion), against the same quadrature.
    const double mixed[kBoysBlock] = {0.0, 0.3, 2.7, 29.99, 44.99, 45.01, 99.9, 200.0};
    const double far[kBoysBlock] = {45.0, 45.01, 50.0, 60.0, 99.9, 100.1, 200.0, 1e4};
    for (const double* T : {mixed, far}) {
        double F[(kMaxBoysOrder + 1) * kBoysBlock];
        boysFunctionBlock(kMaxBoysOrder, T, F);
        for (int lane = 0; lane < kBoysBlock; lane++)
            for (int m = 0; m <= kMaxBoysOrder; m++) {
                const double expected = (T[lane] == 0 ? 1.0 / (2 * m + 1) : boysByQuadrature(m, T[lane]));
                EXPECT_NEAR(F[m * kBoysBlock + lane], expected, 1e-13 * expected) << "m = " << m << ", T = " << T[lane];
            }
    }
}

TEST(PointChargeIntegrals, MatchLibintUpToFShells) {
    const auto atoms = water();
    const auto charges = testCharges(atoms);
    for (const char* name : {"6-31G*", "def2-TZVP"}) {
        const BasisSet cartesian(loadBasisDefinition(name, QMENGINE_DATA_DIR), atoms, false);
        const Eigen::MatrixXd reference = libintPointChargeMatrix(cartesian, charges);
        EXPECT_LT((pointChargeMatrix(cartesian, charges, 0.0, 2) - reference).cwiseAbs().maxCoeff(), 1e-12) << name;
        // Pure functions through the engine's transformation, and one charge at a time (the electrostatic potential).
        const BasisSet pure(loadBasisDefinition(name, QMENGINE_DATA_DIR), atoms, true);
        const Eigen::MatrixXd T = basisTransform(pure);
        EXPECT_LT((pointChargeMatrix(pure, charges, 0.0, 1) - T * reference * T.transpose()).cwiseAbs().maxCoeff(), 1e-12) << name;
        const std::vector<PointCharge> one = {charges.back()};
        EXPECT_LT((pointChargeMatrix(cartesian, one, 0.0, 1) - libintPointChargeMatrix(cartesian, one)).cwiseAbs().maxCoeff(), 1e-14)
            << name;
    }
}

// The gradient with f shells (the bra raised to g in the Hermite expansion) against central differences of the
// matrix, which matches Libint above. Bound: 1e-8 hartree/bohr (step 1e-4 bohr, error O(h^2)).
TEST(PointChargeIntegrals, GradientWithFShellsMatchesFiniteDifferences) {
    const auto atoms = water();
    const BasisDefinition def = loadBasisDefinition("def2-TZVP", QMENGINE_DATA_DIR);
    const BasisSet basis(def, atoms, true);
    const std::vector<PointCharge> charges = {{{-2.5, 1.0, 0.7}, -0.834}, {{1.2, -3.1, 2.2}, 0.417}, {{30.0, 2.0, -1.0}, 0.9}};
    Eigen::MatrixXd P = Eigen::MatrixXd::Random(basis.size(), basis.size());
    P = (P + P.transpose()).eval();
    Eigen::MatrixXd gAtoms, gCharges;
    pointChargeGradient(basis, charges, P, (int) atoms.size(), 0.0, gAtoms, gCharges, 2);
    const double h = 1e-4;
    auto energy = [&](const std::vector<QMAtom>& at, const std::vector<PointCharge>& q) {
        return P.cwiseProduct(pointChargeMatrix(BasisSet(def, at, true), q, 0.0, 2)).sum();
    };
    for (size_t a = 0; a < atoms.size(); a++)
        for (int d = 0; d < 3; d++) {
            auto plus = atoms, minus = atoms;
            plus[a].xyz[d] += h;
            minus[a].xyz[d] -= h;
            EXPECT_NEAR(gAtoms(a, d), (energy(plus, charges) - energy(minus, charges)) / (2 * h), 1e-8) << "atom " << a;
        }
    for (size_t c = 0; c < charges.size(); c++)
        for (int d = 0; d < 3; d++) {
            auto plus = charges, minus = charges;
            plus[c].xyz[d] += h;
            minus[c].xyz[d] -= h;
            EXPECT_NEAR(gCharges(c, d), (energy(atoms, plus) - energy(atoms, minus)) / (2 * h), 1e-8) << "charge " << c;
        }
}
