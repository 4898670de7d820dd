#ifndef OPENMMDFT_KEPTUPLOADS_H_
#define OPENMMDFT_KEPTUPLOADS_H_
// Host copies of tables uploaded without blocking, kept until the queue has read them.

#include "openmm/common/ComputeContext.h"
#include "openmm/common/ComputeEvent.h"
#include "openmm/common/ContextSelector.h"
#include <memory>
#include <utility>
#include <vector>

namespace OpenMMDFT {

/**
 * The host side of uploads that return before the device has read them (PooledArray::upload with a KeptUploads): a
 * blocking upload on CUDA's default stream from pageable memory waits for every kernel queued before it, and on OpenCL
 * the host waits for the copy, so a set-up that uploads a hundred small tables between its launches stops the host a
 * hundred times. Here each table is copied once more on the host (the tables are small: shell and pair lists, work
 * lists) and the copy lives until the queue has passed it: an event queued after the uploads (mark(), on the current
 * queue) is waited for before the copies go (release(), and the destructor). The holder declares this after the arrays
 * the uploads fill, so that it goes, and waits, before they go back to the pool. Tables that its kernels read must have
 * been uploaded on the queue those kernels run on (the current queue at the upload), as with any upload.
 */
class KeptUploads {
public:
    explicit KeptUploads(OpenMM::ComputeContext& cc) : cc(cc) {
    }
    KeptUploads(const KeptUploads&) = delete;
    KeptUploads& operator=(const KeptUploads&) = delete;
    ~KeptUploads() {
        try {
            release();
        }
        catch (...) {
            // A failed wait (a device error, reported where it happened) must not end the program from a destructor,
            // which may run while that error's exception unwinds the stack.
        }
        OpenMM::ContextSelector selector(cc);  // the event is the device's object
        passed.reset();
    }
    /** data (the caller's copy, or a temporary moved in), unchanged until release(): the source of a non-blocking
     *  upload. */
    template <class T>
    const std::vector<T>& keep(std::vector<T> data) {
        auto copy = std::make_shared<const std::vector<T>>(std::move(data));
        copies.push_back(copy);
        unmarked = true;
        return *copy;
    }
    /** A copy of count values from data (as keep() above). */
    template <class T>
    const T* keep(const T* data, size_t count) {
        return keep(std::vector<T>(data, data + count)).data();
    }
    /** Marks the current queue's place after the uploads so far: release() waits for it (not for later work). */
    void mark() {
        if (!unmarked)
            return;
        OpenMM::ContextSelector selector(cc);
        if (!passed)
            passed = cc.createEvent();
        passed->enqueue();
        unmarked = false;
        marked = true;
    }
    /** Waits until the queue has read every kept copy, and frees them. */
    void release() {
        if (copies.empty())
            return;
        mark();
        OpenMM::ContextSelector selector(cc);
        if (marked)
            passed->wait();
        marked = false;
        copies.clear();
    }
    /** Frees the copies without a wait, for a holder that has just had a blocking read return which was queued after
     *  every kept upload on the queue they went to: that queue has read them all. */
    void releaseRead() {
        copies.clear();
        unmarked = false;
        marked = false;
    }
    /** The copies held now (for tests and reports). */
    size_t size() const {
        return copies.size();
    }

private:
    OpenMM::ComputeContext& cc;
    std::vector<std::shared_ptr<const void>> copies;
    OpenMM::ComputeEvent passed;
    bool unmarked = false, marked = false;
};

} // namespace OpenMMDFT

#endif
