// The point-charge gradient on the GPU platforms (CommonPointCharges.h).
#include "CommonPointCharges.h"
#include "DeviceShellTables.h"
#include "SideQueueWork.h"
#include "ThreeCentreProgram.h"
#include "openmm/common/ContextSelector.h"
#include <algorithm>
#include <cmath>
#include <memory>
#include <vector>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

namespace {

/// The largest orbital l the kernels take.
const int MAX_BASIS_L = 3;
/// Work items (shell pairs x groups of charges) the matrix kernel aims at: several times the threads a GPU of 132
/// multiprocessors holds at once at 128 registers (132 x 512), so that items of unequal cost even out. With a fixed
/// 128 charges per group, 8 QM waters gave a few thousand items, and an H200 ran the kernel at 2.5% occupancy.
const double TARGET_MATRIX_ITEMS = 262144;
/// The same per class of pairs for the gradient kernel (each class its own launch), whose items need their pair's
/// derivative Hermite densities (read from the pair table, pairDerivativeDensities), a cost that more
/// charges per item share: about one full GPU of items.
const double TARGET_GRADIENT_ITEMS = 65536;
/// Charges per work item of the gradient at most (THREE_CENTRE_MAX_CHARGES_PER_ITEM): the pair's derivative Hermite
/// densities are formed once for them.
const int MAX_CHARGES_PER_ITEM = THREE_CENTRE_MAX_CHARGES_PER_ITEM;
/// Charges per group of the matrix at most; each group's blocks take one slot of the partial sums (groups x matrix
/// blocks), which the groups keep within MAX_PARTIAL_ELEMENTS doubles unless that would take more charges per group
/// than the cap (many charges and a large basis: as many slots as the cap gives).
const int MAX_MATRIX_CHARGES_PER_GROUP = 128;
const double MAX_PARTIAL_ELEMENTS = 4194304;

/// Charges per group: enough groups for target work items, no more groups than slots, between 1 and most charges.
int chargesPerGroup(int numCharges, int numPairs, double target, double slots, int most) {
    const double forItems = std::ceil((double) numCharges * numPairs / target);
    const double forSlots = std::ceil(numCharges / std::max(slots, 1.0));
    return (int) std::min<double>(most, std::max({1.0, forItems, forSlots}));
}

/// The first charge of each group of size charges per group, then numCharges.
std::vector<int> groupStarts(int numCharges, int perGroup) {
    std::vector<int> start;
    for (int c = 0; c < numCharges; c += perGroup)
        start.push_back(c);
    start.push_back(numCharges);
    return start;
}

} // namespace

CommonPointCharges::CommonPointCharges(ComputeContext& cc, ThreeCentreProgramSource integralProgram,
                                       shared_ptr<DeviceArrayPool> pool, function<ComputeQueue()> matrixQueue)
    : cc(cc), integralProgram(integralProgram), pool(std::move(pool)), matrixQueue(std::move(matrixQueue)) {
}

namespace {

/**
 * A point-charge matrix in flight: its arrays (from the pool, given back when this goes), what the assembly of the
 * cartesian matrix needs, and the work on the queue it runs on (null queue: the default one, waited for by the
 * download). Its uploads go on the default queue without blocking, before the queue's wait for the default queue,
 * which then covers them.
 */
class DevicePointChargeMatrix : public QM::PointChargeMatrixInFlight {
public:
    DevicePointChargeMatrix(ComputeContext& cc, ComputeQueue queue) : cc(cc), kept(cc), work(cc, std::move(queue)) {
    }
    Eigen::MatrixXd finish() override {
        ContextSelector selector(cc);
        work.wait();  // the download goes through the default queue
        const vector<double> blocks = total.downloadFirst<double>(elements);
        kept.release();  // the tables went up before the kernels that the download waited for ran: no wait
        // The pairs' blocks (i, j) i-major into the symmetric matrix.
        Eigen::MatrixXd cartesianMatrix = Eigen::MatrixXd::Zero(size, size);
        for (size_t k = 0; k < first.size(); k++) {
            const int s1 = first[k], s2 = second[k];
            const int o1 = cartesianOffset[s1], o2 = cartesianOffset[s2];
            const int na = cartesianCount(l[s1]), nb = cartesianCount(l[s2]);
            for (int i = 0; i < na; i++)
                for (int j = 0; j < nb; j++) {
                    const double value = blocks[blockStart[k] + i * nb + j];
                    cartesianMatrix(o1 + i, o2 + j) = value;
                    cartesianMatrix(o2 + j, o1 + i) = value;
                }
        }
        return cartesianMatrix;
    }
    ComputeContext& cc;
    int size = 0, elements = 0;
    vector<int> first, second, blockStart, cartesianOffset, l;
    DeviceShells basis;
    PooledArray pairFirst, pairSecond, blockStartArray, groupStartArray, centers, weightArray, boysTable, partial, total, counter;
    KeptUploads kept;   // the tables' host copies, until the default queue has read them
    SideQueueWork work;  // last: it waits before the arrays go back to the pool
};

} // namespace

bool CommonPointCharges::matrix(const QM::ThreeCentreTask& task, const vector<double>& weights, Eigen::MatrixXd& cartesianMatrix) const {
    unique_ptr<QM::PointChargeMatrixInFlight> started = startMatrix(task, weights);
    if (!started)
        return false;
    cartesianMatrix = started->finish();
    return true;
}

unique_ptr<QM::PointChargeMatrixInFlight> CommonPointCharges::startMatrix(const QM::ThreeCentreTask& task,
                                                                          const vector<double>& weights) const {
    const int numCharges = (int) task.aux.l.size(), numPairs = (int) task.pairFirst.size();
    if (task.basis.maxL > MAX_BASIS_L || numCharges == 0 || numPairs == 0)
        return nullptr;
    ContextSelector selector(cc);
    unique_ptr<DevicePointChargeMatrix> m(new DevicePointChargeMatrix(cc, matrixQueue ? matrixQueue() : ComputeQueue()));
    for (size_t s = 0; s < task.basis.l.size(); s++)
        m->size = max(m->size, task.basis.cartesianOffset[s] + cartesianCount(task.basis.l[s]));
    m->cartesianOffset = task.basis.cartesianOffset;
    m->l = task.basis.l;
    // The pairs sorted by class (the class kernels), each with its block of the partial sums.
    const PairClasses classes = PairClasses::of(task.pairFirst, task.pairSecond, task.basis.l, task.basis.numPrim);
    m->first = classes.sorted(task.pairFirst);
    m->second = classes.sorted(task.pairSecond);
    m->blockStart.resize(numPairs);
    int elements = 0;
    for (int k = 0; k < numPairs; k++) {
        m->blockStart[k] = elements;
        elements += cartesianCount(task.basis.l[m->first[k]]) * cartesianCount(task.basis.l[m->second[k]]);
    }
    m->elements = elements;
    const vector<int> groupStart =
        groupStarts(numCharges, chargesPerGroup(numCharges, numPairs, TARGET_MATRIX_ITEMS, MAX_PARTIAL_ELEMENTS / elements,
                                                    MAX_MATRIX_CHARGES_PER_GROUP));
    const int numGroups = (int) groupStart.size() - 1;
    ComputeProgram program = integralProgram(task.basis.maxL, 0, true);
    // The arrays from the pool (kept from one call to the next, at least as long as asked; the kernels take the counts).
    m->basis.upload(pool, cc, task.basis, 0, m->kept);
    m->pairFirst.upload(pool, cc, m->first, "qmChargeMatrixPairFirst", m->kept);
    m->pairSecond.upload(pool, cc, m->second, "qmChargeMatrixPairSecond", m->kept);
    m->blockStartArray.upload(pool, cc, m->blockStart, "qmChargeMatrixBlockStart", m->kept);
    m->groupStartArray.upload(pool, cc, groupStart, "qmChargeMatrixGroupStart", m->kept);
    m->centers.upload(pool, cc, task.aux.center, "qmChargeMatrixCenters", m->kept);
    m->weightArray.upload(pool, cc, weights, "qmChargeMatrixWeights", m->kept);
    m->boysTable.upload(pool, cc, task.boysTable, "qmChargeMatrixBoysTable", m->kept);
    m->partial.take(pool, cc, "qmChargeMatrixPartial", (size_t) numGroups * elements);  // every element is written
    m->total.take(pool, cc, "qmChargeMatrixTotal", elements);
    const BoysParameters boys = BoysParameters::of(task);
    {
        m->kept.mark();
        SideQueueWork::Scope queue(m->work, true);
        DevicePointChargeMatrix& d = *m;
        launchClassKernels(program, "pointChargeMatrix", classes.ranges, numGroups, [&](ComputeKernel& kernel) {
            kernel->addArg(numGroups);
            kernel->addArg(elements);
            for (ComputeArray* a : {d.pairFirst.get(), d.pairSecond.get(), d.blockStartArray.get(), d.basis.l.get(),
                                    d.basis.primStart.get(), d.basis.numPrim.get(), d.basis.center.get(), d.basis.exponent.get(),
                                    d.basis.coefficient.get(), d.groupStartArray.get(), d.centers.get(), d.weightArray.get(),
                                    d.boysTable.get()})
                kernel->addArg(*a);
            kernel->addArg(boys.step);
            kernel->addArg(boys.end);
            kernel->addArg(boys.orders);
            kernel->addArg(boys.taylorTerms);
            kernel->addArg(*d.partial);
        }, cc, pool, d.counter);
        ComputeKernel sum = program->createKernel("sumChargeGroups");
        sum->addArg(elements);
        sum->addArg(numGroups);
        sum->addArg(*d.partial);
        sum->addArg(*d.total);
        sum->execute(elements, 64);
    }
    return unique_ptr<QM::PointChargeMatrixInFlight>(m.release());
}

namespace {

/** The point-charge gradient kernel's launch and the arrays it reads and writes, kept until it is read. */
class DevicePointChargeGradient : public QM::PointChargeGradientInFlight {
public:
    DevicePointChargeGradient(ComputeContext& cc, int numAtoms, int numCharges)
        : cc(cc), numAtoms(numAtoms), numCharges(numCharges), kept(cc) {
    }
    void addTo(Eigen::MatrixXd& atomGradient, Eigen::MatrixXd& chargeGradient) override {
        if (read)
            throw OpenMMException("QM: a device point-charge gradient read twice (internal error)");
        ContextSelector selector(cc);
        const Eigen::MatrixXd total = readThreeCentreGradient(gradient, numAtoms + numCharges);
        kept.release();  // the read came after the uploads on the same queue: no wait
        read = true;
        atomGradient += total.topRows(numAtoms);
        chargeGradient += total.bottomRows(numCharges);
    }
    ComputeContext& cc;
    const int numAtoms, numCharges;
    bool read = false;
    DeviceShells basis, charges;
    GradientWork groups;
    PooledArray pairFirst, pairSecond, boysTable, density, coefficients;
    PooledArray gradient, counter;  // gradient: the atoms' rows, then the charges' (readThreeCentreGradient)
    KeptUploads kept;  // last: the tables' host copies, until the queue has read them
};

} // namespace

unique_ptr<QM::PointChargeGradientInFlight> CommonPointCharges::startGradient(const QM::ThreeCentreTask& task, const vector<double>& weights,
                                                                              const Eigen::MatrixXd& D, int numAtoms) const {
    const int numCharges = (int) task.aux.l.size(), numPairs = (int) task.pairFirst.size();
    if (task.basis.maxL > MAX_BASIS_L || numCharges == 0 || numPairs == 0)
        return nullptr;
    ContextSelector selector(cc);
    ComputeProgram program = integralProgram(task.basis.maxL, 0, true);
    // The arrays are this call's (from the pool, given back when the returned object goes) and live in the returned
    // object until the host has read the gradient: the launch runs on after this returns.
    unique_ptr<DevicePointChargeGradient> g(new DevicePointChargeGradient(cc, numAtoms, numCharges));
    // The tables go up without blocking (KeptUploads), from copies kept until the queue has read them.
    g->basis.upload(pool, cc, task.basis, 0, g->kept);
    g->charges.upload(pool, cc, task.aux, numCharges, g->kept);
    const PairClasses classes = PairClasses::of(task.pairFirst, task.pairSecond, task.basis.l, task.basis.numPrim);
    // One launch per class over every charge in order.
    vector<int> everyCharge(numCharges);
    for (int i = 0; i < numCharges; i++)
        everyCharge[i] = i;
    g->groups.upload(pool, cc, classes.ranges.size(), [&](size_t c) {
        const string kernel = classKernelName("threeCentreGradient", classes.ranges[c].la, classes.ranges[c].lb);
        return vector<pair<string, vector<int>>>{{kernel, everyCharge}};
    }, [&](size_t c, const vector<int>&) {
        const int classPairs = classes.ranges[c].end - classes.ranges[c].begin;
        return groupStarts(numCharges, chargesPerGroup(numCharges, classPairs, TARGET_GRADIENT_ITEMS, numCharges, MAX_CHARGES_PER_ITEM));
    }, "qmChargeGroupStart", g->kept);
    g->pairFirst.upload(pool, cc, classes.sorted(task.pairFirst), "qmChargePairFirst", g->kept);
    g->pairSecond.upload(pool, cc, classes.sorted(task.pairSecond), "qmChargePairSecond", g->kept);
    g->boysTable.upload(pool, cc, task.boysTable, "qmChargeBoysTable", g->kept);
    g->density.upload(pool, cc, vector<double>(D.data(), D.data() + D.size()), "qmChargeDensity", g->kept);  // symmetric
    g->coefficients.upload(pool, cc, weights, "qmChargeWeights", g->kept);
    g->gradient.zeros<long long>(pool, cc, "qmChargeGradient", 3 * (size_t) (numAtoms + numCharges));
    // Point charges, each its own centre in the rows after the atoms'.
    launchThreeCentreGradient(cc, program, classes.ranges, g->groups, (int) D.rows(), *g->pairFirst, *g->pairSecond, g->basis,
                              numAtoms, g->charges, *g->boysTable, BoysParameters::of(task), *g->density,
                              *g->coefficients, *g->coefficients, *g->gradient, g->counter);  // no fitted density: charges
    g->kept.mark();
    return unique_ptr<QM::PointChargeGradientInFlight>(g.release());
}
