/**
 * A work counter that sets itself back to zero: kernels whose work groups take their work from a counter (the
 * integral kernels' nextChunk, the partition-weight derivatives' nextColumn) need it at zero when they start. The host
 * zeroed it before every launch, one clearBuffer launch each (about a hundred per MD step of 24 QM waters); now the
 * last work group of each launch to finish zeroes it for the next launch on the same queue, and the host zeroes it
 * once, when it takes the array (initializeWorkCounter, WORK_COUNTER_SIZE entries).
 *
 * counter[0] is the work handed out, counter[1] the work groups that have finished. Each group's item 0 takes the
 * group's work (its atomic adds on counter[0]) and, after the group's last take, counts the group as finished; the
 * fence orders the two for the other groups, so that when the last group counts itself no group takes work any more
 * (the "last block" pattern of CUDA's threadFenceReduction sample). Every work group of a launch must call it, after
 * its last take of work.
 */
#ifdef __CUDA_ARCH__
#define WORK_COUNTER_FENCE __threadfence()
#else
#define WORK_COUNTER_FENCE mem_fence(CLK_GLOBAL_MEM_FENCE)
#endif

DEVICE void finishWork(GLOBAL mm_ulong* RESTRICT counter) {
    if (LOCAL_ID == 0) {
        WORK_COUNTER_FENCE;
        if (ATOMIC_ADD(&counter[1], (mm_ulong) 1) == (mm_ulong) (NUM_GROUPS-1)) {
            counter[0] = 0;
            counter[1] = 0;
        }
    }
}
