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
/// Charges per work item of the gradient: the pair's derivative Hermite densities are formed once for them.
const int CHARGES_PER_ITEM = 16;
/// Charges per group of the matrix: each group's blocks take one slot of the partial sums (groups x matrix blocks).
const int MATRIX_CHARGES_PER_GROUP = 128;

} // namespace

CommonPointCharges::CommonPointCharges(ComputeContext& cc, ThreeCentreProgramSource integralProgram)
    : cc(cc), integralProgram(integralProgram) {
}

bool CommonPointCharges::matrix(const QM::ThreeCentreTask& task, const vector<double>& weights, Eigen::MatrixXd& cartesianMatrix) const {
    const int numCharges = (int) task.aux.l.size(), numPairs = (int) task.pairFirst.size();
    if (task.basis.maxL > MAX_BASIS_L || numCharges == 0 || numPairs == 0)
        return false;
    auto cartesianCount = [](int l) { return (l + 1) * (l + 2) / 2; };
    int size = 0;
    for (size_t s = 0; s < task.basis.l.size(); s++)
        size = max(size, task.basis.cartesianOffset[s] + cartesianCount(task.basis.l[s]));
    vector<int> blockStart(numPairs);
    int elements = 0;
    for (int k = 0; k < numPairs; k++) {
        blockStart[k] = elements;
        elements += cartesianCount(task.basis.l[task.pairFirst[k]]) * cartesianCount(task.basis.l[task.pairSecond[k]]);
    }
    vector<int> groupStart;
    for (int c = 0; c < numCharges; c += MATRIX_CHARGES_PER_GROUP)
        groupStart.push_back(c);
    const int numGroups = (int) groupStart.size();
    groupStart.push_back(numCharges);
    ContextSelector selector(cc);
    ComputeProgram program = integralProgram(task.basis.maxL, 0, true);
    DeviceShells basis;
    basis.upload(cc, task.basis, 0);
    ComputeArray pairFirst, pairSecond, blockStartArray, groupStartArray, centers, weightArray, boysTable, partial, total;
    uploadVector(cc, pairFirst, task.pairFirst, "qmChargeMatrixPairFirst");
    uploadVector(cc, pairSecond, task.pairSecond, "qmChargeMatrixPairSecond");
    uploadVector(cc, blockStartArray, blockStart, "qmChargeMatrixBlockStart");
    uploadVector(cc, groupStartArray, groupStart, "qmChargeMatrixGroupStart");
    uploadVector(cc, centers, task.aux.center, "qmChargeMatrixCenters");
    uploadVector(cc, weightArray, weights, "qmChargeMatrixWeights");
    uploadVector(cc, boysTable, task.boysTable, "qmChargeMatrixBoysTable");
    partial.initialize<double>(cc, (size_t) numGroups * elements, "qmChargeMatrixPartial");  // every element is written
    total.initialize<double>(cc, elements, "qmChargeMatrixTotal");
    const BoysParameters boys = BoysParameters::of(task);
    ComputeKernel groups = program->createKernel("pointChargeMatrix");
    groups->addArg(numPairs);
    groups->addArg(numGroups);
    groups->addArg(elements);
    for (ComputeArray* a : {&pairFirst, &pairSecond, &blockStartArray, &basis.l, &basis.primStart, &basis.numPrim, &basis.center,
                            &basis.exponent, &basis.coefficient, &groupStartArray, &centers, &weightArray, &boysTable})
        groups->addArg(*a);
    groups->addArg(boys.step);
    groups->addArg(boys.end);
    groups->addArg(boys.orders);
    groups->addArg(boys.taylorTerms);
    groups->addArg(partial);
    groups->execute(numPairs * numGroups, THREE_CENTRE_GROUP_SIZE);
    ComputeKernel sum = program->createKernel("sumChargeGroups");
    sum->addArg(elements);
    sum->addArg(numGroups);
    sum->addArg(partial);
    sum->addArg(total);
    sum->execute(elements, 64);
    vector<double> blocks;
    total.download(blocks);
    // The pairs' blocks (i, j) i-major into the symmetric matrix.
    cartesianMatrix = Eigen::MatrixXd::Zero(size, size);
    for (int k = 0; k < numPairs; k++) {
        const int s1 = task.pairFirst[k], s2 = task.pairSecond[k];
        const int o1 = task.basis.cartesianOffset[s1], o2 = task.basis.cartesianOffset[s2];
        const int na = cartesianCount(task.basis.l[s1]), nb = cartesianCount(task.basis.l[s2]);
        for (int i = 0; i < na; i++)
            for (int j = 0; j < nb; j++) {
                const double value = blocks[blockStart[k] + i * nb + j];
                cartesianMatrix(o1 + i, o2 + j) = value;
                cartesianMatrix(o2 + j, o1 + i) = value;
            }
    }
    return true;
}

bool CommonPointCharges::addGradient(const QM::ThreeCentreTask& task, const vector<double>& weights, const Eigen::MatrixXd& D,
                                             Eigen::MatrixXd& atomGradient, Eigen::MatrixXd& chargeGradient) const {
    const int numCharges = (int) task.aux.l.size(), numPairs = (int) task.pairFirst.size(), numAtoms = (int) atomGradient.rows();
    if (task.basis.maxL > MAX_BASIS_L || numCharges == 0 || numPairs == 0)
        return false;
    ContextSelector selector(cc);
    ComputeProgram program = integralProgram(task.basis.maxL, 0, true);
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
                                                         groupShellStart, groupAtomArray, numAtoms, charges, boysTable,
                                                         BoysParameters::of(task), density, coefficients, gradient);
    atomGradient += total.topRows(numAtoms);
    chargeGradient += total.bottomRows(numCharges);
    return true;
}
