/**
 * Blocked triangular solves op(T) x = h for every right-hand side, in place in H (n x cols, column-major,
 * leading dimension ldh, from hOff); T is the lower or upper triangle of a column-major matrix, op(T) = T
 * or T^T. The host walks the diagonal blocks of NB rows in the order of the substitution: each block is
 * solved by one work group per right-hand side (NB sequential steps), then every row still to come is
 * updated with the block's solution in parallel: by the tiled product (lsqGemm) for many right-hand sides
 * (an inverse), by triangularUpdate below for a few. So a solve takes 2 n/NB launches instead of n sequential
 * steps, which matters on a GPU for the right-hand sides and the condition estimate alike.
 */

/** op(T)(i, j) */
#define OP_T(i, j) (transposed ? AT(T, tOff, ldt, j, i) : AT(T, tOff, ldt, i, j))

/**
 * Solve the diagonal block k0..k0+kb-1. forward (op(T) lower) substitutes from the block's first row,
 * otherwise from its last; unitDiagonal takes T(j,j) = 1.
 */
KERNEL void triangularDiagonal(int cols, GLOBAL const ACC* RESTRICT T, int tOff, int ldt, int transposed, int forward, int unitDiagonal,
        GLOBAL ACC* RESTRICT H, int hOff, int ldh, int k0, int kb) {
    LOCAL ACC value;
    for (int c = GROUP_ID; c < cols; c += NUM_GROUPS) {
        GLOBAL ACC* h = H+(size_t) hOff+(size_t) c*ldh;
        for (int step = 0; step < kb; step++) {
            const int j = k0+(forward ? step : kb-1-step);
            if (LOCAL_ID == 0) {
                value = (unitDiagonal ? h[j] : h[j]/AT(T, tOff, ldt, j, j));
                h[j] = value;
            }
            SYNC_THREADS;
            const ACC x = value;
            const int remaining = kb-1-step;
            for (int r = LOCAL_ID; r < remaining; r += LOCAL_SIZE) {
                const int i = (forward ? j+1+r : j-1-r);
                h[i] -= OP_T(i, j)*x;
            }
            SYNC_THREADS;
        }
    }
}

/** h(i) -= sum over the block's rows l of op(T)(i, l) h(l), for rows rowStart..rowStart+rows-1, one thread per (row, column). */
KERNEL void triangularUpdate(int cols, GLOBAL const ACC* RESTRICT T, int tOff, int ldt, int transposed, GLOBAL ACC* RESTRICT H, int hOff,
        int ldh, int k0, int kb, int rowStart, int rows) {
    for (int index = GLOBAL_ID; index < rows*cols; index += GLOBAL_SIZE) {
        const int i = rowStart+index%rows, c = index/rows;
        GLOBAL ACC* h = H+(size_t) hOff+(size_t) c*ldh;
        ACC sum = 0;
        for (int l = k0; l < k0+kb; l++)
            sum += OP_T(i, l)*h[l];
        h[i] -= sum;
    }
}
