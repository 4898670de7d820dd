/* Products with lists of matrices (qmengine/src/DenseAlgebra.cpp), which DIIS uses on the recycled pairs without
 * copying them side by side: against the same products of one dense matrix whose columns are the flattened
 * matrices (Eigen), and the same bits on 1 and 3 threads (MD runs must be reproducible). */
#include "openmmdft/qm/DenseAlgebra.h"
#include "openmmdft/qm/EnvironmentSwitch.h"
#include <openmm/OpenMMException.h>
#include <cmath>
#include <cstdlib>
#include <dlfcn.h>
#include <string>
#include <gtest/gtest.h>
#include <random>

using namespace OpenMMDFT::QM;

namespace {

/** m random matrices of rows x cols, sizes spread over 1e0..1e-8 (as an SCF's pairs are), and their side-by-side copy. */
struct RandomList {
    std::vector<Eigen::MatrixXd> matrices;
    MatrixList list;
    Eigen::MatrixXd dense;
    RandomList(int m, int rows, int cols, unsigned seed) {
        std::mt19937 rng(seed);
        std::normal_distribution<double> normal;
        for (int j = 0; j < m; j++) {
            Eigen::MatrixXd a(rows, cols);
            const double scale = std::pow(10.0, -(j % 9));
            for (int i = 0; i < a.size(); i++)
                a.data()[i] = scale * normal(rng);
            matrices.push_back(a);
        }
        dense.resize((Eigen::Index) rows * cols, m);
        for (int j = 0; j < m; j++) {
            list.push_back(&matrices[j]);
            dense.col(j) = Eigen::Map<const Eigen::VectorXd>(matrices[j].data(), matrices[j].size());
        }
    }
};

} // namespace

TEST(DenseAlgebra, MatrixListProductsEqualTheDenseProducts) {
    // 150 x 150 matrices: more rows than one block of each product, with a partial last block.
    const RandomList a(20, 150, 150, 1);
    std::mt19937 rng(2);
    std::normal_distribution<double> normal;
    Eigen::VectorXd x(a.dense.rows()), c(a.dense.cols());
    for (int i = 0; i < x.size(); i++)
        x[i] = normal(rng);
    for (int j = 0; j < c.size(); j++)
        c[j] = normal(rng);

    const Eigen::VectorXd dots = streamedDots(a.list, x, 3), denseDots = a.dense.transpose() * x;
    for (int j = 0; j < dots.size(); j++)
        EXPECT_NEAR(denseDots[j], dots[j], 1e-12 * a.dense.col(j).norm() * x.norm()) << j;

    Eigen::VectorXd y = x, denseY = x + a.dense * c;
    addStreamedCombination(a.list, c, y, 3);
    EXPECT_LT((y - denseY).cwiseAbs().maxCoeff(), 1e-12 * denseY.cwiseAbs().maxCoeff());

    const Eigen::MatrixXd gram = streamedGram(a.list, 3), denseGram = a.dense.transpose() * a.dense;
    for (int j = 0; j < gram.rows(); j++)
        for (int k = 0; k < gram.cols(); k++)  // relative to the pair's sizes: the small pairs' products must be right
            EXPECT_NEAR(denseGram(j, k), gram(j, k), 1e-12 * a.dense.col(j).norm() * a.dense.col(k).norm()) << j << " " << k;

    // Three of the matrices against all of them (a Gram matrix grown by new pairs): the Gram matrix's rows.
    const MatrixList some = {a.list[4], a.list[0], a.list[19]};
    const Eigen::MatrixXd cross = streamedCrossGram(some, a.list, 3);
    ASSERT_EQ(3, cross.rows());
    ASSERT_EQ(20, cross.cols());
    const int rowOf[] = {4, 0, 19};
    for (int j = 0; j < 3; j++)
        for (int k = 0; k < 20; k++)
            EXPECT_NEAR(denseGram(rowOf[j], k), cross(j, k), 1e-12 * a.dense.col(rowOf[j]).norm() * a.dense.col(k).norm())
                << j << " " << k;
}

TEST(DenseAlgebra, MatrixListProductsDoNotDependOnTheThreadCount) {
    const RandomList a(12, 200, 120, 3);
    Eigen::VectorXd x = Eigen::VectorXd::LinSpaced(a.dense.rows(), -1, 1), c = Eigen::VectorXd::LinSpaced(12, 0.5, 2);
    EXPECT_EQ(0.0, (streamedDots(a.list, x, 1) - streamedDots(a.list, x, 3)).cwiseAbs().maxCoeff());
    Eigen::VectorXd y1 = x, y3 = x;
    addStreamedCombination(a.list, c, y1, 1);
    addStreamedCombination(a.list, c, y3, 3);
    EXPECT_EQ(0.0, (y1 - y3).cwiseAbs().maxCoeff());
    EXPECT_EQ(0.0, (streamedGram(a.list, 1) - streamedGram(a.list, 3)).cwiseAbs().maxCoeff());
    const MatrixList some = {a.list[2], a.list[7]};
    EXPECT_EQ(0.0, (streamedCrossGram(some, a.list, 1) - streamedCrossGram(some, a.list, 3)).cwiseAbs().maxCoeff());
}

TEST(DenseAlgebra, MatrixListProductsRefuseMismatchedSizes) {
    const Eigen::MatrixXd a = Eigen::MatrixXd::Ones(3, 3), b = Eigen::MatrixXd::Ones(2, 2);
    const MatrixList list = {&a, &b};
    Eigen::VectorXd x = Eigen::VectorXd::Ones(9);
    EXPECT_THROW(streamedDots(list, x, 1), OpenMM::OpenMMException);
    EXPECT_THROW(streamedGram(list, 1), OpenMM::OpenMMException);
    EXPECT_THROW(streamedCrossGram({&a}, {&b}, 1), OpenMM::OpenMMException);
    EXPECT_THROW(addStreamedCombination(list, Eigen::VectorXd::Ones(1), x, 1), OpenMM::OpenMMException);
    EXPECT_EQ(0, streamedGram(MatrixList(), 1).size());
}

TEST(DenseAlgebra, OpenBLASKernelWarningNamesAFallback) {
    // ctest runs this twice: with OpenBLAS's own kernel choice, and with OPENBLAS_CORETYPE=Prescott (a pre-AVX
    // fallback forced, as OpenBLAS chooses for a CPU model it does not know).
    void* library = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
    auto corename = reinterpret_cast<char* (*)()>(dlsym(library != nullptr ? library : RTLD_DEFAULT, "openblas_get_corename"));
    if (corename == nullptr)
        GTEST_SKIP() << "the BLAS is not OpenBLAS";
    const std::string core = corename(), warning = openBLASKernelWarning();
    __builtin_cpu_init();
    const bool avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    const char* forced = std::getenv("OPENBLAS_CORETYPE");
    if (forced != nullptr && std::string(forced) == "Prescott") {
        ASSERT_EQ("Prescott", core);
        if (!avx2)
            GTEST_SKIP() << "this CPU has no AVX2: Prescott's kernels are no loss";
        EXPECT_NE(std::string::npos, warning.find("its Prescott kernels")) << warning;
        EXPECT_NE(std::string::npos, warning.find("OPENBLAS_CORETYPE=Haswell") + warning.find("OPENBLAS_CORETYPE=SkylakeX") + 1) << warning;
    }
    else if (core == "Haswell" || core == "SkylakeX" || core == "Zen" || core == "Cooperlake" || core == "SapphireRapids")
        EXPECT_EQ("", warning);  // kernels with AVX2: nothing to say
}

TEST(DenseAlgebra, PackedTrianglesKeepDotProductsAndCombinations) {
    // Symmetric and antisymmetric matrices packed by their upper triangles: dot products and Gram matrices of the
    // packed vectors are those of the whole matrices, a combination of packed vectors unpacks to the combination.
    const RandomList a(6, 31, 31, 8);
    std::vector<Eigen::MatrixXd> anti, sym;
    for (const Eigen::MatrixXd& m : a.matrices) {
        anti.push_back(m - m.transpose());
        sym.push_back(m + m.transpose());
    }
    auto frobenius = [](const Eigen::MatrixXd& x, const Eigen::MatrixXd& y) { return x.cwiseProduct(y).sum(); };
    for (size_t j = 0; j < anti.size(); j++)
        for (size_t k = 0; k < anti.size(); k++) {
            const double scale = 1e-14 * anti[j].norm() * anti[k].norm();
            EXPECT_NEAR(frobenius(anti[j], anti[k]), packAntisymmetric(anti[j]).dot(packAntisymmetric(anti[k])), scale);
            EXPECT_NEAR(frobenius(sym[j], sym[k]), packSymmetric(sym[j]).dot(packSymmetric(sym[k])),
                        1e-14 * sym[j].norm() * sym[k].norm());
        }
    EXPECT_EQ(packedSymmetricSize(31), packSymmetric(sym[0]).size());
    EXPECT_EQ(packedAntisymmetricSize(31), packAntisymmetric(anti[0]).size());
    EXPECT_EQ(0, packAntisymmetric(Eigen::MatrixXd::Zero(1, 1)).size());

    const Eigen::VectorXd w = Eigen::VectorXd::LinSpaced(6, -1.5, 2);
    Eigen::MatrixXd expected = sym[5], combined = sym[5];
    Eigen::VectorXd packed = Eigen::VectorXd::Zero(packedSymmetricSize(31));
    for (int j = 0; j < 6; j++) {
        expected += w[j] * sym[j];
        packed += w[j] * packSymmetric(sym[j]);
    }
    addUnpackedSymmetric(packed, combined);
    EXPECT_LT((combined - expected).cwiseAbs().maxCoeff(), 1e-14 * expected.cwiseAbs().maxCoeff());
    EXPECT_EQ(0.0, (combined - combined.transpose()).cwiseAbs().maxCoeff());

    Eigen::MatrixXd rectangular = Eigen::MatrixXd::Zero(4, 3);
    EXPECT_THROW(packSymmetric(rectangular), OpenMM::OpenMMException);
    EXPECT_THROW(packAntisymmetric(rectangular), OpenMM::OpenMMException);
    EXPECT_THROW(addUnpackedSymmetric(packed.head(10), combined), OpenMM::OpenMMException);
}

/** withOpenBLASThreads with a cap runs the work with at most that many OpenBLAS threads (and without one, OpenBLAS's
 * own count); the temporary count switch reads only positive numbers. */
TEST(DenseAlgebra, OpenBLASThreadCapAndCountSwitch) {
    void* library = dlopen("libopenblas.so.0", RTLD_LAZY | RTLD_NOLOAD);
    auto get = reinterpret_cast<int (*)()>(dlsym(library != nullptr ? library : RTLD_DEFAULT, "openblas_get_num_threads"));
    if (get != nullptr) {
        int own = 0, capped = 0;
        withOpenBLASThreads([&] { own = get(); });
        withOpenBLASThreads([&] { capped = get(); }, 1);
        EXPECT_GE(own, 1);
        EXPECT_EQ(1, capped);
    }
    setenv("OPENMMDFT_TEST_COUNT", "8", 1);
    EXPECT_EQ(8, environmentCount("OPENMMDFT_TEST_COUNT", 0));
    for (const char* bad : {"", "0", "-3", "4x", "many"}) {
        setenv("OPENMMDFT_TEST_COUNT", bad, 1);
        EXPECT_EQ(5, environmentCount("OPENMMDFT_TEST_COUNT", 5)) << bad;
    }
    unsetenv("OPENMMDFT_TEST_COUNT");
    EXPECT_EQ(0, environmentCount("OPENMMDFT_TEST_COUNT", 0));
}
