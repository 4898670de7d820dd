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

// Screening with the default significance exponent changes E_xc by less than 1e-9 Eh
// and the XC matrix by less than 1e-8 compared with keeping every function everywhere
// (four waters, def2-SVP, converged density).
TEST(XC, ScreeningChangesLittle) {
    std::vector<QMAtom> atoms;
    for (const auto& c : QMTest::readCases())
        if (c.name == "cluster4_631gs_df_jfit")
            atoms = c.atoms;
    ASSERT_EQ(atoms.size(), 12u);
    const BasisDefinition def = loadBasisDefinition("def2-SVP", QMENGINE_DATA_DIR);
    BasisSet b(def, atoms, true);
    QMSettings s = QMTest::testSettings("def2-SVP");
    const Eigen::MatrixXd D = KohnShamLDA(s).compute(atoms, 0, {}).density;
    GridSettings on, off;
    off.screening = false;
    MolecularGrid gon(atoms, b, on), goff(atoms, b, off);
    EXPECT_EQ(gon.numPoints(), goff.numPoints());
    EXPECT_LT(gon.averageFunctionsPerPoint(), goff.averageFunctionsPerPoint());
    const XCContribution a = XCIntegrator(b, gon, Functional::SVWN5, BasisFunctionStorage::Precompute, 256).compute(D);
    const XCContribution c = XCIntegrator(b, goff, Functional::SVWN5, BasisFunctionStorage::Precompute, 256).compute(D);
    std::printf("screening: %.2f of %.2f functions per point, dExc = %.2e\n", gon.averageFunctionsPerPoint(),
                goff.averageFunctionsPerPoint(), a.energy - c.energy);
    EXPECT_NEAR(a.energy, c.energy, 1e-9);
    EXPECT_LT((a.matrix - c.matrix).cwiseAbs().maxCoeff(), 1e-8);
}

TEST(XC, WholeSCFPrecomputeRecomputeAgree) {
    QMSettings s = QMTest::testSettings("6-31G*");
    s.storage = BasisFunctionStorage::Precompute;
    const double e1 = KohnShamLDA(s).compute(water(), 0, {}).total;
    s.storage = BasisFunctionStorage::Recompute;
    const double e2 = KohnShamLDA(s).compute(water(), 0, {}).total;
    EXPECT_NEAR(e1, e2, 1e-10);
}

// The whole SCF energy with grouping and screening (defaults) against every function everywhere.
TEST(XC, ScreeningChangesSCFEnergyLittle) {
    QMSettings s = QMTest::testSettings("def2-SVP");
    const std::vector<QMAtom> atoms = water();
    const double on = KohnShamLDA(s).compute(atoms, 0, {}).total;
    s.grid.screening = false;
    s.grid.sphereShellFraction = 0;
    const double off = KohnShamLDA(s).compute(atoms, 0, {}).total;
    std::printf("SCF energy, screened - unscreened: %.2e Eh\n", on - off);
    EXPECT_NEAR(on, off, 1e-8);
}

// rho from the orbital factor (seed eq. 1.7) and from the density matrix (eq. 3.2) agree.
TEST(XC, OrbitalFactorAndDensityMatrixAgree) {
    const auto atoms = water();
    QMSettings s = QMTest::testSettings("def2-SVP");
    KohnShamLDA ks(s);
    const QMResult r = ks.compute(atoms, 0, {});
    const Eigen::MatrixXd F = r.orbitals.leftCols(r.occupiedOrbitals) * std::sqrt(2.0);
    const Eigen::MatrixXd D = F * F.transpose();
    const XCContribution a = ks.xcBackend().compute(D, nullptr), b = ks.xcBackend().compute(D, &F);
    EXPECT_NEAR(a.energy, b.energy, 1e-11);
    EXPECT_LT((a.matrix - b.matrix).cwiseAbs().maxCoeff(), 1e-11);
}

namespace {
/// A back end that records its use and hands the work to the host back end: stands in for a device back end.
struct RecordingXCFactory : XCBackendFactory {
    struct Counts {
        int created = 0, computes = 0, gradients = 0;
    };
    std::shared_ptr<Counts> counts = std::make_shared<Counts>();
    std::unique_ptr<XCBackend> create(const XCGeometry& geometry) const override {
        struct Recording : XCBackend {
            std::unique_ptr<XCBackend> host;
            std::shared_ptr<Counts> counts;
            XCContribution compute(const Eigen::MatrixXd& D, const Eigen::MatrixXd* factor) override {
                counts->computes++;
                return host->compute(D, factor);
            }
            Eigen::MatrixXd gradient(const Eigen::MatrixXd& D, bool gridResponse) override {
                counts->gradients++;
                return host->gradient(D, gridResponse);
            }
            size_t storedBytes() const override {
                return host->storedBytes();
            }
            const char* name() const override {
                return "recording";
            }
        };
        std::unique_ptr<Recording> backend(new Recording());
        backend->host = HostXCBackendFactory().create(geometry);
        backend->counts = counts;
        counts->created++;
        return std::unique_ptr<XCBackend>(backend.release());
    }
};
} // namespace

// The XC back end is an interface passed in: the engine does all its XC work (every SCF iteration and
// the gradient) through the one it is given, and gets the host's results through it.
TEST(XC, BackendPassedInDoesAllTheXCWork) {
    QMSettings s = QMTest::testSettings("6-31G*");
    auto recording = std::make_shared<RecordingXCFactory>();
    KohnShamLDA viaInterface(s, recording), host(s);
    const QMResult a = viaInterface.compute(water(), 0, {}), b = host.compute(water(), 0, {});
    EXPECT_EQ(recording->counts->created, 1);         // one geometry (the SAD atoms stay on the host)
    EXPECT_EQ(recording->counts->computes, a.iterations);
    // The same arithmetic, but the threaded BLAS and the engine's threads may split sums differently from one
    // call to the next: equal to rounding (1e-12 Eh in the energy, 1e-10 Eh/bohr after the SCF's amplification).
    EXPECT_NEAR(a.total, b.total, 1e-12);
    const QMGradient ga = viaInterface.gradient(a), gb = host.gradient(b);
    EXPECT_EQ(recording->counts->gradients, 1);
    EXPECT_LT((ga.atoms - gb.atoms).cwiseAbs().maxCoeff(), 1e-10);
    EXPECT_GT(viaInterface.xcBackend().storedBytes(), 0u);  // Precompute keeps basis values
}
