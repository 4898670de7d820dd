#ifndef OPENMMDFT_SIDEQUEUEWORK_H_
#define OPENMMDFT_SIDEQUEUEWORK_H_
// Device work on a queue of its own beside OpenMM's default queue (on CUDA a non-blocking stream, which the legacy
// stream 0 does not wait for, nor its pageable uploads): the ordering by events that every holder of such work shares.

#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeEvent.h"
#include "openmm/common/ContextSelector.h"
#include <exception>
#include <utility>

namespace OpenMMDFT {

/**
 * The work one holder queues on a side queue (null: everything runs on the default queue, in order, and there is
 * nothing to wait for). Each Scope queues on it, after everything queued so far on the default queue where asked, and
 * marks its end with an event; wait() waits for the last such end, which the holder's downloads need (they go through
 * the default queue, which does not know of the side queue). A holder declares it after its device arrays, so that it
 * is destroyed, and waits, before they go back to the pool.
 */
class SideQueueWork {
public:
    SideQueueWork(OpenMM::ComputeContext& cc, OpenMM::ComputeQueue queue) : cc(cc), queue(std::move(queue)) {
        if (this->queue) {
            OpenMM::ContextSelector selector(cc);
            queued = cc.createEvent();
            done = cc.createEvent();
        }
    }
    SideQueueWork(const SideQueueWork&) = delete;
    SideQueueWork& operator=(const SideQueueWork&) = delete;
    ~SideQueueWork() {
        OpenMM::ContextSelector selector(cc);  // the events are the device's objects
        wait();
        queued.reset();
        done.reset();
    }
    /** Waits for the end of the work queued so far (nothing to wait for before a Scope has ended: an OpenCL event cannot
     *  be waited for before it is queued). */
    void wait() {
        if (doneQueued) {
            OpenMM::ContextSelector selector(cc);
            done->wait();
        }
    }
    /**
     * Makes the side queue the current one while it lives. afterDefaultQueue: its work waits for everything queued so
     * far on the default queue (kernels that wrote what it reads or overwrites, blocking uploads still in flight). The
     * default queue is current again when it goes; if it goes by an exception, it waits for what it queued.
     */
    class Scope {
    public:
        Scope(SideQueueWork& work, bool afterDefaultQueue) : work(work), exceptions(std::uncaught_exceptions()) {
            if (!work.queue)
                return;
            if (afterDefaultQueue) {
                work.queued->enqueue();
                work.queued->queueWait(work.queue);
            }
            work.cc.setCurrentQueue(work.queue);
        }
        Scope(const Scope&) = delete;
        Scope& operator=(const Scope&) = delete;
        ~Scope() {
            if (!work.queue)
                return;
            work.done->enqueue();
            work.doneQueued = true;
            work.cc.restoreDefaultQueue();
            if (std::uncaught_exceptions() > exceptions)
                work.done->wait();
        }
        /** Whether uploads may return before they are done: ordered on the side queue, from host data the holder keeps
         *  unchanged until the queue has read it. */
        bool nonBlocking() const {
            return (bool) work.queue;
        }
    private:
        SideQueueWork& work;
        int exceptions;
    };
private:
    OpenMM::ComputeContext& cc;
    OpenMM::ComputeQueue queue;
    OpenMM::ComputeEvent queued, done;
    bool doneQueued = false;
};

} // namespace OpenMMDFT

#endif
