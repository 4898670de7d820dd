#include "TestUtil.h"
#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include "openmmdft/qm/Grid.h"
#include "openmmdft/qm/Integrals.h"
#include "openmmdft/qm/LinearSolve.h"
#include "openmmdft/qm/XCIntegrator.h"
#include <openmm/OpenMMException.h>
#include <gtest/gtest.h>
#include <chrono>
#include <cmath>
#include <dlfcn.h>
#include <future>
#include <memory>

using namespace OpenMMDFT::QM;
using QMTest::water;

// Libint's overlap and our grid evaluation of the same functions must agree: this pins
// down ordering, normalization and the pure transformation shared by both.
TEST(Integrals, OverlapMatchesGridQuadrature) {
    const auto atoms = water();
    for (const char* name : {"def2-SVP", "6-31G*", "def2-TZVP"})
        for (bool pure : {false, true}) {
            BasisSet b(loadBasisDefinition(name, QMENGINE_DATA_DIR), atoms, pure);
            GridSettings s;
            s.radialPoints = 100;
            s.angularPoints = 590;
            s.screening = false;
            MolecularGrid g(atoms, b, s);
            Eigen::MatrixXd Sg = Eigen::MatrixXd::Zero(b.size(), b.size()), phi;
            for (const GridBatch& batch : g.batches()) {
                evaluateBasisFunctions(b, batch.shells, batch.x.data(), batch.y.data(), batch.z.data(), (int) batch.size(), phi);
                Eigen::Map<const Eigen::VectorXd> w(batch.w.data(), batch.size());
                Sg += phi.transpose() * w.asDiagonal() * phi;
            }
            const Eigen::MatrixXd S = overlapMatrix(b);
            EXPECT_LT((S - Sg).cwiseAbs().maxCoeff(), 1e-6) << name << (pure ? " pure" : " cartesian");
        }
}

TEST(Integrals, FarPointChargeActsLikeMonopole) {
    const auto atoms = water();
    BasisSet b(loadBasisDefinition("6-31G*", QMENGINE_DATA_DIR), atoms, false);
    const Eigen::MatrixXd S = overlapMatrix(b);
    const PointCharge q = {{0, 0, 400.0}, 0.5};
    const Eigen::MatrixXd V = pointChargeMatrix(b, {q}, 0.0);
    // Dipoles of the product densities (~1 bohr) give ~q d/R^2 ~ 3e-6; the monopole is 1.25e-3.
    EXPECT_LT((V + 0.5 / 400.0 * S).cwiseAbs().maxCoeff(), 2e-5);
}

TEST(Integrals, DensityFittedCoulombIsCloseToExact) {
    const auto atoms = water();
    BasisSet b(loadBasisDefinition("def2-SVP", QMENGINE_DATA_DIR), atoms, true);
    BasisSet aux(loadBasisDefinition("def2-universal-jfit", QMENGINE_DATA_DIR), atoms, true, 6);
    // A density from the core Hamiltonian.
    const Eigen::MatrixXd S = overlapMatrix(b);
    std::vector<PointCharge> nuclei;
    for (const auto& a : atoms)
        nuclei.push_back({{a.xyz[0], a.xyz[1], a.xyz[2]}, (double) a.Z});
    const Eigen::MatrixXd H = kineticMatrix(b) + pointChargeMatrix(b, nuclei, 0.0);
    Eigen::GeneralizedSelfAdjointEigenSolver<Eigen::MatrixXd> es(H, S);
    const Eigen::MatrixXd C = es.eigenvectors().leftCols(5);
    const Eigen::MatrixXd D = 2 * C * C.transpose();
    EXPECT_NEAR(D.cwiseProduct(S).sum(), 10.0, 1e-10);
    const Eigen::MatrixXd Jx = ExactCoulomb(b, 1e-12).compute(D);
    const Eigen::MatrixXd Jf = DensityFittedCoulomb(b, aux, 1e-12).compute(D);
    const double ex = 0.5 * D.cwiseProduct(Jx).sum(), ef = 0.5 * D.cwiseProduct(Jf).sum();
    EXPECT_LT((Jx - Jx.transpose()).cwiseAbs().maxCoeff(), 1e-12);
    EXPECT_GT(ex, 40.0);
    EXPECT_LE(ef, ex + 1e-10); // robust fitting underestimates the Coulomb energy
    EXPECT_LT(ex - ef, 5e-3);
}

namespace {
/** Contractions that keep B on the host and refuse to compute it (as a device that cannot reach the shells' l does):
 *  DensityFittedCoulomb then computes B itself and hands it over. */
class KeptTensor : public DensityFittingContractions {
public:
    bool store(const Eigen::MatrixXd& tensor) override {
        B = tensor;
        return true;
    }
    Eigen::VectorXd fit(const Eigen::VectorXd& pairDensity) override { return B * pairDensity; }
    Eigen::VectorXd project(const Eigen::VectorXd& coefficients) override { return B.transpose() * coefficients; }
    size_t storedBytes() const override { return (size_t) B.size() * sizeof(double); }
    Eigen::MatrixXd B;
};

/** A water in def2-SVP with def2-universal-jfit, and a random symmetric density: the density-fitting set-up tests' case. */
struct WaterFitting {
    std::vector<QMAtom> atoms = water();
    BasisSet b{loadBasisDefinition("def2-SVP", QMENGINE_DATA_DIR), atoms, true};
    BasisSet aux{loadBasisDefinition("def2-universal-jfit", QMENGINE_DATA_DIR), atoms, true, 6};
    Eigen::MatrixXd D = Eigen::MatrixXd::Random(b.size(), b.size());
    WaterFitting() {
        D = (D + D.transpose()).eval();
    }
};
} // namespace

/** The set-up's order where contractions are given (the metric's inverse beside the rest, before or after the tensor's
 *  start as inverseOnDevice says) gives the Coulomb matrix of the plain set-up, with the caller's work run once. */
TEST(Integrals, DensityFittedCoulombSetUpOrdersAgree) {
    const WaterFitting w;
    const BasisSet &b = w.b, &aux = w.aux;
    const Eigen::MatrixXd& D = w.D;
    const Eigen::MatrixXd J = DensityFittedCoulomb(b, aux, 1e-12).compute(D);
    for (bool inverseOnDevice : {false, true}) {
        int calls = 0;
        DensityFittedCoulomb fitted(b, aux, 1e-12, 2, NormalEquationSolver(), std::make_unique<KeptTensor>(), [&] { calls++; },
                                    inverseOnDevice);
        EXPECT_EQ(1, calls);
        EXPECT_STREQ("device", fitted.contractionsLocation());
        EXPECT_LT((fitted.compute(D) - J).cwiseAbs().maxCoeff(), 1e-11 * J.cwiseAbs().maxCoeff()) << inverseOnDevice;
    }
}

/** A metric solver on the device (inverseOnDevice) runs without the engine's BLAS lock: another thread's eigensolver,
 *  which takes the lock (as the orthogonalization's does beside the set-up), runs while the device inverts. */
TEST(Integrals, DeviceMetricInverseLeavesTheBLASLockFree) {
    if (dlsym(RTLD_DEFAULT, "openblas_set_num_threads") == nullptr)
        GTEST_SKIP() << "the engine takes its BLAS lock only with OpenBLAS";
    const WaterFitting w;
    const Eigen::MatrixXd J = DensityFittedCoulomb(w.b, w.aux, 1e-12).compute(w.D);
    bool lockFree = false;
    int calls = 0;
    std::future<void> other;  // outlives the solver: were the lock held around it, the solver could still return
    NormalEquationSolver device = [&](const Eigen::MatrixXd& A, Eigen::MatrixXd& B) {
        calls++;
        other = std::async(std::launch::async, [] {
            Eigen::VectorXd values;
            Eigen::MatrixXd vectors;
            symmetricEigensystem(Eigen::MatrixXd::Identity(40, 40), values, vectors);
        });
        lockFree = other.wait_for(std::chrono::seconds(30)) == std::future_status::ready;
        B = A.llt().solve(B);  // Eigen's own code in this test, no BLAS: the "device" inverse
    };
    DensityFittedCoulomb fitted(w.b, w.aux, 1e-12, 2, device, std::make_unique<KeptTensor>(), nullptr, true);
    EXPECT_EQ(1, calls);
    EXPECT_TRUE(lockFree) << "another thread's BLAS call waited for the device's inverse";
    EXPECT_LT((fitted.compute(w.D) - J).cwiseAbs().maxCoeff(), 1e-11 * J.cwiseAbs().maxCoeff());
}

/** The Schwarz screening run on another thread and handed to the constructor (as KohnShamLDA does beside a device): the
 *  same pairs, the same J, and the wait recorded. */
TEST(Integrals, DensityFittedCoulombTakesAScreeningFromAnotherThread) {
    const WaterFitting w;
    const BasisSet &b = w.b, &aux = w.aux;
    const Eigen::MatrixXd& D = w.D;
    const FittingPairs here = screenFittingPairs(b, aux, 1e-12, 2);
    EXPECT_EQ(here.shellPairs.size(), (size_t) b.numShells() * (b.numShells() + 1) / 2);  // one water: nothing is screened out
    const FittingPairs tight = screenFittingPairs(b, aux, 10.0, 2);  // (P|P) of the steepest fitting function is large
    EXPECT_LT(tight.shellPairs.size(), here.shellPairs.size());
    EXPECT_EQ(tight.pairStart.size(), tight.shellPairs.size());
    const Eigen::MatrixXd J = DensityFittedCoulomb(b, aux, 1e-12).compute(D);
    std::shared_future<FittingPairs> screened = std::async(std::launch::async, screenFittingPairs, std::cref(b), std::cref(aux), 1e-12, 2).share();
    DensityFittedCoulomb fitted(b, aux, 1e-12, 2, NormalEquationSolver(), std::make_unique<KeptTensor>(), nullptr, false, screened);
    EXPECT_EQ(1u, fitted.timings().count("screeningWait"));
    EXPECT_EQ(screened.get().functionPairs, here.functionPairs);
    EXPECT_LT((fitted.compute(D) - J).cwiseAbs().maxCoeff(), 1e-11 * J.cwiseAbs().maxCoeff());
}

TEST(Integrals, SolveSymmetricPositiveDefinite) {
    Eigen::MatrixXd A(3, 3);
    A << 4, 1, 0.5, 1, 3, 0.2, 0.5, 0.2, 2;
    Eigen::MatrixXd B = Eigen::MatrixXd::Random(3, 2), X = B;
    solveSymmetricPositiveDefinite(A, X);
    EXPECT_LT((A * X - B).cwiseAbs().maxCoeff(), 1e-13);
    Eigen::MatrixXd notSPD = -A;
    EXPECT_THROW(solveSymmetricPositiveDefinite(notSPD, X), OpenMM::OpenMMException);
}
