/* The device XC back end on OpenMM's OpenCL platform (PoCL in CI) against the host back end: the cases of
 * platforms/common/tests/GpuXCBackendTestCases.h, with the factory of this program's OpenCL Context. */
#include "PluginLoading.h"
#include "CentreGroups.h"
#include "ThreeCentreProgram.h"
#include "CommonXCBackend.h"
#include "DeviceArrayPool.h"
#include "openmm/common/ContextSelector.h"
#include "OpenCLQMMMKernelFactory.h"
#include "openmmdft/internal/ContextImplAccess.h"
#include "openmm/Context.h"
#include "openmm/System.h"
#include "openmm/VerletIntegrator.h"
#include "openmm/opencl/OpenCLContext.h"
#include "openmm/opencl/OpenCLPlatform.h"
#include "../platforms/common/tests/GpuXCBackendTestList.h"
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace GpuXCTest;

/** An OpenCL Context in double precision and its XC back end factory; reason says why there is none (the test skips). */
struct OpenCLFactory {
    std::unique_ptr<Context> context;
    System system;
    VerletIntegrator integrator{0.001};
    std::shared_ptr<CommonXCBackendFactory> factory;
    ComputeContext* cc = nullptr;
    std::string reason;
    OpenCLFactory() {
        QMMMTest::loadPlatformOnce("libOpenMMOpenCL.so", registerQMMMOpenCLKernelFactories);
        system.addParticle(1.0);
        try {
            context.reset(new Context(system, integrator, Platform::getPlatformByName("OpenCL"), {{"Precision", "double"}}));
        }
        catch (const std::exception& e) {
            reason = std::string("no OpenCL device with double precision: ") + e.what();
            return;
        }
        OpenCLPlatform::PlatformData* data = static_cast<OpenCLPlatform::PlatformData*>(ContextImplAccess().of(*context).getPlatformData());
        cc = data->contexts[0];
        if (!CommonXCBackendFactory::supported(*cc))
            reason = "the OpenCL device has no double precision";
        else
            factory = std::make_shared<CommonXCBackendFactory>(*cc);
    }
};

/** The three-centre gradient's runs of fitting shells (host code of the common platform library). */
TEST(CentreGroups, RunsAreAsLongAsTheItemTargetAllows) {
    auto centresPerRun = [](const std::vector<int>& centre, const std::vector<int>& start, int run) {
        int count = 0;
        for (int s = start[run]; s < start[run + 1]; s++)
            count += (s == start[run] || centre[s] != centre[s - 1]);
        return count;
    };
    auto checkPartition = [&](const std::vector<int>& centre, const std::vector<int>& start, int maxCentres) {
        ASSERT_GE(start.size(), 2u);
        EXPECT_EQ(0, start.front());
        EXPECT_EQ((int) centre.size(), start.back());
        for (size_t r = 0; r + 1 < start.size(); r++) {
            EXPECT_LT(start[r], start[r + 1]);
            EXPECT_LE(centresPerRun(centre, start, (int) r), maxCentres);
        }
    };
    // 24 waters in DZVP's fitting basis: 15 shells on O, 5 on each H; 20000 shell pairs want 14 runs for 262144 items,
    // which runs of at most 46 shells give (47 would give 13).
    std::vector<int> waters;
    for (int atom = 0; atom < 72; atom++)
        for (int s = 0; s < (atom % 3 == 0 ? 15 : 5); s++)
            waters.push_back(atom);
    const std::vector<int> runs = centreGroups(waters, 20000, 262144, 16);
    checkPartition(waters, runs, 16);
    EXPECT_EQ(15u, runs.size());
    int longest = 0;
    for (size_t r = 0; r + 1 < runs.size(); r++)
        longest = std::max(longest, runs[r + 1] - runs[r]);
    EXPECT_EQ(46, longest);
    // Many shell pairs: one run of at most maxCentres centres after another.
    const std::vector<int> fewCentres = centreGroups(waters, 1 << 30, 1, 4);
    checkPartition(waters, fewCentres, 4);
    EXPECT_EQ(19u, fewCentres.size());  // 72 atoms, 4 per run
    // Point charges, each its own centre: runs of at most 16 of them.
    std::vector<int> charges(100);
    for (int c = 0; c < 100; c++)
        charges[c] = c;
    EXPECT_EQ(std::vector<int>({0, 16, 32, 48, 64, 80, 96, 100}), centreGroups(charges, 1, 1, 16));
    // Few shell pairs: one shell per run even where that falls short of the target.
    const std::vector<int> single = centreGroups(waters, 300, 262144, 16);
    EXPECT_EQ(waters.size() + 1, single.size());
    EXPECT_EQ(std::vector<int>({0}), centreGroups({}, 10, 100, 16));
    EXPECT_THROW(centreGroups(waters, 10, 100, 0), OpenMM::OpenMMException);
}

/** The integral kernels' pair classes (host code of the common platform library): a pair belongs to the class of its
 * larger and smaller l whichever shell comes first, the classes are contiguous and ordered, and within a class the
 * pairs go by primitive count, each pair once. */
TEST(PairClasses, PairsSortedIntoContiguousClasses) {
    // Shells: l and primitive counts.
    const std::vector<int> l = {0, 1, 0, 2, 1, 0}, numPrim = {6, 4, 1, 1, 1, 3};
    const std::vector<int> first = {1, 2, 3, 3, 4, 5, 5, 0, 4}, second = {0, 1, 0, 1, 2, 3, 0, 0, 3};
    const PairClasses classes = PairClasses::of(first, second, l, numPrim);
    std::vector<int> seen = classes.order;
    std::sort(seen.begin(), seen.end());
    for (int k = 0; k < (int) first.size(); k++)
        EXPECT_EQ(k, seen[k]);
    const std::vector<std::vector<int>> expected = {{0, 0}, {1, 0}, {2, 0}, {2, 1}};
    ASSERT_EQ(expected.size(), classes.ranges.size());
    for (size_t c = 0; c < expected.size(); c++) {
        const PairClassRange& r = classes.ranges[c];
        EXPECT_EQ(expected[c][0], r.la);
        EXPECT_EQ(expected[c][1], r.lb);
        EXPECT_EQ(c == 0 ? 0 : classes.ranges[c - 1].end, r.begin);
        for (int k = r.begin; k < r.end; k++) {
            const int a = first[classes.order[k]], b = second[classes.order[k]];
            EXPECT_EQ(r.la, std::max(l[a], l[b]));
            EXPECT_EQ(r.lb, std::min(l[a], l[b]));
        }
    }
    EXPECT_EQ((int) first.size(), classes.ranges.back().end);
    // By class, then primitive pairs: (0,0) 18 < 36; (1,0) 1 < 4 < 24 (pair 1 has its p shell second); (2,0) 3 < 6
    // (pair 5 has its d shell second); (2,1) 1 < 4.
    EXPECT_EQ(std::vector<int>({6, 7, 4, 1, 0, 5, 2, 8, 3}), classes.order);
    EXPECT_EQ(std::vector<int>({60, 70, 40, 10, 0, 50, 20, 80, 30}),
              classes.sorted(std::vector<int>({0, 10, 20, 30, 40, 50, 60, 70, 80})));
    EXPECT_TRUE(PairClasses::of({}, {}, l, numPrim).ranges.empty());
}

/** The pool of device arrays: an array given back is taken again (grown where asked for more), and two holders never
 * share one. */
TEST(OpenCLDeviceArrayPool, ArraysComeBackAndAreNotShared) {
    OpenCLFactory openCL;
    if (!openCL.reason.empty())
        GTEST_SKIP() << openCL.reason;
    ContextSelector selector(*openCL.cc);
    auto pool = std::make_shared<DeviceArrayPool>();
    ComputeArray* first;
    {
        PooledArray a, b;
        a.take(pool, *openCL.cc, "values", 1000);
        b.take(pool, *openCL.cc, "values", 1000);
        EXPECT_NE(a.get(), b.get());
        EXPECT_GE((*a).getSize(), 1000u);
        first = a.get();
        std::vector<double> data((*a).getSize(), 2.5), back;
        (*a).upload(data);
        (*a).download(back);
        EXPECT_EQ(back, data);
    }
    EXPECT_GE(pool->bytesKept(), 2 * 1000 * sizeof(double));
    PooledArray c, d, e;
    c.take(pool, *openCL.cc, "values", 500);
    d.take(pool, *openCL.cc, "values", 500);
    EXPECT_TRUE(c.get() == first || d.get() == first);  // the arrays given back, not new ones
    EXPECT_EQ(0u, pool->bytesKept());
    e.take(pool, *openCL.cc, "other", 10);
    EXPECT_NE(e.get(), first);
    c.take(pool, *openCL.cc, "values", 5000);  // the one held goes back and comes out grown
    EXPECT_GE((*c).getSize(), 5000u);
}

/** Uploads that return before the queue has read them: the device gets the data as it was at the upload, from the
 * host copy kept until release(), whatever the caller does with its own table meanwhile. */
TEST(OpenCLDeviceArrayPool, NonBlockingUploadsFromKeptCopies) {
    OpenCLFactory openCL;
    if (!openCL.reason.empty())
        GTEST_SKIP() << openCL.reason;
    ContextSelector selector(*openCL.cc);
    auto pool = std::make_shared<DeviceArrayPool>();
    PooledArray a, b, empty;
    {
        KeptUploads kept(*openCL.cc);
        std::vector<int> table(100000);
        for (size_t i = 0; i < table.size(); i++)
            table[i] = (int) (7 * i + 3);
        const std::vector<int> expected = table;
        a.upload(pool, *openCL.cc, table, "keptTable", kept);
        std::fill(table.begin(), table.end(), -1);  // the caller's table changes; the upload's copy does not
        b.upload(pool, *openCL.cc, table, "keptTable", kept);
        empty.upload(pool, *openCL.cc, std::vector<double>(), "keptEmpty", kept);  // nothing to copy or keep
        EXPECT_EQ(2u, kept.size());
        kept.mark();
        kept.release();
        EXPECT_EQ(0u, kept.size());
        EXPECT_EQ(expected, a.downloadFirst<int>(expected.size()));
        EXPECT_EQ(std::vector<int>(table.size(), -1), b.downloadFirst<int>(table.size()));
        kept.release();  // nothing left: returns at once
        std::vector<double> more(10, 1.5);
        empty.upload(pool, *openCL.cc, more, "keptMore", kept);  // unmarked when this goes: the destructor waits
    }
    EXPECT_EQ(std::vector<double>(10, 1.5), empty.downloadFirst<double>(10));
}

TEST(OpenCLDeviceArrays, KeptAcrossGeometries) {
    OpenCLFactory openCL;
    if (!openCL.reason.empty())
        GTEST_SKIP() << openCL.reason;
    const auto factory = openCL.factory;
    testDeviceArraysKeptAcrossGeometries(factory, [factory] { return factory->devicePool().allocationsMade(); });
}

/** The kernels that take their work from a counter (the density fitting's tensor and gradient, the point charges' matrix
 * and gradient, the partition-weight derivatives) leave it at zero for the next launch (kernels/qmWorkCounter.cc), so
 * that the host does not zero it before each: after an energy and gradient, the counters given back to the pool hold
 * zeros (with the host zeroing before each launch they held the work last handed out). Every device test's results
 * check that the launches after the first on one counter do their work. */
TEST(OpenCLDeviceArrays, WorkCountersLeftAtZero) {
    OpenCLFactory openCL;
    if (!openCL.reason.empty())
        GTEST_SKIP() << openCL.reason;
    {
        KohnShamLDA engine(smallDimerSettings(), openCL.factory);
        const QMResult r = engine.compute(waterDimer(), 0, twoCharges());
        ASSERT_EQ(r.xcBackend, "device");
        engine.gradient(r);
    }  // the engine's per-geometry objects give their arrays back
    ContextSelector selector(*openCL.cc);
    for (const char* name : {"qmIntegralWorkCounter", "qmXCPartitionColumnCounter"}) {
        const size_t counters = openCL.factory->devicePool().visitKept(name, [&](ComputeArray& counter) {
            std::vector<long long> values(counter.getSize());
            counter.download(values.data());
            for (size_t k = 0; k < values.size(); k++)
                EXPECT_EQ(0, values[k]) << name << " entry " << k;
        });
        EXPECT_GT(counters, 0u) << "no " << name << " was given back to the pool";
    }
}

/** The partition-weight derivatives' kernel compiled with small cell sizes, every path on a small molecule (the CUDA
 * platform runs the same common kernel; its factory comes through the plugin's hook with the default sizes). */
TEST(OpenCLPartitionDerivatives, SmallCellBlocksMatchTheHost) {
    OpenCLFactory openCL;
    if (!openCL.reason.empty())
        GTEST_SKIP() << openCL.reason;
    XCPartitionSizes small;
    small.keptProducts = 2;
    small.cellBlock = 2;
    testPartitionDerivativesInSmallCellBlocks(std::make_shared<CommonXCBackendFactory>(*openCL.cc, nullptr, small));
}

GPU_XC_BACKEND_TESTS(OpenCL, OpenCLFactory, false);
