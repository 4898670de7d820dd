#pragma once
// Minimal parallel-for on the engine's thread pool (no OpenMP, so that the library does not impose a runtime on the
// plugin).
// Work items are handed out one at a time (parallelFor) or round robin (parallelForRoundRobin).
#include <algorithm>
#include <atomic>
#include <exception>
#include <functional>
#include "ThreadPool.h"
#include <thread>
#include <vector>

namespace OpenMMDFT {
namespace QM {

/// threads <= 0: hardware concurrency.
inline int resolveThreads(int threads) {
    if (threads > 0)
        return threads;
    const unsigned n = std::thread::hardware_concurrency();
    return n > 0 ? (int) n : 1;
}

namespace detail {
/// Runs loop(thread, failed) on threads 0 .. threads-1 (0 on the caller) and waits for all; the first exception a loop
/// throws sets failed (so the others stop early) and is rethrown after all have finished.
inline void runOnThreads(int threads, const std::function<void(int, const std::atomic<bool>&)>& loop) {
    std::exception_ptr error;
    std::atomic<bool> failed(false);
    std::function<void(int)> worker = [&](int t) {
        try {
            loop(t, failed);
        }
        catch (...) {
            if (!failed.exchange(true))
                error = std::current_exception();
        }
    };
    // The engine's pool if it is free; else (another caller's work, a loop inside a pool task) threads of our own.
    if (!ThreadPool::shared().run(threads, worker)) {
        std::vector<std::thread> pool;
        for (int t = 1; t < threads; t++)
            pool.emplace_back(worker, t);
        worker(0);
        for (auto& th : pool)
            th.join();
    }
    if (error)
        std::rethrow_exception(error);
}
} // namespace detail

/// Calls body(item, thread) for item in [0, n) on up to `threads` threads (thread in [0, threads)).
/// The first exception thrown by a body is rethrown after all threads finish.
inline void parallelFor(int n, int threads, const std::function<void(int, int)>& body) {
    threads = std::max(1, std::min(resolveThreads(threads), n));
    if (threads == 1) {
        for (int i = 0; i < n; i++)
            body(i, 0);
        return;
    }
    std::atomic<int> next(0);
    detail::runOnThreads(threads, [&](int t, const std::atomic<bool>& failed) {
        for (int i; !failed && (i = next++) < n;)
            body(i, t);
    });
}

/// Calls body(item, thread) for item in [0, n) with a fixed assignment: thread t takes items t, t + threads, ...
/// Loops that keep one partial sum per thread and add the partials in thread order then give the same bits on every
/// run with the same thread count (parallelFor's dynamic hand-out does not). Exceptions as parallelFor.
inline void parallelForRoundRobin(int n, int threads, const std::function<void(int, int)>& body) {
    threads = std::max(1, std::min(resolveThreads(threads), n));
    detail::runOnThreads(threads, [&](int t, const std::atomic<bool>& failed) {
        for (int i = t; !failed && i < n; i += threads)
            body(i, t);
    });
}

/// Sums contributions of work items: body(item, sum, thread) adds item's contribution to `sum`. The items are split into
/// up to SUM_CHUNKS fixed ranges of consecutive items, which the threads take as they come free (the load stays
/// balanced); each range sums into its own partial (a copy of zero), and the partials are added in range order, so
/// that the result has the same bits for any thread count and any scheduling (MD runs are reproducible).
constexpr int SUM_CHUNKS = 256;
template <class T>
T parallelChunkedSum(int n, int threads, const T& zero, const std::function<void(int, T&, int)>& body) {
    const int chunks = std::max(1, std::min(SUM_CHUNKS, n));
    std::vector<T> partial(chunks, zero);
    parallelFor(chunks, threads, [&](int c, int t) {
        const int begin = (int) ((long long) n * c / chunks), end = (int) ((long long) n * (c + 1) / chunks);
        for (int i = begin; i < end; i++)
            body(i, partial[c], t);
    });
    T sum = zero;
    for (const T& part : partial)
        sum += part;
    return sum;
}

} // namespace QM
} // namespace OpenMMDFT
