#include "TestUtil.h"
#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Integrals.h"
#include "openmmdft/qm/PairDensityMap.h"
#include <openmm/OpenMMException.h>
#include <gtest/gtest.h>
#include <unistd.h>
#include <cstdio>
#include <fstream>
#include <functional>
#include <limits>
#include <sstream>

using namespace OpenMMDFT::QM;
using QMTest::expectThrowContaining;
using QMTest::water;

namespace {
BasisDefinition load(const std::string& name) {
    return loadBasisDefinition(name, QMENGINE_DATA_DIR);
}
} // namespace

TEST(Basis, ShippedSetsLoadWithExpectedSizes) {
    struct Case { const char* name; bool pure; int nbf; };
    const Case cases[] = {{"STO-3G", false, 7}, {"6-31G", false, 13}, {"6-31G*", false, 19}, {"6-31G(d)", false, 19},
                          {"6-31G**", false, 25}, {"def2-SVP", true, 24}, {"DZVP", true, 18}};
    for (const Case& c : cases) {
        const BasisDefinition def = load(c.name);
        BasisSet b(def, water(), def.sphericalByDefault);
        EXPECT_EQ(def.sphericalByDefault, c.pure) << c.name;
        EXPECT_EQ(b.size(), c.nbf) << c.name;
    }
    for (const char* aux : {"def2-universal-jfit", "DGauss-A1-DFT-Cfit", "DGaussA2_DFT_Cfit"}) {
        const BasisDefinition def = load(aux);
        EXPECT_NO_THROW(BasisSet(def, water(), true, 6)) << aux;
    }
}

TEST(Basis, SixThirtyOneGStarIsCartesianWithSixDFunctions) {
    const BasisDefinition def = load("6-31G*");
    BasisSet cart(def, water(), false), pure(def, water(), true);
    EXPECT_EQ(cart.size() - pure.size(), 1);
}

TEST(Basis, NormalizedDiagonalOverlap) {
    for (const char* name : {"def2-SVP", "6-31G*", "DZVP"}) {
        for (bool pure : {false, true}) {
            BasisSet b(load(name), water(), pure);
            const Eigen::MatrixXd S = overlapMatrix(b);
            for (int s = 0; s < b.numShells(); s++) {
                const Shell& sh = b.shells()[s];
                // Pure functions and the x^l cartesian component are unit-normalized.
                EXPECT_NEAR(S(b.offset(s), b.offset(s)), 1.0, 1e-10) << name << " shell " << s;
                if (sh.pure)
                    for (int f = 0; f < sh.size(); f++)
                        EXPECT_NEAR(S(b.offset(s) + f, b.offset(s) + f), 1.0, 1e-10);
            }
        }
    }
}

TEST(Basis, PureTransformRowsAreOrthonormal) {
    // Overlap of cartesian monomials with a common radial part, relative to x^l.
    auto df = [](int n) { double r = 1; for (int k = n; k > 1; k -= 2) r *= k; return r; };
    for (int l = 0; l <= 4; l++) {
        const auto& c = cartesianComponents(l);
        const int n = (int) c.size();
        Eigen::MatrixXd M(n, n);
        for (int i = 0; i < n; i++)
            for (int j = 0; j < n; j++) {
                const int a = c[i][0] + c[j][0], b = c[i][1] + c[j][1], d = c[i][2] + c[j][2];
                M(i, j) = (a % 2 || b % 2 || d % 2) ? 0 : df(a - 1) * df(b - 1) * df(d - 1) / df(2 * l - 1);
            }
        const Eigen::MatrixXd T = cartesianToPure(l);
        const Eigen::MatrixXd G = T * M * T.transpose();
        EXPECT_LT((G - Eigen::MatrixXd::Identity(2 * l + 1, 2 * l + 1)).cwiseAbs().maxCoeff(), 1e-12) << "l = " << l;
    }
}

TEST(Basis, ParsesSPShellsDExponentsAndGeneralContractions) {
    std::istringstream in("BASIS \"ao basis\" CARTESIAN PRINT\n"
                          "# comment\n"
                          "C    SP\n  3.0D+00  0.5  0.4\n  1.0D-01  0.5  0.6\n"
                          "C    S\n  10.0  0.3  0.0\n  1.0  0.7  1.0\n"
                          "END\n");
    const BasisDefinition d = parseNWChemBasis(in, "inline");
    EXPECT_FALSE(d.sphericalByDefault);
    ASSERT_EQ(d.elements.at(6).size(), 4u);
    EXPECT_EQ(d.elements.at(6)[0].l, 0);
    EXPECT_EQ(d.elements.at(6)[1].l, 1);
    EXPECT_DOUBLE_EQ(d.elements.at(6)[1].exponents[1], 0.1);
    EXPECT_DOUBLE_EQ(d.elements.at(6)[3].coefficients[1], 1.0);
}

TEST(Basis, ErrorsNameTheProblem) {
    expectThrowContaining([] { std::istringstream in("BASIS\nXx S\n 1.0 1.0\nEND\n"); parseNWChemBasis(in, "f"); },
                          "unknown element 'Xx'");
    expectThrowContaining([] { std::istringstream in("BASIS\nH S\n 1.0 abc\nEND\n"); parseNWChemBasis(in, "f"); },
                          "malformed basis file");
    expectThrowContaining([] { std::istringstream in("BASIS\nH Q\n 1.0 1.0\nEND\n"); parseNWChemBasis(in, "f"); },
                          "unknown shell type");
    expectThrowContaining([] { std::istringstream in("BASIS\n 1.0 1.0\nEND\n"); parseNWChemBasis(in, "f"); },
                          "numbers before any shell header");
    expectThrowContaining([] { std::istringstream in("BASIS\nH S\nEND\n"); parseNWChemBasis(in, "f"); },
                          "shell without primitives");
    expectThrowContaining([] { std::istringstream in("BASIS\nH S\n 1.0 1.0\n"); parseNWChemBasis(in, "f"); },
                          "without END");
    expectThrowContaining([] { std::istringstream in(""); parseNWChemBasis(in, "f"); }, "no basis functions");
    expectThrowContaining([] { load("no-such-basis"); }, "unknown basis set 'no-such-basis'");
    expectThrowContaining([] { BasisSet(load("6-31G"), {{79, {0, 0, 0}}, {1, {0, 0, 2}}}, false); },
                          "has no functions for element Au");
    expectThrowContaining([] { BasisSet(load("def2-SVP"), {{53, {0, 0, 0}}}, true); }, "effective core potential");
}

namespace {
// Hostile basis files: each is written to a temporary .nw file and loaded by path, as a user's file would be.
class BasisFile {
public:
    // One name per process and per file: ctest runs the tests of this file in parallel processes.
    explicit BasisFile(const std::string& text)
        : path_(::testing::TempDir() + "openmmdft_test_basis_" + std::to_string(getpid()) + "_" + std::to_string(counter()++) + ".nw") {
        std::ofstream(path_) << text;
    }
    ~BasisFile() { std::remove(path_.c_str()); }
    const std::string& path() const { return path_; }
    static int& counter() {
        static int n = 0;
        return n;
    }
private:
    std::string path_;
};

/** Loading this basis text must fail with a message naming the file, the line and every given fragment. */
void expectFileError(const std::string& text, int line, const std::vector<std::string>& fragments) {
    const BasisFile file(text);
    try {
        loadBasisDefinition(file.path(), "");
        ADD_FAILURE() << "no exception for:\n" << text;
    }
    catch (const OpenMM::OpenMMException& e) {
        const std::string what = e.what();
        EXPECT_NE(what.find(file.path()), std::string::npos) << what;
        EXPECT_NE(what.find("at line " + std::to_string(line) + ":"), std::string::npos) << what;
        for (const std::string& f : fragments)
            EXPECT_NE(what.find(f), std::string::npos) << "'" << f << "' missing from: " << what;
    }
}
} // namespace

TEST(Basis, NonFiniteAndNonPositiveNumbersNameLineAndText) {
    expectFileError("BASIS\nH S\n  nan 1.0\nEND\n", 3, {"exponent 'nan'", "not a finite number"});
    expectFileError("BASIS\nH S\n  NaN 1.0\nEND\n", 3, {"exponent 'NaN'", "not a finite number"});
    expectFileError("BASIS\nH S\n  inf 1.0\nEND\n", 3, {"exponent 'inf'", "not a finite number"});
    expectFileError("BASIS\nH S\n  1.0D+400 1.0\nEND\n", 3, {"exponent '1.0D+400'", "out of the range of a double"});
    expectFileError("BASIS\nH S\n  1.0 1e400\nEND\n", 3, {"coefficient '1e400'", "out of the range of a double"});
    expectFileError("BASIS\nH S\n  2.0 0.5\n  1.0 -inf\nEND\n", 4, {"coefficient '-inf'"});
    expectFileError("BASIS\nH S\n  1.0 nan\nEND\n", 3, {"coefficient 'nan'"});
    expectFileError("BASIS\nH S\n  1.0 1e-400\nEND\n", 3, {"coefficient '1e-400'", "out of the range"});
    expectFileError("BASIS\nH S\n  -1.5 1.0\nEND\n", 3, {"exponent '-1.5' must be positive"});
    expectFileError("BASIS\nH S\n  0.0 1.0\nEND\n", 3, {"exponent '0.0' must be positive"});
}

TEST(Basis, JunkOnNumberLinesIsRefused) {
    expectFileError("BASIS\nH S\n  1.0 0.5x\nEND\n", 3, {"coefficient '0.5x' is not a number"});
    expectFileError("BASIS\nH S\n  1.0 0.5 abc\nEND\n", 3, {"coefficient 'abc' is not a number"});
    expectFileError("BASIS\nH S\n  1.0x 0.5\nEND\n", 3, {"exponent '1.0x' is not a number"});
    expectFileError("BASIS\nH S\n  0x10 0.5\nEND\n", 3, {"exponent '0x10' is not a number"});
    expectFileError("BASIS\nH S\n  1.0\nEND\n", 3, {"needs an exponent and coefficients"});
    expectFileError("BASIS\nH S\n  2.0 0.5 0.1\n  1.0 0.5\nEND\n", 4, {"inconsistent number of coefficient columns"});
    expectFileError("BASIS\nC SP\n  2.0 0.5\nEND\n", 2, {"SP needs 2 coefficient columns"});
    expectFileError("BASIS\nH S extra\n  1.0 1.0\nEND\n", 2, {"expected '<element> <shell type>'"});
}

TEST(Basis, UnknownElementsNameLine) {
    expectFileError("BASIS\nH S\n  1.0 1.0\nXx S\n  1.0 1.0\nEND\n", 4, {"unknown element 'Xx'"});
    expectFileError("BASIS\nH S\n  1.0 1.0\nEND\nECP\nQq nelec 2\nQq S\nEND\n", 6, {"unknown element 'Qq'"});
}

TEST(Basis, RepeatedShellNamesBothLines) {
    // An auxiliary-style file with the same shell twice: its fitting metric would be singular.
    expectFileError("BASIS \"cd basis\" SPHERICAL\nO S\n  5.0 1.0\nO P\n  2.0 1.0\nO S\n  5.0 1.0\nEND\n", 6,
                    {"S shell of O", "repeats the one at line 2"});
    // Two equal columns of one general contraction.
    expectFileError("BASIS\nH S\n  3.0 0.4 0.4\n  1.0 0.6 0.6\nEND\n", 2, {"repeats the one at line 2"});
    // Not repeats: same exponents on another element, another l, or other coefficients.
    const BasisFile fine("BASIS\nH S\n  5.0 1.0\nHe S\n  5.0 1.0\nH P\n  5.0 1.0\nH S\n  5.0 0.5\n  1.0 0.5\nH S\n  5.0 0.5\n  1.0 0.6\nEND\n");
    const BasisDefinition def = loadBasisDefinition(fine.path(), "");
    EXPECT_EQ(def.elements.at(1).size(), 4u);
    // SP with equal s and p columns is two shells of different l, not a repeat.
    const BasisFile sp("BASIS\nC SP\n  2.0 1.0 1.0\nEND\n");
    EXPECT_EQ(loadBasisDefinition(sp.path(), "").elements.at(6).size(), 2u);
}

TEST(Basis, GoodNumberFormsStillRead) {
    const BasisFile file("BASIS\nH S\n  +2.5D+00 1.0d-01\n  .5E0 -0.25\nEND\n");
    const BasisDefinition def = loadBasisDefinition(file.path(), "");
    const ShellDefinition& s = def.elements.at(1)[0];
    EXPECT_DOUBLE_EQ(s.exponents[0], 2.5);
    EXPECT_DOUBLE_EQ(s.coefficients[0], 0.1);
    EXPECT_DOUBLE_EQ(s.exponents[1], 0.5);
    EXPECT_DOUBLE_EQ(s.coefficients[1], -0.25);
}

TEST(Basis, DefinitionsBuiltInCodeAreCheckedWhenPlaced) {
    const double nan = std::numeric_limits<double>::quiet_NaN(), inf = std::numeric_limits<double>::infinity();
    auto place = [](const ShellDefinition& shell) {
        BasisDefinition def;
        def.name = "custom";
        def.elements[1] = {{0, {1.0}, {1.0}}, shell};
        BasisSet(def, {{1, {0, 0, 0}}}, true);
    };
    expectThrowContaining([&] { place({0, {nan}, {1.0}}); }, "basis set 'custom', shell 2 of H (l = 0): exponent nan");
    expectThrowContaining([&] { place({1, {-2.0}, {1.0}}); }, "exponent -2 is not a finite positive number");
    expectThrowContaining([&] { place({0, {1.0}, {inf}}); }, "coefficient inf is not a finite number");
    expectThrowContaining([&] { place({0, {1.0, 2.0}, {1.0}}); }, "one coefficient per exponent");
    expectThrowContaining([&] { place({0, {1.0}, {0.0}}); }, "shell 2 of H (l = 0): a basis shell with l = 0 cannot be normalized");
    // Finite but extreme: the self-overlap overflows.
    expectThrowContaining([&] { place({3, {1e300}, {1.0}}); }, "cannot be normalized");
}

// The density fitting's pair vectors taken straight from and to the basis's own functions against the dense route
// through the all-cartesian matrices (toCartesianBasis, fromCartesianBasis), for pure d and f shells (def2-TZVP), a
// cartesian basis and a pair list with gaps, on one thread and three; the two sum the same terms in other orders
// (tolerance 1e-13 relative).
TEST(Basis, PairDensityMapMatchesTheCartesianMatrices) {
    for (int threads : {1, 3})
    for (const char* name : {"def2-TZVP", "6-31G*"}) {
        const BasisDefinition def = load(name);
        BasisSet b(def, water(), def.sphericalByDefault);
        const int nc = b.cartesianSize();
        // Shell pair by shell pair, as the density fitting lists them (scatter()'s threads take whole shell pairs).
        std::vector<std::pair<int, int>> pairs, byFunction;
        for (int s1 = 0; s1 < b.numShells(); s1++)
            for (int s2 = 0; s2 <= s1; s2++)
                for (int u = b.cartesianOffset(s1); u < b.cartesianOffset(s1) + b.shells()[s1].cartesianSize(); u++)
                    for (int v = b.cartesianOffset(s2); v < b.cartesianOffset(s2) + b.shells()[s2].cartesianSize() && v <= u; v++)
                        if ((u * 7 + v * 3) % 5 != 0)  // leave some pairs out, as screening does
                            pairs.push_back({u, v});
        for (int u = 0; u < nc; u++)
            for (int v = 0; v <= u; v++)
                byFunction.push_back({u, v});
        EXPECT_THROW(PairDensityMap(b, byFunction, threads), OpenMM::OpenMMException) << "a shell pair in several runs";
        const PairDensityMap map(b, pairs, threads);
        Eigen::MatrixXd D = Eigen::MatrixXd::Random(b.size(), b.size());
        D = (D + D.transpose()).eval();
        const Eigen::MatrixXd Dc = toCartesianBasis(b, D);
        const Eigen::VectorXd d = map.gather(D);
        ASSERT_EQ(d.size(), (Eigen::Index) pairs.size());
        for (size_t k = 0; k < pairs.size(); k++) {
            const int u = pairs[k].first, v = pairs[k].second;
            const double expected = u == v ? Dc(u, v) : Dc(u, v) + Dc(v, u);
            EXPECT_NEAR(d[k], expected, 1e-13 * (1 + std::abs(expected))) << name << " pair " << u << "," << v;
        }
        const Eigen::VectorXd j = Eigen::VectorXd::Random((Eigen::Index) pairs.size());
        Eigen::MatrixXd Jc = Eigen::MatrixXd::Zero(nc, nc);
        for (size_t k = 0; k < pairs.size(); k++)
            Jc(pairs[k].first, pairs[k].second) = Jc(pairs[k].second, pairs[k].first) = j[k];
        const Eigen::MatrixXd expectedJ = fromCartesianBasis(b, Jc), J = map.scatter(j);
        ASSERT_EQ(J.rows(), b.size());
        EXPECT_LT((J - expectedJ).cwiseAbs().maxCoeff(), 1e-13 * (1 + expectedJ.cwiseAbs().maxCoeff())) << name;
        EXPECT_LT((J - J.transpose()).cwiseAbs().maxCoeff(), 1e-14 * (1 + expectedJ.cwiseAbs().maxCoeff())) << name;
    }
}
