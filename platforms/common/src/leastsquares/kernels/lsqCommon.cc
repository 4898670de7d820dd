/**
 * Least squares on the GPU platforms, written once against OpenMM's Compute API.
 * The host (CommonLeastSquaresKernel.cpp) concatenates these files into one program.
 *
 * Types (set by the host from the platform's precision):
 *   STORE  the type A and b are uploaded in for the normal equations (float for single and mixed,
 *          double for double);
 *   ACC    the type of A^T A, A^T b, the factorizations and all accumulation
 *          (float for single, double for mixed and double).
 * Every matrix is COLUMN-MAJOR with a leading dimension ld: M(i,j) = M[off + i + j*ld]. Offsets are
 * passed as ints because the Compute API has no pointer arithmetic on the host side.
 * BLOCK is the work-group size of the one-work-group-per-item kernels (a power of two).
 * OpenMM caps the number of work groups of a launch (ComputeKernel::execute), so every kernel that
 * works per group loops over its items with a stride of NUM_GROUPS.
 */

/** Sum over a work group of BLOCK threads; every thread gets the sum. */
#define BLOCK_SUM(value, scratch, out) {                                 \
    scratch[LOCAL_ID] = value;                                          \
    SYNC_THREADS;                                                       \
    for (int step_ = BLOCK/2; step_ > 0; step_ >>= 1) {                 \
        if (LOCAL_ID < step_)                                           \
            scratch[LOCAL_ID] += scratch[LOCAL_ID+step_];               \
        SYNC_THREADS;                                                   \
    }                                                                   \
    out = scratch[0];                                                   \
    SYNC_THREADS;                                                       \
}

/** Element (i, j) of a column-major matrix with leading dimension ld, starting at off. */
#define AT(M, off, ld, i, j) M[(size_t) (off) + (size_t) (i) + (size_t) (j)*(size_t) (ld)]

/** dst(i, j) = src(i, j) for i < rows, j < cols (both column-major ACC). */
KERNEL void copyBlock(int rows, int cols, GLOBAL const ACC* RESTRICT src, int sOff, int lds, GLOBAL ACC* RESTRICT dst, int dOff, int ldd) {
    for (int index = GLOBAL_ID; index < rows*cols; index += GLOBAL_SIZE) {
        const int i = index%rows, j = index/rows;
        AT(dst, dOff, ldd, i, j) = AT(src, sOff, lds, i, j);
    }
}
