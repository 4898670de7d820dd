// The engine's parallel loops on its pool of workers (ThreadPool.h): every item once, loops inside loops, two callers
// at once, exceptions, and the workers kept from one loop to the next.
#include "../src/Parallel.h"
#include <gtest/gtest.h>
#include <atomic>
#include <stdexcept>
#include <thread>
#include <vector>

using namespace OpenMMDFT::QM;

namespace {
/// parallelFor over n items on `threads`, each item counted: all counts must be 1.
bool eachItemOnce(int n, int threads) {
    std::vector<std::atomic<int>> count(n);
    for (auto& c : count)
        c = 0;
    parallelFor(n, threads, [&](int i, int) { count[i]++; });
    for (auto& c : count)
        if (c != 1)
            return false;
    return true;
}
} // namespace

TEST(Parallel, EveryItemOnceOnThePool) {
    for (int threads : {1, 2, 4, 7})
        for (int n : {0, 1, 3, 100, 1000})
            EXPECT_TRUE(eachItemOnce(n, threads)) << n << " items on " << threads << " threads";
}

TEST(Parallel, ThreadIndicesStayBelowTheThreadCount) {
    std::atomic<int> largest(-1);
    parallelFor(1000, 3, [&](int, int t) {
        int seen = largest;
        while (t > seen && !largest.compare_exchange_weak(seen, t)) {
        }
    });
    EXPECT_GE(largest, 0);
    EXPECT_LT(largest, 3);
}

TEST(Parallel, WorkersAreKeptBetweenLoops) {
    parallelFor(64, 4, [](int, int) {});
    const int workers = ThreadPool::shared().workers();
    EXPECT_GE(workers, 3);
    for (int k = 0; k < 20; k++)
        parallelFor(64, 4, [](int, int) {});
    EXPECT_EQ(ThreadPool::shared().workers(), workers);  // no new workers for the same thread count
}

TEST(Parallel, LoopsInsideLoopsFinish) {
    std::atomic<int> total(0);
    parallelFor(8, 4, [&](int, int) {
        parallelFor(16, 3, [&](int, int) { total++; });  // inside a pool task: threads of its own
    });
    EXPECT_EQ(total, 8 * 16);
}

TEST(Parallel, TwoCallersAtOnceBothFinish) {
    std::atomic<long> sums[2] = {{0}, {0}};
    auto caller = [&](int which) {
        for (int k = 0; k < 50; k++)
            parallelFor(200, 4, [&](int i, int) { sums[which] += i; });
    };
    std::thread a(caller, 0), b(caller, 1);
    a.join();
    b.join();
    EXPECT_EQ(sums[0], 50L * 199 * 200 / 2);
    EXPECT_EQ(sums[1], 50L * 199 * 200 / 2);
}

TEST(Parallel, TheFirstExceptionReachesTheCaller) {
    EXPECT_THROW(parallelFor(100, 4, [](int i, int) {
                     if (i == 37)
                         throw std::runtime_error("item 37");
                 }),
                 std::runtime_error);
    EXPECT_TRUE(eachItemOnce(100, 4));  // the pool works after a failed loop
}

TEST(Parallel, ChunkedSumsHaveTheSameBitsOnAnyThreadCount) {
    auto sum = [](int threads) {
        return parallelChunkedSum<double>(10000, threads, 0.0, [](int i, double& s, int) { s += 1.0 / (1.0 + i); });
    };
    const double one = sum(1);
    for (int threads : {2, 3, 8})
        EXPECT_EQ(sum(threads), one) << threads;
}
