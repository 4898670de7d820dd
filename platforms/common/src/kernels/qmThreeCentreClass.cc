/**
 * The integral kernels of one class of orbital shell pairs, (CLASS_LA, CLASS_LB) with CLASS_LA >= CLASS_LB, after the
 * helpers of qmThreeCentre.cc: the host compiles this file once per class of its program (ThreeCentreProgram.cpp) and
 * launches each class's kernels over the range of its pairs (pairBegin, numPairs: the host sorts the pairs by class).
 * With the pair's angular momenta known at compile time the loops over its functions and Hermite orders have fixed
 * bounds and the private arrays the class's own size: the generic kernels, with l read at run time and every array
 * sized for the largest class, kept 7.5-8.4 KB of private stack per thread in a GPU's slow local memory and ran at
 * 1-2% of an H200's double-precision peak. A pair whose first shell has the smaller l is taken the other way round
 * (swapped): its results are written back in its own order. The fitting shell's l stays a run-time value.
 *
 * Work items: (pair of the class, fitting shell) for the tensor, (pair, run of consecutive fitting shells) for the
 * gradient, (pair, group of charges) for the point-charge matrix; consecutive items take consecutive pairs with one
 * fitting shell, run or group. Work groups take their items GROUP_SIZE at a time from a counter (nextChunk) rather
 * than by a fixed grid stride: OpenMM launches more work groups than fit on a GPU at once at these kernels' register
 * count, and with a fixed share each the groups that started late ran their shares on a nearly idle GPU.
 */

#define CLASS_NAME(f) CLASS_NAME_EXPANDED(f, CLASS_LA, CLASS_LB)
/* The class's Hermite orders: the tensor needs la+lb+lq, the gradient one more (a raised bra or ket). */
#define CLASS_PAIR_ORDER (CLASS_LA+CLASS_LB)
#define CLASS_TENSOR_ORDER (CLASS_PAIR_ORDER+AUX_L)
/* One direction's E^ij_t for i <= la, j <= lb (VALUE) and for i <= la+1, j <= lb+1 (GRADIENT). */
#define CLASS_VALUE_E ((CLASS_LA+1)*(CLASS_LB+1)*(CLASS_PAIR_ORDER+1))
#define CLASS_GRADIENT_E ((CLASS_LA+2)*(CLASS_LB+2)*(CLASS_PAIR_ORDER+3))

/* The tensor and the point-charge matrix are made for orbital shell pairs only; classes beyond BASIS_L serve the
 * metric's gradient (a fitting shell and a unit s function) and have the gradient kernel alone. */
#if CLASS_LA <= BASIS_L
/**
 * B[column * rows + row]: (Q|ab) for every significant shell pair (a >= b) of the class and fitting shell Q, the
 * fitting functions transformed by their shell's matrix (to real solid harmonics where pure), the pair's cartesian
 * functions (i, j) i-major from pairColumn, with i >= j when the two shells are one.
 */
#if CLASS_LB == 0 && CLASS_LA <= 1
KERNEL AT_MOST_128_REGISTERS void CLASS_NAME(threeCentreTensor)(int pairBegin, int numPairs, int numAuxShells, int rows,
                              GLOBAL const int* RESTRICT pairFirst,
                              GLOBAL const int* RESTRICT pairSecond, GLOBAL const int* RESTRICT pairColumn,
                              GLOBAL const int* RESTRICT shellL, GLOBAL const int* RESTRICT shellPrimStart,
                              GLOBAL const int* RESTRICT shellNumPrim, GLOBAL const double* RESTRICT shellCenter,
                              GLOBAL const double* RESTRICT primExponent, GLOBAL const double* RESTRICT primCoefficient,
                              GLOBAL const int* RESTRICT auxL, GLOBAL const int* RESTRICT auxPrimStart,
                              GLOBAL const int* RESTRICT auxNumPrim, GLOBAL const int* RESTRICT auxOffset,
                              GLOBAL const int* RESTRICT auxSize, GLOBAL const double* RESTRICT auxCenter,
                              GLOBAL const double* RESTRICT auxExponent, GLOBAL const double* RESTRICT auxCoefficient,
                              GLOBAL const double* RESTRICT auxTransform, GLOBAL const int* RESTRICT auxTransformStart,
                              GLOBAL const double* RESTRICT fittingHermite, GLOBAL const double* RESTRICT boysTable, double boysStep, double boysEnd, int boysOrders,
                              int boysTaylorTerms, GLOBAL double* RESTRICT B, GLOBAL mm_ulong* RESTRICT counter) {
    // The s-s and p-s pairs: a p_i s product has Hermite coefficients PA_i (order 0) and 1/2p (order 1 in i), so each
    // fitting component needs the potential on at most four Hermite functions, summed in registers.
    const BoysTable boys = boysTableOf(boysStep, boysEnd, boysOrders, boysTaylorTerms);
    LOCAL mm_long chunk[1];
    const int na = CART_COUNT(CLASS_LA);
    double acc[CART_COUNT(CLASS_LA)*CART_COUNT(AUX_L)];
    double R[HERMITE_COUNT(CLASS_LA+AUX_L)], F[CLASS_LA+AUX_L+1];
    const mm_long numItems = (mm_long) numPairs*numAuxShells;
    for (mm_long first = nextChunk(counter, chunk); first < numItems; first = nextChunk(counter, chunk)) {
        const mm_long item = first+LOCAL_ID;
        if (item >= numItems)
            continue;
        const int q = (int) (item/numPairs), k = pairBegin+(int) (item%numPairs);
        const int s1 = pairFirst[k], s2 = pairSecond[k];
        const int swapped = (shellL[s1] < shellL[s2]);
        const int sA = (swapped ? s2 : s1), sB = (swapped ? s1 : s2);
        const int lq = auxL[q], nq = CART_COUNT(lq), L = CLASS_LA+lq;
        for (int n = 0; n < na*nq; n++)
            acc[n] = 0;
        const double A[3] = {shellCenter[3*sA], shellCenter[3*sA+1], shellCenter[3*sA+2]};
        const double Bc[3] = {shellCenter[3*sB], shellCenter[3*sB+1], shellCenter[3*sB+2]};
        const double AB2 = (A[0]-Bc[0])*(A[0]-Bc[0]) + (A[1]-Bc[1])*(A[1]-Bc[1]) + (A[2]-Bc[2])*(A[2]-Bc[2]);
        for (int pa = shellPrimStart[sA]; pa < shellPrimStart[sA]+shellNumPrim[sA]; pa++)
            for (int pb = shellPrimStart[sB]; pb < shellPrimStart[sB]+shellNumPrim[sB]; pb++) {
                const double a = primExponent[pa], b = primExponent[pb], p = a+b;
                const double cab = primCoefficient[pa]*primCoefficient[pb]*exp(-a*b/p*AB2);
                if (fabs(cab) < 1e-18)
                    continue;
                const double P[3] = {(a*A[0]+b*Bc[0])/p, (a*A[1]+b*Bc[1])/p, (a*A[2]+b*Bc[2])/p};
                const double X = P[0]-auxCenter[3*q], Y = P[1]-auxCenter[3*q+1], Z = P[2]-auxCenter[3*q+2];
                for (int pq = auxPrimStart[q]; pq < auxPrimStart[q]+auxNumPrim[q]; pq++) {
                    const double g = auxExponent[pq], alpha = p*g/(p+g);
                    boysFunction(L, alpha*(X*X+Y*Y+Z*Z), boysTable, boys, F);
                    hermiteCoulomb(L, alpha, X, Y, Z, F, R);
                    const double prefactor = 2*PI_THREE_CENTRE*PI_THREE_CENTRE*sqrt(PI_THREE_CENTRE)/(p*g*sqrt(p+g))*cab*auxCoefficient[pq];
                    for (int c = 0; c < nq; c++) {
                        GLOBAL const double* cq = fittingHermite+(mm_long) pq*FITTING_HERMITE_STRIDE+c*HERMITE_COUNT(AUX_L);
                        double w0 = 0;
#if CLASS_LA == 1
                        double wx = 0, wy = 0, wz = 0;
#endif
                        for (int Nq = 0; Nq <= lq; Nq++)
                            for (int tau = Nq; tau >= 0; tau--)
                                for (int nu = Nq-tau; nu >= 0; nu--) {
                                    const int phi = Nq-tau-nu;
                                    const double e = cq[hermitePosition(tau, nu, phi)];
                                    if (e == 0)
                                        continue;
                                    const double signedE = (Nq%2 == 0 ? e : -e);
                                    w0 += signedE*R[hermitePosition(tau, nu, phi)];
#if CLASS_LA == 1
                                    wx += signedE*R[hermitePosition(tau+1, nu, phi)];
                                    wy += signedE*R[hermitePosition(tau, nu+1, phi)];
                                    wz += signedE*R[hermitePosition(tau, nu, phi+1)];
#endif
                                }
#if CLASS_LA == 0
                        acc[c] += prefactor*w0;
#else
                        const double h = 0.5/p;
                        acc[c] += prefactor*((P[0]-A[0])*w0 + h*wx);
                        acc[nq+c] += prefactor*((P[1]-A[1])*w0 + h*wy);
                        acc[2*nq+c] += prefactor*((P[2]-A[2])*w0 + h*wz);
#endif
                    }
                }
            }
        // The pair's functions in its own order: (i of s1, j of s2), which is (j, i) of the class's (A, B) if swapped;
        // the class's B is an s shell, so the block of function i of A is i either way.
        const int n1 = (swapped ? 1 : na), n2 = (swapped ? na : 1);
        int column = pairColumn[k];
        GLOBAL const double* transform = auxTransform+auxTransformStart[q];
        for (int i = 0; i < n1; i++)
            for (int j = 0; j < n2; j++) {
                if (s1 == s2 && j > i)
                    continue;
                const int block = (swapped ? j : i);
                for (int m = 0; m < auxSize[q]; m++) {
                    double value = 0;
                    for (int c = 0; c < nq; c++)
                        value += transform[m*nq+c]*acc[block*nq+c];
                    B[(mm_long) column*rows+auxOffset[q]+m] = value;
                }
                column++;
            }
    }
}
#else
KERNEL AT_MOST_128_REGISTERS void CLASS_NAME(threeCentreTensor)(int pairBegin, int numPairs, int numAuxShells, int rows,
                              GLOBAL const int* RESTRICT pairFirst,
                              GLOBAL const int* RESTRICT pairSecond, GLOBAL const int* RESTRICT pairColumn,
                              GLOBAL const int* RESTRICT shellL, GLOBAL const int* RESTRICT shellPrimStart,
                              GLOBAL const int* RESTRICT shellNumPrim, GLOBAL const double* RESTRICT shellCenter,
                              GLOBAL const double* RESTRICT primExponent, GLOBAL const double* RESTRICT primCoefficient,
                              GLOBAL const int* RESTRICT auxL, GLOBAL const int* RESTRICT auxPrimStart,
                              GLOBAL const int* RESTRICT auxNumPrim, GLOBAL const int* RESTRICT auxOffset,
                              GLOBAL const int* RESTRICT auxSize, GLOBAL const double* RESTRICT auxCenter,
                              GLOBAL const double* RESTRICT auxExponent, GLOBAL const double* RESTRICT auxCoefficient,
                              GLOBAL const double* RESTRICT auxTransform, GLOBAL const int* RESTRICT auxTransformStart,
                              GLOBAL const double* RESTRICT fittingHermite, GLOBAL const double* RESTRICT boysTable, double boysStep, double boysEnd, int boysOrders,
                              int boysTaylorTerms, GLOBAL double* RESTRICT B, GLOBAL mm_ulong* RESTRICT counter) {
    const BoysTable boys = boysTableOf(boysStep, boysEnd, boysOrders, boysTaylorTerms);
    LOCAL mm_long chunk[1];
    const int la = CLASS_LA, lb = CLASS_LB, na = CART_COUNT(CLASS_LA), nb = CART_COUNT(CLASS_LB), T = CLASS_PAIR_ORDER+1;
    double acc[CART_COUNT(CLASS_LA)*CART_COUNT(CLASS_LB)*CART_COUNT(AUX_L)];
    double Ex[CLASS_VALUE_E], Ey[CLASS_VALUE_E], Ez[CLASS_VALUE_E];
    double R[HERMITE_COUNT(CLASS_TENSOR_ORDER)], F[CLASS_TENSOR_ORDER+1], W[HERMITE_COUNT(CLASS_PAIR_ORDER)];
    const mm_long numItems = (mm_long) numPairs*numAuxShells;
    for (mm_long first = nextChunk(counter, chunk); first < numItems; first = nextChunk(counter, chunk)) {
        const mm_long item = first+LOCAL_ID;
        if (item >= numItems)
            continue;
        const int q = (int) (item/numPairs), k = pairBegin+(int) (item%numPairs);
        const int s1 = pairFirst[k], s2 = pairSecond[k];
        const int swapped = (shellL[s1] < shellL[s2]);
        const int sA = (swapped ? s2 : s1), sB = (swapped ? s1 : s2);
        const int lq = auxL[q], nq = CART_COUNT(lq), L = la+lb+lq;
        for (int n = 0; n < na*nb*nq; n++)
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
                const double X = P[0]-auxCenter[3*q], Y = P[1]-auxCenter[3*q+1], Z = P[2]-auxCenter[3*q+2];
                for (int pq = auxPrimStart[q]; pq < auxPrimStart[q]+auxNumPrim[q]; pq++) {
                    const double g = auxExponent[pq], alpha = p*g/(p+g);
                    boysFunction(L, alpha*(X*X+Y*Y+Z*Z), boysTable, boys, F);
                    hermiteCoulomb(L, alpha, X, Y, Z, F, R);
                    const double prefactor = 2*PI_THREE_CENTRE*PI_THREE_CENTRE*sqrt(PI_THREE_CENTRE)/(p*g*sqrt(p+g))*cab*auxCoefficient[pq];
                    for (int c = 0; c < nq; c++) {
                        contractWithFitting(la+lb, lq, fittingHermite+(mm_long) pq*FITTING_HERMITE_STRIDE+c*HERMITE_COUNT(AUX_L), R, W);
                        for (int i = 0; i < na; i++) {
                            int ip[3];
                            cartesianPowers(la, i, ip);
                            for (int j = 0; j < nb; j++) {
                                int jp[3];
                                cartesianPowers(lb, j, jp);
                                acc[(i*nb+j)*nq+c] += prefactor*contractPairHermite(Ex, Ey, Ez, lb, T, ip, jp, W);
                            }
                        }
                    }
                }
            }
        // The pair's functions in its own order: (i of s1, j of s2), which is (j, i) of the class's (A, B) if swapped.
        const int n1 = (swapped ? nb : na), n2 = (swapped ? na : nb);
        int column = pairColumn[k];
        GLOBAL const double* transform = auxTransform+auxTransformStart[q];
        for (int i = 0; i < n1; i++)
            for (int j = 0; j < n2; j++) {
                if (s1 == s2 && j > i)
                    continue;
                const int block = (swapped ? j*nb+i : i*nb+j);
                for (int m = 0; m < auxSize[q]; m++) {
                    double value = 0;
                    for (int c = 0; c < nq; c++)
                        value += transform[m*nq+c]*acc[block*nq+c];
                    B[(mm_long) column*rows+auxOffset[q]+m] = value;
                }
                column++;
            }
    }
}

#endif
#endif

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
#if CLASS_LA == 0 && CLASS_LB == 0 && POINT_CHARGES
/* The s-s pairs with point charges: the derivative densities of two s functions are four numbers per direction and a
 * charge's potential on the pair's Hermite functions of orders 0 and 1 is F_0 and -2p F_1 (X, Y, Z), so everything
 * but the charges' gradients stays in registers. */
KERNEL AT_MOST_128_REGISTERS void CLASS_NAME(threeCentreGradient)(int pairBegin, THREE_CENTRE_GRADIENT_ARGUMENTS) {
    const BoysTable boys = boysTableOf(boysStep, boysEnd, boysOrders, boysTaylorTerms);
    LOCAL mm_long chunk[1];
    double F[2];
    double gC[3*MAX_CENTRES_PER_ITEM];
    const mm_long numItems = (mm_long) numPairs*numGroups;
    for (mm_long first = nextChunk(counter, chunk); first < numItems; first = nextChunk(counter, chunk)) {
        const mm_long item = first+LOCAL_ID;
        if (item >= numItems)
            continue;
        const int group = (int) (item/numPairs), k = pairBegin+(int) (item%numPairs);
        const int firstAux = auxGroupShellStart[group], lastAux = auxGroupShellStart[group+1];
        const int s1 = pairFirst[k], s2 = pairSecond[k];
        const double weight = (s1 == s2 ? 1.0 : 2.0);
        const double Dab = weight*density[(mm_long) shellCartesianOffset[s1]*nbf+shellCartesianOffset[s2]];
        const double A[3] = {shellCenter[3*s1], shellCenter[3*s1+1], shellCenter[3*s1+2]};
        const double B[3] = {shellCenter[3*s2], shellCenter[3*s2+1], shellCenter[3*s2+2]};
        const double AB2 = (A[0]-B[0])*(A[0]-B[0]) + (A[1]-B[1])*(A[1]-B[1]) + (A[2]-B[2])*(A[2]-B[2]);
        double gA[3] = {0, 0, 0}, gB[3] = {0, 0, 0};
        for (int n = 0; n < 3*MAX_CENTRES_PER_ITEM; n++)
            gC[n] = 0;
        for (int pa = shellPrimStart[s1]; pa < shellPrimStart[s1]+shellNumPrim[s1]; pa++)
            for (int pb = shellPrimStart[s2]; pb < shellPrimStart[s2]+shellNumPrim[s2]; pb++) {
                const double a = primExponent[pa], b = primExponent[pb], p = a+b;
                const double cab = Dab*primCoefficient[pa]*primCoefficient[pb]*exp(-a*b/p*AB2);
                if (fabs(cab) < 1e-18)
                    continue;
                const double P[3] = {(a*A[0]+b*B[0])/p, (a*A[1]+b*B[1])/p, (a*A[2]+b*B[2])/p};
                for (int q = firstAux; q < lastAux; q++) {
                    const double PC[3] = {P[0]-auxCenter[3*q], P[1]-auxCenter[3*q+1], P[2]-auxCenter[3*q+2]};
                    boysFunction(1, p*(PC[0]*PC[0]+PC[1]*PC[1]+PC[2]*PC[2]), boysTable, boys, F);
                    const double w = 2*PI_THREE_CENTRE/p*auxCoefficient[auxPrimStart[q]]*coefficients[auxCartesianOffset[q]];
                    // R_000 = F_0, R_(e_d) = -2p PC_d F_1; the order-1 term enters with 1/(2p).
                    for (int d = 0; d < 3; d++) {
                        const double order1 = -PC[d]*F[1];
                        const double sa = 2*a*cab*w*((P[d]-A[d])*F[0] + order1);
                        const double sb = 2*b*cab*w*((P[d]-B[d])*F[0] + order1);
                        gA[d] += sa;
                        gB[d] += sb;
                        gC[3*(q-firstAux)+d] -= sa+sb;
                    }
                }
            }
        const int atomA = shellAtom[s1], atomB = shellAtom[s2];
        for (int d = 0; d < 3; d++) {
            ATOMIC_ADD(&gradient[3*atomA+d], (mm_ulong) ((mm_long) round(gA[d]*GRADIENT_SCALE)));
            ATOMIC_ADD(&gradient[3*atomB+d], (mm_ulong) ((mm_long) round(gB[d]*GRADIENT_SCALE)));
        }
        for (int q = firstAux; q < lastAux; q++)
            for (int d = 0; d < 3; d++)
                ATOMIC_ADD(&gradient[3*(centreOffset+auxAtom[q])+d], (mm_ulong) ((mm_long) round(gC[3*(q-firstAux)+d]*GRADIENT_SCALE)));
    }
}
#elif CLASS_LA == 0 && CLASS_LB == 0
/* The s-s pairs (with the s-unit pairs of the metric's gradient, the largest share of the fitting gradient's work):
 * the derivative densities of two s functions are four numbers per direction, so each item keeps them, the potential
 * on the pair's four Hermite functions and the current centre's gradient in registers. The item's centres are taken
 * one after another, each over all primitive pairs (an s-s primitive pair costs one exponential), so that a centre's
 * gradient is three scalars added once, not an array indexed by the centre. */
KERNEL AT_MOST_128_REGISTERS void CLASS_NAME(threeCentreGradient)(int pairBegin, THREE_CENTRE_GRADIENT_ARGUMENTS) {
    const BoysTable boys = boysTableOf(boysStep, boysEnd, boysOrders, boysTaylorTerms);
    LOCAL mm_long chunk[1];
    double R[HERMITE_COUNT(AUX_L+1)], F[AUX_L+2];
    const mm_long numItems = (mm_long) numPairs*numGroups;
    for (mm_long first = nextChunk(counter, chunk); first < numItems; first = nextChunk(counter, chunk)) {
        const mm_long item = first+LOCAL_ID;
        if (item >= numItems)
            continue;
        const int group = (int) (item/numPairs), k = pairBegin+(int) (item%numPairs);
        const int firstAux = auxGroupShellStart[group], lastAux = auxGroupShellStart[group+1];
        const int s1 = pairFirst[k], s2 = pairSecond[k];
        const double weight = (s1 == s2 ? 1.0 : 2.0);
        const double Dab = weight*density[(mm_long) shellCartesianOffset[s1]*nbf+shellCartesianOffset[s2]];
        const double A[3] = {shellCenter[3*s1], shellCenter[3*s1+1], shellCenter[3*s1+2]};
        const double B[3] = {shellCenter[3*s2], shellCenter[3*s2+1], shellCenter[3*s2+2]};
        const double AB2 = (A[0]-B[0])*(A[0]-B[0]) + (A[1]-B[1])*(A[1]-B[1]) + (A[2]-B[2])*(A[2]-B[2]);
        double gA[3] = {0, 0, 0}, gB[3] = {0, 0, 0};
        for (int centreFirst = firstAux; centreFirst < lastAux;) {
            int centreEnd = centreFirst+1;
            while (centreEnd < lastAux && auxAtom[centreEnd] == auxAtom[centreFirst])
                centreEnd++;
            double gC[3] = {0, 0, 0};
            for (int pa = shellPrimStart[s1]; pa < shellPrimStart[s1]+shellNumPrim[s1]; pa++)
                for (int pb = shellPrimStart[s2]; pb < shellPrimStart[s2]+shellNumPrim[s2]; pb++) {
                    const double a = primExponent[pa], b = primExponent[pb], p = a+b;
                    const double cab = Dab*primCoefficient[pa]*primCoefficient[pb]*exp(-a*b/p*AB2);
                    if (fabs(cab) < 1e-18)
                        continue;
                    const double P[3] = {(a*A[0]+b*B[0])/p, (a*A[1]+b*B[1])/p, (a*A[2]+b*B[2])/p};
                    // The centre's fitted potential on the pair's Hermite functions of orders 0 and 1 (x, y, z).
                    double W[4] = {0, 0, 0, 0};
                    for (int q = centreFirst; q < centreEnd; q++)
                        addFittingShellPotentialOrder1(q, p, P, auxL, auxPrimStart, auxNumPrim, auxCenter, auxExponent, fitted, boysTable,
                                                       boys, F, R, W);
                    // d/dA_d of an s function is 2a times the p_d function: Hermite coefficients PA_d (order 0) and
                    // 1/(2p) (order 1 in d), likewise on B.
                    for (int d = 0; d < 3; d++) {
                        const double sa = 2*a*cab*((P[d]-A[d])*W[0] + W[d+1]/(2*p));
                        const double sb = 2*b*cab*((P[d]-B[d])*W[0] + W[d+1]/(2*p));
                        gA[d] += sa;
                        gB[d] += sb;
                        gC[d] -= sa+sb;  // translational invariance
                    }
                }
            for (int d = 0; d < 3; d++)
                ATOMIC_ADD(&gradient[3*(centreOffset+auxAtom[centreFirst])+d], (mm_ulong) ((mm_long) round(gC[d]*GRADIENT_SCALE)));
            centreFirst = centreEnd;
        }
        const int atomA = shellAtom[s1], atomB = shellAtom[s2];
        for (int d = 0; d < 3; d++) {
            ATOMIC_ADD(&gradient[3*atomA+d], (mm_ulong) ((mm_long) round(gA[d]*GRADIENT_SCALE)));
            ATOMIC_ADD(&gradient[3*atomB+d], (mm_ulong) ((mm_long) round(gB[d]*GRADIENT_SCALE)));
        }
    }
}
#elif CLASS_LA == 1 && CLASS_LB == 0
/* The p-s pairs (the next largest share): the three density elements, the potential on the pair's ten Hermite
 * functions of orders 0 to 2 and the sums of psDerivativeSums in registers; with fitting functions the item's centres
 * one after another (as for s-s), with point charges their potential R_tuv(p, P-C) written out. */
KERNEL AT_MOST_128_REGISTERS void CLASS_NAME(threeCentreGradient)(int pairBegin, THREE_CENTRE_GRADIENT_ARGUMENTS) {
    const BoysTable boys = boysTableOf(boysStep, boysEnd, boysOrders, boysTaylorTerms);
    LOCAL mm_long chunk[1];
#if POINT_CHARGES
    double F[3];
    double gC[3*MAX_CENTRES_PER_ITEM];
#else
    double R[HERMITE_COUNT(AUX_L+2)], F[AUX_L+3];
#endif
    const mm_long numItems = (mm_long) numPairs*numGroups;
    for (mm_long first = nextChunk(counter, chunk); first < numItems; first = nextChunk(counter, chunk)) {
        const mm_long item = first+LOCAL_ID;
        if (item >= numItems)
            continue;
        const int group = (int) (item/numPairs), k = pairBegin+(int) (item%numPairs);
        const int firstAux = auxGroupShellStart[group], lastAux = auxGroupShellStart[group+1];
        // The p shell is A, the s shell B (D is symmetric); two shells of different l: weight 2.
        const int swapped = (shellL[pairFirst[k]] < shellL[pairSecond[k]]);
        const int s1 = (swapped ? pairSecond[k] : pairFirst[k]), s2 = (swapped ? pairFirst[k] : pairSecond[k]);
        const mm_long o1 = shellCartesianOffset[s1], o2 = shellCartesianOffset[s2];
        const double D[3] = {2*density[o1*nbf+o2], 2*density[(o1+1)*nbf+o2], 2*density[(o1+2)*nbf+o2]};
        const double A[3] = {shellCenter[3*s1], shellCenter[3*s1+1], shellCenter[3*s1+2]};
        const double B[3] = {shellCenter[3*s2], shellCenter[3*s2+1], shellCenter[3*s2+2]};
        const double AB2 = (A[0]-B[0])*(A[0]-B[0]) + (A[1]-B[1])*(A[1]-B[1]) + (A[2]-B[2])*(A[2]-B[2]);
        double gA[3] = {0, 0, 0}, gB[3] = {0, 0, 0};
#if POINT_CHARGES
        for (int n = 0; n < 3*MAX_CENTRES_PER_ITEM; n++)
            gC[n] = 0;
#else
        for (int centreFirst = firstAux; centreFirst < lastAux;) {
            int centreEnd = centreFirst+1;
            while (centreEnd < lastAux && auxAtom[centreEnd] == auxAtom[centreFirst])
                centreEnd++;
            double gC[3] = {0, 0, 0};
#endif
            for (int pa = shellPrimStart[s1]; pa < shellPrimStart[s1]+shellNumPrim[s1]; pa++)
                for (int pb = shellPrimStart[s2]; pb < shellPrimStart[s2]+shellNumPrim[s2]; pb++) {
                    const double a = primExponent[pa], b = primExponent[pb], p = a+b;
                    const double cab = primCoefficient[pa]*primCoefficient[pb]*exp(-a*b/p*AB2);
                    if (fabs(cab) < 1e-18)
                        continue;
                    const double P[3] = {(a*A[0]+b*B[0])/p, (a*A[1]+b*B[1])/p, (a*A[2]+b*B[2])/p};
                    const double PA[3] = {P[0]-A[0], P[1]-A[1], P[2]-A[2]}, PB[3] = {P[0]-B[0], P[1]-B[1], P[2]-B[2]};
                    const double Dc[3] = {cab*D[0], cab*D[1], cab*D[2]};
                    double sa[3], sb[3];
#if POINT_CHARGES
                    for (int q = firstAux; q < lastAux; q++) {
                        const double PC[3] = {P[0]-auxCenter[3*q], P[1]-auxCenter[3*q+1], P[2]-auxCenter[3*q+2]};
                        boysFunction(2, p*(PC[0]*PC[0]+PC[1]*PC[1]+PC[2]*PC[2]), boysTable, boys, F);
                        const double w = 2*PI_THREE_CENTRE/p*auxCoefficient[auxPrimStart[q]]*coefficients[auxCartesianOffset[q]];
                        // R_tuv(p, PC) to order 2: R^1_000 = -2p F_1, R^2_000 = 4p^2 F_2.
                        const double r1 = -2*p*F[1], r2 = 4*p*p*F[2];
                        const double W[10] = {w*F[0], w*PC[0]*r1, w*PC[1]*r1, w*PC[2]*r1,
                                              w*(PC[0]*PC[0]*r2+r1), w*PC[0]*PC[1]*r2, w*PC[0]*PC[2]*r2,
                                              w*(PC[1]*PC[1]*r2+r1), w*PC[1]*PC[2]*r2, w*(PC[2]*PC[2]*r2+r1)};
                        psDerivativeSums(Dc, a, b, p, PA, PB, W, sa, sb);
                        for (int d = 0; d < 3; d++) {
                            gA[d] += sa[d];
                            gB[d] += sb[d];
                            gC[3*(q-firstAux)+d] -= sa[d]+sb[d];
                        }
                    }
#else
                    double W[10] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
                    for (int q = centreFirst; q < centreEnd; q++)
                        addFittingShellPotentialOrder2(q, p, P, auxL, auxPrimStart, auxNumPrim, auxCenter, auxExponent, fitted, boysTable,
                                                       boys, F, R, W);
                    psDerivativeSums(Dc, a, b, p, PA, PB, W, sa, sb);
                    for (int d = 0; d < 3; d++) {
                        gA[d] += sa[d];
                        gB[d] += sb[d];
                        gC[d] -= sa[d]+sb[d];  // translational invariance
                    }
#endif
                }
#if POINT_CHARGES
        for (int q = firstAux; q < lastAux; q++)
            for (int d = 0; d < 3; d++)
                ATOMIC_ADD(&gradient[3*(centreOffset+auxAtom[q])+d], (mm_ulong) ((mm_long) round(gC[3*(q-firstAux)+d]*GRADIENT_SCALE)));
#else
            for (int d = 0; d < 3; d++)
                ATOMIC_ADD(&gradient[3*(centreOffset+auxAtom[centreFirst])+d], (mm_ulong) ((mm_long) round(gC[d]*GRADIENT_SCALE)));
            centreFirst = centreEnd;
        }
#endif
        const int atomA = shellAtom[s1], atomB = shellAtom[s2];
        for (int d = 0; d < 3; d++) {
            ATOMIC_ADD(&gradient[3*atomA+d], (mm_ulong) ((mm_long) round(gA[d]*GRADIENT_SCALE)));
            ATOMIC_ADD(&gradient[3*atomB+d], (mm_ulong) ((mm_long) round(gB[d]*GRADIENT_SCALE)));
        }
    }
}
#else
KERNEL AT_MOST_128_REGISTERS void CLASS_NAME(threeCentreGradient)(int pairBegin, THREE_CENTRE_GRADIENT_ARGUMENTS) {
    const BoysTable boys = boysTableOf(boysStep, boysEnd, boysOrders, boysTaylorTerms);
    LOCAL mm_long chunk[1];
    const int la = CLASS_LA, lb = CLASS_LB, iMax = CLASS_LA+1, jMax = CLASS_LB+1, T = CLASS_PAIR_ORDER+3;
    const int pairOrder = CLASS_PAIR_ORDER+1, count = HERMITE_COUNT(CLASS_PAIR_ORDER+1);
    double Ex[CLASS_GRADIENT_E], Ey[CLASS_GRADIENT_E], Ez[CLASS_GRADIENT_E];
    double DA[3*HERMITE_COUNT(CLASS_PAIR_ORDER+1)], DB[3*HERMITE_COUNT(CLASS_PAIR_ORDER+1)];
    // The gradients of the item's fitting centres over all its primitive pairs, added to the sums once: one atomic per
    // primitive pair and charge put hundreds of thousands of work items on a few hundred addresses.
    double gC[3*MAX_CENTRES_PER_ITEM];
#if POINT_CHARGES
    double R[HERMITE_COUNT(CLASS_PAIR_ORDER+1)], F[CLASS_PAIR_ORDER+2];
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
        // The class's shell with the larger l is A: D is symmetric, so the pair's other order gives the same sums.
        const int swapped = (shellL[pairFirst[k]] < shellL[pairSecond[k]]);
        const int s1 = (swapped ? pairSecond[k] : pairFirst[k]), s2 = (swapped ? pairFirst[k] : pairSecond[k]);
        const int o1 = shellCartesianOffset[s1], o2 = shellCartesianOffset[s2];
        const double weight = (s1 == s2 ? 1.0 : 2.0);
        const double A[3] = {shellCenter[3*s1], shellCenter[3*s1+1], shellCenter[3*s1+2]};
        const double B[3] = {shellCenter[3*s2], shellCenter[3*s2+1], shellCenter[3*s2+2]};
        double gA[3] = {0, 0, 0}, gB[3] = {0, 0, 0};
        for (int n = 0; n < 3*MAX_CENTRES_PER_ITEM; n++)
            gC[n] = 0;
        for (int pa = shellPrimStart[s1]; pa < shellPrimStart[s1]+shellNumPrim[s1]; pa++)
            for (int pb = shellPrimStart[s2]; pb < shellPrimStart[s2]+shellNumPrim[s2]; pb++) {
                const double a = primExponent[pa], b = primExponent[pb], p = a+b;
                double P[3];
                const double cab = weight*primCoefficient[pa]*primCoefficient[pb]*primitivePair(a, b, A, B, iMax, jMax, P, Ex, Ey, Ez);
                if (fabs(cab) < 1e-18)
                    continue;
                // Derivative Hermite densities: sum_ij D_ij d/dA_d (and d/dB_d) of the pair's Hermite coefficients.
                for (int n = 0; n < 3*count; n++) {
                    DA[n] = 0;
                    DB[n] = 0;
                }
                for (int d = 0; d < 3; d++) {
                    addDerivativeDensity(Ex, Ey, Ez, la, lb, jMax, T, o1, o2, nbf, density, cab, 1, a, d, DA+d*count);
                    addDerivativeDensity(Ex, Ey, Ez, la, lb, jMax, T, o1, o2, nbf, density, cab, 0, b, d, DB+d*count);
                }
#if POINT_CHARGES
                // A point charge is the limit of a normalized s Gaussian of infinite exponent (one primitive, l = 0):
                // McMurchie-Davidson's nuclear attraction, (2 pi / p) R_tuv(p, P-C) times the charge's weight.
                for (int q = firstAux; q < lastAux; q++) {
                    const int centre = q-firstAux;  // every charge is its own centre
                    const double X = P[0]-auxCenter[3*q], Y = P[1]-auxCenter[3*q+1], Z = P[2]-auxCenter[3*q+2];
                    boysFunction(pairOrder, p*(X*X+Y*Y+Z*Z), boysTable, boys, F);
                    hermiteCoulomb(pairOrder, p, X, Y, Z, F, R);
                    const double w = 2*PI_THREE_CENTRE/p*auxCoefficient[auxPrimStart[q]]*coefficients[auxCartesianOffset[q]];
                    for (int d = 0; d < 3; d++) {
                        double sa, sb;
                        derivativeSums(DA, DB, count, d, R, &sa, &sb);
                        gA[d] += w*sa;
                        gB[d] += w*sb;
                        gC[3*centre+d] -= w*(sa+sb);
                    }
                }
#else
                // The potential of each centre's fitted density on the pair's Hermite functions, W, summed over the
                // centre's shells and primitives before it meets the derivative densities: the gradient is linear in
                // it, so one contraction with DA and DB per centre, not per fitting primitive.
                for (int n = 0; n < count; n++)
                    W[n] = 0;
                for (int q = firstAux, centre = 0; q < lastAux; q++) {
                    addFittingShellPotential(q, p, P, pairOrder, auxL, auxPrimStart, auxNumPrim, auxCenter, auxExponent, fitted,
                                             boysTable, boys, F, R, W);
                    if (q+1 == lastAux || auxAtom[q+1] != auxAtom[q]) {
                        // The centre's last shell: its potential meets the derivative densities.
                        for (int d = 0; d < 3; d++) {
                            double sa, sb;
                            derivativeSums(DA, DB, count, d, W, &sa, &sb);
                            gA[d] += sa;
                            gB[d] += sb;
                            gC[3*centre+d] -= sa+sb;  // translational invariance
                        }
                        for (int n = 0; n < count; n++)
                            W[n] = 0;
                        centre++;
                    }
                }
#endif
            }
        const int atomA = shellAtom[s1], atomB = shellAtom[s2];
        for (int d = 0; d < 3; d++) {
            ATOMIC_ADD(&gradient[3*atomA+d], (mm_ulong) ((mm_long) round(gA[d]*GRADIENT_SCALE)));
            ATOMIC_ADD(&gradient[3*atomB+d], (mm_ulong) ((mm_long) round(gB[d]*GRADIENT_SCALE)));
        }
        for (int q = firstAux, centre = 0; q < lastAux; q++) {
            if (q > firstAux && auxAtom[q] == auxAtom[q-1])
                continue;  // the centre's shells after its first
            for (int d = 0; d < 3; d++)
                ATOMIC_ADD(&gradient[3*(centreOffset+auxAtom[q])+d], (mm_ulong) ((mm_long) round(gC[3*centre+d]*GRADIENT_SCALE)));
            centre++;
        }
    }
}
#endif

#if CLASS_LA <= BASIS_L
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
        const int s1 = pairFirst[k], s2 = pairSecond[k];
        const int swapped = (shellL[s1] < shellL[s2]);
        const int sA = (swapped ? s2 : s1), sB = (swapped ? s1 : s2);
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
                const double prefactor = 2*PI_THREE_CENTRE/p*cab;
                for (int i = 0; i < na; i++) {
                    int ip[3];
                    cartesianPowers(la, i, ip);
                    for (int j = 0; j < nb; j++) {
                        int jp[3];
                        cartesianPowers(lb, j, jp);
                        acc[i*nb+j] += prefactor*contractPairHermite(Ex, Ey, Ez, lb, T, ip, jp, W);
                    }
                }
            }
        // The block in the pair's own order: (i of s1, j of s2), which is (j, i) of the class's (A, B) if swapped.
        const int n1 = (swapped ? nb : na), n2 = (swapped ? na : nb);
        GLOBAL double* out = partial+(mm_long) group*blockElements+blockStart[k];
        for (int i = 0; i < n1; i++)
            for (int j = 0; j < n2; j++)
                out[i*n2+j] = acc[swapped ? j*nb+i : i*nb+j];
    }
}
#endif

#undef CLASS_NAME
#undef CLASS_PAIR_ORDER
#undef CLASS_TENSOR_ORDER
#undef CLASS_VALUE_E
#undef CLASS_GRADIENT_E
