/**
 * Triangular solves T x = h for each right-hand side, in place in H (n x nrhs, column-major, leading
 * dimension ldh, from hOff), one work group of BLOCK threads per right-hand side. They cost O(n^2) per
 * right-hand side against the O(m n^2) factorization, so they stay unblocked: one step per column,
 * the column read by neighbouring threads at neighbouring addresses.
 */

/** Forward substitution L y = h with the lower triangle of L (unit diagonal if unitDiagonal). */
KERNEL void lowerSolve(int n, int nrhs, GLOBAL const ACC* RESTRICT L, int lOff, int ldl, int unitDiagonal,
        GLOBAL ACC* RESTRICT H, int hOff, int ldh) {
    LOCAL ACC value;
    for (int rhs = GROUP_ID; rhs < nrhs; rhs += NUM_GROUPS) {
        GLOBAL ACC* h = H+(size_t) hOff+(size_t) rhs*ldh;
        for (int j = 0; j < n; j++) {
            if (LOCAL_ID == 0) {
                value = (unitDiagonal ? h[j] : h[j]/AT(L, lOff, ldl, j, j));
                h[j] = value;
            }
            SYNC_THREADS;
            const ACC y = value;
            for (int i = j+1+LOCAL_ID; i < n; i += LOCAL_SIZE)
                h[i] -= AT(L, lOff, ldl, i, j)*y;
            SYNC_THREADS;
        }
    }
}

/** Back substitution U x = h with the upper triangle of U. */
KERNEL void upperSolve(int n, int nrhs, GLOBAL const ACC* RESTRICT U, int uOff, int ldu, GLOBAL ACC* RESTRICT H, int hOff, int ldh) {
    LOCAL ACC value;
    for (int rhs = GROUP_ID; rhs < nrhs; rhs += NUM_GROUPS) {
        GLOBAL ACC* h = H+(size_t) hOff+(size_t) rhs*ldh;
        for (int j = n-1; j >= 0; j--) {
            if (LOCAL_ID == 0) {
                value = h[j]/AT(U, uOff, ldu, j, j);
                h[j] = value;
            }
            SYNC_THREADS;
            const ACC x = value;
            for (int i = LOCAL_ID; i < j; i += LOCAL_SIZE)
                h[i] -= AT(U, uOff, ldu, i, j)*x;
            SYNC_THREADS;
        }
    }
}

/** L^T x = y with the lower triangle of L (backward; each step a dot product down column j of L). */
KERNEL void lowerTransposeSolve(int n, int nrhs, GLOBAL const ACC* RESTRICT L, int lOff, int ldl, GLOBAL ACC* RESTRICT H, int hOff, int ldh) {
    LOCAL ACC scratch[BLOCK];
    for (int rhs = GROUP_ID; rhs < nrhs; rhs += NUM_GROUPS) {
        GLOBAL ACC* h = H+(size_t) hOff+(size_t) rhs*ldh;
        for (int j = n-1; j >= 0; j--) {
            ACC partial = 0;
            for (int i = j+1+LOCAL_ID; i < n; i += BLOCK)
                partial += AT(L, lOff, ldl, i, j)*h[i];
            ACC dot;
            BLOCK_SUM(partial, scratch, dot);
            if (LOCAL_ID == 0)
                h[j] = (h[j]-dot)/AT(L, lOff, ldl, j, j);
            SYNC_THREADS;
        }
    }
}

/** U^T z = c with the upper triangle of U (forward; each step a dot product down column j of U). */
KERNEL void upperTransposeSolve(int n, int nrhs, GLOBAL const ACC* RESTRICT U, int uOff, int ldu, GLOBAL ACC* RESTRICT H, int hOff, int ldh) {
    LOCAL ACC scratch[BLOCK];
    for (int rhs = GROUP_ID; rhs < nrhs; rhs += NUM_GROUPS) {
        GLOBAL ACC* h = H+(size_t) hOff+(size_t) rhs*ldh;
        for (int j = 0; j < n; j++) {
            ACC partial = 0;
            for (int i = LOCAL_ID; i < j; i += BLOCK)
                partial += AT(U, uOff, ldu, i, j)*h[i];
            ACC dot;
            BLOCK_SUM(partial, scratch, dot);
            if (LOCAL_ID == 0)
                h[j] = (h[j]-dot)/AT(U, uOff, ldu, j, j);
            SYNC_THREADS;
        }
    }
}
