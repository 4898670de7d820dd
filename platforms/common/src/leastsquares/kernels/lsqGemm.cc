/**
 * Tiled matrix product, the work horse of the blocked factorizations (the seed's algorithms spend
 * all their time in the normal matrix A^T A and in trailing updates; on a GPU these must run as
 * tiled products, not one launch per column).
 *
 *   C(i,j) = [accumulate ? C(i,j) : 0] + [subtract ? -1 : 1] * sum_k opA(i,k) opB(k,j),  i < M, j < N, k < K
 *   opA(i,k) = transA ? A(k,i) : A(i,k),   opB(k,j) = transB ? B(j,k) : B(k,j)    (column-major, see lsqCommon)
 *   lowerOnly: output tiles strictly above the diagonal are skipped (symmetric results, Cholesky
 *   trailing updates); tiles on the diagonal are computed whole.
 *
 * The host includes this file twice: GEMM = gemmStore with IN = STORE (products of the uploaded A
 * and b: the normal equations, accumulated in ACC) and GEMM = gemmAcc with IN = ACC.
 * 64 x 64 output tile per work group of 256 threads, each thread 4 x 4 outputs strided by 16 (so
 * that loads and stores of neighbouring threads touch neighbouring addresses), K in steps of 16
 * through local memory (rows padded by one element against bank conflicts).
 */
#define GEMM_TILE 64
#define GEMM_TK 16
#define GEMM_LD (GEMM_TILE+1)

KERNEL void GEMM(int M, int N, int K, int subtract, int accumulate,
        GLOBAL const IN* RESTRICT A, int aOff, int lda, int transA,
        GLOBAL const IN* RESTRICT B, int bOff, int ldb, int transB,
        GLOBAL ACC* C, int cOff, int ldc, int lowerOnly) {
    LOCAL ACC As[GEMM_TK*GEMM_LD];
    LOCAL ACC Bs[GEMM_TK*GEMM_LD];
    const int tilesM = (M+GEMM_TILE-1)/GEMM_TILE, tilesN = (N+GEMM_TILE-1)/GEMM_TILE;
    const int tx = LOCAL_ID%16, ty = LOCAL_ID/16;
    for (int tile = GROUP_ID; tile < tilesM*tilesN; tile += NUM_GROUPS) {
        const int bi = tile%tilesM, bj = tile/tilesM;
        if (lowerOnly && bj > bi)
            continue; // the whole group skips together
        const int i0 = bi*GEMM_TILE, j0 = bj*GEMM_TILE;
        ACC acc[4][4];
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++)
                acc[r][c] = 0;
        for (int k0 = 0; k0 < K; k0 += GEMM_TK) {
            for (int q = 0; q < 4; q++) {
                const int e = LOCAL_ID+256*q;
                // Tile of opA: 64 rows x 16 k; read along the contiguous direction of A.
                int ii = (transA ? e/GEMM_TK : e%GEMM_TILE), kk = (transA ? e%GEMM_TK : e/GEMM_TILE);
                int gi = i0+ii, gk = k0+kk;
                ACC v = 0;
                if (gi < M && gk < K)
                    v = (ACC) (transA ? AT(A, aOff, lda, gk, gi) : AT(A, aOff, lda, gi, gk));
                As[kk*GEMM_LD+ii] = v;
                // Tile of opB: 16 k x 64 columns.
                const int jj = (transB ? e%GEMM_TILE : e/GEMM_TK);
                kk = (transB ? e/GEMM_TILE : e%GEMM_TK);
                const int gj = j0+jj;
                gk = k0+kk;
                v = 0;
                if (gj < N && gk < K)
                    v = (ACC) (transB ? AT(B, bOff, ldb, gj, gk) : AT(B, bOff, ldb, gk, gj));
                Bs[kk*GEMM_LD+jj] = v;
            }
            SYNC_THREADS;
            for (int k = 0; k < GEMM_TK; k++) {
                ACC a[4], b[4];
                for (int r = 0; r < 4; r++)
                    a[r] = As[k*GEMM_LD+ty+16*r];
                for (int c = 0; c < 4; c++)
                    b[c] = Bs[k*GEMM_LD+tx+16*c];
                for (int r = 0; r < 4; r++)
                    for (int c = 0; c < 4; c++)
                        acc[r][c] += a[r]*b[c];
            }
            SYNC_THREADS;
        }
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) {
                const int i = i0+ty+16*r, j = j0+tx+16*c;
                if (i < M && j < N) {
                    const ACC v = (subtract ? -acc[r][c] : acc[r][c]);
                    if (accumulate)
                        AT(C, cOff, ldc, i, j) += v;
                    else
                        AT(C, cOff, ldc, i, j) = v;
                }
            }
    }
}
