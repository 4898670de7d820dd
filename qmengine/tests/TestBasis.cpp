#include "TestUtil.h"
#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Integrals.h"
#include <openmm/OpenMMException.h>
#include <gtest/gtest.h>
#include <functional>
#include <sstream>

using namespace OpenMMDFT::QM;
using QMTest::water;

namespace {
BasisDefinition load(const std::string& name) {
    return loadBasisDefinition(name, QMENGINE_DATA_DIR);
}

void expectThrowContaining(const std::function<void()>& f, const std::string& text) {
    try {
        f();
        ADD_FAILURE() << "no exception, expected one containing '" << text << "'";
    }
    catch (const OpenMM::OpenMMException& e) {
        EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
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
