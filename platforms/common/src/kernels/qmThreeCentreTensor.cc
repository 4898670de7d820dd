/**
 * The density-fitting tensor kernel of one class of orbital shell pairs, (CLASS_LA, CLASS_LB) with CLASS_LA >= CLASS_LB,
 * after the helpers of qmThreeCentre.cc, for the fitting shells of one l, CLASS_LQ, or of any l (CLASS_LQ -1, the l read
 * at run time): the host compiles this file once per class with CLASS_LQ -1 (threeCentreTensor_LA_LB) and once per
 * fitting l for which tensorUnrolled() holds (threeCentreTensor_LA_LB_LQ), and launches each over the class's pairs
 * (pairBegin, numPairs) and a range of the fitting shells listed by l (auxShellsByL[auxBegin ..], numAuxShells of
 * them). With all three angular momenta known at compile time the Boys function, the Hermite integrals R_tuv and the
 * contractions have fixed bounds, so that their loops unroll (UNROLL) and their arrays are indexed by constants: a GPU
 * keeps them in registers, where with a run-time l they sit in its slow local memory (tens of GB of local loads per
 * MD step for 24 waters, Nsight on an H200). Only the written classes (s-s, p-s) with small orders and the classes of
 * pair order 2 (p-p, d-s: their arrays then sized for the one l, a fraction of the general compilation's) are compiled
 * so: beyond them the unrolled values did not fit in the registers (ptxas spilled kilobytes, BenchKernelResources),
 * and every further kernel costs the OpenCL compiler time.
 *
 * Work items: (pair of the class, fitting shell of the range); consecutive items take consecutive pairs with one
 * fitting shell. Work groups take their items GROUP_SIZE at a time from a counter (nextChunk).
 */

#if CLASS_LQ >= 0
#define TENSOR_NAME(f) CLASS_L_NAME_EXPANDED(f, CLASS_LA, CLASS_LB, CLASS_LQ)
#define TENSOR_FITTING_L CLASS_LQ
#else
#define TENSOR_NAME(f) CLASS_NAME_EXPANDED(f, CLASS_LA, CLASS_LB)
#define TENSOR_FITTING_L AUX_L
#endif
#define TENSOR_PAIR_ORDER (CLASS_LA+CLASS_LB)
/* The largest Hermite order of the kernel's integrals, which sizes its arrays. */
#define TENSOR_ORDER (TENSOR_PAIR_ORDER+TENSOR_FITTING_L)
/* One direction's E^ij_t for i <= la, j <= lb. */
#define TENSOR_E ((CLASS_LA+1)*(CLASS_LB+1)*(TENSOR_PAIR_ORDER+1))
/* The s-s and p-s classes, most of the work, are written for their functions (sums in registers). */
#define TENSOR_WRITTEN (CLASS_LB == 0 && CLASS_LA <= 1)

/**
 * B[column * rows + row]: (Q|ab) for every significant shell pair (a >= b) of the class and fitting shell Q of the
 * range, the fitting functions transformed by their shell's matrix (to real solid harmonics where pure), the pair's
 * cartesian functions (i, j) i-major from pairColumn, with i >= j when the two shells are one. The s-s and p-s
 * classes are written for their functions: a p_i s product has Hermite coefficients PA_i (order 0) and 1/2p (order 1
 * in i), so each fitting component needs the potential on at most four Hermite functions, summed in registers.
 */
KERNEL AT_MOST_128_REGISTERS void TENSOR_NAME(threeCentreTensor)(int pairBegin, int auxBegin, THREE_CENTRE_TENSOR_ARGUMENTS) {
    const BoysTable boys = boysTableOf(boysStep, boysEnd, boysOrders, boysTaylorTerms);
    LOCAL mm_long chunk[1];
    const int la = CLASS_LA, lb = CLASS_LB, T = TENSOR_PAIR_ORDER+1;
    const int na = CART_COUNT(CLASS_LA), nb = CART_COUNT(CLASS_LB);
    double acc[CART_COUNT(CLASS_LA)*CART_COUNT(CLASS_LB)*CART_COUNT(TENSOR_FITTING_L)];
#if !TENSOR_WRITTEN
    double Ex[TENSOR_E], Ey[TENSOR_E], Ez[TENSOR_E], W[HERMITE_COUNT(TENSOR_PAIR_ORDER)];
#endif
    double R[HERMITE_COUNT(TENSOR_ORDER)], F[TENSOR_ORDER+1];
    const mm_long numItems = (mm_long) numPairs*numAuxShells;
    for (mm_long first = nextChunk(counter, chunk); first < numItems; first = nextChunk(counter, chunk)) {
        const mm_long item = first+LOCAL_ID;
        if (item >= numItems)
            continue;
        const int q = auxShellsByL[auxBegin+(int) (item/numPairs)], k = pairBegin+(int) (item%numPairs);
        int sA, sB;
        const int swapped = classPairShells(k, pairFirst, pairSecond, shellL, &sA, &sB);
#if CLASS_LQ >= 0
        const int lq = CLASS_LQ, storedA = na, storedB = nb;
#else
        // The pair's function counts as run-time values too: storeTensorColumns's unrolled loops then stay loops.
        const int lq = auxL[q], storedA = CART_COUNT(shellL[sA]), storedB = CART_COUNT(shellL[sB]);
#endif
        const int L = la+lb+lq, nq = CART_COUNT(lq);
        UNROLL
        for (int n = 0; n < na*nb*nq; n++)
            acc[n] = 0;
        const double A[3] = {shellCenter[3*sA], shellCenter[3*sA+1], shellCenter[3*sA+2]};
        const double Bc[3] = {shellCenter[3*sB], shellCenter[3*sB+1], shellCenter[3*sB+2]};
        const double Q[3] = {auxCenter[3*q], auxCenter[3*q+1], auxCenter[3*q+2]};
        const double AB2 = (A[0]-Bc[0])*(A[0]-Bc[0]) + (A[1]-Bc[1])*(A[1]-Bc[1]) + (A[2]-Bc[2])*(A[2]-Bc[2]);
        for (int pa = shellPrimStart[sA]; pa < shellPrimStart[sA]+shellNumPrim[sA]; pa++)
            for (int pb = shellPrimStart[sB]; pb < shellPrimStart[sB]+shellNumPrim[sB]; pb++) {
                const double a = primExponent[pa], b = primExponent[pb], p = a+b;
                double P[3];
#if TENSOR_WRITTEN
                const double cab = primCoefficient[pa]*primCoefficient[pb]*gaussianProduct(a, b, A, Bc, AB2, P);
#else
                const double cab = primCoefficient[pa]*primCoefficient[pb]*primitivePair(a, b, A, Bc, la, lb, P, Ex, Ey, Ez);
#endif
                if (fabs(cab) < 1e-18)
                    continue;
                const double X = P[0]-Q[0], Y = P[1]-Q[1], Z = P[2]-Q[2];
                for (int pq = auxPrimStart[q]; pq < auxPrimStart[q]+auxNumPrim[q]; pq++) {
                    const double g = auxExponent[pq], alpha = p*g/(p+g);
                    boysFunction(L, alpha*(X*X+Y*Y+Z*Z), boysTable, boys, F);
                    hermiteCoulomb(L, alpha, X, Y, Z, F, R);
                    const double prefactor = 2*PI_THREE_CENTRE*PI_THREE_CENTRE*sqrt(PI_THREE_CENTRE)/(p*g*sqrt(p+g))*cab*auxCoefficient[pq];
                    UNROLL
                    for (int c = 0; c < nq; c++) {
                        GLOBAL const double* cq = fittingHermite+(mm_long) pq*FITTING_HERMITE_STRIDE+c*HERMITE_COUNT(AUX_L);
#if TENSOR_WRITTEN
                        double w[4] = {0, 0, 0, 0};
                        addLowOrderContraction(CLASS_LA, lq, cq, R, prefactor, w);
                        if (CLASS_LA == 0)
                            acc[c] += w[0];
                        else {
                            UNROLL
                            for (int i = 0; i < 3; i++)
                                acc[i*nq+c] += (P[i]-A[i])*w[0] + 0.5/p*w[1+i];
                        }
#else
                        contractWithFitting(la+lb, lq, cq, R, W);
                        addPairBlock(la, lb, Ex, Ey, Ez, T, W, prefactor, nq, acc+c);
#endif
                    }
                }
            }
        storeTensorColumns(B, rows, pairColumn[k], auxOffset[q], storedA, storedB, swapped, sA == sB, nq, auxSize[q],
                           auxTransform+auxTransformStart[q], acc);
    }
    finishWork(counter);
}

#undef TENSOR_WRITTEN
#undef TENSOR_E
#undef TENSOR_ORDER
#undef TENSOR_PAIR_ORDER
#undef TENSOR_FITTING_L
#undef TENSOR_NAME
