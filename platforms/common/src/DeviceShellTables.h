#ifndef OPENMMDFT_DEVICESHELLTABLES_H_
#define OPENMMDFT_DEVICESHELLTABLES_H_
// A basis's flat shell tables (QM::FlatShells) in device memory, for the integral kernels of kernels/qmThreeCentre.cc,
// and the launch of their gradient kernel, which the density fitting and the point charges share.
#include "DeviceArrayPool.h"
#include "ThreeCentreProgram.h"
#include "openmmdft/qm/ThreeCentreTask.h"
#include "openmm/OpenMMException.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeKernel.h"
#include "openmm/common/ComputeProgram.h"
#include <Eigen/Dense>
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

namespace OpenMMDFT {

/** One basis's flat shell tables in device memory, in arrays from the factory's pool (DeviceArrayPool: kept from one
 * geometry to the next, at least as long as the tables; the kernels read them by shell and primitive). */
struct DeviceShells {
    PooledArray l, atom, primStart, numPrim, offset, cartesianOffset, size, center, exponent, coefficient;
    /** Without blocking, from copies that kept holds until the queue has read them. */
    void upload(const std::shared_ptr<DeviceArrayPool>& pool, OpenMM::ComputeContext& cc, const QM::FlatShells& shells,
                int totalFunctions, KeptUploads& kept) {
        std::vector<int> sizes(shells.offset.size());
        for (size_t s = 0; s < sizes.size(); s++)
            sizes[s] = (s + 1 < sizes.size() ? shells.offset[s + 1] : totalFunctions) - shells.offset[s];
        l.upload(pool, cc, shells.l, "qmDFShellL", kept);
        atom.upload(pool, cc, shells.atom, "qmDFShellAtom", kept);
        primStart.upload(pool, cc, shells.primStart, "qmDFShellPrimStart", kept);
        numPrim.upload(pool, cc, shells.numPrim, "qmDFShellNumPrim", kept);
        offset.upload(pool, cc, shells.offset, "qmDFShellOffset", kept);
        cartesianOffset.upload(pool, cc, shells.cartesianOffset, "qmDFShellCartesianOffset", kept);
        size.upload(pool, cc, sizes, "qmDFShellSize", kept);
        center.upload(pool, cc, shells.center, "qmDFShellCenter", kept);
        exponent.upload(pool, cc, shells.exponent, "qmDFPrimExponent", kept);
        coefficient.upload(pool, cc, shells.coefficient, "qmDFPrimCoefficient", kept);
    }
};

/**
 * Launches one of kernels/qmThreeCentre.cc's integral kernels over items work items, which its work groups take from
 * counter (the kernel's last argument, from initializeWorkCounter: zero at the start of every launch on its queue,
 * kernels/qmWorkCounter.cc). OpenMM caps the number of work groups; the kernels loop until every item is taken.
 */
void launchIntegralKernel(OpenMM::ComputeContext& cc, OpenMM::ComputeKernel& kernel, long long items, OpenMM::ComputeArray& counter);

/**
 * Launches the class compilations of one of kernels/qmThreeCentreClass.cc's kernels (named kernel_la_lb), one per class
 * of pairs, each over its pairs x itemsPerPair work items: its arguments are pairBegin and numPairs (the class's
 * range), then those addArgs adds, then counter (as launchIntegralKernel, taken from pool if counter holds none;
 * the launches run in order on one queue).
 */
void launchClassKernels(OpenMM::ComputeProgram program, const std::string& kernel, const std::vector<PairClassRange>& classes,
                        long long itemsPerPair, const std::function<void(OpenMM::ComputeKernel&)>& addArgs,
                        OpenMM::ComputeContext& cc, const std::shared_ptr<DeviceArrayPool>& pool, PooledArray& counter);

/** The long longs of a work counter (kernels/qmWorkCounter.cc: the work handed out, the work groups finished). */
constexpr int WORK_COUNTER_SIZE = 2;

/**
 * A work counter for launchIntegralKernel (or another kernel that calls finishWork) from pool under name, zeroed on the
 * current queue, if counter holds none yet; the kernels leave it at zero for the next launch, so that it must serve
 * the launches of one queue only.
 */
void initializeWorkCounter(const std::shared_ptr<DeviceArrayPool>& pool, OpenMM::ComputeContext& cc, PooledArray& counter,
                           const char* name = "qmIntegralWorkCounter");

/** The engine's Boys table as the kernels take it: step, end, values per point, Taylor terms (the values go up apart). */
struct BoysParameters {
    double step = 0, end = 0;
    int orders = 0, taylorTerms = 0;
    static BoysParameters of(const QM::ThreeCentreTask& task) {
        BoysParameters boys;
        boys.step = task.boysStep;
        boys.end = task.boysEnd;
        boys.orders = task.boysOrders;
        boys.taylorTerms = task.boysTaylorTerms;
        return boys;
    }
};

/** One launch of a gradient kernel for a class of pairs: its compilation's name, the fitting shells it takes (in
 * order; a run holds consecutive places of this list) and its runs' first places, then the list's size. */
struct GradientLaunch {
    std::string kernel;
    int numGroups = 0;
    PooledArray shells, starts;
};

/**
 * The three-centre gradient's work per class of pairs (PairClasses): class c's launches, each over its pairs x
 * numGroups runs of fitting shells. Each class has its own runs so that a class of few pairs (p-p, d-p: a few hundred)
 * still has items for every multiprocessor: with one set of runs for all classes an H200 ran those classes' kernels at
 * 6% occupancy on under 100 work groups. A class has one launch over all its fitting shells, or, where the kernel has
 * compilations for one fitting l (gradientUnrolled), one launch per such l over its shells and one over the others.
 * pairTable: the primitive pairs' derivative Hermite densities of one class (or part of one) at a time, grown as
 * needed up to GRADIENT_PAIR_TABLE_DOUBLES. Every array comes from pool (the kernels take the counts, not the sizes).
 */
struct GradientWork {
    std::shared_ptr<DeviceArrayPool> pool;
    std::vector<std::vector<GradientLaunch>> launches;
    PooledArray pairTable;
    /** listsOf(c) gives class c's launches (compilation name, fitting shells in order), runsOf(c, shells) the run
     * starts of a launch over those shells (places in the list, then its size); uploaded without blocking, from copies
     * that kept holds until the queue has read them. */
    void upload(std::shared_ptr<DeviceArrayPool> from, OpenMM::ComputeContext& cc, size_t numClasses,
                const std::function<std::vector<std::pair<std::string, std::vector<int>>>(size_t)>& listsOf,
                const std::function<std::vector<int>(size_t, const std::vector<int>&)>& runsOf, const char* name,
                KeptUploads& kept) {
        pool = std::move(from);
        launches.resize(numClasses);
        for (size_t c = 0; c < numClasses; c++) {
            const auto lists = listsOf(c);
            launches[c].resize(lists.size());
            for (size_t i = 0; i < lists.size(); i++) {
                GradientLaunch& launch = launches[c][i];
                const std::vector<int> runs = runsOf(c, lists[i].second);
                launch.kernel = lists[i].first;
                launch.numGroups = (int) runs.size() - 1;
                launch.shells.upload(pool, cc, lists[i].second, name, kept);
                launch.starts.upload(pool, cc, runs, name, kept);
            }
        }
    }
};

/**
 * The launches of the three-centre gradient over fitting functions for the class (la, lb) (GradientWork::upload's
 * listsOf): one per fitting l that has its own compilation (gradientKernelName), over that l's shells, and one over
 * the shells of the other l's, each list in shell order; shellL holds every fitting shell's l.
 */
std::vector<std::pair<std::string, std::vector<int>>> gradientShellLists(int la, int lb, const std::vector<int>& shellL);

/**
 * Launches the gradient kernels of program for each class of pairs (pairFirst and pairSecond sorted by class,
 * PairClasses), work.launches[c], each over the class's pairs x its numGroups work items (the kernel's comment gives
 * the meaning of every input; for the classes without written kernels, writtenClass(), after
 * pairDerivativeDensities_la_lb into work.pairTable)
 * into gradient, which must hold zeros (fitted: the fitted density's Hermite coefficients per fitting primitive,
 * fittedDensityHermite; the point-charge program does not read it), taking the items from counter (initializeWorkCounter); every
 * array must outlive the launch. readThreeCentreGradient() waits for it.
 */
void launchThreeCentreGradient(OpenMM::ComputeContext& cc, OpenMM::ComputeProgram program, const std::vector<PairClassRange>& classes,
                               GradientWork& work, int nbf,
                               OpenMM::ComputeArray& pairFirst, OpenMM::ComputeArray& pairSecond, DeviceShells& basis,
                               int centreOffset,
                               DeviceShells& fitting, OpenMM::ComputeArray& boysTable, const BoysParameters& boys,
                               OpenMM::ComputeArray& density, OpenMM::ComputeArray& coefficients, OpenMM::ComputeArray& fitted,
                               OpenMM::ComputeArray& gradient, PooledArray& counter);

/**
 * The first rows of the fixed-point sums of a launched three-centre gradient as gradients: row r of the result is
 * gradient row r (atoms first, then, in a program compiled for point charges, the charges from centreOffset).
 */
Eigen::MatrixXd readThreeCentreGradient(const PooledArray& gradient, int rows);

} // namespace OpenMMDFT

#endif
