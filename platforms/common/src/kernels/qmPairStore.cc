/**
 * Products with matrices kept in device memory as vectors of one length, each in a slot of `store` (slot s holds
 * elements [s length, (s + 1) length)): the recycled DIIS pairs of the SCF (CommonMatrixProducts::streamedDots and
 * addStreamedCombination). Both kernels read every listed vector once; both sum in a fixed order, so that the results
 * do not depend on the launch's size. PAIR_GROUP (a power of two) is the work-group size, set by the host.
 */

/** out[j] = sum_k store[slot[j] length + k] x[k]: a work group per listed vector, its items striding over k, their
 *  partial sums added in local memory in a fixed tree order. */
KERNEL void pairDots(int count, int length, GLOBAL const int* RESTRICT slot, GLOBAL const double* RESTRICT store,
                     GLOBAL const double* RESTRICT x, GLOBAL double* RESTRICT out) {
    LOCAL double sums[PAIR_GROUP];
    for (int j = GROUP_ID; j < count; j += NUM_GROUPS) {
        GLOBAL const double* vector = store + (size_t) slot[j] * (size_t) length;
        double sum = 0;
        for (int k = LOCAL_ID; k < length; k += PAIR_GROUP)
            sum += vector[k] * x[k];
        sums[LOCAL_ID] = sum;
        SYNC_THREADS;
        for (int width = PAIR_GROUP / 2; width > 0; width /= 2) {
            if (LOCAL_ID < width)
                sums[LOCAL_ID] += sums[LOCAL_ID + width];
            SYNC_THREADS;
        }
        if (LOCAL_ID == 0)
            out[j] = sums[0];
        SYNC_THREADS;  // sums[0] is read before the next vector's sums overwrite it
    }
}

/** y[k] = sum_j w[j] store[slot[j] length + k], the terms added in list order: consecutive items read consecutive
 *  elements of each vector. */
KERNEL void pairCombination(int count, int length, GLOBAL const int* RESTRICT slot, GLOBAL const double* RESTRICT store,
                            GLOBAL const double* RESTRICT w, GLOBAL double* RESTRICT y) {
    for (int k = GLOBAL_ID; k < length; k += GLOBAL_SIZE) {
        double sum = 0;
        for (int j = 0; j < count; j++)
            sum += w[j] * store[(size_t) slot[j] * (size_t) length + k];
        y[k] = sum;
    }
}
