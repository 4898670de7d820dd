#pragma once
// Device arrays kept from one geometry to the next (the XC back end and the density fitting are made anew per geometry,
// the point charges' arrays per call).
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeContext.h"
#include <algorithm>
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
 * tools/device-allocations/count.sh counts a step's buffers). An array is taken by one holder at a time, so two live
 * holders never share one. Arrays grow (their contents lost) with a sixteenth more room than asked, so that a grid
 * that gains a few points from one step to the next does not make them grow again.
 */
class DeviceArrayPool {
public:
    /** An array named name of at least size elements of elementSize bytes, for the caller alone until it is given
     * back. */
    std::unique_ptr<OpenMM::ComputeArray> take(OpenMM::ComputeContext& cc, const std::string& name, int elementSize, size_t size) {
        std::unique_ptr<OpenMM::ComputeArray> array;
        {
            std::lock_guard<std::mutex> lock(mutex);
            for (auto kept = free.find(name); kept != free.end() && kept->first == name; ++kept)
                if (kept->second->getElementSize() == elementSize) {
                    array = std::move(kept->second);
                    free.erase(kept);
                    break;
                }
        }
        if (!array) {
            array.reset(new OpenMM::ComputeArray());
            array->initialize(cc, withRoom(size), elementSize, name);
        }
        else if (array->getSize() < size)
            array->resize(withRoom(size));
        return array;
    }
    /** Gives array (taken from this pool) back for the next holder. */
    void give(std::unique_ptr<OpenMM::ComputeArray> array) {
        if (!array || !array->isInitialized())
            return;
        std::lock_guard<std::mutex> lock(mutex);
        const std::string name = array->getName();
        free.emplace(name, std::move(array));
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
    std::multimap<std::string, std::unique_ptr<OpenMM::ComputeArray>> free;
};

/** An array taken from a DeviceArrayPool, given back when this goes (or when another is taken in its place). */
class PooledArray {
public:
    PooledArray() = default;
    PooledArray(const PooledArray&) = delete;
    PooledArray& operator=(const PooledArray&) = delete;
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
    /** Takes an array for data (as take, with room for at least one element) and uploads data to its first elements. */
    template <class T>
    void upload(std::shared_ptr<DeviceArrayPool> from, OpenMM::ComputeContext& cc, const std::vector<T>& data,
                const std::string& name) {
        take(std::move(from), cc, name, std::max<size_t>(data.size(), 1), sizeof(T));
        if (!data.empty())
            array->uploadSubArray(data.data(), 0, (int) data.size());
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
