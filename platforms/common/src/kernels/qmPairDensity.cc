// The density fitting's pair vectors from and to matrices held on the device (QM::PairDensityMap on the host): the
// listed cartesian pairs (u, v), u >= v, of the tensor's columns, and T, the basis's functions from the cartesian ones
// (pure real solid harmonics: at most three terms per cartesian function and per pure function).

/**
 * d_k = scale (2 - delta_uv) sum_{p in u} sum_{q in v} T_p T_q (D_ab + D_ba) / 2 (a, b the functions of the terms p, q):
 * the pair density of the symmetric part of D (element (a, b) at offset + a + b ld), one work item per pair. Where D
 * is symmetric this is the host's gather, term by term in the same order.
 */
KERNEL void gatherPairDensity(int numPairs, GLOBAL const int* RESTRICT pairFirst, GLOBAL const int* RESTRICT pairSecond,
                              GLOBAL const int* RESTRICT termStart, GLOBAL const int* RESTRICT termFunction,
                              GLOBAL const double* RESTRICT termValue, GLOBAL const double* RESTRICT D, int offset, int ld,
                              double scale, GLOBAL double* RESTRICT d) {
    for (int k = GLOBAL_ID; k < numPairs; k += GLOBAL_SIZE) {
        const int u = pairFirst[k], v = pairSecond[k];
        double sum = 0;
        for (int p = termStart[u]; p < termStart[u+1]; p++) {
            const int a = termFunction[p];
            double inner = 0;
            for (int q = termStart[v]; q < termStart[v+1]; q++) {
                const int b = termFunction[q];
                inner += termValue[q]*(0.5*(D[offset+a+(mm_long) b*ld]+D[offset+b+(mm_long) a*ld]));
            }
            sum += termValue[p]*inner;
        }
        d[k] = (u == v ? scale : 2*scale)*sum;
    }
}

/** J~_uv = J~_vu = j_k for the listed pairs into the cartesian matrix J~ (nc x nc, zero elsewhere: cleared once for the
 * list, whose elements every scatter overwrites). */
KERNEL void scatterPairValues(int numPairs, int nc, GLOBAL const int* RESTRICT pairFirst, GLOBAL const int* RESTRICT pairSecond,
                              GLOBAL const double* RESTRICT j, GLOBAL double* RESTRICT cartesianJ) {
    for (int k = GLOBAL_ID; k < numPairs; k += GLOBAL_SIZE) {
        const int u = pairFirst[k], v = pairSecond[k];
        cartesianJ[u+(mm_long) v*nc] = j[k];
        cartesianJ[v+(mm_long) u*nc] = j[k];
    }
}

/**
 * J = T J~ T^T over the basis's n functions, from the rows of T (function a: rowStart[a] .. rowStart[a+1] in
 * rowCartesian and rowValue), into a held matrix (element (a, b) at offset + a + b ld). Elements (a, b) and (b, a) sum
 * the same terms in the same order, so that J is symmetric to the last bit, as the host's is.
 */
KERNEL void transformPairMatrix(int n, int nc, GLOBAL const int* RESTRICT rowStart, GLOBAL const int* RESTRICT rowCartesian,
                                GLOBAL const double* RESTRICT rowValue, GLOBAL const double* RESTRICT cartesianJ,
                                GLOBAL double* RESTRICT J, int offset, int ld) {
    for (int index = GLOBAL_ID; index < n*n; index += GLOBAL_SIZE) {
        const int i = index%n, j = index/n;
        const int a = max(i, j), b = min(i, j);
        double sum = 0;
        for (int p = rowStart[a]; p < rowStart[a+1]; p++) {
            double inner = 0;
            for (int q = rowStart[b]; q < rowStart[b+1]; q++)
                inner += rowValue[q]*cartesianJ[rowCartesian[p]+(mm_long) rowCartesian[q]*nc];
            sum += rowValue[p]*inner;
        }
        J[offset+i+(mm_long) j*ld] = sum;
    }
}
