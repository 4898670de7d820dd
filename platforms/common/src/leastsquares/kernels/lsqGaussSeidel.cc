/**
 * Gauss-Seidel (SOR) on the normal equations G x = h (G = A^T A symmetric, n x n; h, x n x nrhs,
 * column-major). A sweep is sequential in its rows by definition, so one work group per right-hand
 * side walks the rows, each step a dot product of a row of G with x by the whole group.
 */

/** One sweep over every row. */
KERNEL void gaussSeidelSweep(int n, int nrhs, GLOBAL const ACC* RESTRICT G, GLOBAL const ACC* RESTRICT H, GLOBAL ACC* RESTRICT X, ACC omega) {
    LOCAL ACC scratch[BLOCK];
    for (int rhs = GROUP_ID; rhs < nrhs; rhs += NUM_GROUPS) {
        const GLOBAL ACC* h = H+(size_t) rhs*n;
        GLOBAL ACC* x = X+(size_t) rhs*n;
        for (int i = 0; i < n; i++) {
            ACC partial = 0;
            for (int k = LOCAL_ID; k < n; k += BLOCK)
                partial += AT(G, 0, n, k, i)*x[k]; // G symmetric: column i, contiguous
            ACC dot;
            BLOCK_SUM(partial, scratch, dot);
            if (LOCAL_ID == 0)
                x[i] += omega*(h[i]-dot)/AT(G, 0, n, i, i);
            SYNC_THREADS;
        }
    }
}

/** norms[2r] = ||h - G x||^2 and norms[2r+1] = ||h||^2 for each right-hand side r (one work group each). */
KERNEL void normalResidual(int n, int nrhs, GLOBAL const ACC* RESTRICT G, GLOBAL const ACC* RESTRICT H, GLOBAL const ACC* RESTRICT X,
        GLOBAL ACC* RESTRICT norms) {
    LOCAL ACC scratch[BLOCK];
    for (int rhs = GROUP_ID; rhs < nrhs; rhs += NUM_GROUPS) {
        const GLOBAL ACC* h = H+(size_t) rhs*n;
        const GLOBAL ACC* x = X+(size_t) rhs*n;
        ACC r2 = 0, h2 = 0;
        for (int i = LOCAL_ID; i < n; i += BLOCK) {
            ACC r = h[i];
            for (int k = 0; k < n; k++)
                r -= AT(G, 0, n, i, k)*x[k]; // neighbouring threads read neighbouring rows of column k
            r2 += r*r;
            h2 += h[i]*h[i];
        }
        ACC total;
        BLOCK_SUM(r2, scratch, total);
        if (LOCAL_ID == 0)
            norms[2*rhs] = total;
        BLOCK_SUM(h2, scratch, total);
        if (LOCAL_ID == 0)
            norms[2*rhs+1] = total;
    }
}
