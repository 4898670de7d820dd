#pragma once
// Device arrays kept from one geometry to the next (the XC back end and the density fitting are made anew per geometry,
// the point charges' arrays per call).
#include "KeptUploads.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeContext.h"
#include <algorithm>
#include <atomic>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace OpenMMDFT {

/**
 * Device arrays that objects made per geometry (or per call) take and give back, so that an MD step does not allocate
 * and free them again: on CUDA each allocation is a cuMemAlloc and each release a cuMemFree, which waits for the whole
 * device (the basis values and the gradient's chunk buffers are hundreds of MB per step for a few QM waters;
 * tools/device-allocations/count.sh counts a step's buffers: none once the pool holds them). An array is taken by one
 * holder at a time, so two live holders never share one. Arrays grow (their contents lost) with a sixteenth more room
 * than asked, so that a grid that gains a few points from one step to the next does not make them grow again. The
 * pool relies on the Context's one in-order queue: an array given back while kernels that read it are still queued
 * is written by its next holder's work only after them.
 */
class DeviceArrayPool {
public:
    /** An array named name of at least size elements of elementSize bytes, for the caller alone until it is given
     * back. */
    std::unique_ptr<OpenMM::ComputeArray> take(OpenMM::ComputeContext& cc, const std::string& name, int elementSize, size_t size) {
        std::unique_ptr<OpenMM::ComputeArray> array;
        {
            // The smallest array of the name that has room, else the largest (grown below): holders that take several
            // arrays of one name in different sizes get them back without growing them.
            std::lock_guard<std::mutex> lock(mutex);
            auto chosen = free.end();
            for (auto kept = free.find(name); kept != free.end() && kept->first == name; ++kept) {
                if (kept->second->getElementSize() != elementSize)
                    continue;
                const size_t room = kept->second->getSize();
                if (chosen == free.end())
                    chosen = kept;
                else {
                    const size_t best = chosen->second->getSize();
                    if (best >= size ? (room >= size && room < best) : room > best)
                        chosen = kept;
                }
            }
            if (chosen != free.end()) {
                array = std::move(chosen->second);
                free.erase(chosen);
            }
        }
        if (!array) {
            array.reset(new OpenMM::ComputeArray());
            array->initialize(cc, withRoom(size), elementSize, name);
            made++;
            bytes += array->getSize() * (size_t) elementSize;
        }
        else if (array->getSize() < size) {
            bytes -= array->getSize() * (size_t) elementSize;  // freed first: where the larger one cannot be made, it is gone
            array->resize(withRoom(size));
            made++;
            bytes += array->getSize() * (size_t) elementSize;
        }
        return array;
    }
    /** Device allocations the pool has made so far (arrays made and arrays grown): after the first steps of an MD run
     * with room enough, none more. */
    long long allocationsMade() const {
        return made;
    }
    /** Bytes of device memory in the pool's arrays, held by their takers or kept for the next (they are never freed
     * while the pool lives): bounded by what the largest geometry took at once, with a sixteenth more room. */
    size_t bytesAllocated() const {
        return bytes;
    }
    /** Gives array (taken from this pool) back for the next holder. */
    void give(std::unique_ptr<OpenMM::ComputeArray> array) {
        if (!array || !array->isInitialized())
            return;
        std::lock_guard<std::mutex> lock(mutex);
        const std::string name = array->getName();
        free.emplace(name, std::move(array));
    }
    /** visit(array) for each array of this name that the pool holds now (not those taken), under its lock: what the last
     * holders left in them (the work counters' zeros, kernels/qmWorkCounter.cc). Returns how many there were. */
    size_t visitKept(const std::string& name, const std::function<void(OpenMM::ComputeArray&)>& visit) const {
        std::lock_guard<std::mutex> lock(mutex);
        size_t count = 0;
        for (auto kept = free.find(name); kept != free.end() && kept->first == name; ++kept, ++count)
            visit(*kept->second);
        return count;
    }
    /** Bytes of the arrays the pool holds now (not those taken). */
    size_t bytesKept() const {
        std::lock_guard<std::mutex> lock(mutex);
        size_t bytes = 0;
        for (const auto& kept : free)
            bytes += kept.second->getSize() * kept.second->getElementSize();
        return bytes;
    }

private:
    static size_t withRoom(size_t size) {
        return std::max<size_t>(size + size / 16, 1);
    }
    mutable std::mutex mutex;
    std::atomic<long long> made{0};
    std::atomic<size_t> bytes{0};
    std::multimap<std::string, std::unique_ptr<OpenMM::ComputeArray>> free;
};

/** An array taken from a DeviceArrayPool, given back when this goes (or when another is taken in its place). */
class PooledArray {
public:
    PooledArray() = default;
    PooledArray(const PooledArray&) = delete;
    PooledArray& operator=(const PooledArray&) = delete;
    PooledArray(PooledArray&& other) noexcept : pool(std::move(other.pool)), array(std::move(other.array)) {
    }
    PooledArray& operator=(PooledArray&& other) noexcept {
        if (this != &other) {
            release();
            pool = std::move(other.pool);
            array = std::move(other.array);
        }
        return *this;
    }
    ~PooledArray() {
        release();
    }
    /** Takes the array of name with room for size elements of elementSize bytes (doubles by default) from pool. */
    void take(std::shared_ptr<DeviceArrayPool> from, OpenMM::ComputeContext& cc, const std::string& name, size_t size,
              int elementSize = sizeof(double)) {
        release();
        pool = std::move(from);
        array = pool->take(cc, name, elementSize, size);
    }
    /** Takes an array for data (as take, with room for at least one element) and uploads data to its first elements
     *  (blocking = false: queued on the current queue, data kept unchanged by the caller until that queue has read it). */
    template <class T>
    void upload(std::shared_ptr<DeviceArrayPool> from, OpenMM::ComputeContext& cc, const std::vector<T>& data,
                const std::string& name, bool blocking = true) {
        take(std::move(from), cc, name, std::max<size_t>(data.size(), 1), sizeof(T));
        if (!data.empty())
            array->uploadSubArray(data.data(), 0, (int) data.size(), blocking);
    }
    /** The same without blocking, from data (copied, or a temporary moved in) that kept holds until the queue has read
     *  it. */
    template <class T>
    void upload(std::shared_ptr<DeviceArrayPool> from, OpenMM::ComputeContext& cc, std::vector<T> data, const std::string& name,
                KeptUploads& kept) {
        if (data.empty())
            upload(std::move(from), cc, data, name, false);
        else
            upload(std::move(from), cc, kept.keep(std::move(data)), name, false);
    }
    /** Keeps the array held (its contents too) where it has room for size elements of elementSize bytes, else takes
     * one that has (contents lost): for tables that a holder fills more than once. */
    void ensure(std::shared_ptr<DeviceArrayPool> from, OpenMM::ComputeContext& cc, const std::string& name, size_t size,
                int elementSize = sizeof(double)) {
        if (array && pool == from && array->getElementSize() == elementSize && array->getSize() >= std::max<size_t>(size, 1))
            return;
        take(std::move(from), cc, name, size, elementSize);
    }
    /** Takes an array with room for size elements of T and sets its every byte to zero. */
    template <class T>
    void zeros(std::shared_ptr<DeviceArrayPool> from, OpenMM::ComputeContext& cc, const std::string& name, size_t size) {
        take(std::move(from), cc, name, std::max<size_t>(size, 1), sizeof(T));
        cc.clearBuffer(*array);
    }
    /** The first count elements (at most the array's size): the array is downloaded whole (its room beyond what the
     * holder wrote is a sixteenth at most after growth, or what an earlier geometry needed more). */
    template <class T>
    std::vector<T> downloadFirst(size_t count) const {
        std::vector<T> data;
        array->download(data);
        data.resize(std::min(count, data.size()));
        return data;
    }
    bool held() const {
        return array != nullptr;
    }
    OpenMM::ComputeArray& operator*() const {
        return *array;
    }
    OpenMM::ComputeArray* get() const {
        return array.get();
    }

private:
    void release() {
        if (pool)
            pool->give(std::move(array));
        array.reset();
    }
    std::shared_ptr<DeviceArrayPool> pool;
    std::unique_ptr<OpenMM::ComputeArray> array;
};

} // namespace OpenMMDFT
