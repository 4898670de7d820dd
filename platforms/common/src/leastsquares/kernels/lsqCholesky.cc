/**
 * Blocked right-looking Cholesky G = L L^T of the n x n normal matrix (column-major, ld n, lower
 * triangle used), in panels of NB columns (LAPACK dpotrf's scheme):
 *   choleskyDiagonalBlock  L11 = chol(G11) by one work group (NB steps);
 *   choleskyPanel          L21 = G21 L11^-T, one thread per row below the block;
 *   gemmAcc (lowerOnly)    G22 -= L21 L21^T, the O(n^3) part, tiled.
 * L overwrites the lower triangle, its diagonal included; diag keeps L(j,j) for the condition check.
 */

KERNEL void choleskyDiagonalBlock(int n, int k0, int kb, GLOBAL ACC* RESTRICT G, GLOBAL ACC* RESTRICT diag, GLOBAL int* RESTRICT failure) {
    LOCAL ACC pivotValue;
    for (int j = 0; j < kb; j++) {
        const int cj = k0+j;
        if (LOCAL_ID == 0) {
            const ACC p = AT(G, 0, n, cj, cj);
            if (!(p > 0) && failure[0] < 0)
                failure[0] = cj; // the first breakdown; the host raises the error after the factorization
            const ACC d = SQRT(p);
            AT(G, 0, n, cj, cj) = d;
            diag[cj] = d;
            pivotValue = d;
        }
        SYNC_THREADS;
        const ACC d = pivotValue;
        for (int i = j+1+LOCAL_ID; i < kb; i += LOCAL_SIZE)
            AT(G, 0, n, k0+i, cj) /= d;
        SYNC_THREADS;
        const int size = kb-j-1;
        for (int index = LOCAL_ID; index < size*size; index += LOCAL_SIZE) {
            const int i = j+1+index%size, l = j+1+index/size;
            if (i >= l)
                AT(G, 0, n, k0+i, k0+l) -= AT(G, 0, n, k0+i, cj)*AT(G, 0, n, k0+l, cj);
        }
        SYNC_THREADS;
    }
}

KERNEL void choleskyPanel(int n, int k0, int kb, GLOBAL ACC* RESTRICT G) {
    for (int i = k0+kb+GLOBAL_ID; i < n; i += GLOBAL_SIZE)
        for (int j = 0; j < kb; j++) {
            ACC s = AT(G, 0, n, i, k0+j);
            for (int l = 0; l < j; l++)
                s -= AT(G, 0, n, i, k0+l)*AT(G, 0, n, k0+j, k0+l);
            AT(G, 0, n, i, k0+j) = s/AT(G, 0, n, k0+j, k0+j);
        }
}
