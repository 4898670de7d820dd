// The flattened three-centre integral task for GPU platforms (ThreeCentreTask.h).
#include "openmmdft/qm/ThreeCentreTask.h"
#include "openmmdft/qm/Angular.h"
#include "BoysFunction.h"
#include "ShellPairScreening.h"
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

void setBoysTable(ThreeCentreTask& task) {
    task.boysTable = boysTableValues();
    task.boysStep = kBoysTableStep;
    task.boysEnd = kBoysTableEnd;
    task.boysOrders = kBoysTableOrders;
    task.boysTaylorTerms = kBoysTaylorTerms;
    task.boysPoints = (int) (task.boysTable.size() / kBoysTableOrders);
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
    setBoysTable(task);
    return task;
}

ThreeCentreTask makePointChargeTask(const BasisSet& basis, const std::vector<PointCharge>& charges, double threshold) {
    ThreeCentreTask task;
    task.basis = flatten(basis);
    for (int s1 = 0; s1 < basis.numShells(); s1++)
        for (int s2 = 0; s2 <= s1; s2++)
            if (threshold <= 0 || pairOverlapBound(basis.shells()[s1], basis.shells()[s2]) >= threshold) {
                task.pairFirst.push_back(s1);
                task.pairSecond.push_back(s2);
                task.pairColumn.push_back(0);  // no tensor
            }
    FlatShells& c = task.aux;
    for (size_t k = 0; k < charges.size(); k++) {
        c.l.push_back(0);
        c.atom.push_back((int) k);
        c.primStart.push_back((int) k);
        c.numPrim.push_back(1);
        c.offset.push_back((int) k);
        c.cartesianOffset.push_back((int) k);
        c.center.insert(c.center.end(), charges[k].xyz, charges[k].xyz + 3);
        c.exponent.push_back(1.0);  // unused in the point-charge limit
        c.coefficient.push_back(1.0);
    }
    task.rows = (int) charges.size();
    setBoysTable(task);
    return task;
}

} // namespace QM
} // namespace OpenMMDFT
