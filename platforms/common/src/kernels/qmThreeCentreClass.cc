/**
 * The integral kernels of one class of orbital shell pairs, (CLASS_LA, CLASS_LB) with CLASS_LA >= CLASS_LB, after the
 * helpers of qmThreeCentre.cc: the host compiles this file once per class of its program (ThreeCentreProgram.cpp) and
 * launches each class's kernels over the range of its pairs (pairBegin, numPairs: the host sorts the pairs by class).
 * With the pair's angular momenta known at compile time the loops over its functions and Hermite orders have fixed
 * bounds and the private arrays the class's own size: the generic kernels, with l read at run time and every array
 * sized for the largest class, kept 7.5-8.4 KB of private stack per thread in a GPU's slow local memory and ran at
 * 1-2% of an H200's double-precision peak. A pair whose first shell has the smaller l is taken the other way round
 * (swapped): its results are written back in its own order. The fitting shell's l is a run-time value, except in the
 * gradient kernels' compilations per fitting l (CLASS_LQ >= 0, below; the tensor kernel, qmThreeCentreTensor.cc, has
 * such compilations too).
 *
 * Work items: (pair, run of fitting shells) for the gradient, the runs consecutive places in the launch's list of
 * fitting shells (auxShellList: every shell in order, or those of one l), and (pair, group of charges) for the
 * point-charge matrix; consecutive items take consecutive pairs with one run or group. Work groups take their items
 * GROUP_SIZE at a time from a counter (nextChunk) rather than by a fixed grid stride: OpenMM launches more work groups
 * than fit on a GPU at once at these kernels' register count, and with a fixed share each the groups that started
 * late ran their shares on a nearly idle GPU.
 */

#define CLASS_NAME(f) CLASS_NAME_EXPANDED(f, CLASS_LA, CLASS_LB)
/* CLASS_LQ >= 0: the compilation for the fitting shells of that l alone, which has the gradient kernel only
 * (threeCentreGradient_LA_LB_LQ, gradientUnrolled() on the host): with the l a constant its Boys values and Hermite
 * integrals are sized for it and indexed by constants, so that they stay in registers on a GPU where they fit (ptxas,
 * sm_90: s-s 496 -> 0 bytes of stack for fitting s, p, d; p-s 864 -> 32 and 72 for s, p; p-p 1104 -> 16, 168, 448
 * for s, p, d; BenchKernelResources). */
#if CLASS_LQ >= 0
#define GRADIENT_NAME(f) CLASS_L_NAME_EXPANDED(f, CLASS_LA, CLASS_LB, CLASS_LQ)
#else
#define GRADIENT_NAME(f) CLASS_NAME(f)
#endif
/* W += the potential of fitting shell q's fitted density on the Hermite functions up to `order` of the gradient
 * kernels' primitive pair (p at P), F and R their scratch: with the compilation's fitting l where it has one. */
#if CLASS_LQ >= 0
#define ADD_FITTING_SHELL_POTENTIAL(q, order) \
    addFittingShellPotentialOfL(q, CLASS_LQ, p, P, order, auxPrimStart, auxNumPrim, auxCenter, auxExponent, fitted, boysTable, boys, F, R, W)
#else
#define ADD_FITTING_SHELL_POTENTIAL(q, order) \
    addFittingShellPotential(q, p, P, order, auxL, auxPrimStart, auxNumPrim, auxCenter, auxExponent, fitted, boysTable, boys, F, R, W)
#endif
/* The class's Hermite orders: the tensor needs la+lb+lq, the gradient one more (a raised bra or ket). */
#define CLASS_PAIR_ORDER (CLASS_LA+CLASS_LB)
#define CLASS_TENSOR_ORDER (CLASS_PAIR_ORDER+AUX_L)
/* One direction's E^ij_t for i <= la, j <= lb (VALUE) and for i <= la+1, j <= lb+1 (GRADIENT). */
#define CLASS_VALUE_E ((CLASS_LA+1)*(CLASS_LB+1)*(CLASS_PAIR_ORDER+1))
#define CLASS_GRADIENT_E ((CLASS_LA+2)*(CLASS_LB+2)*(CLASS_PAIR_ORDER+3))
/* The s-s and p-s classes, most of the work, have kernels written for their functions (sums in registers). */
#define CLASS_WRITTEN (CLASS_LB == 0 && CLASS_LA <= 1)

/**
 * The three-centre part of the density-fitted Coulomb gradient, sum_Q c_Q sum_uv D_uv d(Q|uv)/dR, for the cartesian
 * density D (nbf x nbf, symmetric) and fit coefficients c (cartesian fitting functions; the fitted density's Hermite
 * coefficients per fitting primitive in fitted, fittedDensityHermite), added in fixed point
 * (GRADIENT_SCALE) to gradient[3*atom+d]. A pair of shells a >= b enters with weight 2 (a != b, for (b, a)) or 1,
 * differentiated on each orbital centre by raising and lowering that function's angular momentum in the Hermite
 * coefficients, d/dA_x x_A^i e^(-a x_A^2) = 2a x_A^(i+1) e^(..) - i x_A^(i-1) e^(..), which are contracted with D once
 * per primitive pair (derivative Hermite densities); the fitting function's centre takes minus their sum
 * (translational invariance). A work item takes one shell pair and a run of consecutive fitting shells
 * (auxGroupShellStart), whose pair derivative densities it forms once per primitive pair; the run's shells sit on at
 * most MAX_CENTRES_PER_ITEM centres (runs of shells with one auxAtom), whose gradients it keeps in private memory and
 * adds to gradient[3*(centreOffset+auxAtom)+d] once. Compiled with POINT_CHARGES 1 the "fitting shells" are point
 * charges (l = 0, one primitive whose coefficient is 1, c = the charge's weight), each its own centre auxAtom[q]: the
 * derivative of sum_uv D_uv sum_C c_C <u|1/|r-C||v>. For the metric's gradient, sum_PQ c_P c_Q d(P|Q), the pairs are
 * (fitting shell P, a unit s function: exponent 0, coefficient 1, cartesian offset 0) and D the coefficients of P as a
 * column (nbf = 1): the unit function has no derivative, and P's centre takes the rest.
 */
#if CLASS_WRITTEN
/* The s-s and p-s pairs (with the metric's s-unit and p-unit pairs, most of the work) written for their functions:
 * the one or three density elements, the potential on the pair's Hermite functions of orders up to la+1 and the
 * derivative sums (lowClassDerivativeSums) stay in registers. With fitting functions the item's centres are taken one
 * after another, each over all primitive pairs (such a primitive pair costs one exponential), so that a centre's
 * gradient is three scalars added once; with point charges, whose potential is written out (lowOrderChargePotential),
 * the charges' gradients are kept as in the general kernel. */
KERNEL AT_MOST_128_REGISTERS void GRADIENT_NAME(threeCentreGradient)(int pairBegin, THREE_CENTRE_GRADIENT_ARGUMENTS) {
    const BoysTable boys = boysTableOf(boysStep, boysEnd, boysOrders, boysTaylorTerms);
    LOCAL mm_long chunk[1];
    const int order = CLASS_LA+1;  // of the pair's derivative Hermite functions
#if POINT_CHARGES
    double F[CLASS_LA+2];
    double gC[3*MAX_CENTRES_PER_ITEM];
#elif CLASS_LQ >= 0
    double R[HERMITE_COUNT(CLASS_LA+1+CLASS_LQ)], F[CLASS_LA+CLASS_LQ+2];
#else
    double R[HERMITE_COUNT(CLASS_LA+1+AUX_L)], F[CLASS_LA+AUX_L+2];
#endif
    const mm_long numItems = (mm_long) numPairs*numGroups;
    for (mm_long first = nextChunk(counter, chunk); first < numItems; first = nextChunk(counter, chunk)) {
        const mm_long item = first+LOCAL_ID;
        if (item >= numItems)
            continue;
        const int group = (int) (item/numPairs), k = pairBegin+(int) (item%numPairs);
        const int firstAux = auxGroupShellStart[group], lastAux = auxGroupShellStart[group+1];
        int s1, s2;  // D is symmetric: the pair's other order gives the same sums
        classPairShells(k, pairFirst, pairSecond, shellL, &s1, &s2);
        const double weight = (s1 == s2 ? 1.0 : 2.0);  // two shells: (b, a) too
        const mm_long o1 = shellCartesianOffset[s1], o2 = shellCartesianOffset[s2];
        double D[CART_COUNT(CLASS_LA)];
        for (int i = 0; i < CART_COUNT(CLASS_LA); i++)
            D[i] = weight*density[(o1+i)*nbf+o2];
        const double A[3] = {shellCenter[3*s1], shellCenter[3*s1+1], shellCenter[3*s1+2]};
        const double B[3] = {shellCenter[3*s2], shellCenter[3*s2+1], shellCenter[3*s2+2]};
        const double AB2 = (A[0]-B[0])*(A[0]-B[0]) + (A[1]-B[1])*(A[1]-B[1]) + (A[2]-B[2])*(A[2]-B[2]);
        double gA[3] = {0, 0, 0}, gB[3] = {0, 0, 0};
#if POINT_CHARGES
        for (int n = 0; n < 3*MAX_CENTRES_PER_ITEM; n++)
            gC[n] = 0;
        {
            const int centreFirst = firstAux, centreEnd = lastAux;  // every charge its own centre, all in one pass
#else
        for (int centreFirst = firstAux; centreFirst < lastAux;) {
            int centreEnd = centreFirst+1;
            while (centreEnd < lastAux && auxAtom[auxShellList[centreEnd]] == auxAtom[auxShellList[centreFirst]])
                centreEnd++;
            double gC[3] = {0, 0, 0};
#endif
            for (int pa = shellPrimStart[s1]; pa < shellPrimStart[s1]+shellNumPrim[s1]; pa++)
                for (int pb = shellPrimStart[s2]; pb < shellPrimStart[s2]+shellNumPrim[s2]; pb++) {
                    const double a = primExponent[pa], b = primExponent[pb], p = a+b;
                    double P[3];
                    const double cab = primCoefficient[pa]*primCoefficient[pb]*gaussianProduct(a, b, A, B, AB2, P);
                    if (fabs(cab) < 1e-18)
                        continue;
                    const double PA[3] = {P[0]-A[0], P[1]-A[1], P[2]-A[2]}, PB[3] = {P[0]-B[0], P[1]-B[1], P[2]-B[2]};
                    double Dc[CART_COUNT(CLASS_LA)];
                    for (int i = 0; i < CART_COUNT(CLASS_LA); i++)
                        Dc[i] = cab*D[i];
                    double W[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, sa[3], sb[3];
#if POINT_CHARGES
                    for (int position = centreFirst; position < centreEnd; position++) {
                        const int q = auxShellList[position];
                        const double PC[3] = {P[0]-auxCenter[3*q], P[1]-auxCenter[3*q+1], P[2]-auxCenter[3*q+2]};
                        boysFunction(order, p*(PC[0]*PC[0]+PC[1]*PC[1]+PC[2]*PC[2]), boysTable, boys, F);
                        lowOrderChargePotential(order, p, PC, F, 2*PI_THREE_CENTRE/p*auxCoefficient[auxPrimStart[q]]*coefficients[auxCartesianOffset[q]],
                                                W);
                        lowClassDerivativeSums(CLASS_LA, Dc, a, b, p, PA, PB, W, sa, sb);
                        for (int d = 0; d < 3; d++) {
                            gA[d] += sa[d];
                            gB[d] += sb[d];
                            gC[3*(position-firstAux)+d] -= sa[d]+sb[d];
                        }
                    }
#else
                    for (int position = centreFirst; position < centreEnd; position++)
                        ADD_FITTING_SHELL_POTENTIAL(auxShellList[position], order);
                    lowClassDerivativeSums(CLASS_LA, Dc, a, b, p, PA, PB, W, sa, sb);
                    for (int d = 0; d < 3; d++) {
                        gA[d] += sa[d];
                        gB[d] += sb[d];
                        gC[d] -= sa[d]+sb[d];  // translational invariance
                    }
#endif
                }
#if POINT_CHARGES
            for (int position = centreFirst; position < centreEnd; position++)
                addFixedPointGradient(gradient, centreOffset+auxAtom[auxShellList[position]], gC+3*(position-firstAux));
        }
#else
            addFixedPointGradient(gradient, centreOffset+auxAtom[auxShellList[centreFirst]], gC);
            centreFirst = centreEnd;
        }
#endif
        addFixedPointGradient(gradient, shellAtom[s1], gA);
        addFixedPointGradient(gradient, shellAtom[s2], gB);
    }
    finishWork(counter);
}
#else
#if CLASS_LQ < 0
/**
 * Primitive pair pp (a's primitive the slower index; n2 primitives in s2) of shells s1 (A, the class's la) and s2 (B):
 * its derivative Hermite densities, sum_ij D_ij d/dA_d (into DA) and d/dB_d (into DB) of its Hermite coefficients
 * (count per direction), weighted by 2 for two shells ((b, a) too) and by the contraction coefficients, and its centre
 * P. Returns its exponent sum p, or 0 where the pair is negligible (DA, DB and P then as they were).
 */
DEVICE double CLASS_NAME(derivativeDensities)(int s1, int s2, int pp, int n2, int nbf, GLOBAL const int* RESTRICT shellPrimStart,
                                              GLOBAL const int* RESTRICT shellCartesianOffset, GLOBAL const double* RESTRICT shellCenter,
                                              GLOBAL const double* RESTRICT primExponent, GLOBAL const double* RESTRICT primCoefficient,
                                              GLOBAL const double* RESTRICT density, double* P, double* DA, double* DB) {
    const int la = CLASS_LA, lb = CLASS_LB, iMax = CLASS_LA+1, jMax = CLASS_LB+1, T = CLASS_PAIR_ORDER+3;
    const int count = HERMITE_COUNT(CLASS_PAIR_ORDER+1);
    double Ex[CLASS_GRADIENT_E], Ey[CLASS_GRADIENT_E], Ez[CLASS_GRADIENT_E];
    const int pa = shellPrimStart[s1]+pp/n2, pb = shellPrimStart[s2]+pp%n2;
    const double weight = (s1 == s2 ? 1.0 : 2.0);
    const int o1 = shellCartesianOffset[s1], o2 = shellCartesianOffset[s2];
    const double A[3] = {shellCenter[3*s1], shellCenter[3*s1+1], shellCenter[3*s1+2]};
    const double B[3] = {shellCenter[3*s2], shellCenter[3*s2+1], shellCenter[3*s2+2]};
    const double a = primExponent[pa], b = primExponent[pb];
    double centre[3];
    const double cab = weight*primCoefficient[pa]*primCoefficient[pb]*primitivePair(a, b, A, B, iMax, jMax, centre, Ex, Ey, Ez);
    if (fabs(cab) < 1e-18)
        return 0;
    for (int n = 0; n < 3*count; n++) {
        DA[n] = 0;
        DB[n] = 0;
    }
    for (int d = 0; d < 3; d++) {
        addDerivativeDensity(Ex, Ey, Ez, la, lb, jMax, T, o1, o2, nbf, density, cab, 1, a, d, DA+d*count);
        addDerivativeDensity(Ex, Ey, Ez, la, lb, jMax, T, o1, o2, nbf, density, cab, 0, b, d, DB+d*count);
        P[d] = centre[d];
    }
    return a+b;
}

/**
 * The pair table of the general gradient kernel: for every primitive pair of the class's shell pairs, its centre P,
 * exponent sum p and derivative Hermite densities DA and DB (as the kernel below forms them, weight and contraction
 * coefficients included), at table[c * stride + pp * numPairs + k] for component c (P: 0-2, p: 3, DA: from 4, DB: from
 * 4 + 3 count) of primitive pair pp of the class's pair k (stride = maxPrimitivePairs x numPairs): made once per
 * gradient, where each of a pair's work items (one per run of fitting shells, hundreds for a small class) formed them
 * again, and out of the gradient kernel's private memory. p = 0 marks a slot without a primitive pair (or a negligible
 * one). Consecutive work items of the gradient kernel read consecutive addresses.
 */
KERNEL void CLASS_NAME(pairDerivativeDensities)(int pairBegin, int numPairs, int maxPrimitivePairs, int nbf,
                                                GLOBAL const int* RESTRICT pairFirst, GLOBAL const int* RESTRICT pairSecond,
                                                GLOBAL const int* RESTRICT shellL, GLOBAL const int* RESTRICT shellPrimStart,
                                                GLOBAL const int* RESTRICT shellNumPrim, GLOBAL const int* RESTRICT shellCartesianOffset,
                                                GLOBAL const double* RESTRICT shellCenter, GLOBAL const double* RESTRICT primExponent,
                                                GLOBAL const double* RESTRICT primCoefficient, GLOBAL const double* RESTRICT density,
                                                GLOBAL double* RESTRICT table) {
    const int count = HERMITE_COUNT(CLASS_PAIR_ORDER+1);
    double DA[3*HERMITE_COUNT(CLASS_PAIR_ORDER+1)], DB[3*HERMITE_COUNT(CLASS_PAIR_ORDER+1)];
    const int stride = maxPrimitivePairs*numPairs;
    for (int slot = GLOBAL_ID; slot < stride; slot += GLOBAL_SIZE) {
        const int pp = slot/numPairs, k = pairBegin+slot%numPairs;
        int s1, s2;
        classPairShells(k, pairFirst, pairSecond, shellL, &s1, &s2);
        const int n2 = shellNumPrim[s2];
        double P[3], p = 0;
        if (pp < shellNumPrim[s1]*n2)
            p = CLASS_NAME(derivativeDensities)(s1, s2, pp, n2, nbf, shellPrimStart, shellCartesianOffset, shellCenter, primExponent,
                                                primCoefficient, density, P, DA, DB);
        table[3*stride+slot] = p;
        if (p == 0)
            continue;
        for (int d = 0; d < 3; d++)
            table[d*stride+slot] = P[d];
        for (int n = 0; n < 3*count; n++) {
            table[(4+n)*stride+slot] = DA[n];
            table[(4+3*count+n)*stride+slot] = DB[n];
        }
    }
}
#endif

/**
 * The general classes' gradient kernel: the primitive pairs' centres, exponents and derivative Hermite densities come
 * from the pair table (pairDerivativeDensities, made on the same queue first), whose reads consecutive work items
 * share; formed per item they were formed again for each of a pair's runs of fitting shells and held, with the
 * expansion tables, in private memory (PoCL, 4 QM waters: 0.166 s -> 0.087 s for the three-centre gradient). With
 * fitting functions the item's centres are taken one after another, each over all primitive pairs, so that a centre's
 * gradient is three sums in registers added once (the table's P and p are read once per centre, its densities once per
 * centre as before); point charges are each their own centre and keep their gradients in an array.
 */
KERNEL AT_MOST_128_REGISTERS void GRADIENT_NAME(threeCentreGradient)(int pairBegin, THREE_CENTRE_GRADIENT_ARGUMENTS) {
    const BoysTable boys = boysTableOf(boysStep, boysEnd, boysOrders, boysTaylorTerms);
    LOCAL mm_long chunk[1];
    const int pairOrder = CLASS_PAIR_ORDER+1, count = HERMITE_COUNT(CLASS_PAIR_ORDER+1);
#if POINT_CHARGES
    // The gradients of the item's charges over all its primitive pairs, added to the sums once: one atomic per
    // primitive pair and charge put hundreds of thousands of work items on a few hundred addresses.
    double gC[3*MAX_CENTRES_PER_ITEM];
    double R[HERMITE_COUNT(CLASS_PAIR_ORDER+1)], F[CLASS_PAIR_ORDER+2];
#elif CLASS_LQ >= 0
    double R[HERMITE_COUNT(CLASS_PAIR_ORDER+1+CLASS_LQ)], F[CLASS_PAIR_ORDER+CLASS_LQ+2], W[HERMITE_COUNT(CLASS_PAIR_ORDER+1)];
#else
    double R[HERMITE_COUNT(CLASS_TENSOR_ORDER+1)], F[CLASS_TENSOR_ORDER+2], W[HERMITE_COUNT(CLASS_PAIR_ORDER+1)];
#endif
    const mm_long numItems = (mm_long) numPairs*numGroups;
    for (mm_long first = nextChunk(counter, chunk); first < numItems; first = nextChunk(counter, chunk)) {
        const mm_long item = first+LOCAL_ID;
        if (item >= numItems)
            continue;
        const int group = (int) (item/numPairs), k = pairBegin+(int) (item%numPairs);
        const int firstAux = auxGroupShellStart[group], lastAux = auxGroupShellStart[group+1];
        int s1, s2;  // D is symmetric: the pair's other order gives the same sums
        classPairShells(k, pairFirst, pairSecond, shellL, &s1, &s2);
        const int numPrimitivePairs = shellNumPrim[s1]*shellNumPrim[s2];
        double gA[3] = {0, 0, 0}, gB[3] = {0, 0, 0};
#if POINT_CHARGES
        for (int n = 0; n < 3*MAX_CENTRES_PER_ITEM; n++)
            gC[n] = 0;
        for (int pp = 0; pp < numPrimitivePairs; pp++) {  // primitive pairs, a's primitive the slower index
            const int slot = pp*numPairs+(k-pairBegin);
            const double p = pairTable[3*tableStride+slot];
            if (p == 0)
                continue;
            const double P[3] = {pairTable[slot], pairTable[tableStride+slot], pairTable[2*tableStride+slot]};
            GLOBAL const double* RESTRICT DA = pairTable+4*tableStride+slot;
            GLOBAL const double* RESTRICT DB = pairTable+(4+3*count)*tableStride+slot;
            // A point charge is the limit of a normalized s Gaussian of infinite exponent (one primitive, l = 0):
            // McMurchie-Davidson's nuclear attraction, (2 pi / p) R_tuv(p, P-C) times the charge's weight.
            for (int position = firstAux; position < lastAux; position++) {
                const int q = auxShellList[position], centre = position-firstAux;  // every charge is its own centre
                const double X = P[0]-auxCenter[3*q], Y = P[1]-auxCenter[3*q+1], Z = P[2]-auxCenter[3*q+2];
                boysFunction(pairOrder, p*(X*X+Y*Y+Z*Z), boysTable, boys, F);
                hermiteCoulomb(pairOrder, p, X, Y, Z, F, R);
                const double w = 2*PI_THREE_CENTRE/p*auxCoefficient[auxPrimStart[q]]*coefficients[auxCartesianOffset[q]];
                for (int d = 0; d < 3; d++) {
                    double sa, sb;
                    tableDerivativeSums(DA, DB, count, tableStride, d, R, &sa, &sb);
                    gA[d] += w*sa;
                    gB[d] += w*sb;
                    gC[3*centre+d] -= w*(sa+sb);
                }
            }
        }
        for (int position = firstAux; position < lastAux; position++)
            addFixedPointGradient(gradient, centreOffset+auxAtom[auxShellList[position]], gC+3*(position-firstAux));
#else
        for (int centreFirst = firstAux; centreFirst < lastAux;) {
            int centreEnd = centreFirst+1;
            while (centreEnd < lastAux && auxAtom[auxShellList[centreEnd]] == auxAtom[auxShellList[centreFirst]])
                centreEnd++;
            double gC[3] = {0, 0, 0};
            for (int pp = 0; pp < numPrimitivePairs; pp++) {  // primitive pairs, a's primitive the slower index
                const int slot = pp*numPairs+(k-pairBegin);
                const double p = pairTable[3*tableStride+slot];
                if (p == 0)
                    continue;
                const double P[3] = {pairTable[slot], pairTable[tableStride+slot], pairTable[2*tableStride+slot]};
                // The potential of the centre's fitted density on the pair's Hermite functions, W, summed over the
                // centre's shells and primitives before it meets the derivative densities: the gradient is linear in
                // it, so one contraction with DA and DB per centre, not per fitting primitive.
                for (int n = 0; n < count; n++)
                    W[n] = 0;
                for (int position = centreFirst; position < centreEnd; position++)
                    ADD_FITTING_SHELL_POTENTIAL(auxShellList[position], pairOrder);
                GLOBAL const double* RESTRICT DA = pairTable+4*tableStride+slot;
                GLOBAL const double* RESTRICT DB = pairTable+(4+3*count)*tableStride+slot;
                for (int d = 0; d < 3; d++) {
                    double sa, sb;
                    tableDerivativeSums(DA, DB, count, tableStride, d, W, &sa, &sb);
                    gA[d] += sa;
                    gB[d] += sb;
                    gC[d] -= sa+sb;  // translational invariance
                }
            }
            addFixedPointGradient(gradient, centreOffset+auxAtom[auxShellList[centreFirst]], gC);
            centreFirst = centreEnd;
        }
#endif
        addFixedPointGradient(gradient, shellAtom[s1], gA);
        addFixedPointGradient(gradient, shellAtom[s2], gB);
    }
    finishWork(counter);
}
#endif

/* The point-charge matrix is made for orbital shell pairs only (as the tensor, qmThreeCentreTensor.cc); classes beyond
 * BASIS_L serve the metric's gradient (a fitting shell and a unit s function) and have the gradient kernel alone. */
#if CLASS_LA <= BASIS_L && CLASS_LQ < 0
/**
 * The potential matrix of point charges, sum_C w_C <a|1/|r-C||b> (w_C = -q_C for the electrons' potential energy), for
 * every listed shell pair (a >= b) of the class: McMurchie-Davidson's nuclear attraction, (2 pi / p) R_tuv(p, P-C) per
 * primitive pair and charge, summed over a group of charges before it is contracted with the pair's Hermite
 * coefficients. Work item (group of charges, pair): its cartesian block (i, j) i-major (in the pair's own order) goes
 * to partial[group*blockElements + blockStart[pair] + i*n2 + j]; sumChargeGroups() adds the groups in order.
 */
KERNEL AT_MOST_128_REGISTERS void CLASS_NAME(pointChargeMatrix)(int pairBegin, int numPairs, int numGroups, int blockElements,
                              GLOBAL const int* RESTRICT pairFirst,
                              GLOBAL const int* RESTRICT pairSecond, GLOBAL const int* RESTRICT blockStart,
                              GLOBAL const int* RESTRICT shellL, GLOBAL const int* RESTRICT shellPrimStart,
                              GLOBAL const int* RESTRICT shellNumPrim, GLOBAL const double* RESTRICT shellCenter,
                              GLOBAL const double* RESTRICT primExponent, GLOBAL const double* RESTRICT primCoefficient,
                              GLOBAL const int* RESTRICT groupChargeStart, GLOBAL const double* RESTRICT chargeCenter,
                              GLOBAL const double* RESTRICT chargeWeight, GLOBAL const double* RESTRICT boysTable, double boysStep,
                              double boysEnd, int boysOrders, int boysTaylorTerms, GLOBAL double* RESTRICT partial,
                              GLOBAL mm_ulong* RESTRICT counter) {
    const BoysTable boys = boysTableOf(boysStep, boysEnd, boysOrders, boysTaylorTerms);
    LOCAL mm_long chunk[1];
    const int la = CLASS_LA, lb = CLASS_LB, na = CART_COUNT(CLASS_LA), nb = CART_COUNT(CLASS_LB), L = CLASS_PAIR_ORDER;
    const int T = CLASS_PAIR_ORDER+1, count = HERMITE_COUNT(CLASS_PAIR_ORDER);
    double acc[CART_COUNT(CLASS_LA)*CART_COUNT(CLASS_LB)];
    double Ex[CLASS_VALUE_E], Ey[CLASS_VALUE_E], Ez[CLASS_VALUE_E];
    double R[HERMITE_COUNT(CLASS_PAIR_ORDER)], F[CLASS_PAIR_ORDER+1], W[HERMITE_COUNT(CLASS_PAIR_ORDER)];
    const mm_long numItems = (mm_long) numPairs*numGroups;
    for (mm_long first = nextChunk(counter, chunk); first < numItems; first = nextChunk(counter, chunk)) {
        const mm_long item = first+LOCAL_ID;
        if (item >= numItems)
            continue;
        const int group = (int) (item/numPairs), k = pairBegin+(int) (item%numPairs);
        int sA, sB;
        const int swapped = classPairShells(k, pairFirst, pairSecond, shellL, &sA, &sB);
        for (int n = 0; n < na*nb; n++)
            acc[n] = 0;
        const double A[3] = {shellCenter[3*sA], shellCenter[3*sA+1], shellCenter[3*sA+2]};
        const double Bc[3] = {shellCenter[3*sB], shellCenter[3*sB+1], shellCenter[3*sB+2]};
        for (int pa = shellPrimStart[sA]; pa < shellPrimStart[sA]+shellNumPrim[sA]; pa++)
            for (int pb = shellPrimStart[sB]; pb < shellPrimStart[sB]+shellNumPrim[sB]; pb++) {
                const double a = primExponent[pa], b = primExponent[pb], p = a+b;
                double P[3];
                const double cab = primCoefficient[pa]*primCoefficient[pb]*primitivePair(a, b, A, Bc, la, lb, P, Ex, Ey, Ez);
                if (fabs(cab) < 1e-18)
                    continue;
                // W_tuv = sum_C w_C (2 pi / p) R_tuv(p, P - C) over the group's charges.
                for (int n = 0; n < count; n++)
                    W[n] = 0;
                for (int c = groupChargeStart[group]; c < groupChargeStart[group+1]; c++) {
                    const double X = P[0]-chargeCenter[3*c], Y = P[1]-chargeCenter[3*c+1], Z = P[2]-chargeCenter[3*c+2];
                    boysFunction(L, p*(X*X+Y*Y+Z*Z), boysTable, boys, F);
                    hermiteCoulomb(L, p, X, Y, Z, F, R);
                    const double w = chargeWeight[c];
                    for (int n = 0; n < count; n++)
                        W[n] += w*R[n];
                }
                addPairBlock(la, lb, Ex, Ey, Ez, T, W, 2*PI_THREE_CENTRE/p*cab, 1, acc);
            }
        // The block in the pair's own order: (i of s1, j of s2), which is (j, i) of the class's (A, B) if swapped.
        const int n1 = (swapped ? nb : na), n2 = (swapped ? na : nb);
        GLOBAL double* out = partial+(mm_long) group*blockElements+blockStart[k];
        for (int i = 0; i < n1; i++)
            for (int j = 0; j < n2; j++)
                out[i*n2+j] = acc[swapped ? j*nb+i : i*nb+j];
    }
    finishWork(counter);
}
#endif

#undef CLASS_WRITTEN
#undef ADD_FITTING_SHELL_POTENTIAL
#undef GRADIENT_NAME
#undef CLASS_NAME
#undef CLASS_PAIR_ORDER
#undef CLASS_TENSOR_ORDER
#undef CLASS_VALUE_E
#undef CLASS_GRADIENT_E
