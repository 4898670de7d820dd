#ifndef OPENMMDFT_BENCHMARKS_MEDIANTIME_H_
#define OPENMMDFT_BENCHMARKS_MEDIANTIME_H_
/* Wall-clock timing of the micro-benchmarks: the median of repeated runs (after one untimed run, for medianSeconds). */
#include <algorithm>
#include <chrono>
#include <functional>
#include <utility>
#include <vector>

namespace BenchTime {

inline double seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

/** The median of times (seconds; at least one). */
inline double median(std::vector<double> times) {
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

/** The median seconds of repeat runs of work, after one untimed run (which warms caches, BLAS threads, a device's
 * compiled kernels and arrays). */
inline double medianSeconds(const std::function<void()>& work, int repeat) {
    work();
    std::vector<double> times;
    for (int r = 0; r < repeat; r++) {
        const double t = seconds();
        work();
        times.push_back(seconds() - t);
    }
    return median(std::move(times));
}

} // namespace BenchTime

#endif
