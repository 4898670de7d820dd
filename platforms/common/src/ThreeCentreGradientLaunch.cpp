// The launches of the integral kernels and of the three-centre gradient kernel (DeviceShellTables.h).
#include "DeviceShellTables.h"
#include "ThreeCentreProgram.h"
#include "openmm/OpenMMException.h"
#include "openmm/common/ComputeKernel.h"
#include <algorithm>
#include <functional>
#include <map>
#include <utility>
#include <string>
#include <vector>

using namespace OpenMM;
using namespace std;

void OpenMMDFT::initializeWorkCounter(const shared_ptr<DeviceArrayPool>& pool, ComputeContext& cc, PooledArray& counter,
                                      const char* name) {
    if (counter.held())
        return;
    counter.take(pool, cc, name, WORK_COUNTER_SIZE, sizeof(long long));
    cc.clearBuffer(*counter);  // then zero after every launch (kernels/qmWorkCounter.cc)
}

void OpenMMDFT::launchIntegralKernel(ComputeContext& cc, ComputeKernel& kernel, long long items, ComputeArray& counter) {
    if (items <= 0)
        return;
    // At least one work item per item up to OpenMM's cap on work groups (execute takes an int).
    kernel->execute((int) std::min<long long>(items, 1LL << 30), THREE_CENTRE_GROUP_SIZE);
}

void OpenMMDFT::launchClassKernels(ComputeProgram program, const string& kernel, const vector<PairClassRange>& classes,
                                   long long itemsPerPair, const function<void(ComputeKernel&)>& addArgs, ComputeContext& cc,
                                   const shared_ptr<DeviceArrayPool>& pool, PooledArray& counter) {
    initializeWorkCounter(pool, cc, counter);
    for (const PairClassRange& c : classes) {
        ComputeKernel launch = program->createKernel(classKernelName(kernel, c.la, c.lb));
        launch->addArg(c.begin);
        launch->addArg(c.end - c.begin);
        addArgs(launch);
        launch->addArg(*counter);
        launchIntegralKernel(cc, launch, (long long) (c.end - c.begin) * itemsPerPair, *counter);
    }
}

namespace OpenMMDFT {
namespace {

/**
 * pairDerivativeDensities for the pairs of part (a class's pairs, or some of them) into work's table, grown to hold
 * them (perPair doubles each); returns the table's stride, maxPrimitivePairs x the part's pairs.
 */
int launchPairTable(ComputeContext& cc, ComputeProgram program, const PairClassRange& part, size_t perPair, int nbf,
                    ComputeArray& pairFirst, ComputeArray& pairSecond, DeviceShells& basis, ComputeArray& density,
                    GradientWork& work) {
    const int numPairs = part.end - part.begin;
    work.pairTable.ensure(work.pool, cc, "qmGradientPairTable", (size_t) numPairs * perPair);
    ComputeArray& table = *work.pairTable;
    ComputeKernel kernel = program->createKernel(classKernelName("pairDerivativeDensities", part.la, part.lb));
    kernel->addArg(part.begin);
    kernel->addArg(numPairs);
    kernel->addArg(part.maxPrimitivePairs);
    kernel->addArg(nbf);
    for (ComputeArray* a : {&pairFirst, &pairSecond, basis.l.get(), basis.primStart.get(), basis.numPrim.get(),
                            basis.cartesianOffset.get(), basis.center.get(), basis.exponent.get(), basis.coefficient.get(), &density,
                            &table})
        kernel->addArg(*a);
    const int stride = part.maxPrimitivePairs * numPairs;
    kernel->execute(stride);
    return stride;
}

} // namespace
} // namespace OpenMMDFT

vector<pair<string, vector<int>>> OpenMMDFT::gradientShellLists(int la, int lb, const vector<int>& shellL) {
    // The l's of one compilation (every l without one of its own shares the class's general compilation).
    map<string, vector<int>> shellsOf;
    vector<string> order;
    for (int s = 0; s < (int) shellL.size(); s++) {
        const string name = gradientKernelName(la, lb, shellL[s]);
        if (shellsOf.find(name) == shellsOf.end())
            order.push_back(name);
        shellsOf[name].push_back(s);
    }
    vector<pair<string, vector<int>>> lists;
    for (const string& name : order)
        lists.push_back({name, shellsOf[name]});
    return lists;
}

void OpenMMDFT::launchThreeCentreGradient(ComputeContext& cc, ComputeProgram program, const vector<PairClassRange>& classes,
                                          GradientWork& work, int nbf, ComputeArray& pairFirst, ComputeArray& pairSecond,
                                          DeviceShells& basis, int centreOffset, DeviceShells& fitting, ComputeArray& boysTable,
                                          const BoysParameters& boys, ComputeArray& density, ComputeArray& coefficients,
                                          ComputeArray& fitted, ComputeArray& gradient, PooledArray& counter) {
    if (work.launches.size() != classes.size())
        throw OpenMMException("QM: three-centre gradient work made for another set of pair classes (internal error)");
    initializeWorkCounter(work.pool, cc, counter);
    for (size_t c = 0; c < classes.size(); c++) {
        const PairClassRange& range = classes[c];
        // A class without written kernels (s-s and p-s have them) reads the pair table, made on the same queue first,
        // for as many of its pairs at a time as GRADIENT_PAIR_TABLE_DOUBLES holds (a large basis's f-d class would
        // take gigabytes at once); the others are launched whole.
        const bool table = !writtenClass(range.la, range.lb);
        const size_t perPair = table ? (size_t) range.maxPrimitivePairs * (4 + 6 * hermiteCount(range.la + range.lb + 1)) : 1;
        const int piece = table ? (int) max<size_t>(1, GRADIENT_PAIR_TABLE_DOUBLES / perPair) : max(1, range.end - range.begin);
        for (int begin = range.begin; begin < range.end; begin += piece) {
            PairClassRange part = range;
            part.begin = begin;
            part.end = min(range.end, begin + piece);
            const int tableStride =
                table ? launchPairTable(cc, program, part, perPair, nbf, pairFirst, pairSecond, basis, density, work) : 0;
            for (GradientLaunch& launch : work.launches[c]) {
                ComputeKernel kernel = program->createKernel(launch.kernel);
                kernel->addArg(part.begin);
                kernel->addArg(part.end - part.begin);
                kernel->addArg(launch.numGroups);
                kernel->addArg(nbf);
                for (ComputeArray* a : {&pairFirst, &pairSecond, basis.l.get(), basis.atom.get(), basis.primStart.get(),
                                        basis.numPrim.get(), basis.cartesianOffset.get(), basis.center.get(), basis.exponent.get(),
                                        basis.coefficient.get(), launch.shells.get(), launch.starts.get()})
                    kernel->addArg(*a);
                kernel->addArg(centreOffset);
                for (ComputeArray* a : {fitting.atom.get(), fitting.l.get(), fitting.primStart.get(), fitting.numPrim.get(),
                                        fitting.cartesianOffset.get(), fitting.center.get(), fitting.exponent.get(),
                                        fitting.coefficient.get(), &boysTable})
                    kernel->addArg(*a);
                kernel->addArg(boys.step);
                kernel->addArg(boys.end);
                kernel->addArg(boys.orders);
                kernel->addArg(boys.taylorTerms);
                kernel->addArg(density);
                kernel->addArg(coefficients);
                kernel->addArg(fitted);
                kernel->addArg(gradient);
                kernel->addArg(table ? *work.pairTable : density);  // any array where the kernel reads no table
                kernel->addArg(tableStride);
                kernel->addArg(*counter);
                launchIntegralKernel(cc, kernel, (long long) (part.end - part.begin) * launch.numGroups, *counter);
            }
        }
    }
}

Eigen::MatrixXd OpenMMDFT::readThreeCentreGradient(const PooledArray& gradient, int rows) {
    const vector<long long> fixed = gradient.downloadFirst<long long>(3 * (size_t) rows);
    if (fixed.size() != 3 * (size_t) rows)
        throw OpenMMException("QM: three-centre gradient array smaller than its rows (internal error)");
    Eigen::MatrixXd G(rows, 3);
    for (int r = 0; r < rows; r++)
        for (int d = 0; d < 3; d++)
            G(r, d) = fixed[3 * r + d] / THREE_CENTRE_GRADIENT_SCALE;
    return G;
}
