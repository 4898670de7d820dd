#pragma once
// Shared helpers of the qmengine tests.
#include "openmmdft/qm/Settings.h"
#include "openmmdft/qm/Types.h"
#include <Eigen/Dense>
#include <gtest/gtest.h>
#include <openmm/OpenMMException.h>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

namespace QMTest {

/** f() throws an OpenMMException whose message contains text (the message names the problem). */
inline void expectThrowContaining(const std::function<void()>& f, const std::string& text) {
    try {
        f();
        ADD_FAILURE() << "no exception, expected one containing '" << text << "'";
    }
    catch (const OpenMM::OpenMMException& e) {
        EXPECT_NE(std::string(e.what()).find(text), std::string::npos) << e.what();
    }
}

using namespace OpenMMDFT::QM;

constexpr double kBohrPerAngstrom = 1.0 / 0.52917721092;

inline std::vector<QMAtom> water() {
    const double a[3][4] = {{8, 0.0, 0.0, 0.1173}, {1, 0.0, 0.7572, -0.4692}, {1, 0.0, -0.7572, -0.4692}};
    std::vector<QMAtom> out;
    for (auto& r : a)
        out.push_back({(int) r[0], {r[1] * kBohrPerAngstrom, r[2] * kBohrPerAngstrom, r[3] * kBohrPerAngstrom}});
    return out;
}

inline QMSettings testSettings(const char* basis = "def2-SVP") {
    QMSettings s;
    s.basisSet = basis;
    s.dataDirectory = QMENGINE_DATA_DIR;
    s.grid.radialPoints = 50;
    s.grid.angularPoints = 194;
    return s;
}
/// One case of tests/data/pyscf_references.txt (bohr).
struct ReferenceCase {
    std::string name, basis, coulomb, auxiliary, functional;
    std::string radialScheme = "treutler", partition = "becke", sizeadjust = "none", prune = "none";
    bool cartesian = false;
    int radial = 0, angular = 0, charge = 0;
    std::vector<QMAtom> atoms;
    std::vector<PointCharge> mm;
    double energy = 0;
    Eigen::MatrixXd gradient, gradientGrid, mmGradient; ///< PySCF's (grid_response False / True), where the case has them
};

inline std::vector<ReferenceCase> readCases() {
    std::ifstream in(std::string(QMENGINE_TEST_DATA_DIR) + "/pyscf_references.txt");
    std::vector<ReferenceCase> cases;
    std::string key;
    ReferenceCase c;
    while (in >> key) {
        if (key[0] == '#') {
            std::getline(in, key);
            continue;
        }
        if (key == "case") in >> c.name;
        else if (key == "basis") in >> c.basis;
        else if (key == "cartesian") in >> c.cartesian;
        else if (key == "coulomb") in >> c.coulomb;
        else if (key == "auxiliary") in >> c.auxiliary;
        else if (key == "functional") in >> c.functional;
        else if (key == "grid") in >> c.radial >> c.angular;
        else if (key == "charge") in >> c.charge;
        else if (key == "radial") in >> c.radialScheme;
        else if (key == "partition") in >> c.partition;
        else if (key == "sizeadjust") in >> c.sizeadjust;
        else if (key == "prune") in >> c.prune;
        else if (key == "atoms") {
            int n;
            in >> n;
            c.atoms.resize(n);
            for (auto& a : c.atoms)
                in >> a.Z >> a.xyz[0] >> a.xyz[1] >> a.xyz[2];
        }
        else if (key == "mmcharges") {
            int n;
            in >> n;
            c.mm.resize(n);
            for (auto& q : c.mm)
                in >> q.xyz[0] >> q.xyz[1] >> q.xyz[2] >> q.charge;
        }
        else if (key == "energy") in >> c.energy;
        else if (key == "gradient" || key == "gradientgrid" || key == "mmgradient") {
            int n;
            in >> n;
            Eigen::MatrixXd& g = (key == "gradient" ? c.gradient : key == "gradientgrid" ? c.gradientGrid : c.mmGradient);
            g.resize(n, 3);
            for (int i = 0; i < n; i++)
                in >> g(i, 0) >> g(i, 1) >> g(i, 2);
        }
        else if (key == "end") {
            cases.push_back(c);
            c = ReferenceCase();
        }
    }
    return cases;
}


} // namespace QMTest
