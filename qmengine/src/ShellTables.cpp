// The flat shell tables of the shared shell evaluation (ShellTables.h).
#include "openmmdft/qm/ShellTables.h"
#include "openmmdft/qm/Angular.h"
#include <openmm/OpenMMException.h>
#include <string>

namespace OpenMMDFT {
namespace QM {

ShellTables::ShellTables(const BasisSet& basis) {
    for (const Shell& s : basis.shells()) {
        if (s.l > 3)
            throw OpenMM::OpenMMException("QM: basis functions are evaluated for shells up to f (the basis has l = " +
                                          std::to_string(s.l) + ")");
        l.push_back(s.l);
        pure.push_back(s.pure ? 1 : 0);
        center.insert(center.end(), s.center.begin(), s.center.end());
        primStart.push_back((int) exponent.size());
        numPrim.push_back((int) s.exponents.size());
        exponent.insert(exponent.end(), s.exponents.begin(), s.exponents.end());
        coefficient.insert(coefficient.end(), s.coefficients.begin(), s.coefficients.end());
    }
    for (int k = 2; k <= 3; k++) {
        const Eigen::MatrixXd& m = cartesianToPure(k);
        for (int r = 0; r < m.rows(); r++)
            for (int c = 0; c < m.cols(); c++)
                pureMatrix.push_back(m(r, c));
    }
}

} // namespace QM
} // namespace OpenMMDFT
