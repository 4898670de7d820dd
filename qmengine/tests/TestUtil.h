#pragma once
// Shared helpers of the qmengine tests.
#include "openmmdft/qm/Settings.h"
#include "openmmdft/qm/Types.h"
#include <vector>

namespace QMTest {
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
} // namespace QMTest
