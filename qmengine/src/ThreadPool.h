#pragma once
// The engine's worker threads, started once and kept: a QM/MM step makes hundreds of parallel loops (basis values,
// integrals, grid rows), and starting the CPU platform's `Threads` anew for each cost more than some loops did on a
// many-core host.
#include <functional>

namespace OpenMMDFT {
namespace QM {

/**
 * The process's pool of worker threads, grown on demand to the largest request less one (the caller works too).
 * run() is taken by one caller at a time; a second caller meanwhile, a call from inside a pool task, and a child
 * process after fork() (which inherits none of the workers) are told no and start threads of their own.
 */
class ThreadPool {
public:
    static ThreadPool& shared();
    /// Runs task(t) for t = 0 .. threads-1 (t = 0 on the calling thread) and returns when all have finished; false,
    /// with nothing run, when the pool cannot take the work now (see above). task must not throw.
    bool run(int threads, const std::function<void(int)>& task);
    /// Workers started so far.
    int workers() const;
private:
    struct State;
    explicit ThreadPool(State* state);
    State* state_;
};

} // namespace QM
} // namespace OpenMMDFT
