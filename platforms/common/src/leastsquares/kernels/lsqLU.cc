/**
 * Blocked right-looking LU with partial pivoting, P G = L U, of the n x n normal matrix (column-major,
 * ld n), in panels of NB columns (LAPACK dgetrf's scheme):
 *   per column j of the panel: luPivot (row swap over all n columns and the right-hand sides, so P is
 *   applied to h as it is found) and luPanel (elimination inside the panel only);
 *   luRowBlock   U12 = L11^-1 G12, one thread per column right of the panel;
 *   gemmAcc      G22 -= L21 U12, the O(n^3) part, tiled.
 * L (unit diagonal, not stored) and U overwrite G; pivots[j] = |U(j,j)| for the condition check, and
 * swaps[j] the row exchanged with row j at step j (LAPACK's ipiv), for right-hand sides solved later.
 */

KERNEL void luPivot(int n, int nrhs, int j, GLOBAL ACC* RESTRICT G, GLOBAL ACC* RESTRICT H, GLOBAL ACC* RESTRICT pivots,
        GLOBAL int* RESTRICT swaps) {
    LOCAL ACC bestValue[BLOCK];
    LOCAL int bestRow[BLOCK];
    ACC best = -1;
    int row = j;
    for (int i = j+LOCAL_ID; i < n; i += BLOCK) {
        const ACC v = fabs(AT(G, 0, n, i, j));
        if (v > best) {
            best = v;
            row = i;
        }
    }
    bestValue[LOCAL_ID] = best;
    bestRow[LOCAL_ID] = row;
    SYNC_THREADS;
    for (int step = BLOCK/2; step > 0; step >>= 1) {
        if (LOCAL_ID < step) {
            const ACC other = bestValue[LOCAL_ID+step];
            const int otherRow = bestRow[LOCAL_ID+step];
            if (other > bestValue[LOCAL_ID] || (other == bestValue[LOCAL_ID] && otherRow < bestRow[LOCAL_ID])) {
                bestValue[LOCAL_ID] = other;
                bestRow[LOCAL_ID] = otherRow;
            }
        }
        SYNC_THREADS;
    }
    const int p = bestRow[0];
    if (LOCAL_ID == 0) {
        pivots[j] = bestValue[0];
        swaps[j] = p;
    }
    if (p != j) {
        for (int c = LOCAL_ID; c < n; c += BLOCK) {
            const ACC t = AT(G, 0, n, j, c);
            AT(G, 0, n, j, c) = AT(G, 0, n, p, c);
            AT(G, 0, n, p, c) = t;
        }
        for (int r = LOCAL_ID; r < nrhs; r += BLOCK) {
            const ACC t = AT(H, 0, n, j, r);
            AT(H, 0, n, j, r) = AT(H, 0, n, p, r);
            AT(H, 0, n, p, r) = t;
        }
    }
}

KERNEL void luPanel(int n, int j, int panelEnd, GLOBAL ACC* RESTRICT G) {
    const ACC pivot = AT(G, 0, n, j, j);
    for (int i = j+1+GLOBAL_ID; i < n; i += GLOBAL_SIZE) {
        const ACC l = AT(G, 0, n, i, j)/pivot;
        AT(G, 0, n, i, j) = l;
        for (int c = j+1; c < panelEnd; c++)
            AT(G, 0, n, i, c) -= l*AT(G, 0, n, j, c);
    }
}

KERNEL void luRowBlock(int n, int k0, int kb, GLOBAL ACC* RESTRICT G) {
    for (int c = k0+kb+GLOBAL_ID; c < n; c += GLOBAL_SIZE)
        for (int j = 0; j < kb; j++) {
            const ACC u = AT(G, 0, n, k0+j, c);
            for (int i = j+1; i < kb; i++)
                AT(G, 0, n, k0+i, c) -= AT(G, 0, n, k0+i, k0+j)*u;
        }
}

/** Apply the row exchanges of the factorization, in order, to later right-hand sides (one thread per column). */
KERNEL void luApplySwaps(int n, int nrhs, GLOBAL const int* RESTRICT swaps, GLOBAL ACC* RESTRICT H) {
    for (int r = GLOBAL_ID; r < nrhs; r += GLOBAL_SIZE)
        for (int j = 0; j < n; j++) {
            const int p = swaps[j];
            if (p != j) {
                const ACC t = AT(H, 0, n, j, r);
                AT(H, 0, n, j, r) = AT(H, 0, n, p, r);
                AT(H, 0, n, p, r) = t;
            }
        }
}
