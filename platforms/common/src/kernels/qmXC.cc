/**
 * Exchange-correlation of the QM region on the device (LDA: Slater exchange + VWN correlation), one
 * geometry's grid in batches of points (the engine's cube and sphere groups, seed 001 ch. 3), each with
 * its significant shells. Everything in double precision and atomic units.
 *
 * Layout: points are concatenated batch by batch; the basis values of batch b are a row-major
 * (points x nf_b) matrix at phi[batchPhiStart[b] - phiBase], its functions (ascending AO indices) at
 * batchFunctions[batchFunctionStart[b]]. Defines from the host (XCProgram.h): VWN_A, VWN_X0, VWN_B, VWN_C (the
 * correlation fit), and the sizes that its launches and work lists share with the kernels: XC_BLOCK, XC_TILE,
 * XC_GROUP, BATCH_SUM_GROUP, FUNCTION_GRADIENT_SLICES, PARTITION_MAX_ATOMS, PARTITION_GROUP and DF_GROUP.
 * OpenMM caps the number of work groups of a launch, so every kernel loops with a grid stride.
 */

#define PI_QM 3.14159265358979323846

/* shellValues(), a shell's values and gradients at a point, is the engine's own (qmengine/src/shared/shellValues.cc):
 * CommonXCBackendFactory compiles it in front of this file, and the host evaluates basis functions with the same code. */

/**
 * Basis values of the points [firstPoint, firstPoint + numPoints), each point's row of its batch's matrix in phi,
 * and with withGradients their gradients in dphiX, dphiY, dphiZ (the same layout; not touched otherwise).
 */
KERNEL void evaluateBasis(int firstPoint, int numPoints, GLOBAL const double* RESTRICT pointX, GLOBAL const double* RESTRICT pointY,
                          GLOBAL const double* RESTRICT pointZ, GLOBAL const int* RESTRICT pointBatch,
                          GLOBAL const int* RESTRICT batchPointStart, GLOBAL const int* RESTRICT batchNumFunctions,
                          GLOBAL const int* RESTRICT batchPhiStart, int phiBase, GLOBAL const int* RESTRICT batchShellStart,
                          GLOBAL const int* RESTRICT batchNumShells, GLOBAL const int* RESTRICT batchShells,
                          GLOBAL const int* RESTRICT batchShellColumn, GLOBAL const double* RESTRICT shellCenter,
                          GLOBAL const int* RESTRICT shellL, GLOBAL const int* RESTRICT shellPure,
                          GLOBAL const int* RESTRICT shellPrimStart, GLOBAL const int* RESTRICT shellNumPrim,
                          GLOBAL const double* RESTRICT primExponent, GLOBAL const double* RESTRICT primCoefficient,
                          GLOBAL const double* RESTRICT pureMatrix, int withGradients,
                          GLOBAL double* RESTRICT phi, GLOBAL double* RESTRICT dphiX, GLOBAL double* RESTRICT dphiY,
                          GLOBAL double* RESTRICT dphiZ) {
    for (int pt = firstPoint+GLOBAL_ID; pt < firstPoint+numPoints; pt += GLOBAL_SIZE) {
        const int b = pointBatch[pt];
        const int row = (batchPhiStart[b]-phiBase) + (pt-batchPointStart[b])*batchNumFunctions[b];
        for (int k = batchShellStart[b]; k < batchShellStart[b]+batchNumShells[b]; k++) {
            const int s = batchShells[k], col = row + batchShellColumn[k];
            shellValues(s, pointX[pt]-shellCenter[3*s], pointY[pt]-shellCenter[3*s+1], pointZ[pt]-shellCenter[3*s+2], shellL, shellPure,
                        shellPrimStart, shellNumPrim, primExponent, primCoefficient, pureMatrix, withGradients, phi+col,
                        dphiX+col, dphiY+col, dphiZ+col);
        }
    }
}

/** VWN correlation energy per electron and potential at x = sqrt(rs) (Vosko, Wilk, Nusair 1980). */
DEVICE void vwnCorrelation(double rho, double* eps, double* v) {
    const double rs = cbrt(3.0/(4.0*PI_QM*rho));
    const double x = sqrt(rs);
    const double X = x*x + VWN_B*x + VWN_C;
    const double X0 = VWN_X0*VWN_X0 + VWN_B*VWN_X0 + VWN_C;
    const double Q = sqrt(4.0*VWN_C - VWN_B*VWN_B);
    const double t = 2.0*x + VWN_B;
    const double at = atan(Q/t);
    const double k = VWN_B*VWN_X0/X0;
    const double e = VWN_A*(log(x*x/X) + 2.0*VWN_B/Q*at - k*(log((x-VWN_X0)*(x-VWN_X0)/X) + 2.0*(VWN_B+2.0*VWN_X0)/Q*at));
    const double den = t*t + Q*Q;
    const double de = VWN_A*(2.0/x - t/X - 4.0*VWN_B/den - k*(2.0/(x-VWN_X0) - t/X - 4.0*(VWN_B+2.0*VWN_X0)/den));
    *eps = e;
    *v = e - x/6.0*de;
}

/** Slater exchange + VWN correlation: energy per electron and potential; zero below the host's (and Libxc's) threshold. */
DEVICE void ldaPoint(double rho, double* eps, double* v) {
    *eps = 0;
    *v = 0;
    if (rho > 1e-14) {
        const double c = cbrt(3.0/PI_QM), r13 = cbrt(rho);
        double ec, vc;
        vwnCorrelation(rho, &ec, &vc);
        *eps = -0.75*c*r13 + ec;
        *v = -c*r13 + vc;
    }
}

/* ---- The XC energy and matrix of one SCF iteration, as tiled products (GauXC's design) -----------------
 * Per batch b, with Phi_b its (points x nf) basis values and D_b = D[fn, fn]:
 *   X = Phi_b D_b,  rho_p = sum_i Phi_b(p,i) X(p,i),  then the functional,  V_b = Phi_b^T diag(w v) Phi_b,
 * both products tiled through local memory, XC_GROUP (256) work items per group. V_b is added into the AO matrix by
 * 64-bit fixed-point atomics (integer sums do not depend on their order, so V is reproducible bit for bit,
 * as OpenMM's forces are), and fixedToMatrix() converts and symmetrizes. Work lists (density blocks of
 * XC_BLOCK points, lower-triangle V tiles of XC_TILE x XC_TILE) are built on the host per geometry. */

#if !defined(XC_BLOCK) || !defined(XC_TILE) || !defined(XC_GROUP) || !defined(BATCH_SUM_GROUP) || !defined(FUNCTION_GRADIENT_SLICES) || \
    !defined(PARTITION_MAX_ATOMS) || !defined(PARTITION_GROUP) || !defined(DF_GROUP)
#error "the XC program's sizes are defines from the host (XCProgram.h: xcProgramDefines)"
#endif
/* The tiled kernels are written for their work group as 16 x 16 items: each takes rows ty and ty + 16 of a density
 * block and 4 columns 16 apart of a tile, and the tiles are loaded XC_GROUP elements at a time. */
#if XC_GROUP != 256 || XC_BLOCK != 32 || XC_TILE != 64
#error "densityBlocks and matrixTiles are written for XC_GROUP 256, XC_BLOCK 32 and XC_TILE 64"
#endif
#define XC_K 16
/** V elements are far below 2^23 in magnitude (|v_xc| times a normalised function product), and 2^-40 is
 * far below the SCF's needs. */
#define XC_FIXED_SCALE 1099511627776.0

/**
 * Density blocks [firstBlock, lastBlock): each XC_BLOCK points of one batch. X is formed in column tiles of
 * XC_TILE columns (each thread 2 points x 4 columns), rho summed per point in local memory; then
 * wv = w v_xc, pointEnergy = w rho eps_xc, pointElectrons = w rho. X = Phi D (rho = sum X Phi) over the batch's nf
 * functions, or, where numOccupied > 0 and fewer than nf (the host's rule too), X = Phi F over the occupied
 * orbitals of D = F F^T (rho = sum X^2; numOccupied x nf instead of nf x nf products per point; F row-major,
 * nbf x numOccupied). With withX (the gradient, always by D) also X itself, in the layout of phi, and
 * f = rho eps_xc per point. Work that cannot contribute is skipped, uniformly over the work group: a tile's 16-column
 * sub-blocks beyond the columns, the last step's functions beyond nf, and the second row of points where the block
 * has at most 16; for 24 waters in DZVP the multiply-adds of a density by orbitals go from 12.2 G to 11.1 G (10.3 G
 * useful), by D (the gradient) from 17.9 G to 14.7 G (14.0 G useful). Bounded on CUDA to four work groups per
 * multiprocessor, its occupancy without the skips (ptxas: 64 registers, no stack; unbounded 76).
 */
#if defined(__CUDA_ARCH__)
#define DENSITY_BLOCK_BOUNDS __launch_bounds__(XC_GROUP, 4)
#else
#define DENSITY_BLOCK_BOUNDS
#endif
KERNEL DENSITY_BLOCK_BOUNDS void densityBlocks(int firstBlock, int lastBlock, GLOBAL const int* RESTRICT blockBatch,
                          GLOBAL const int* RESTRICT blockFirstPoint, GLOBAL const double* RESTRICT pointW,
                          GLOBAL const int* RESTRICT batchPointStart, GLOBAL const int* RESTRICT batchNumPoints,
                          GLOBAL const int* RESTRICT batchNumFunctions, GLOBAL const int* RESTRICT batchPhiStart, int phiBase,
                          GLOBAL const int* RESTRICT batchFunctionStart, GLOBAL const int* RESTRICT batchFunctions,
                          GLOBAL const double* RESTRICT density, int nbf, GLOBAL const double* RESTRICT phi,
                          GLOBAL double* RESTRICT wv, GLOBAL double* RESTRICT pointEnergy, GLOBAL double* RESTRICT pointElectrons,
                          int withX, GLOBAL double* RESTRICT X, GLOBAL double* RESTRICT f,
                          GLOBAL const double* RESTRICT occupied, int numOccupied) {
    LOCAL double phiTile[XC_BLOCK*(XC_K+1)];   // [point][k]
    LOCAL double dTile[XC_K*(XC_TILE+1)];      // [k][column]
    LOCAL double rhoPart[XC_BLOCK*16];
    const int tx = LOCAL_ID%16, ty = LOCAL_ID/16;
    for (int block = firstBlock+GROUP_ID; block < lastBlock; block += NUM_GROUPS) {
        const int b = blockBatch[block], p0 = blockFirstPoint[block];
        const int np = min(XC_BLOCK, batchPointStart[b]+batchNumPoints[b]-p0);
        const int nf = batchNumFunctions[b];
        GLOBAL const double* P = phi + (batchPhiStart[b]-phiBase) + (p0-batchPointStart[b])*nf;
        GLOBAL const int* fn = batchFunctions + batchFunctionStart[b];
        const bool byOrbitals = numOccupied > 0 && numOccupied < nf;  // the same for the whole work group
        const int columns = byOrbitals ? numOccupied : nf;
        double rho0 = 0, rho1 = 0;  // points ty and ty+16, this thread's columns
        // The second row of points only where the block has more than 16 (uniform over the work group).
        const bool secondRow = np > 16;
        for (int i0 = 0; i0 < columns; i0 += XC_TILE) {
            double acc[2][4];
            for (int c = 0; c < 4; c++)
                acc[0][c] = acc[1][c] = 0;
            // The tile's 16-column sub-blocks that reach into the columns (uniform: they depend on the tile alone).
            const int columnBlocks = min(4, (columns-i0+15)/16);
            for (int k0 = 0; k0 < nf; k0 += XC_K) {
                for (int q = 0; q < XC_BLOCK*XC_K/XC_GROUP; q++) {
                    const int e = LOCAL_ID+XC_GROUP*q, pp = e/XC_K, kk = e%XC_K;
                    phiTile[pp*(XC_K+1)+kk] = (pp < np && k0+kk < nf ? P[pp*nf+k0+kk] : 0.0);
                }
                for (int q = 0; q < XC_K*XC_TILE/XC_GROUP; q++) {
                    const int e = LOCAL_ID+XC_GROUP*q, kk = e/XC_TILE, ii = e%XC_TILE;
                    double value = 0.0;
                    if (k0+kk < nf && i0+ii < columns)
                        value = byOrbitals ? occupied[fn[k0+kk]*numOccupied+i0+ii] : density[fn[k0+kk]*nbf+fn[i0+ii]];
                    dTile[kk*(XC_TILE+1)+ii] = value;
                }
                SYNC_THREADS;
                const int kEnd = min(XC_K, nf-k0);  // the last step's functions only
                for (int k = 0; k < kEnd; k++) {
                    const double a0 = phiTile[ty*(XC_K+1)+k], a1 = phiTile[(ty+16)*(XC_K+1)+k];
                    for (int c = 0; c < 4; c++)
                        if (c < columnBlocks) {
                            const double d = dTile[k*(XC_TILE+1)+tx+16*c];
                            acc[0][c] += a0*d;
                            if (secondRow)
                                acc[1][c] += a1*d;
                        }
                }
                SYNC_THREADS;
            }
            for (int c = 0; c < 4; c++) {
                const int i = i0+tx+16*c;
                if (i < columns) {
                    if (ty < np)
                        rho0 += acc[0][c]*(byOrbitals ? acc[0][c] : P[ty*nf+i]);
                    if (ty+16 < np)
                        rho1 += acc[1][c]*(byOrbitals ? acc[1][c] : P[(ty+16)*nf+i]);
                    if (withX) {
                        GLOBAL double* Xb = X + (P-phi);
                        if (ty < np)
                            Xb[ty*nf+i] = acc[0][c];
                        if (ty+16 < np)
                            Xb[(ty+16)*nf+i] = acc[1][c];
                    }
                }
            }
        }
        rhoPart[ty*16+tx] = rho0;
        rhoPart[(ty+16)*16+tx] = rho1;
        SYNC_THREADS;
        if (LOCAL_ID < np) {
            double rho = 0;
            for (int t = 0; t < 16; t++)
                rho += rhoPart[LOCAL_ID*16+t];
            double eps, v;
            ldaPoint(rho, &eps, &v);
            const int pt = p0+LOCAL_ID;
            const double w = pointW[pt];
            wv[pt] = w*v;
            pointEnergy[pt] = w*rho*eps;
            pointElectrons[pt] = w*rho;
            if (withX)
                f[pt] = rho*eps;
        }
        SYNC_THREADS;
    }
}

/**
 * V tiles [firstTile, lastTile): the XC_TILE x XC_TILE block (tileRow, tileColumn), row >= column, of
 * V_b = Phi_b^T diag(w v) Phi_b, points in steps of XC_K through local memory, each thread 4 x 4 outputs
 * strided by 16; its lower-triangle elements are added to the AO matrix (functions of a batch are in
 * basis order, so local i >= j is global mu >= nu). The tile's 16 x 16 sub-blocks (r, c) that hold no such element
 * are not computed: those beyond the batch's functions (an edge tile of a batch of 139 functions is 11 deep: one
 * row of sub-blocks of four) and those above a diagonal tile's diagonal (c > r). The skips depend on the tile alone,
 * so a work group takes them together; for 24 waters in DZVP they cut the multiply-adds from 13.9 G to 8.5 G (7.0 G
 * are the lower triangles'). Bounded on CUDA to three work groups per multiprocessor, the occupancy of the kernel
 * without the skips (ptxas: 80 registers, no stack; unbounded the skips' predicates took it to 96, two groups).
 */
#if defined(__CUDA_ARCH__)
#define MATRIX_TILE_BOUNDS __launch_bounds__(XC_GROUP, 3)
#else
#define MATRIX_TILE_BOUNDS
#endif
KERNEL MATRIX_TILE_BOUNDS void matrixTiles(int firstTile, int lastTile, GLOBAL const int* RESTRICT tileBatch, GLOBAL const int* RESTRICT tileRow,
                        GLOBAL const int* RESTRICT tileColumn, GLOBAL const int* RESTRICT batchPointStart,
                        GLOBAL const int* RESTRICT batchNumPoints, GLOBAL const int* RESTRICT batchNumFunctions,
                        GLOBAL const int* RESTRICT batchPhiStart, int phiBase, GLOBAL const int* RESTRICT batchFunctionStart,
                        GLOBAL const int* RESTRICT batchFunctions, int nbf, GLOBAL const double* RESTRICT phi,
                        GLOBAL const double* RESTRICT wv, GLOBAL mm_ulong* RESTRICT fixedMatrix) {
    LOCAL double aTile[XC_K*(XC_TILE+1)];  // [point][function]: Phi_b rows
    LOCAL double bTile[XC_K*(XC_TILE+1)];  // w v Phi_b rows
    const int tx = LOCAL_ID%16, ty = LOCAL_ID/16;
    for (int tile = firstTile+GROUP_ID; tile < lastTile; tile += NUM_GROUPS) {
        const int b = tileBatch[tile];
        const int i0 = XC_TILE*tileRow[tile], j0 = XC_TILE*tileColumn[tile];
        const int nf = batchNumFunctions[b], np = batchNumPoints[b], first = batchPointStart[b];
        GLOBAL const double* P = phi + (batchPhiStart[b]-phiBase);
        // Sub-block rows and columns that reach into the batch's functions; a diagonal tile keeps c <= r.
        const int rowBlocks = min(4, (nf-i0+15)/16), columnBlocks = min(4, (nf-j0+15)/16);
        const bool diagonal = (i0 == j0);
        double acc[4][4];
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++)
                acc[r][c] = 0;
        for (int q0 = 0; q0 < np; q0 += XC_K) {
            for (int q = 0; q < XC_K*XC_TILE/XC_GROUP; q++) {
                const int e = LOCAL_ID+XC_GROUP*q, kk = e/XC_TILE, ii = e%XC_TILE, pt = q0+kk;
                aTile[kk*(XC_TILE+1)+ii] = (pt < np && i0+ii < nf ? P[pt*nf+i0+ii] : 0.0);
                bTile[kk*(XC_TILE+1)+ii] = (pt < np && j0+ii < nf ? wv[first+pt]*P[pt*nf+j0+ii] : 0.0);
            }
            SYNC_THREADS;
            for (int k = 0; k < XC_K; k++) {
                double a[4], c4[4];
                for (int r = 0; r < 4; r++)
                    a[r] = aTile[k*(XC_TILE+1)+ty+16*r];
                for (int c = 0; c < 4; c++)
                    c4[c] = bTile[k*(XC_TILE+1)+tx+16*c];
                for (int r = 0; r < 4; r++)
                    for (int c = 0; c < 4; c++)
                        if (r < rowBlocks && c < columnBlocks && (!diagonal || c <= r))
                            acc[r][c] += a[r]*c4[c];
            }
            SYNC_THREADS;
        }
        GLOBAL const int* fn = batchFunctions + batchFunctionStart[b];
        for (int r = 0; r < 4; r++)
            for (int c = 0; c < 4; c++) {
                const int i = i0+ty+16*r, j = j0+tx+16*c;
                if (i < nf && j <= i)
                    ATOMIC_ADD(&fixedMatrix[fn[i]*nbf+fn[j]], (mm_ulong) ((mm_long) (acc[r][c]*XC_FIXED_SCALE)));
            }
    }
}

/** V (nbf x nbf, symmetric) from its fixed-point lower triangle, which is cleared for the next iteration. */
KERNEL void fixedToMatrix(int nbf, GLOBAL mm_ulong* RESTRICT fixedMatrix, GLOBAL double* RESTRICT matrix) {
    for (int index = GLOBAL_ID; index < nbf*nbf; index += GLOBAL_SIZE) {
        const int mu = index/nbf, nu = index-mu*nbf;
        if (nu > mu)
            continue;
        const double value = ((mm_long) fixedMatrix[index])/XC_FIXED_SCALE;
        fixedMatrix[index] = 0;
        matrix[mu*nbf+nu] = value;
        matrix[nu*nbf+mu] = value;
    }
}

/** Per batch: its XC energy and electron count (sums[2b], sums[2b+1]), for the host to add in batch order. One work
 * group per batch, its items taking every BATCH_SUM_GROUP-th point and adding up in a fixed tree, so that the sums do
 * not depend on scheduling. (With one work item per batch, a serial loop over up to thousands of points each, the
 * kernel took 0.8 ms per SCF iteration on an H200 at 3% occupancy.) */
KERNEL void batchSums(int numBatches, GLOBAL const int* RESTRICT batchPointStart, GLOBAL const int* RESTRICT batchNumPoints,
                      GLOBAL const double* RESTRICT pointEnergy, GLOBAL const double* RESTRICT pointElectrons,
                      GLOBAL double* RESTRICT sums) {
    LOCAL double energy[BATCH_SUM_GROUP], electrons[BATCH_SUM_GROUP];
    for (int b = GROUP_ID; b < numBatches; b += NUM_GROUPS) {
        double e = 0, n = 0;
        const int end = batchPointStart[b]+batchNumPoints[b];
        for (int q = batchPointStart[b]+LOCAL_ID; q < end; q += BATCH_SUM_GROUP) {
            e += pointEnergy[q];
            n += pointElectrons[q];
        }
        energy[LOCAL_ID] = e;
        electrons[LOCAL_ID] = n;
        SYNC_THREADS;
        for (int width = BATCH_SUM_GROUP/2; width > 0; width /= 2) {
            if (LOCAL_ID < width) {
                energy[LOCAL_ID] += energy[LOCAL_ID+width];
                electrons[LOCAL_ID] += electrons[LOCAL_ID+width];
            }
            SYNC_THREADS;
        }
        if (LOCAL_ID == 0) {
            sums[2*b] = energy[0];
            sums[2*b+1] = electrons[0];
        }
        SYNC_THREADS;  // item 0 has read the sums before any item writes the next batch's
    }
}

/* ---- The XC gradient: basis-function and point-motion terms on the device ----------------------------
 * With X = Phi D (per point, the batch's functions): rho = sum_u phi_u X_u, and with M_u^d = 2 w v dphi_u^d X_u
 * the functions on atom C get -sum_p M_u^d, and on the moving grid each point's parent atom gets
 * +sum_u M_u^d. The partition-weight terms need only f = rho eps_xc per point. X, rho, the functional and f
 * come from densityBlocks (the SCF's tiled product, with withX). Chunk buffers (phi, dphi from evaluateBasis
 * with gradients, X) hold the batches [firstBatch, lastBatch) from phiBase. */

/** Per point: sum_u M_u^d, from X, wv and the basis gradients (densityBlocks with withX formed X, wv and f). */
KERNEL void gradientPoints(int firstPoint, int numPoints, GLOBAL const int* RESTRICT pointBatch,
                           GLOBAL const int* RESTRICT batchPointStart, GLOBAL const int* RESTRICT batchNumFunctions,
                           GLOBAL const int* RESTRICT batchPhiStart, int phiBase, GLOBAL const double* RESTRICT dphiX,
                           GLOBAL const double* RESTRICT dphiY, GLOBAL const double* RESTRICT dphiZ, GLOBAL const double* RESTRICT X,
                           GLOBAL const double* RESTRICT wv, GLOBAL double* RESTRICT pointGradient) {
    for (int pt = firstPoint+GLOBAL_ID; pt < firstPoint+numPoints; pt += GLOBAL_SIZE) {
        const int b = pointBatch[pt];
        const int nf = batchNumFunctions[b];
        const int row = (batchPhiStart[b]-phiBase) + (pt-batchPointStart[b])*nf;
        double gx = 0, gy = 0, gz = 0;
        for (int i = 0; i < nf; i++) {
            gx += dphiX[row+i]*X[row+i];
            gy += dphiY[row+i]*X[row+i];
            gz += dphiZ[row+i]*X[row+i];
        }
        const double twoWv = 2.0*wv[pt];
        pointGradient[3*pt] = twoWv*gx;
        pointGradient[3*pt+1] = twoWv*gy;
        pointGradient[3*pt+2] = twoWv*gz;
    }
}

/** Per function u of the batches [firstBatch, lastBatch) and slice s: sum over the batch's points q = s, s + SLICES, ...
 * of M_u^d, into partial[(3 u + d) SLICES + s] (sumPartialColumns() adds the slices in order). Consecutive work items
 * take consecutive functions of one slice, so that they read consecutive addresses. (With one work item per function
 * and all its points, the kernel ran at 6% occupancy on an H200: too few items.) */
KERNEL void gradientFunctions(int firstBatch, int lastBatch, GLOBAL const int* RESTRICT batchFunctionStart,
                              GLOBAL const int* RESTRICT batchPointStart, GLOBAL const int* RESTRICT batchNumPoints,
                              GLOBAL const int* RESTRICT batchNumFunctions, GLOBAL const int* RESTRICT batchPhiStart, int phiBase,
                              GLOBAL const double* RESTRICT dphiX, GLOBAL const double* RESTRICT dphiY,
                              GLOBAL const double* RESTRICT dphiZ, GLOBAL const double* RESTRICT X, GLOBAL const double* RESTRICT wv,
                              GLOBAL double* RESTRICT partial) {
    const int begin = batchFunctionStart[firstBatch], end = batchFunctionStart[lastBatch], count = end-begin;
    for (int item = GLOBAL_ID; item < count*FUNCTION_GRADIENT_SLICES; item += GLOBAL_SIZE) {
        const int index = begin+item%count, slice = item/count;
        int low = firstBatch, high = lastBatch-1;
        while (low < high) {
            const int mid = (low+high+1)/2;
            if (batchFunctionStart[mid] <= index)
                low = mid;
            else
                high = mid-1;
        }
        const int b = low, i = index-batchFunctionStart[b], nf = batchNumFunctions[b];
        const int base = batchPhiStart[b]-phiBase, first = batchPointStart[b];
        double gx = 0, gy = 0, gz = 0;
        for (int q = slice; q < batchNumPoints[b]; q += FUNCTION_GRADIENT_SLICES) {
            const int k = base + q*nf + i;
            const double m = 2.0*wv[first+q]*X[k];
            gx += m*dphiX[k];
            gy += m*dphiY[k];
            gz += m*dphiZ[k];
        }
        partial[(3*index)*FUNCTION_GRADIENT_SLICES+slice] = gx;
        partial[(3*index+1)*FUNCTION_GRADIENT_SLICES+slice] = gy;
        partial[(3*index+2)*FUNCTION_GRADIENT_SLICES+slice] = gz;
    }
}

/* ---- The partition-weight derivatives of the XC gradient ----------------------------------------------
 * On the moving grid, point p of atom A has the weight w_p = w_rad w_ang W_A(r_p), W_A = P_A / Z with
 * Z = sum_c P_c and P_c = prod_{d != c} s(nu_cd) (Becke, J. Chem. Phys. 88, 2547 (1988); or Stratmann,
 * Scuseria and Frisch, Chem. Phys. Lett. 257, 213 (1996)). With f_p = rho eps_xc and the point moving
 * with A, atom B != A gets f w / W dW_A/dR_B and A gets minus their sum: the host's
 * xcPartitionWeightGradient, with the same screening of cells. The points are dealt to `columns` columns of
 * PARTITION_GROUP work items each (stride columns x PARTITION_GROUP); a work group takes the next column from a
 * counter (zero at the launch's start, and again at its end: finishWork(), qmWorkCounter.cc; OpenMM launches more
 * work groups than fit at once, and with a fixed share each the late ones ran alone), its items add their terms to
 * the column's gradient in local memory, in 64-bit fixed point (at most PARTITION_MAX_ATOMS atoms, else the host does
 * this), written to the column's place in partial (3 n x columns);
 * sumPartialColumns() adds the columns in order, so the result does not depend on scheduling. (A private gradient per
 * item, summed over the group in a tree, took 3 KB of stack per item and 226 registers on sm_90. With one
 * column per work item, 32768 of them, an H200 held the kernel at 11% occupancy.) The derivative of a cell's product
 * by one factor is the product divided by that factor (the host divides too, and where a factor could be too small for
 * that, forms prefix x suffix products; here none can be: see the kernel). */

/** The next column for the calling work group (every item of the group calls it): counter holds how many columns
 * have been taken. */
DEVICE int nextColumn(GLOBAL mm_ulong* RESTRICT counter, LOCAL_ARG int* column) {
    SYNC_THREADS;  // every item has read the previous column
    if (LOCAL_ID == 0)
        column[0] = (int) ATOMIC_ADD(counter, (mm_ulong) 1);
    SYNC_THREADS;
    return column[0];
}

/** The cell function s(nu) and its slope ds/dnu (Becke's three iterations, or SSF's polynomial). */
DEVICE void cellValueAndSlope(int ssf, double ssfA, double nu, double* value, double* slope) {
    if (!ssf) {
        double f = nu, d = 1;
        for (int k = 0; k < 3; k++) {
            d *= 1.5-1.5*f*f;
            f = 1.5*f-0.5*f*f*f;
        }
        *value = 0.5*(1-f);
        *slope = -0.5*d;
        return;
    }
    if (nu <= -ssfA || nu >= ssfA) {
        *value = (nu <= -ssfA ? 1.0 : 0.0);
        *slope = 0;
        return;
    }
    const double z = nu/ssfA, z2 = z*z;
    *value = 0.5*(1-z*(35+z2*(-35+z2*(21-5*z2)))/16);
    *slope = -0.5*(35+z2*(-105+z2*(105-35*z2)))/16/ssfA;
}

DEVICE double distanceTo(GLOBAL const double* RESTRICT atomXYZ, int b, double x, double y, double z) {
    const double dx = x-atomXYZ[3*b], dy = y-atomXYZ[3*b+1], dz = z-atomXYZ[3*b+2];
    return sqrt(dx*dx+dy*dy+dz*dz);
}

/** The work group's gradient sums are 64-bit fixed point with this scale, 2^48: each term rounded to the nearest 2^-48
 * Eh/bohr (4e-15; at 2^40 the gradient of 8 waters was 1e-9 Eh/bohr from the host's, at 2^48 3e-12), and a term and a
 * column's sum (its integer additions may wrap on the way) must stay below 2^15 Eh/bohr. A point's terms are at most
 * a few times |f w| times the cell function's logarithmic slope and 1 / R between atoms, far below that. */
#define PARTITION_FIXED_SCALE 281474976710656.0

/** G[atom] += (x, y, z) in the work group's fixed-point sums (local atomics: integer sums do not depend on their
 * order, so the result is reproducible bit for bit). */
DEVICE void addFixedPoint(LOCAL_ARG mm_ulong* G, int atom, double x, double y, double z) {
    ATOMIC_ADD(&G[3*atom], (mm_ulong) ((mm_long) rint(x*PARTITION_FIXED_SCALE)));
    ATOMIC_ADD(&G[3*atom+1], (mm_ulong) ((mm_long) rint(y*PARTITION_FIXED_SCALE)));
    ATOMIC_ADD(&G[3*atom+2], (mm_ulong) ((mm_long) rint(z*PARTITION_FIXED_SCALE)));
}

/** G[atom] += (x, y, z), and the same subtracted from the parent atom's running sum gA (translational invariance). */
DEVICE void addAgainstParent(LOCAL_ARG mm_ulong* G, int atom, double x, double y, double z, double* gA) {
    addFixedPoint(G, atom, x, y, z);
    gA[0] -= x;
    gA[1] -= y;
    gA[2] -= z;
}

/** The factor s(nu_cd) of cell c for atom d at distances dc, dd, with mu_cd and ds/dmu_cd. */
DEVICE double cellFactor(int c, int d, int n, double dc, double dd, int ssf, double ssfA, GLOBAL const double* RESTRICT pairInvR,
                         GLOBAL const double* RESTRICT pairA, double* mu, double* slopeMu) {
    const double a = pairA[c*n+d], m = (dc-dd)*pairInvR[c*n+d];
    double s, slope;
    cellValueAndSlope(ssf, ssfA, m+a*(1-m*m), &s, &slope);
    *mu = m;
    *slopeMu = slope*(1-2*a*m);
    return s;
}

/** P_A = prod_{d != A} s(nu_Ad) at a point with distance dA to atom A, stopped below 1e-300 (MolecularGrid's ownCell;
 * for a cell whose product is above that, as every kept cell's is, the whole product). */
DEVICE double ownCellProduct(int A, int n, double dA, double x, double y, double z, int ssf, double ssfA,
                             GLOBAL const double* RESTRICT atomXYZ, GLOBAL const double* RESTRICT pairInvR,
                             GLOBAL const double* RESTRICT pairA) {
    double p = 1, mu, slope;
    for (int d = 0; d < n && p > 1e-300; d++)
        if (d != A)
            p *= cellFactor(A, d, n, dA, distanceTo(atomXYZ, d, x, y, z), ssf, ssfA, pairInvR, pairA, &mu, &slope);
    return p;
}

/** P_c of a cell c != A at a point of atom A, or 0 when the grid's cell screening leaves it out (MolecularGrid's
 * otherCell): s(nu_cA) < 1e-15, or P_c, its factors taken in A's neighbour order, below cutoff = relative x P_A. */
DEVICE double otherCellProduct(int A, int c, int n, double dA, double dc, double x, double y, double z, int ssf, double ssfA,
                               double cutoff, GLOBAL const double* RESTRICT atomXYZ, GLOBAL const double* RESTRICT pairInvR,
                               GLOBAL const double* RESTRICT pairA, GLOBAL const int* RESTRICT neighbourOrder) {
    double mu, slope;
    double p = cellFactor(c, A, n, dc, dA, ssf, ssfA, pairInvR, pairA, &mu, &slope);
    if (p < 1e-15)
        return 0;
    for (int k = 1; k < n; k++) {
        const int d = neighbourOrder[A*n+k];
        if (d == c)
            continue;
        p *= cellFactor(c, d, n, dc, distanceTo(atomXYZ, d, x, y, z), ssf, ssfA, pairInvR, pairA, &mu, &slope);
        if (p < cutoff)
            return 0;
    }
    return p;
}

/// Words of the bit set of cells that survive the screening (one bit per atom).
#define PARTITION_CELL_WORDS ((PARTITION_MAX_ATOMS+63)/64)
/* PARTITION_KEPT_PRODUCTS (kept cells whose products cellSum() records for the derivatives; the products of further
 * ones are formed again) and PARTITION_CELL_BLOCK (kept cells whose derivatives one sweep over the atoms takes together,
 * their data in registers) are defines from the host (XCPartitionSizes: 24 and 8; a point of (H2O)24 on Becke's cells
 * keeps 8.6 cells on average, 17 at the 90th percentile). The local arrays must fit the 32 KB of any OpenCL device. */
#if !defined(PARTITION_KEPT_PRODUCTS) || !defined(PARTITION_CELL_BLOCK)
#error "the partition-weight derivatives' sizes are defines from the host (XCProgram.h: XCPartitionSizes)"
#endif
#if (PARTITION_KEPT_PRODUCTS+PARTITION_CELL_WORDS)*PARTITION_GROUP*8+3*PARTITION_MAX_ATOMS*8+64 > 32768
#error "partitionWeightGradient's local arrays exceed 32 KB"
#endif

/** Z = P_A + sum of the other cells that survive the screening, at a point of atom A; *own receives P_A, *cells
 * the number of cells in Z and kept, unless null, their bit set (PARTITION_CELL_WORDS words, so n <= PARTITION_MAX_ATOMS),
 * A's included, and keptProducts, unless null, the products of the first PARTITION_KEPT_PRODUCTS kept cells in the
 * order A, then the others by index (MolecularGrid's weightOf and PartitionWeightDerivatives share this rule); both in
 * the work item's column of the work group's local arrays, word or product k at [k PARTITION_GROUP]. Z = 0 when P_A
 * underflows. */
DEVICE double cellSum(int A, int n, double dA, double x, double y, double z, int ssf, double ssfA, double relativeCutoff,
                      GLOBAL const double* RESTRICT atomXYZ, GLOBAL const double* RESTRICT pairInvR, GLOBAL const double* RESTRICT pairA,
                      GLOBAL const int* RESTRICT neighbourOrder, double* own, int* cells, LOCAL_ARG mm_ulong* kept,
                      LOCAL_ARG double* keptProducts) {
    if (kept != 0)
        for (int w = 0; w < PARTITION_CELL_WORDS; w++)
            kept[w*PARTITION_GROUP] = 0;
    *own = ownCellProduct(A, n, dA, x, y, z, ssf, ssfA, atomXYZ, pairInvR, pairA);
    *cells = 0;
    if (!(*own > 0))
        return 0;
    double total = *own;
    *cells = 1;
    if (kept != 0)
        kept[(A/64)*PARTITION_GROUP] |= ((mm_ulong) 1) << (A%64);
    if (keptProducts != 0)
        keptProducts[0] = *own;
    for (int c = 0; c < n; c++) {
        if (c == A)
            continue;
        const double P = otherCellProduct(A, c, n, dA, distanceTo(atomXYZ, c, x, y, z), x, y, z, ssf, ssfA, relativeCutoff*(*own),
                                          atomXYZ, pairInvR, pairA, neighbourOrder);
        if (P > 0) {
            total += P;
            if (keptProducts != 0 && *cells < PARTITION_KEPT_PRODUCTS)
                keptProducts[(*cells)*PARTITION_GROUP] = P;
            (*cells)++;
            if (kept != 0)
                kept[(c/64)*PARTITION_GROUP] |= ((mm_ulong) 1) << (c%64);
        }
    }
    return total;
}

/* PARTITION_BLOCKS_PER_SM (a temporary define from the host): the kernel's register bound on CUDA. */
#if defined(__CUDA_ARCH__) && defined(PARTITION_BLOCKS_PER_SM)
#define PARTITION_BOUNDS __launch_bounds__(PARTITION_GROUP, PARTITION_BLOCKS_PER_SM)
#else
#define PARTITION_BOUNDS
#endif
KERNEL PARTITION_BOUNDS void partitionWeightGradient(int numPoints, int columns, int numAtoms, int ssf, double ssfA, double relativeCutoff,
                                    GLOBAL const double* RESTRICT pointX, GLOBAL const double* RESTRICT pointY,
                                    GLOBAL const double* RESTRICT pointZ, GLOBAL const double* RESTRICT pointW,
                                    GLOBAL const double* RESTRICT f, GLOBAL const int* RESTRICT parentAtom,
                                    GLOBAL const double* RESTRICT atomXYZ, GLOBAL const double* RESTRICT pairInvR,
                                    GLOBAL const double* RESTRICT pairA, GLOBAL const double* RESTRICT nearest,
                                    GLOBAL const int* RESTRICT neighbourOrder, GLOBAL double* RESTRICT partial,
                                    GLOBAL mm_ulong* RESTRICT counter) {
    // The column's gradient, summed by the group's items in fixed point (a private 3n array per item, indexed by atom,
    // lived in slow local memory on a GPU: 3 KB of stack per item, and 3n tree sums per column), and the items' kept
    // cells' products and bit sets, item i's k-th at [k PARTITION_GROUP + i] (their indices are known only at run time,
    // so that private arrays would live in that slow memory too).
    LOCAL mm_ulong G[3*PARTITION_MAX_ATOMS];
    LOCAL double keptLocal[PARTITION_KEPT_PRODUCTS*PARTITION_GROUP];
    LOCAL mm_ulong keptCellsLocal[PARTITION_CELL_WORDS*PARTITION_GROUP];
    LOCAL int taken[1];
    LOCAL_ARG double* keptProducts = keptLocal+LOCAL_ID;
    LOCAL_ARG mm_ulong* kept = keptCellsLocal+LOCAL_ID;
    const int n = numAtoms;
    for (int k = LOCAL_ID; k < 3*n; k += PARTITION_GROUP)
        G[k] = 0;
    for (int column = nextColumn(counter, taken); column < columns; column = nextColumn(counter, taken)) {
        for (int pt = column*PARTITION_GROUP+LOCAL_ID; pt < numPoints; pt += columns*PARTITION_GROUP) {
            if (f[pt] == 0 || n == 1)
                continue;
            const int A = parentAtom[pt];
            const double x = pointX[pt], y = pointY[pt], z = pointZ[pt];
            const double dA = distanceTo(atomXYZ, A, x, y, z);
            if (ssf && dA <= 0.5*(1-ssfA)*nearest[A])
                continue;  // the weight is exactly one in a neighbourhood of the nucleus
            // Pass 1: Z and P_A over the cells that survive the grid's screening.
            double PA;
            int cells;
            const double Z = cellSum(A, n, dA, x, y, z, ssf, ssfA, relativeCutoff, atomXYZ, pairInvR, pairA, neighbourOrder, &PA, &cells,
                                     kept, keptProducts);
            if (cells <= 1)
                continue;
            const double W = PA/Z;
            if (!(W > 1e-14))
                continue;
            const double scale = f[pt]*pointW[pt]/W;
            // Pass 2, over the cells pass 1 kept: dP_c/dR accumulated as dW = (dP_A - W dZ) / Z, times f w / W, with
            // dP_c/dmu_cd = P_c / s(nu_cd) ds/dmu_cd. The division is safe: a kept cell has no zero factor, and its
            // P_c is far above the smallest normal double (P_c >= relativeCutoff P_A, P_A > 1e-14 Z, and Z is at least
            // the cell of the point's nearest atom, whose factors are all s(nu <= 1/2)). PARTITION_CELL_BLOCK cells
            // at a time sweep over the atoms d: each d's distance once per sweep, its terms summed in registers over
            // the cells and added to G once (an atomic add), each cell's own terms summed in registers over d.
            double gA[3] = {0, 0, 0};
            int scan = -1;  // the last cell other than A taken
            for (int first = 0; first < cells; first += PARTITION_CELL_BLOCK) {
                int cellOf[PARTITION_CELL_BLOCK];
                double dcOf[PARTITION_CELL_BLOCK], coefficient[PARTITION_CELL_BLOCK], uc[3*PARTITION_CELL_BLOCK], own[3*PARTITION_CELL_BLOCK];
                for (int j = 0; j < PARTITION_CELL_BLOCK; j++) {
                    cellOf[j] = -1;
                    own[3*j] = own[3*j+1] = own[3*j+2] = 0;
                    if (first+j >= cells)
                        continue;
                    int c = A;
                    if (first+j > 0) {  // the next kept cell other than A, in the order of cellSum()
                        do
                            scan++;
                        while (scan == A || ((kept[(scan/64)*PARTITION_GROUP] >> (scan%64)) & 1) == 0);
                        c = scan;
                    }
                    const double dc = distanceTo(atomXYZ, c, x, y, z);
                    const double P = (first+j < PARTITION_KEPT_PRODUCTS ? keptProducts[(first+j)*PARTITION_GROUP]
                                                                        : ownCellProduct(c, n, dc, x, y, z, ssf, ssfA, atomXYZ, pairInvR, pairA));
                    cellOf[j] = c;
                    dcOf[j] = dc;
                    coefficient[j] = scale*((c == A ? 1.0 : 0.0)-W)/Z*P;
                    uc[3*j] = (dc > 0 ? (x-atomXYZ[3*c])/dc : 0.0);
                    uc[3*j+1] = (dc > 0 ? (y-atomXYZ[3*c+1])/dc : 0.0);
                    uc[3*j+2] = (dc > 0 ? (z-atomXYZ[3*c+2])/dc : 0.0);
                }
                for (int d = 0; d < n; d++) {
                    const double dd = distanceTo(atomXYZ, d, x, y, z);
                    const double udx = (dd > 0 ? (x-atomXYZ[3*d])/dd : 0.0), udy = (dd > 0 ? (y-atomXYZ[3*d+1])/dd : 0.0),
                                 udz = (dd > 0 ? (z-atomXYZ[3*d+2])/dd : 0.0);
                    double gx = 0, gy = 0, gz = 0;
                    for (int j = 0; j < PARTITION_CELL_BLOCK; j++) {
                        const int c = cellOf[j];
                        if (c < 0 || c == d)
                            continue;
                        double mu, slope;
                        const double s = cellFactor(c, d, n, dcOf[j], dd, ssf, ssfA, pairInvR, pairA, &mu, &slope);
                        // A factor exactly 1 in double (a neighbour far on the other side) has a slope below 1e-16.
                        if (s == 1.0 || slope == 0)
                            continue;
                        const double invR = pairInvR[c*n+d];
                        const double ex = (atomXYZ[3*c]-atomXYZ[3*d])*invR, ey = (atomXYZ[3*c+1]-atomXYZ[3*d+1])*invR,
                                     ez = (atomXYZ[3*c+2]-atomXYZ[3*d+2])*invR;  // unit vector R_d -> R_c
                        const double k = coefficient[j]*slope/s*invR;
                        own[3*j] += k*(-uc[3*j]-mu*ex);
                        own[3*j+1] += k*(-uc[3*j+1]-mu*ey);
                        own[3*j+2] += k*(-uc[3*j+2]-mu*ez);
                        gx += k*(udx+mu*ex);
                        gy += k*(udy+mu*ey);
                        gz += k*(udz+mu*ez);
                    }
                    if (d != A && (gx != 0 || gy != 0 || gz != 0))
                        addAgainstParent(G, d, gx, gy, gz, gA);
                }
                for (int j = 0; j < PARTITION_CELL_BLOCK; j++)
                    if (cellOf[j] >= 0 && cellOf[j] != A && (own[3*j] != 0 || own[3*j+1] != 0 || own[3*j+2] != 0))
                        addAgainstParent(G, cellOf[j], own[3*j], own[3*j+1], own[3*j+2], gA);
            }
            addFixedPoint(G, A, gA[0], gA[1], gA[2]);
        }
        // The column's sums (every item's terms are in: nextColumn() synchronized before they began, here after), and
        // cleared for the group's next column (its terms begin after nextColumn()'s synchronization).
        SYNC_THREADS;
        for (int k = LOCAL_ID; k < 3*n; k += PARTITION_GROUP) {
            partial[k*columns+column] = ((mm_long) G[k])/PARTITION_FIXED_SCALE;
            G[k] = 0;
        }
    }
    finishWork(counter);
}

/** total[k] = sum over the items' columns of partial (count x items, row-major), in item order. */
KERNEL void sumPartialColumns(int count, int items, GLOBAL const double* RESTRICT partial, GLOBAL double* RESTRICT total) {
    for (int k = GLOBAL_ID; k < count; k += GLOBAL_SIZE) {
        double sum = 0;
        for (int i = 0; i < items; i++)
            sum += partial[k*items+i];
        total[k] = sum;
    }
}

/**
 * The partition weights W_A of the raw molecular grid (MolecularGrid's weightOf, the same screening and the same
 * order of products). Radial shell k = A numRadial + i of atom A has radius shellRadius[k] and the Lebedev grid of
 * shellAngularCount[k] points that starts at row shellAngularStart[k] of angularXYZ (pruned grids differ by shell);
 * its weights go to weights[shellFirstPoint[k] + j]. One work item per (shell, j < maxAngular).
 */
KERNEL void partitionWeights(int numAtoms, int numRadial, int maxAngular, int ssf, double ssfA, double relativeCutoff,
                             GLOBAL const double* RESTRICT shellRadius, GLOBAL const int* RESTRICT shellAngularStart,
                             GLOBAL const int* RESTRICT shellAngularCount, GLOBAL const int* RESTRICT shellFirstPoint,
                             GLOBAL const double* RESTRICT angularXYZ, GLOBAL const double* RESTRICT atomXYZ,
                             GLOBAL const double* RESTRICT pairInvR, GLOBAL const double* RESTRICT pairA,
                             GLOBAL const double* RESTRICT nearest, GLOBAL const int* RESTRICT neighbourOrder,
                             GLOBAL double* RESTRICT weights) {
    const int n = numAtoms;
    const int numItems = numAtoms*numRadial*maxAngular;
    for (int index = GLOBAL_ID; index < numItems; index += GLOBAL_SIZE) {
        const int shell = index/maxAngular, j = index%maxAngular;
        if (j >= shellAngularCount[shell])
            continue;
        const int A = shell/numRadial, u = shellAngularStart[shell]+j;
        const double r = shellRadius[shell];
        const double x = atomXYZ[3*A]+r*angularXYZ[3*u], y = atomXYZ[3*A+1]+r*angularXYZ[3*u+1], z = atomXYZ[3*A+2]+r*angularXYZ[3*u+2];
        double weight = 1;
        const double dA = distanceTo(atomXYZ, A, x, y, z);
        if (n > 1 && !(ssf && dA <= 0.5*(1-ssfA)*nearest[A])) {
            double own;
            int cells;
            const double total = cellSum(A, n, dA, x, y, z, ssf, ssfA, relativeCutoff, atomXYZ, pairInvR, pairA, neighbourOrder, &own, &cells,
                                         0, 0);
            weight = (cells > 0 ? own/total : 0.0);
        }
        weights[shellFirstPoint[shell]+j] = weight;
    }
}

/* ---- Density-fitting contractions of one SCF iteration: gamma = B d and j = B^T c ------------------------
 * B (auxiliary functions x function pairs) is stored column-major, as the engine computes it, once per geometry. */

/** Partial sums of gamma[P] = sum_k B[P, k] d[k] over `slices` slices of the pairs: work item (P, slice), so that
 * there are enough of them for a GPU (a few thousand auxiliary functions alone are not); consecutive items read
 * consecutive rows of a column. partial is rows x slices; sumPartialColumns() adds each row's slices in order. */
KERNEL void densityFittingFit(int rows, int columns, int slices, GLOBAL const double* RESTRICT B, GLOBAL const double* RESTRICT d,
                              GLOBAL double* RESTRICT partial) {
    const int perSlice = (columns+slices-1)/slices;
    for (int item = GLOBAL_ID; item < rows*slices; item += GLOBAL_SIZE) {
        const int row = item%rows, slice = item/rows;
        const int first = slice*perSlice, last = min(columns, first+perSlice);
        double sum = 0;
        for (int k = first; k < last; k++)
            sum += B[(mm_long) k*rows+row]*d[k];
        partial[row*slices+slice] = sum;
    }
}

/** out[i] = a[i] + sign b[i]: the residual (sign -1) and the correction (sign +1) of the fit coefficients' one step
 * of iterative refinement. */
KERNEL void addSignedVector(int n, GLOBAL const double* RESTRICT a, GLOBAL const double* RESTRICT b, double sign,
                            GLOBAL double* RESTRICT out) {
    for (int i = GLOBAL_ID; i < n; i += GLOBAL_SIZE)
        out[i] = a[i] + sign*b[i];
}

/** j[k] = sum_P B[P, k] c[P]: one work group per function pair, summing its column in local memory. With B the
 * (symmetric) metric or its inverse, the same kernel applies them to a vector. */
KERNEL void densityFittingProject(int rows, int columns, GLOBAL const double* RESTRICT B, GLOBAL const double* RESTRICT c,
                                  GLOBAL double* RESTRICT j) {
    LOCAL double partial[DF_GROUP];
    for (int column = GROUP_ID; column < columns; column += NUM_GROUPS) {
        double sum = 0;
        for (int row = LOCAL_ID; row < rows; row += DF_GROUP)
            sum += B[(mm_long) column*rows+row]*c[row];
        partial[LOCAL_ID] = sum;
        SYNC_THREADS;
        for (int step = DF_GROUP/2; step > 0; step /= 2) {
            if (LOCAL_ID < step)
                partial[LOCAL_ID] += partial[LOCAL_ID+step];
            SYNC_THREADS;
        }
        if (LOCAL_ID == 0)
            j[column] = partial[0];
        SYNC_THREADS;
    }
}
