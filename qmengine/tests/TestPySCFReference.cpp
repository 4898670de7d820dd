// Energies against PySCF (tests/data/pyscf_references.txt, made by generate_pyscf_references.py):
// same basis files, functional, and the same grid (Treutler-Ahlrichs + Lebedev, Becke, no pruning).
#include "TestUtil.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include <gtest/gtest.h>
#include <chrono>
#include <cmath>
#include <fstream>
#include <sstream>

using namespace OpenMMDFT::QM;

using QMTest::ReferenceCase;
using QMTest::readCases;

namespace {
class PySCFReference : public ::testing::TestWithParam<std::string> {};

const ReferenceCase* findCase(const std::vector<ReferenceCase>& cases, const std::string& name) {
    for (const auto& x : cases)
        if (x.name == name)
            return &x;
    return nullptr;
}

QMResult computeCase(const ReferenceCase* c, double& seconds, QMGradient* gradient = nullptr, QMGradient* gradientGrid = nullptr) {
    QMSettings s;
    s.dataDirectory = QMENGINE_DATA_DIR;
    s.basisSet = c->basis;
    s.angular = c->cartesian ? AngularConvention::Cartesian : AngularConvention::Spherical;
    s.coulomb = c->coulomb == "df" ? CoulombMethod::DensityFitting : CoulombMethod::Exact;
    if (c->coulomb == "df")
        s.auxiliaryBasisSet = c->auxiliary;
    s.functional = c->functional == "SVWN5" ? Functional::SVWN5 : Functional::SVWN_RPA;
    s.grid.radialPoints = c->radial;
    s.grid.angularPoints = c->angular;
    s.grid.radialScheme = c->radialScheme == "becke" ? RadialScheme::BeckeChebyshev : RadialScheme::TreutlerAhlrichs;
    s.grid.partition = c->partition == "ssf" ? AtomicPartition::StratmannScuseriaFrisch : AtomicPartition::Becke;
    s.grid.sizeAdjustment = c->sizeadjust == "treutler" ? AtomicSizeAdjustment::TreutlerRadii : AtomicSizeAdjustment::None;
    s.grid.pruning = c->prune == "nwchem" ? GridPruning::NWChem : c->prune == "treutler" ? GridPruning::TreutlerAhlrichs : GridPruning::None;
    s.convergence = 1e-8;
    s.energyConvergence = 1e-10;
    KohnShamLDA ks(s);
    const auto t0 = std::chrono::steady_clock::now();
    const QMResult r = ks.compute(c->atoms, c->charge, c->mm);
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (gradient)
        *gradient = ks.gradientFixedGrid(r);
    if (gradientGrid)
        *gradientGrid = ks.gradient(r);
    return r;
}

TEST_P(PySCFReference, EnergyWithin1e6) {
    const std::vector<ReferenceCase> cases = readCases();
    ASSERT_FALSE(cases.empty());
    const ReferenceCase* c = findCase(cases, GetParam());
    ASSERT_NE(c, nullptr) << "no reference for " << GetParam();
    double seconds;
    const QMResult r = computeCase(c, seconds);
    const double dE = r.total - c->energy;
    std::printf("[ %s ] E = %.10f  PySCF = %.10f  dE = %.2e  iterations %d  %.2f s\n", c->name.c_str(), r.total,
                c->energy, dE, r.iterations, seconds);
    RecordProperty("deltaE", std::to_string(dE));
    EXPECT_LE(std::abs(dE), 1e-6);
    EXPECT_NEAR(r.total, r.oneElectron + r.coulomb + r.xc + r.nuclearRepulsion + r.qmmm, 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Cases, PySCFReference,
                         ::testing::Values("water_631gs_exact", "water_def2svp_exact", "methanol_631gs_exact",
                                           "methanol_def2svp_exact", "water_def2svp_exact_vwnrpa",
                                           "water_631gs_df_jfit", "water_def2svp_df_jfit", "methanol_def2svp_df_jfit",
                                           "methanol_631gs_df_jfit", "water_dzvp_df_dgaussa1",
                                           "water_def2svp_exact_mm", "water_631gs_df_mm", "water8_def2svp_df_jfit",
                                           "water8_631gs_df_jfit", "water_def2tzvp_exact",
                                           "water_def2tzvp_cart_df_jfit", "methanol_631gs_becke_radial_ssf",
                                           "methanol_def2svp_treutler_adjust", "water_def2svp_df_mm",
                                           "water_def2svp_df_nwchem_prune", "methanol_631gs_df_treutler_prune"));

class PySCFGradient : public ::testing::TestWithParam<std::string> {};

// The analytic gradients against PySCF's grad.rks (density fitting with the auxiliary response): with the grid
// held fixed (grid_response = False) and on the moving grid (grid_response = True, partition-weight
// derivatives), on the QM atoms and on the MM charges. Tolerance 1e-6 hartree/bohr: both SCFs stop at ~1e-8
// in the density, and the gradient is first order in its error.
TEST_P(PySCFGradient, GradientWithin1e6) {
    const std::vector<ReferenceCase> cases = readCases();
    const ReferenceCase* c = findCase(cases, GetParam());
    ASSERT_NE(c, nullptr) << "no reference for " << GetParam();
    ASSERT_EQ((int) c->atoms.size(), (int) c->gradient.rows()) << "the case has no PySCF gradient";
    double seconds;
    QMGradient g, gg;
    computeCase(c, seconds, &g, &gg);
    const double dAtoms = (g.atoms - c->gradient).cwiseAbs().maxCoeff();
    const double dGrid = (gg.atoms - c->gradientGrid).cwiseAbs().maxCoeff();
    std::printf("[ %s ] max |dG| atoms %.2e, with grid response %.2e (response itself %.1e)", c->name.c_str(), dAtoms, dGrid,
                (c->gradientGrid - c->gradient).cwiseAbs().maxCoeff());
    EXPECT_LE(dAtoms, 1e-6) << "\n" << g.atoms << "\nPySCF\n" << c->gradient;
    EXPECT_LE(dGrid, 1e-6) << "\n" << gg.atoms << "\nPySCF\n" << c->gradientGrid;
    if (!c->mm.empty()) {
        ASSERT_EQ((int) c->mm.size(), (int) c->mmGradient.rows());
        const double dMM = (g.mm - c->mmGradient).cwiseAbs().maxCoeff();
        std::printf(", MM charges %.2e", dMM);
        EXPECT_LE(dMM, 1e-6) << "\n" << g.mm << "\nPySCF\n" << c->mmGradient;
    }
    std::printf("\n");
}

INSTANTIATE_TEST_SUITE_P(Cases, PySCFGradient,
                         ::testing::Values("water_631gs_df_jfit", "water_def2svp_df_jfit", "methanol_def2svp_df_jfit",
                                           "water_def2svp_df_mm", "water_def2tzvp_cart_df_jfit", "water_def2svp_df_nwchem_prune"));

// Seed 001 Table 5.1: formation energies E_n - n E_1 of water clusters against PySCF.
TEST(PySCFFormationEnergy, WaterClustersWithin001KcalPerMol) {
    const std::vector<ReferenceCase> cases = readCases();
    const double kcal = 627.509474;
    double seconds;
    const ReferenceCase* one = findCase(cases, "cluster1_631gs_df_jfit");
    ASSERT_NE(one, nullptr);
    const double e1 = computeCase(one, seconds).total;
    for (const char* name : {"cluster2_631gs_df_jfit", "cluster4_631gs_df_jfit", "water8_631gs_df_jfit",
                             "cluster16_631gs_df_jfit"}) {
        const ReferenceCase* c = findCase(cases, name);
        ASSERT_NE(c, nullptr) << name;
        const int n = (int) c->atoms.size() / 3;
        const QMResult r = computeCase(c, seconds);
        const double ours = (r.total - n * e1) * kcal, theirs = (c->energy - n * one->energy) * kcal;
        std::printf("[ n = %2d ] E_F = %.6f kcal/mol  PySCF = %.6f  dE_F = %.2e kcal/mol  (%.1f s, %d iterations)\n", n,
                    ours, theirs, ours - theirs, seconds, r.iterations);
        EXPECT_LE(std::abs(ours - theirs), 0.01);
    }
}
} // namespace
