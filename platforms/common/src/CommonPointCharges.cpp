// The point-charge gradient on the GPU platforms (CommonPointCharges.h).
#include "CommonPointCharges.h"
#include "DeviceShellTables.h"
#include "openmm/common/ContextSelector.h"
#include <algorithm>
#include <vector>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

namespace {

/// The largest orbital l the kernels take.
const int MAX_BASIS_L = 3;
/// Charges per work item: the pair's derivative Hermite densities are formed once for them.
const int CHARGES_PER_ITEM = 16;

} // namespace

CommonPointChargeGradients::CommonPointChargeGradients(ComputeContext& cc, function<ComputeProgram(int, int)> integralProgram)
    : cc(cc), integralProgram(integralProgram) {
}

bool CommonPointChargeGradients::addGradient(const QM::ThreeCentreTask& task, const vector<double>& weights, const Eigen::MatrixXd& D,
                                             Eigen::MatrixXd& atomGradient, Eigen::MatrixXd& chargeGradient) const {
    const int numCharges = (int) task.aux.l.size(), numPairs = (int) task.pairFirst.size(), numAtoms = (int) atomGradient.rows();
    if (task.basis.maxL > MAX_BASIS_L || numCharges == 0 || numPairs == 0)
        return false;
    ContextSelector selector(cc);
    ComputeProgram program = integralProgram(task.basis.maxL, 0);
    // Every array is made for this call: the number of charges changes from step to step.
    DeviceShells basis, charges;
    basis.upload(cc, task.basis, 0);
    charges.upload(cc, task.aux, numCharges);
    vector<int> groupStart, groupAtom;
    for (int c = 0; c < numCharges; c += CHARGES_PER_ITEM) {
        groupStart.push_back(c);
        groupAtom.push_back(0);  // unused: every charge is its own centre
    }
    groupStart.push_back(numCharges);
    const int numGroups = (int) groupAtom.size();
    ComputeArray pairFirst, pairSecond, groupShellStart, groupAtomArray, boysTable, density, coefficients, gradient;
    uploadVector(cc, pairFirst, task.pairFirst, "qmChargePairFirst");
    uploadVector(cc, pairSecond, task.pairSecond, "qmChargePairSecond");
    uploadVector(cc, groupShellStart, groupStart, "qmChargeGroupStart");
    uploadVector(cc, groupAtomArray, groupAtom, "qmChargeGroupAtom");
    uploadVector(cc, boysTable, task.boysTable, "qmChargeBoysTable");
    uploadVector(cc, density, vector<double>(D.data(), D.data() + D.size()), "qmChargeDensity");  // symmetric
    uploadVector(cc, coefficients, weights, "qmChargeWeights");
    uploadVector(cc, gradient, vector<long long>(3 * (numAtoms + numCharges), 0), "qmChargeGradient");
    // Point charges, each its own centre in the rows after the atoms'.
    const Eigen::MatrixXd total = runThreeCentreGradient(program, numPairs, numGroups, (int) D.rows(), pairFirst, pairSecond, basis,
                                                         groupShellStart, groupAtomArray, true, numAtoms, charges, boysTable,
                                                         BoysParameters::of(task), density, coefficients, gradient);
    atomGradient += total.topRows(numAtoms);
    chargeGradient += total.bottomRows(numCharges);
    return true;
}
