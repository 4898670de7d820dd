// Analytic derivatives of integral contractions (IntegralGradients.h) against central finite
// differences of the same contractions, whose integrals are themselves checked against PySCF
// (TestPySCFReference): sum_uv P_uv O_uv(R) at fixed P, P a random symmetric matrix, each atom
// (and each point charge) moved by +-h and +-2h along x, y, z (five-point stencil, error O(h^4)).
// Tolerance: |analytic - FD| <= 2e-7 with h = 1e-4 bohr. A point charge on a nucleus makes the third
// derivative large (about 1e3 here): the three-point stencil would be off by 1.2e-5, scaling as h^2.
#include "TestUtil.h"
#include "openmmdft/qm/Integrals.h"
#include "openmmdft/qm/IntegralGradients.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include "../src/LibintThreeCentreGradient.h"
#include <cstdio>
#include <gtest/gtest.h>
#include "openmm/OpenMMException.h"
#include <functional>
#include <random>

using namespace OpenMMDFT::QM;
using QMTest::water;

namespace {

const double H = 1e-4, TOL = 2e-7;

/* A water with a bent, off-axis geometry and a methyl-free partner, so that no derivative vanishes by symmetry. */
std::vector<QMAtom> molecule() {
    auto atoms = water();
    atoms[1].xyz[0] += 0.13;
    atoms[2].xyz[2] -= 0.21;
    atoms.push_back({7, {2.9, 0.4, -1.1}});
    atoms.push_back({1, {3.6, 1.9, -0.6}});
    return atoms;
}

Eigen::MatrixXd randomSymmetric(int n, unsigned seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u(-1, 1);
    Eigen::MatrixXd P(n, n);
    for (int i = 0; i < n; i++)
        for (int j = 0; j <= i; j++)
            P(i, j) = P(j, i) = u(rng);
    return P;
}

/* d/dx f(x) at 0 by the five-point stencil. */
double fivePoint(const std::function<double(double)>& f) {
    return (-f(2 * H) + 8 * f(H) - 8 * f(-H) + f(-2 * H)) / (12 * H);
}

/* Five-point differences of value(atoms) over every atom coordinate. */
Eigen::MatrixXd finiteDifference(const std::vector<QMAtom>& atoms, const std::function<double(const std::vector<QMAtom>&)>& value) {
    Eigen::MatrixXd G((int) atoms.size(), 3);
    for (size_t a = 0; a < atoms.size(); a++)
        for (int d = 0; d < 3; d++) {
            G((int) a, d) = fivePoint([&](double x) {
                auto moved = atoms;
                moved[a].xyz[d] += x;
                return value(moved);
            });
        }
    return G;
}

double contract(const Eigen::MatrixXd& P, const Eigen::MatrixXd& O) {
    return (P.array() * O.array()).sum();
}

} // namespace

TEST(IntegralGradients, OverlapAndKineticMatchFiniteDifferences) {
    const auto atoms = molecule();
    for (const char* name : {"6-31G*", "def2-TZVP"})
        for (bool pure : {false, true}) {
            const BasisDefinition def = loadBasisDefinition(name, QMENGINE_DATA_DIR);
            BasisSet basis(def, atoms, pure);
            const Eigen::MatrixXd P = randomSymmetric(basis.size(), 7);
            const int na = (int) atoms.size();
            const Eigen::MatrixXd gS = overlapGradient(basis, P, na, 2), gT = kineticGradient(basis, P, na, 2);
            const Eigen::MatrixXd fS = finiteDifference(atoms, [&](const std::vector<QMAtom>& at) {
                return contract(P, overlapMatrix(BasisSet(def, at, pure)));
            });
            const Eigen::MatrixXd fT = finiteDifference(atoms, [&](const std::vector<QMAtom>& at) {
                return contract(P, kineticMatrix(BasisSet(def, at, pure)));
            });
            EXPECT_LT((gS - fS).cwiseAbs().maxCoeff(), TOL) << name << (pure ? " pure" : " cartesian") << "\n" << gS << "\n" << fS;
            EXPECT_LT((gT - fT).cwiseAbs().maxCoeff(), TOL) << name << (pure ? " pure" : " cartesian") << "\n" << gT << "\n" << fT;
            // Translational invariance: the derivatives sum to zero over the atoms.
            EXPECT_LT(gS.colwise().sum().cwiseAbs().maxCoeff(), 1e-10);
            EXPECT_LT(gT.colwise().sum().cwiseAbs().maxCoeff(), 1e-10);
        }
}

TEST(IntegralGradients, PointChargesMatchFiniteDifferences) {
    const auto atoms = molecule();
    const BasisDefinition def = loadBasisDefinition("def2-SVP", QMENGINE_DATA_DIR);
    BasisSet basis(def, atoms, true);
    const Eigen::MatrixXd P = randomSymmetric(basis.size(), 11);
    // The nuclei and three MM-like charges, one close to the molecule.
    std::vector<PointCharge> charges;
    for (const QMAtom& a : atoms)
        charges.push_back({{a.xyz[0], a.xyz[1], a.xyz[2]}, (double) a.Z});
    charges.push_back({{-2.5, 1.0, 0.7}, -0.834});
    charges.push_back({{1.2, -3.1, 2.2}, 0.417});
    charges.push_back({{0.9, 2.4, -0.3}, 0.5});
    const int na = (int) atoms.size(), nq = (int) charges.size();
    Eigen::MatrixXd gAtoms, gCharges;
    pointChargeGradient(basis, charges, P, na, 0.0, gAtoms, gCharges, 2);
    // Moving an atom moves its basis functions only (the charges stay); moving a charge moves only it.
    const Eigen::MatrixXd fAtoms = finiteDifference(atoms, [&](const std::vector<QMAtom>& at) {
        return contract(P, pointChargeMatrix(BasisSet(def, at, true), charges, 0.0));
    });
    Eigen::MatrixXd fCharges(nq, 3);
    for (int c = 0; c < nq; c++)
        for (int d = 0; d < 3; d++) {
            fCharges(c, d) = fivePoint([&](double x) {
                auto moved = charges;
                moved[c].xyz[d] += x;
                return contract(P, pointChargeMatrix(basis, moved, 0.0));
            });
        }
    EXPECT_LT((gAtoms - fAtoms).cwiseAbs().maxCoeff(), TOL) << "\n" << gAtoms << "\n" << fAtoms;
    EXPECT_LT((gCharges - fCharges).cwiseAbs().maxCoeff(), TOL) << "\n" << gCharges << "\n" << fCharges;
    // Moving everything together changes nothing.
    EXPECT_LT((gAtoms.colwise().sum() + gCharges.colwise().sum()).cwiseAbs().maxCoeff(), 1e-9);
}

TEST(IntegralGradients, DensityFittedCoulombMatchesFiniteDifferences) {
    const auto atoms = molecule();
    const BasisDefinition def = loadBasisDefinition("def2-SVP", QMENGINE_DATA_DIR);
    const BasisDefinition auxDef = loadBasisDefinition("def2-universal-jfit", QMENGINE_DATA_DIR);
    const int na = (int) atoms.size();
    for (bool pure : {false, true}) {
        BasisSet basis(def, atoms, pure), aux(auxDef, atoms, true, 6);
        // A density-like P (positive semidefinite), so that E_J is a Coulomb energy.
        const Eigen::MatrixXd C = randomSymmetric(basis.size(), 13).leftCols(5);
        const Eigen::MatrixXd D = C * C.transpose() * 0.1;
        // E_J(R) = 1/2 tr(D J(D)) = 1/2 gamma^T (P|Q)^-1 gamma at fixed D.
        auto energy = [&](const std::vector<QMAtom>& at, Eigen::VectorXd* coefficients) {
            BasisSet b(def, at, pure), x(auxDef, at, true, 6);
            DensityFittedCoulomb df(b, x, 0.0);
            const double e = 0.5 * contract(D, df.compute(D));
            if (coefficients)
                *coefficients = df.fitCoefficients();
            return e;
        };
        Eigen::VectorXd c;
        energy(atoms, &c);
        const Eigen::MatrixXd g = densityFittedCoulombGradient(basis, aux, D, c, na, 0.0, 2);
        const Eigen::MatrixXd f = finiteDifference(atoms, [&](const std::vector<QMAtom>& at) { return energy(at, nullptr); });
        EXPECT_LT((g - f).cwiseAbs().maxCoeff(), TOL) << (pure ? "pure" : "cartesian") << "\n" << g << "\n" << f;
        EXPECT_LT(g.colwise().sum().cwiseAbs().maxCoeff(), 1e-9);
    }
}

// The gradient belongs to a fit: before compute() it is refused, and so is one for fewer atoms than the shells sit on
// (the host path would write past its rows).
TEST(IntegralGradients, DensityFittedCoulombGradientNeedsItsFitAndItsAtoms) {
    const auto atoms = molecule();
    const BasisSet basis(loadBasisDefinition("def2-SVP", QMENGINE_DATA_DIR), atoms, true);
    const BasisSet aux(loadBasisDefinition("def2-universal-jfit", QMENGINE_DATA_DIR), atoms, true, 6);
    DensityFittedCoulomb df(basis, aux, 0.0);
    const Eigen::MatrixXd D = 0.1 * Eigen::MatrixXd::Identity(basis.size(), basis.size());
    const int na = (int) atoms.size();
    auto message = [&](int numAtoms) {
        try {
            df.gradient(D, numAtoms, 0.0, 1);
        }
        catch (const OpenMM::OpenMMException& e) {
            return std::string(e.what());
        }
        return std::string();
    };
    EXPECT_NE(message(na).find("before compute()"), std::string::npos) << message(na);
    df.compute(D);
    EXPECT_NE(message(na - 1).find("a shell sits on atom"), std::string::npos) << message(na - 1);
    EXPECT_EQ(df.gradient(D, na, 0.0, 1).rows(), na);
}

// The three-centre part by the Hermite scheme (fitted density and orbital density contracted into Hermite Gaussians)
// against Libint2's raised and lowered integrals, for s to f orbital shells and fitting shells up to g, cartesian and
// pure, with and without the pair screening the engine uses.
TEST(IntegralGradients, HermiteThreeCentreGradientMatchesLibint) {
    const auto atoms = molecule();
    const BasisDefinition auxDef = loadBasisDefinition("def2-universal-jfit", QMENGINE_DATA_DIR);
    const int na = (int) atoms.size();
    for (const char* name : {"6-31G*", "def2-TZVP"})
        for (bool pure : {false, true})
            for (double threshold : {0.0, 1e-12}) {
                BasisSet basis(loadBasisDefinition(name, QMENGINE_DATA_DIR), atoms, pure), aux(auxDef, atoms, true, 6);
                const Eigen::MatrixXd C = randomSymmetric(basis.size(), 29).leftCols(6);
                const Eigen::MatrixXd D = C * C.transpose() * 0.1;
                const Eigen::VectorXd c = randomSymmetric(aux.size(), 31).col(0);
                const Eigen::MatrixXd hermite = densityFittingThreeCentreGradient(basis, aux, D, c, na, threshold, 2);
                const Eigen::MatrixXd libint = densityFittingThreeCentreGradientLibint(basis, aux, D, c, na, threshold, 2);
                const double scale = libint.cwiseAbs().maxCoeff();
                EXPECT_GT(scale, 1e-3);
                EXPECT_LT((hermite - libint).cwiseAbs().maxCoeff(), 1e-10 * scale)
                    << name << (pure ? " pure" : " cartesian") << " threshold " << threshold << "\n" << hermite << "\n" << libint;
                EXPECT_LT(hermite.colwise().sum().cwiseAbs().maxCoeff(), 1e-10 * scale);
            }
}

// The exact Coulomb energy E_J = 1/2 tr(D J(D)) at fixed D, from Libint2's four-centre derivatives, against five-point
// differences, in cartesian and pure d functions (the same tolerance).
TEST(IntegralGradients, ExactCoulombMatchesFiniteDifferences) {
    const auto atoms = molecule();
    const BasisDefinition def = loadBasisDefinition("def2-SVP", QMENGINE_DATA_DIR);
    const int na = (int) atoms.size();
    for (bool pure : {false, true}) {
        BasisSet basis(def, atoms, pure);
        const Eigen::MatrixXd C = randomSymmetric(basis.size(), 17).leftCols(5);
        const Eigen::MatrixXd D = C * C.transpose() * 0.1;
        auto energy = [&](const std::vector<QMAtom>& at) {
            BasisSet b(def, at, pure);
            return 0.5 * contract(D, ExactCoulomb(b, 0.0).compute(D));
        };
        const Eigen::MatrixXd g = exactCoulombGradient(basis, D, na, 0.0, 2);
        const Eigen::MatrixXd f = finiteDifference(atoms, energy);
        EXPECT_LT((g - f).cwiseAbs().maxCoeff(), TOL) << (pure ? "pure" : "cartesian") << "\n" << g << "\n" << f;
        EXPECT_LT(g.colwise().sum().cwiseAbs().maxCoeff(), 1e-9);
    }
}

// The assembled gradient (KohnShamLDA::gradient, grid response included) is the derivative of the energy the
// engine computes: five-point differences of the SCF energy of water among three MM charges, on the QM atoms
// and the charges, for the Becke partition and for SSF with Treutler's size adjustment. SCF converged to
// 1e-10 in the density so that the differences (h = 1e-3 bohr) resolve 1e-9 hartree/bohr (seen: 2e-10).
// Tolerance 1e-8.
TEST(IntegralGradients, EnergyGradientMatchesFiniteDifferences) {
    auto atoms = QMTest::water();
    atoms[1].xyz[0] += 0.1; // no symmetry
    const std::vector<PointCharge> mm{{{3.5, 1.0, 0.5}, -0.8}, {{-2.0, 3.0, -1.5}, 0.4}, {{0.5, -3.2, 2.4}, 0.4}};
    for (AtomicPartition partition : {AtomicPartition::Becke, AtomicPartition::StratmannScuseriaFrisch}) {
        QMSettings s = QMTest::testSettings("def2-SVP");
        s.coulomb = CoulombMethod::DensityFitting;
        s.auxiliaryBasisSet = "def2-universal-jfit";
        s.grid.radialPoints = 40;
        s.grid.angularPoints = 110;
        s.grid.partition = partition;
        if (partition == AtomicPartition::StratmannScuseriaFrisch)
            s.grid.sizeAdjustment = AtomicSizeAdjustment::TreutlerRadii;
        s.convergence = 1e-10;
        s.energyConvergence = 1e-12;
        KohnShamLDA ks(s);
        const QMResult r = ks.compute(atoms, 0, mm);
        const QMGradient g = ks.gradient(r);
        const DensityGuess guess = r.guess();
        const double h = 1e-3;
        auto energy = [&](const std::vector<QMAtom>& at, const std::vector<PointCharge>& q) {
            KohnShamLDA other(s);
            return other.compute(at, 0, q, &guess).total;
        };
        auto five = [&](const std::function<double(double)>& f) { return (-f(2 * h) + 8 * f(h) - 8 * f(-h) + f(-2 * h)) / (12 * h); };
        double worst = 0;
        for (size_t a = 0; a < atoms.size(); a++)
            for (int d = 0; d < 3; d++) {
                const double fd = five([&](double x) {
                    auto moved = atoms;
                    moved[a].xyz[d] += x;
                    return energy(moved, mm);
                });
                worst = std::max(worst, std::abs(fd - g.atoms((int) a, d)));
            }
        for (size_t c = 0; c < mm.size(); c++)
            for (int d = 0; d < 3; d++) {
                const double fd = five([&](double x) {
                    auto moved = mm;
                    moved[c].xyz[d] += x;
                    return energy(atoms, moved);
                });
                worst = std::max(worst, std::abs(fd - g.mm((int) c, d)));
            }
        std::printf("[ %s ] max |analytic - finite difference| = %.2e hartree/bohr\n",
                    partition == AtomicPartition::Becke ? "Becke" : "SSF + Treutler radii", worst);
        EXPECT_LT(worst, 1e-8);
        // Without the grid response the same comparison fails by the size of the response.
        const QMGradient fixed = ks.gradientFixedGrid(r);
        EXPECT_GT((fixed.atoms - g.atoms).cwiseAbs().maxCoeff(), 1e-6);
    }
}
