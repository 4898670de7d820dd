#include "TestUtil.h"
#include "openmmdft/qm/Grid.h"
#include "openmmdft/qm/Integrals.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include "openmmdft/qm/XCIntegrator.h"
#include <gtest/gtest.h>
#include <cmath>

using namespace OpenMMDFT::QM;
using QMTest::water;

namespace {
// A converged density to evaluate the XC terms on.
Eigen::MatrixXd waterDensity(const char* basis) {
    QMSettings s = QMTest::testSettings(basis);
    KohnShamLDA ks(s);
    return ks.compute(water(), 0, {}).density;
}
} // namespace

TEST(XC, PrecomputeAndRecomputeAgree) {
    const auto atoms = water();
    for (const char* name : {"def2-SVP", "6-31G*"}) {
        const BasisDefinition def = loadBasisDefinition(name, QMENGINE_DATA_DIR);
        BasisSet b(def, atoms, def.sphericalByDefault);
        const Eigen::MatrixXd D = waterDensity(name);
        GridSettings gs;
        gs.blockSize = 100;
        MolecularGrid g(atoms, b, gs);
        XCIntegrator pre(b, g, Functional::SVWN5, BasisFunctionStorage::Precompute, gs.blockSize);
        XCIntegrator re(b, g, Functional::SVWN5, BasisFunctionStorage::Recompute, gs.blockSize);
        // Precompute under a memory limit that keeps only some blocks.
        XCIntegrator part(b, g, Functional::SVWN5, BasisFunctionStorage::Precompute, gs.blockSize, 2, 0.5);
        EXPECT_GT(part.storedBasisValues().size(), 0u);
        EXPECT_LT(part.storedBasisValues().size(), part.numBlocks());
        const XCContribution a = pre.compute(D), c = re.compute(D), h = part.compute(D);
        EXPECT_NEAR(h.energy, a.energy, 1e-10);
        EXPECT_GT(pre.storedBytes(), 0u);
        EXPECT_EQ(re.storedBytes(), 0u);
        EXPECT_NEAR(a.energy, c.energy, 1e-10);
        EXPECT_LT((a.matrix - c.matrix).cwiseAbs().maxCoeff(), 1e-10);
        EXPECT_NEAR(a.electrons, 10.0, 1e-4);
    }
}

// Screening with the default significance exponent changes E_xc by less than 1e-7 Eh
// and the XC matrix by less than 1e-6 compared with keeping every function everywhere.
TEST(XC, ScreeningChangesLittle) {
    const auto atoms = water();
    const BasisDefinition def = loadBasisDefinition("def2-SVP", QMENGINE_DATA_DIR);
    BasisSet b(def, atoms, true);
    const Eigen::MatrixXd D = waterDensity("def2-SVP");
    GridSettings on, off;
    off.screening = false;
    on.cubeEdge = 2.0;
    MolecularGrid gon(atoms, b, on), goff(atoms, b, off);
    EXPECT_EQ(gon.numPoints(), goff.numPoints());
    EXPECT_LT(gon.averageFunctionsPerPoint(), goff.averageFunctionsPerPoint());
    const XCContribution a = XCIntegrator(b, gon, Functional::SVWN5, BasisFunctionStorage::Precompute, 256).compute(D);
    const XCContribution c = XCIntegrator(b, goff, Functional::SVWN5, BasisFunctionStorage::Precompute, 256).compute(D);
    std::printf("screening: %.2f of %.2f functions per point, dExc = %.2e\n", gon.averageFunctionsPerPoint(),
                goff.averageFunctionsPerPoint(), a.energy - c.energy);
    EXPECT_NEAR(a.energy, c.energy, 1e-7);
    EXPECT_LT((a.matrix - c.matrix).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(XC, WholeSCFPrecomputeRecomputeAgree) {
    QMSettings s = QMTest::testSettings("6-31G*");
    s.storage = BasisFunctionStorage::Precompute;
    const double e1 = KohnShamLDA(s).compute(water(), 0, {}).total;
    s.storage = BasisFunctionStorage::Recompute;
    const double e2 = KohnShamLDA(s).compute(water(), 0, {}).total;
    EXPECT_NEAR(e1, e2, 1e-10);
}
