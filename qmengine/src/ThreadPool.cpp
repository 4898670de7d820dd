#include "ThreadPool.h"
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>
#include <unistd.h>

namespace OpenMMDFT {
namespace QM {

namespace {
thread_local bool insidePoolTask = false;  // the calling thread runs a task of the pool (as worker or caller)
}

struct ThreadPool::State {
    pid_t owner = getpid();                     // the process whose workers these are
    std::mutex claim;                           // held by the caller of run() for its whole run
    mutable std::mutex lock;                    // guards the fields below
    std::condition_variable wake, finished;
    std::vector<std::thread> threads;
    const std::function<void(int)>* task = nullptr;
    int participants = 0;                       // workers 1 .. participants-1 take part in the current run
    int remaining = 0;                          // of them, those not finished yet
    unsigned long generation = 0;               // runs so far: a worker waits for the next one
    bool stopping = false;                      // the process exits: workers return

    ~State() {
        if (getpid() != owner) {
            // A child after fork() has none of these threads: their handles are let go of without a join.
            new std::vector<std::thread>(std::move(threads));
            return;
        }
        {
            std::lock_guard<std::mutex> guard(lock);
            stopping = true;
            generation++;
        }
        wake.notify_all();
        for (std::thread& thread : threads)
            thread.join();
    }

    void work(int index) {
        insidePoolTask = true;
        unsigned long seen = 0;
        for (;;) {
            const std::function<void(int)>* current;
            {
                std::unique_lock<std::mutex> guard(lock);
                wake.wait(guard, [&] { return generation != seen; });
                seen = generation;
                if (stopping)
                    return;
                if (index >= participants)
                    continue;
                current = task;
            }
            (*current)(index);
            std::lock_guard<std::mutex> guard(lock);
            if (--remaining == 0)
                finished.notify_one();
        }
    }
};

ThreadPool::ThreadPool(State* state) : state_(state) {
}

ThreadPool& ThreadPool::shared() {
    // Static storage, destroyed at exit, when the workers are idle: they are stopped and joined then.
    static State state;
    static ThreadPool pool(&state);
    return pool;
}

int ThreadPool::workers() const {
    std::lock_guard<std::mutex> guard(state_->lock);
    return (int) state_->threads.size();
}

bool ThreadPool::run(int threads, const std::function<void(int)>& task) {
    State& s = *state_;
    if (threads <= 1) {
        task(0);
        return true;
    }
    if (insidePoolTask || getpid() != s.owner)
        return false;
    std::unique_lock<std::mutex> claim(s.claim, std::try_to_lock);
    if (!claim.owns_lock())
        return false;
    {
        std::lock_guard<std::mutex> guard(s.lock);
        while ((int) s.threads.size() < threads - 1) {
            const int index = (int) s.threads.size() + 1;
            s.threads.emplace_back([&s, index] { s.work(index); });
        }
        s.task = &task;
        s.participants = threads;
        s.remaining = threads - 1;
        s.generation++;
    }
    s.wake.notify_all();
    // The caller is one of the run's threads now: a loop inside its task must not claim the pool again (it holds it).
    insidePoolTask = true;
    task(0);
    insidePoolTask = false;
    std::unique_lock<std::mutex> guard(s.lock);
    s.finished.wait(guard, [&] { return s.remaining == 0; });
    s.task = nullptr;
    return true;
}

} // namespace QM
} // namespace OpenMMDFT
