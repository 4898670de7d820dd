#pragma once
// The shells of a basis as the flat tables of the shared shell evaluation (qmengine/src/shared/shellValues.cc), the
// one code that computes basis-function values and gradients on the host and on the GPU platforms.
#include "openmmdft/qm/Basis.h"
#include <vector>

namespace OpenMMDFT {
namespace QM {

struct ShellTables {
    /// Throws OpenMMException for shells beyond f, which the shared evaluation does not handle.
    explicit ShellTables(const BasisSet& basis);
    std::vector<int> l, pure, primStart, numPrim;  ///< per shell (pure: 1 for real solid harmonics with l >= 2)
    std::vector<double> center;                    ///< per shell, x y z (bohr)
    std::vector<double> exponent, coefficient;     ///< per primitive
    std::vector<double> pureMatrix;                ///< cartesian -> real solid harmonic rows of d (5 x 6), then f (7 x 10)
};

} // namespace QM
} // namespace OpenMMDFT
