#pragma once
// Work that the engine starts where it may run beside what the engine does next (a GPU platform's device queue of its
// own: the XC matrix beside the Coulomb build, the grid's weights and the point charges' matrices beside the fitting
// tensor), and takes when it needs the result.
#include <functional>
#include <memory>
#include <utility>

namespace OpenMMDFT {
namespace QM {

/** Work started and not yet taken. Given up on (destroyed untaken), it waits for itself where something may still be
 *  using what it works on (a device's arrays). */
template <class Result>
class WorkInFlight {
public:
    virtual ~WorkInFlight() = default;
    /** The result, once done: call at most once. */
    virtual Result finish() = 0;
};

/** Work done where it is taken: the default where nothing runs beside the caller (the host's cores have no other work
 *  to overlap it with). work keeps copies of what it needs. */
template <class Result>
class DeferredWork : public WorkInFlight<Result> {
public:
    explicit DeferredWork(std::function<Result()> work) : work_(std::move(work)) {
    }
    Result finish() override {
        return work_();
    }
private:
    std::function<Result()> work_;
};

template <class Result>
std::unique_ptr<WorkInFlight<Result>> deferredWork(std::function<Result()> work) {
    return std::unique_ptr<WorkInFlight<Result>>(new DeferredWork<Result>(std::move(work)));
}

} // namespace QM
} // namespace OpenMMDFT
