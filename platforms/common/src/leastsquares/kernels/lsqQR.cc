/**
 * Blocked Householder QR of W = [A | B] (m x (n + nrhs), column-major, ld m) with the compact WY
 * representation (LAPACK dgeqrf + dlarft + dlarfb): Q^T is applied to the right-hand sides as to the
 * trailing columns, so that after the factorization W holds R (strict upper part, R(k,k) in rdiag)
 * and Q^T b in its last nrhs columns. Per panel of NB columns:
 *   householderVector / householderPanelApply  the reflectors of the panel, one column at a time;
 *   qrCopyPanel  V = the panel's reflectors with explicit zeros above them (so V enters products whole);
 *   gemmAcc      S = V^T V;   qrBuildT  T (upper triangular, H_1...H_kb = I - V T V^T);
 *   gemmAcc x 3  C -= V (T^T (V^T C)) on every column right of the panel, b included.
 * Reflector k: v = x - alpha e_k over rows k..m-1, alpha = -sign(x_k) ||x||, H = I - beta v v^T with
 * beta = 1/(||x||^2 - alpha x_k) = 2/(v^T v); v stays in column k, R(k,k) = alpha goes to rdiag.
 */

KERNEL void householderVector(int m, int k, GLOBAL ACC* RESTRICT W, GLOBAL ACC* RESTRICT rdiag, GLOBAL ACC* RESTRICT beta) {
    LOCAL ACC scratch[BLOCK];
    GLOBAL ACC* x = W+(size_t) k*m;
    ACC partial = 0;
    for (int i = k+LOCAL_ID; i < m; i += BLOCK)
        partial += x[i]*x[i];
    ACC norm2;
    BLOCK_SUM(partial, scratch, norm2);
    if (LOCAL_ID == 0) {
        const ACC xk = x[k];
        const ACC norm = SQRT(norm2);
        const ACC alpha = (xk > 0 ? -norm : norm);
        rdiag[k] = alpha;
        if (norm2 > 0) {
            beta[k] = 1/(norm2-alpha*xk);
            x[k] = xk-alpha;
        }
        else
            beta[k] = 0;
    }
}

/** Apply reflector k to columns k+1..panelEnd-1 (inside the panel), one work group per column. */
KERNEL void householderPanelApply(int m, int k, int panelEnd, GLOBAL ACC* RESTRICT W, GLOBAL const ACC* RESTRICT beta) {
    LOCAL ACC scratch[BLOCK];
    const GLOBAL ACC* v = W+(size_t) k*m;
    for (int c = k+1+GROUP_ID; c < panelEnd; c += NUM_GROUPS) {
        GLOBAL ACC* y = W+(size_t) c*m;
        ACC partial = 0;
        for (int i = k+LOCAL_ID; i < m; i += BLOCK)
            partial += v[i]*y[i];
        ACC dot;
        BLOCK_SUM(partial, scratch, dot);
        const ACC s = beta[k]*dot;
        for (int i = k+LOCAL_ID; i < m; i += BLOCK)
            y[i] -= s*v[i];
        SYNC_THREADS;
    }
}

/** V(i, j) = v_{k0+j}(i) for rows i = k0..m-1 (ld m): zero above the reflector's first row. */
KERNEL void qrCopyPanel(int m, int k0, int kb, GLOBAL const ACC* RESTRICT W, GLOBAL ACC* RESTRICT V) {
    const int rows = m-k0;
    for (int index = GLOBAL_ID; index < rows*kb; index += GLOBAL_SIZE) {
        const int i = k0+index%rows, j = index/rows;
        AT(V, 0, m, i, j) = (i >= k0+j ? AT(W, 0, m, i, k0+j) : (ACC) 0);
    }
}

/**
 * T of the panel (ld NB): T(j,j) = beta_j, T(0:j, j) = -beta_j T(0:j, 0:j) S(0:j, j) with S = V^T V
 * (dlarft, forward, columnwise); zero below the diagonal. One work group.
 */
KERNEL void qrBuildT(int k0, int kb, GLOBAL const ACC* RESTRICT S, GLOBAL const ACC* RESTRICT beta, GLOBAL ACC* RESTRICT T) {
    for (int index = LOCAL_ID; index < NB*NB; index += LOCAL_SIZE)
        T[index] = 0;
    SYNC_THREADS;
    for (int j = 0; j < kb; j++) {
        const ACC bj = beta[k0+j];
        for (int i = LOCAL_ID; i < j; i += LOCAL_SIZE) {
            ACC t = 0;
            for (int l = i; l < j; l++)
                t += T[i+l*NB]*S[l+j*NB];
            T[i+j*NB] = -bj*t;
        }
        if (LOCAL_ID == 0)
            T[j+j*NB] = bj;
        SYNC_THREADS;
    }
}

/** After the factorization: R(k,k) into the diagonal of W (the reflectors are no longer needed). */
KERNEL void qrSetDiagonal(int m, int n, GLOBAL ACC* RESTRICT W, GLOBAL const ACC* RESTRICT rdiag) {
    for (int k = GLOBAL_ID; k < n; k += GLOBAL_SIZE)
        AT(W, 0, m, k, k) = rdiag[k];
}
