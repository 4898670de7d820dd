// The flattened three-centre integral task for GPU platforms (ThreeCentreTask.h).
#include "openmmdft/qm/ThreeCentreTask.h"
#include "openmmdft/qm/Angular.h"
#include "BoysFunction.h"
#include <algorithm>
#include <cmath>

namespace OpenMMDFT {
namespace QM {

namespace {

FlatShells flatten(const BasisSet& basis) {
    FlatShells f;
    for (int s = 0; s < basis.numShells(); s++) {
        const Shell& sh = basis.shells()[s];
        f.l.push_back(sh.l);
        f.atom.push_back(sh.atom);
        f.primStart.push_back((int) f.exponent.size());
        f.numPrim.push_back((int) sh.exponents.size());
        f.offset.push_back(basis.offset(s));
        f.cartesianOffset.push_back(basis.cartesianOffset(s));
        f.center.insert(f.center.end(), sh.center.begin(), sh.center.end());
        f.exponent.insert(f.exponent.end(), sh.exponents.begin(), sh.exponents.end());
        f.coefficient.insert(f.coefficient.end(), sh.coefficients.begin(), sh.coefficients.end());
        f.maxL = std::max(f.maxL, sh.l);
    }
    return f;
}

} // namespace

ThreeCentreTask makeThreeCentreTask(const BasisSet& basis, const BasisSet& auxiliary, const std::vector<std::pair<int, int>>& shellPairs,
                                    const std::vector<int>& pairColumn, int columns) {
    ThreeCentreTask task;
    task.basis = flatten(basis);
    task.aux = flatten(auxiliary);
    for (size_t k = 0; k < shellPairs.size(); k++) {
        task.pairFirst.push_back(shellPairs[k].first);
        task.pairSecond.push_back(shellPairs[k].second);
        task.pairColumn.push_back(pairColumn[k]);
    }
    task.rows = auxiliary.size();
    task.columns = columns;
    for (const Shell& sh : auxiliary.shells()) {
        task.auxTransformStart.push_back((int) task.auxTransform.size());
        const int n = sh.cartesianSize();
        if (sh.pure) {
            const Eigen::MatrixXd& m = cartesianToPure(sh.l);
            for (int r = 0; r < m.rows(); r++)
                for (int c = 0; c < n; c++)
                    task.auxTransform.push_back(m(r, c));
        }
        else
            for (int r = 0; r < n; r++)
                for (int c = 0; c < n; c++)
                    task.auxTransform.push_back(r == c ? 1.0 : 0.0);
    }
    task.boysTable = boysTableValues();
    task.boysStep = kBoysTableStep;
    task.boysEnd = kBoysTableEnd;
    task.boysOrders = kBoysTableOrders;
    task.boysTaylorTerms = kBoysTaylorTerms;
    task.boysPoints = (int) (task.boysTable.size() / kBoysTableOrders);
    return task;
}

} // namespace QM
} // namespace OpenMMDFT
