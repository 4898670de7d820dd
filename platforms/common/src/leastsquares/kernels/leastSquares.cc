/**
 * Least squares on the GPU platforms (issue 4), written once against OpenMM's Compute API.
 *
 * Types (set by the host from the platform's precision):
 *   STORE  the type A and b are uploaded in (float for single and mixed, double for double);
 *   ACC    the type of A^T A, A^T b, the factorizations and all accumulation
 *          (float for single, double for mixed and double).
 * Matrices: A row-major m x n (normal equations), or column-major (QR); G = A^T A row-major
 * n x n; right-hand sides column-major (each right-hand side contiguous).
 * BLOCK is the work-group size of the one-work-group kernels (a power of two).
 * OpenMM caps the number of work groups of a launch (ComputeKernel::execute), so every kernel
 * that works per group loops over its items with a stride of NUM_GROUPS.
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

/**
 * G = A^T A (upper triangle by 16 x 16 tiles, mirrored), one 256-thread work group per tile.
 */
KERNEL void normalMatrix(int m, int n, GLOBAL const STORE* RESTRICT A, GLOBAL ACC* RESTRICT G) {
    LOCAL ACC tileI[16*16];
    LOCAL ACC tileJ[16*16];
    const int tiles = (n+15)/16;
    for (int tile = GROUP_ID; tile < tiles*tiles; tile += NUM_GROUPS) {
    const int bi = tile / tiles, bj = tile % tiles;
    if (bj < bi)
        continue; // the whole group skips together
    const int ti = LOCAL_ID / 16, tj = LOCAL_ID % 16;
    const int i = bi*16+ti, j = bj*16+tj;
    ACC sum = 0;
    for (int k0 = 0; k0 < m; k0 += 16) {
        const int row = k0+ti;
        tileI[ti*16+tj] = (row < m && bi*16+tj < n ? (ACC) A[(size_t) row*n+bi*16+tj] : (ACC) 0);
        tileJ[ti*16+tj] = (row < m && j < n ? (ACC) A[(size_t) row*n+j] : (ACC) 0);
        SYNC_THREADS;
        for (int k = 0; k < 16; k++)
            sum += tileI[k*16+ti]*tileJ[k*16+tj];
        SYNC_THREADS;
    }
    if (i < n && j < n && j >= i) {
        G[(size_t) i*n+j] = sum;
        G[(size_t) j*n+i] = sum;
    }
    }
}

/** H = A^T b: H[r*n+j] = sum_i A[i*n+j] b[r*m+i] (b column-major m x nrhs). */
KERNEL void normalRhs(int m, int n, int nrhs, GLOBAL const STORE* RESTRICT A, GLOBAL const STORE* RESTRICT b, GLOBAL ACC* RESTRICT H) {
    for (int index = GLOBAL_ID; index < n*nrhs; index += GLOBAL_SIZE) {
        const int j = index % n, r = index / n;
        ACC sum = 0;
        for (int i = 0; i < m; i++)
            sum += (ACC) A[(size_t) i*n+j]*(ACC) b[(size_t) r*m+i];
        H[index] = sum;
    }
}

/* ------------------------------------------------------------------------------ Cholesky */

/** Column j of L = chol(G), right-looking: L[i][j] = G[i][j]/sqrt(G[j][j]) for i > j, diag[j] = sqrt(G[j][j]). */
KERNEL void choleskyColumn(int n, int j, GLOBAL ACC* RESTRICT G, GLOBAL ACC* RESTRICT diag, GLOBAL int* RESTRICT failure) {
    const ACC pivot = G[(size_t) j*n+j];
    for (int i = j+GLOBAL_ID; i < n; i += GLOBAL_SIZE) {
        if (!(pivot > 0)) {
            if (i == j && failure[0] < 0)
                failure[0] = j; // the first breakdown column; one writer per launch
            continue;
        }
        const ACC d = SQRT(pivot);
        if (i == j)
            diag[j] = d;
        else
            G[(size_t) i*n+j] /= d;
    }
}

/** Trailing update G[i][k] -= L[i][j] L[k][j] for j < k <= i (lower triangle). */
KERNEL void choleskyUpdate(int n, int j, GLOBAL ACC* RESTRICT G) {
    const int size = n-j-1;
    for (int index = GLOBAL_ID; index < size*size; index += GLOBAL_SIZE) {
        const int i = j+1+index/size, k = j+1+index%size;
        if (k <= i)
            G[(size_t) i*n+k] -= G[(size_t) i*n+j]*G[(size_t) k*n+j];
    }
}

/** Solve L L^T x = h in place for each right-hand side (one work group per right-hand side). */
KERNEL void choleskySolve(int n, int nrhs, GLOBAL const ACC* RESTRICT G, GLOBAL const ACC* RESTRICT diag, GLOBAL ACC* RESTRICT H) {
    LOCAL ACC value;
    for (int rhs = GROUP_ID; rhs < nrhs; rhs += NUM_GROUPS) {
    GLOBAL ACC* h = H+(size_t) rhs*n;
    for (int j = 0; j < n; j++) {       // forward: L y = h
        if (LOCAL_ID == 0) {
            value = h[j]/diag[j];
            h[j] = value;
        }
        SYNC_THREADS;
        const ACC y = value;
        for (int i = j+1+LOCAL_ID; i < n; i += LOCAL_SIZE)
            h[i] -= G[(size_t) i*n+j]*y;
        SYNC_THREADS;
    }
    for (int j = n-1; j >= 0; j--) {    // backward: L^T x = y
        if (LOCAL_ID == 0) {
            value = h[j]/diag[j];
            h[j] = value;
        }
        SYNC_THREADS;
        const ACC x = value;
        for (int i = LOCAL_ID; i < j; i += LOCAL_SIZE)
            h[i] -= G[(size_t) j*n+i]*x;
        SYNC_THREADS;
    }
    }
}

/* --------------------------------------------------------- Gauss (LU with partial pivoting) */

/** Step j: find the pivot row p = argmax_{i>=j} |G[i][j]|, swap rows j and p of G and of every right-hand side. */
KERNEL void gaussPivot(int n, int nrhs, int j, GLOBAL ACC* RESTRICT G, GLOBAL ACC* RESTRICT H, GLOBAL ACC* RESTRICT pivots) {
    LOCAL ACC bestValue[BLOCK];
    LOCAL int bestRow[BLOCK];
    ACC best = -1;
    int row = j;
    for (int i = j+LOCAL_ID; i < n; i += BLOCK) {
        const ACC v = fabs(G[(size_t) i*n+j]);
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
    if (LOCAL_ID == 0)
        pivots[j] = bestValue[0];
    if (p != j) {
        for (int k = j+LOCAL_ID; k < n; k += BLOCK) {
            const ACC t = G[(size_t) j*n+k];
            G[(size_t) j*n+k] = G[(size_t) p*n+k];
            G[(size_t) p*n+k] = t;
        }
        for (int r = LOCAL_ID; r < nrhs; r += BLOCK) {
            const ACC t = H[(size_t) r*n+j];
            H[(size_t) r*n+j] = H[(size_t) r*n+p];
            H[(size_t) r*n+p] = t;
        }
    }
}

/** Step j: eliminate below the pivot in G (columns > j) and in the right-hand sides. Column j itself is left stale. */
KERNEL void gaussEliminate(int n, int nrhs, int j, GLOBAL ACC* RESTRICT G, GLOBAL ACC* RESTRICT H) {
    const int rows = n-j-1, cols = n-j-1+nrhs;
    const ACC pivot = G[(size_t) j*n+j];
    for (int index = GLOBAL_ID; index < rows*cols; index += GLOBAL_SIZE) {
        const int i = j+1+index/cols, c = index%cols;
        const ACC factor = G[(size_t) i*n+j]/pivot;
        if (c < n-j-1) {
            const int k = j+1+c;
            G[(size_t) i*n+k] -= factor*G[(size_t) j*n+k];
        }
        else {
            const int r = c-(n-j-1);
            H[(size_t) r*n+i] -= factor*H[(size_t) r*n+j];
        }
    }
}

/** Back substitution with the upper triangle of G (one work group per right-hand side). */
KERNEL void upperSolve(int n, int nrhs, GLOBAL const ACC* RESTRICT U, GLOBAL ACC* RESTRICT H) {
    // U(i, j) = U[i*n+j] for i <= j (row-major upper triangle).
    LOCAL ACC value;
    for (int rhs = GROUP_ID; rhs < nrhs; rhs += NUM_GROUPS) {
    GLOBAL ACC* h = H+(size_t) rhs*n;
    for (int j = n-1; j >= 0; j--) {
        if (LOCAL_ID == 0) {
            value = h[j]/U[(size_t) j*n+j];
            h[j] = value;
        }
        SYNC_THREADS;
        const ACC x = value;
        for (int i = LOCAL_ID; i < j; i += LOCAL_SIZE)
            h[i] -= U[(size_t) i*n+j]*x;
        SYNC_THREADS;
    }
    }
}

/* ------------------------------------------------------------------------------ Gauss-Seidel */

/** One Gauss-Seidel (SOR) sweep over G x = h, one work group of BLOCK threads per right-hand side. */
KERNEL void gaussSeidelSweep(int n, int nrhs, GLOBAL const ACC* RESTRICT G, GLOBAL const ACC* RESTRICT H, GLOBAL ACC* RESTRICT X, ACC omega) {
    LOCAL ACC scratch[BLOCK];
    for (int rhs = GROUP_ID; rhs < nrhs; rhs += NUM_GROUPS) {
    const GLOBAL ACC* h = H+(size_t) rhs*n;
    GLOBAL ACC* x = X+(size_t) rhs*n;
    for (int i = 0; i < n; i++) {
        ACC partial = 0;
        for (int k = LOCAL_ID; k < n; k += BLOCK)
            partial += G[(size_t) i*n+k]*x[k];
        ACC dot;
        BLOCK_SUM(partial, scratch, dot);
        if (LOCAL_ID == 0)
            x[i] += omega*(h[i]-dot)/G[(size_t) i*n+i];
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
            r -= G[(size_t) k*n+i]*x[k]; // G symmetric: column i read with neighbouring threads on neighbouring addresses
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

/* ------------------------------------------------------------------------ Householder QR */

/**
 * Reflector k of the QR of the column-major m x n matrix Q (in place): v = x - alpha e_k over rows k..m-1,
 * alpha = -sign(x_k) ||x||; R(k,k) = alpha goes to rdiag[k], v stays in column k, beta[k] = 1/(||x||^2 - alpha x_k).
 */
KERNEL void householderVector(int m, int k, GLOBAL ACC* RESTRICT Q, GLOBAL ACC* RESTRICT rdiag, GLOBAL ACC* RESTRICT beta) {
    LOCAL ACC scratch[BLOCK];
    GLOBAL ACC* x = Q+(size_t) k*m;
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

/** Apply reflector k to columns k+1..n-1 of Q and to every right-hand side in B (m x nrhs), one work group per column. */
KERNEL void householderApply(int m, int n, int nrhs, int k, GLOBAL ACC* RESTRICT Q, GLOBAL ACC* RESTRICT B, GLOBAL const ACC* RESTRICT beta) {
    LOCAL ACC scratch[BLOCK];
    for (int c = GROUP_ID; c < n-k-1+nrhs; c += NUM_GROUPS) {
    GLOBAL ACC* y = (k+1+c < n ? Q+(size_t) (k+1+c)*m : B+(size_t) (k+1+c-n)*m);
    const GLOBAL ACC* v = Q+(size_t) k*m;
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

/** Back substitution R x = (Q^T b)[0:n]: R(i,j) = Q[j*m+i] above the diagonal, R(j,j) = rdiag[j]; one work group per right-hand side. */
KERNEL void qrSolve(int m, int n, int nrhs, GLOBAL const ACC* RESTRICT Q, GLOBAL const ACC* RESTRICT rdiag, GLOBAL ACC* RESTRICT B) {
    LOCAL ACC value;
    for (int rhs = GROUP_ID; rhs < nrhs; rhs += NUM_GROUPS) {
    GLOBAL ACC* h = B+(size_t) rhs*m;
    for (int j = n-1; j >= 0; j--) {
        if (LOCAL_ID == 0) {
            value = h[j]/rdiag[j];
            h[j] = value;
        }
        SYNC_THREADS;
        const ACC x = value;
        for (int i = LOCAL_ID; i < j; i += LOCAL_SIZE)
            h[i] -= Q[(size_t) j*m+i]*x;
        SYNC_THREADS;
    }
    }
}
