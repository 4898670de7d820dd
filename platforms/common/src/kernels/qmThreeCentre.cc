/**
 * The three-centre Coulomb integrals (Q|ab) of density fitting and the contraction of their nuclear derivatives,
 * by McMurchie-Davidson (McMurchie and Davidson, J. Comput. Phys. 26, 218 (1978); Helgaker, Jorgensen and Olsen,
 * "Molecular Electronic-Structure Theory", 9.5 and 9.9): the product of two cartesian Gaussians is a sum of Hermite
 * Gaussians at P with coefficients E^ij_t per direction, a fitting function one at Q, and
 *   (Lambda_tuv(p) | Lambda_tau,nu,phi(g)) = (-1)^(tau+nu+phi) 2 pi^(5/2) / (p g sqrt(p+g)) R_(t+tau,u+nu,v+phi)(alpha, P-Q).
 * Double precision and atomic units throughout. One work item per (shell pair, fitting shell) for the tensor and
 * per (shell pair, run of consecutive fitting shells) for the gradient, consecutive items taking consecutive pairs
 * (the host sorts them into classes of equal angular momenta) with one fitting shell or group. Work groups take their
 * items GROUP_SIZE at a time from a counter (nextChunk) rather than by a fixed grid stride: OpenMM launches more work
 * groups than fit on a GPU at once at these kernels' register count, and with a fixed share each the groups that
 * started late ran their shares on a nearly idle GPU.
 *
 * Defines from the host: BASIS_L and AUX_L (the largest l of the orbital and fitting bases, which size the private
 * arrays), POINT_CHARGES (1: the gradient kernel takes point charges, not fitting functions; at most
 * MAX_CENTRES_PER_ITEM of them per work item; fitting shells of at most as many atoms) and GRADIENT_SCALE (the
 * fixed-point scale of the gradient sums), GROUP_SIZE (the work-group size of the launches). The engine's Boys-function table
 * (BoysFunction.h) comes as a buffer with its step, end, orders per point and Taylor terms.
 */

#define PI_THREE_CENTRE 3.14159265358979323846

/* At most 128 registers per thread on CUDA: work groups of GROUP_SIZE (as the host launches these kernels), 512
 * threads per multiprocessor. Above 128 the fitting gradient once ran 4.8x slower on an H200 (docs/PERFORMANCE.md), and
 * small changes can push nvcc's choice past it (the point-charge gradient took 166 without the bound, and the same
 * private stack with it). */
#ifndef GROUP_SIZE
#error "GROUP_SIZE (the launches' work-group size) must be defined: nextChunk hands out GROUP_SIZE items per work group"
#endif
#ifdef __CUDA_ARCH__
#define AT_MOST_128_REGISTERS __launch_bounds__(GROUP_SIZE, 512/GROUP_SIZE)
#else
#define AT_MOST_128_REGISTERS
#endif
/** The first of the next GROUP_SIZE work items for the calling work group (every item of the group must call it):
 * counter holds how many items have been handed out, zero before the launch. */
DEVICE mm_long nextChunk(GLOBAL mm_ulong* RESTRICT counter, LOCAL_ARG mm_long* chunk) {
    SYNC_THREADS;  // every item has read the previous chunk
    if (LOCAL_ID == 0)
        chunk[0] = (mm_long) ATOMIC_ADD(counter, (mm_ulong) GROUP_SIZE);
    SYNC_THREADS;
    return chunk[0];
}

#define HERMITE_COUNT(L) (((L)+1)*((L)+2)*((L)+3)/6)
#define CART_COUNT(L) (((L)+1)*((L)+2)/2)
/* Hermite orders: the tensor needs la+lb+lq, the gradient one more (a raised bra or ket). Each kernel's private
 * arrays are sized for its own orders: they live in slow local memory on a GPU, so every byte counts. */
#define TENSOR_ORDER (2*BASIS_L+AUX_L)
#define MAX_ORDER (TENSOR_ORDER+1)
#define MAX_HERMITE HERMITE_COUNT(MAX_ORDER)
#define MAX_PAIR_HERMITE HERMITE_COUNT(2*BASIS_L+1)
/* One direction's E^ij_t for i <= BASIS_L+1, j <= BASIS_L+1 (the gradient), and for i, j <= BASIS_L (the others). */
#define MAX_E ((BASIS_L+2)*(BASIS_L+2)*(2*BASIS_L+3))
#define VALUE_E ((BASIS_L+1)*(BASIS_L+1)*(2*BASIS_L+1))

/** Position of (t, u, v) in the compact order by t+u+v, then t and u descending (the engine's HermiteGaussians.h). */
DEVICE int hermitePosition(int t, int u, int v) {
    const int N = t+u+v, s = N-t;
    return N*(N+1)*(N+2)/6 + s*(s+1)/2 + (s-u);
}

/** The powers (x, y, z) of cartesian component c of a shell of angular momentum l, in libint's order. */
DEVICE void cartesianPowers(int l, int c, int* powers) {
    int i = 0;
    while ((i+1)*(i+2)/2 <= c)
        i++;
    const int lz = c-i*(i+1)/2;
    powers[0] = l-i;
    powers[1] = i-lz;
    powers[2] = lz;
}

/** F_0(T) .. F_mMax(T), as the engine's boysFunction: a Taylor expansion of the highest order about the nearest
 * tabulated point and downward recursion below BOYS_END; beyond it the asymptotic F_0 and upward recursion. */
typedef struct {
    double step, end;
    int orders, taylorTerms;
} BoysTable;

DEVICE void boysFunction(int mMax, double T, GLOBAL const double* RESTRICT table, BoysTable boys, double* F) {
    if (T < boys.end) {
        const int k = (int) (T/boys.step+0.5);
        GLOBAL const double* Fk = table+k*boys.orders;
        const double delta = k*boys.step-T;
        double power = 1, top = 0;
        for (int j = 0; j < boys.taylorTerms; j++) {
            top += Fk[mMax+j]*power;
            power *= delta/(j+1);
        }
        F[mMax] = top;
        const double e = exp(-T);
        for (int m = mMax-1; m >= 0; m--)
            F[m] = (2*T*F[m+1]+e)/(2*m+1);
        return;
    }
    const double e = (T < 100 ? exp(-T) : 0.0);
    F[0] = 0.5*sqrt(PI_THREE_CENTRE/T);
    for (int m = 0; m < mMax; m++)
        F[m+1] = ((2*m+1)*F[m]-e)/(2*T);
}

/**
 * R_tuv(alpha, PQ) for t+u+v <= L in compact order into R, from F: R^n_000 = (-2 alpha)^n F_n and
 * R^n_(t+1)uv = t R^(n+1)_(t-1)uv + X_PQ R^(n+1)_tuv (likewise in u, v), one layer n at a time, in place: layer n holds
 * the orders <= L-n, and an element of order N is made from layer n+1's elements of orders N-1 and N-2, so the orders
 * are overwritten from the highest down and each is read before it is replaced (one array instead of two layers: the
 * private arrays live in slow local memory on a GPU).
 */
DEVICE double powerOfMinusTwoAlpha(double alpha, int n) {
    double scale = 1;
    for (int i = 0; i < n; i++)
        scale *= -2*alpha;
    return scale;
}

DEVICE void hermiteCoulomb(int L, double alpha, double X, double Y, double Z, const double* F, double* R) {
    R[0] = powerOfMinusTwoAlpha(alpha, L)*F[L];
    for (int n = L-1; n >= 0; n--) {
        for (int N = L-n; N >= 1; N--)
            for (int t = N; t >= 0; t--)
                for (int u = N-t; u >= 0; u--) {
                    const int v = N-t-u;
                    double value;
                    if (t > 0)
                        value = X*R[hermitePosition(t-1, u, v)] + (t > 1 ? (t-1)*R[hermitePosition(t-2, u, v)] : 0.0);
                    else if (u > 0)
                        value = Y*R[hermitePosition(0, u-1, v)] + (u > 1 ? (u-1)*R[hermitePosition(0, u-2, v)] : 0.0);
                    else
                        value = Z*R[hermitePosition(0, 0, v-1)] + (v > 1 ? (v-1)*R[hermitePosition(0, 0, v-2)] : 0.0);
                    R[hermitePosition(t, u, v)] = value;
                }
        R[0] = powerOfMinusTwoAlpha(alpha, n)*F[n];
    }
}

/**
 * E^ij_t of x_A^i x_B^j exp(-a x_A^2 - b x_B^2) = K sum_t E^ij_t Lambda_t for i <= iMax, j <= jMax, at
 * E[(i*(jMax+1)+j)*(iMax+jMax+1)+t]: E^(i+1)j_t = E^ij_(t-1)/(2p) + PA E^ij_t + (t+1) E^ij_(t+1), and in j with PB.
 */
DEVICE void hermiteExpansion(int iMax, int jMax, double p, double PA, double PB, double* E) {
    const int T = iMax+jMax+1;
    for (int k = 0; k < (iMax+1)*(jMax+1)*T; k++)
        E[k] = 0;
    const double inverse2p = 0.5/p;
    E[0] = 1;
    for (int i = 0; i <= iMax; i++) {
        if (i > 0)
            for (int t = 0; t <= i; t++)
                E[(i*(jMax+1))*T+t] = (t > 0 ? inverse2p*E[((i-1)*(jMax+1))*T+t-1] : 0.0) + PA*E[((i-1)*(jMax+1))*T+t] +
                                      (t+1 <= i-1 ? (t+1)*E[((i-1)*(jMax+1))*T+t+1] : 0.0);
        for (int j = 1; j <= jMax; j++)
            for (int t = 0; t <= i+j; t++)
                E[(i*(jMax+1)+j)*T+t] = (t > 0 ? inverse2p*E[(i*(jMax+1)+j-1)*T+t-1] : 0.0) + PB*E[(i*(jMax+1)+j-1)*T+t] +
                                        (t+1 <= i+j-1 ? (t+1)*E[(i*(jMax+1)+j-1)*T+t+1] : 0.0);
    }
}

/** The Hermite coefficients E_t of a single Gaussian x^l exp(-g x^2) at its own centre, l <= AUX_L: single[l*(AUX_L+1)+t]. */
DEVICE void singleGaussianExpansion(int lMax, double g, double* single) {
    for (int k = 0; k < (AUX_L+1)*(AUX_L+1); k++)
        single[k] = 0;
    single[0] = 1;
    const double inverse2p = 0.5/g;
    for (int l = 1; l <= lMax; l++)
        for (int t = 0; t <= l; t++)
            single[l*(AUX_L+1)+t] = (t > 0 ? inverse2p*single[(l-1)*(AUX_L+1)+t-1] : 0.0) +
                                    (t+1 <= l-1 ? (t+1)*single[(l-1)*(AUX_L+1)+t+1] : 0.0);
}

/** dst[tuv] += w E^(ij)_tuv, the Hermite coefficients of the cartesian pair (i, j) from the three directions' tables. */
DEVICE void addPairHermite(const double* Ex, const double* Ey, const double* Ez, int jMax, int T, const int* i, const int* j,
                           double w, double* dst) {
    const double* ex = Ex+(i[0]*(jMax+1)+j[0])*T;
    const double* ey = Ey+(i[1]*(jMax+1)+j[1])*T;
    const double* ez = Ez+(i[2]*(jMax+1)+j[2])*T;
    for (int t = 0; t <= i[0]+j[0]; t++)
        for (int u = 0; u <= i[1]+j[1]; u++) {
            const double wtu = w*ex[t]*ey[u];
            for (int v = 0; v <= i[2]+j[2]; v++)
                dst[hermitePosition(t, u, v)] += wtu*ez[v];
        }
}

/** dst += sum_ij D_ij d/dX_d of the primitive pair's Hermite coefficients for one of its centres (onA: A, whose function
 * i is raised and lowered, d/dA_x x_A^i e^(-a x_A^2) = 2a x_A^(i+1) e^(..) - i x_A^(i-1) e^(..); else B with j), in
 * direction d: the pair's derivative Hermite density, the cartesian density scaled by cab. */
DEVICE void addDerivativeDensity(const double* Ex, const double* Ey, const double* Ez, int la, int lb, int jMax, int T, int o1, int o2,
                                 int nbf, GLOBAL const double* RESTRICT density, double cab, int onA, double exponent, int d, double* dst) {
    for (int i = 0; i < CART_COUNT(la); i++) {
        int ip[3];
        cartesianPowers(la, i, ip);
        for (int j = 0; j < CART_COUNT(lb); j++) {
            int jp[3];
            cartesianPowers(lb, j, jp);
            const double Dij = cab*density[(mm_long) (o1+i)*nbf+o2+j];
            if (Dij == 0)
                continue;
            int* raised = (onA ? ip : jp);
            raised[d]++;
            addPairHermite(Ex, Ey, Ez, jMax, T, ip, jp, 2*exponent*Dij, dst);
            raised[d] -= 2;
            if (raised[d] >= 0)
                addPairHermite(Ex, Ey, Ez, jMax, T, ip, jp, -(raised[d]+1)*Dij, dst);
            raised[d]++;  // ip is the next j's too
        }
    }
}

/** sum_tuv E^(ij)_t E^(ij)_u E^(ij)_v W_tuv: the cartesian pair (i, j) contracted with values W on its Hermite functions
 * (an element of the pair's block), from the three directions' tables. */
DEVICE double contractPairHermite(const double* Ex, const double* Ey, const double* Ez, int jMax, int T, const int* i, const int* j,
                                  const double* W) {
    const double* ex = Ex+(i[0]*(jMax+1)+j[0])*T;
    const double* ey = Ey+(i[1]*(jMax+1)+j[1])*T;
    const double* ez = Ez+(i[2]*(jMax+1)+j[2])*T;
    double sum = 0;
    for (int t = 0; t <= i[0]+j[0]; t++)
        for (int u = 0; u <= i[1]+j[1]; u++) {
            const double etu = ex[t]*ey[u];
            for (int v = 0; v <= i[2]+j[2]; v++)
                sum += etu*ez[v]*W[hermitePosition(t, u, v)];
        }
    return sum;
}

/** The engine's Boys table as the kernels' arguments give it. */
DEVICE BoysTable boysTableOf(double step, double end, int orders, int taylorTerms) {
    BoysTable boys;
    boys.step = step;
    boys.end = end;
    boys.orders = orders;
    boys.taylorTerms = taylorTerms;
    return boys;
}

/**
 * One primitive pair of shells at A and B (exponents a, b): its centre P and its Hermite coefficients per direction
 * for i <= iMax, j <= jMax; returns exp(-ab/p |AB|^2), the factor they leave out.
 */
DEVICE double primitivePair(double a, double b, const double* A, const double* B, int iMax, int jMax, double* P, double* Ex,
                            double* Ey, double* Ez) {
    const double p = a+b;
    const double AB2 = (A[0]-B[0])*(A[0]-B[0]) + (A[1]-B[1])*(A[1]-B[1]) + (A[2]-B[2])*(A[2]-B[2]);
    for (int d = 0; d < 3; d++)
        P[d] = (a*A[d]+b*B[d])/p;
    hermiteExpansion(iMax, jMax, p, P[0]-A[0], P[0]-B[0], Ex);
    hermiteExpansion(iMax, jMax, p, P[1]-A[1], P[1]-B[1], Ey);
    hermiteExpansion(iMax, jMax, p, P[2]-A[2], P[2]-B[2], Ez);
    return exp(-a*b/p*AB2);
}

/** cq[tau,nu,phi] += w E^c: the Hermite coefficients of cartesian component c of a fitting primitive, from single. */
DEVICE void addFittingHermite(int lq, int c, double w, const double* single, double* cq) {
    int cp[3];
    cartesianPowers(lq, c, cp);
    for (int tau = 0; tau <= cp[0]; tau++)
        for (int nu = 0; nu <= cp[1]; nu++)
            for (int phi = 0; phi <= cp[2]; phi++)
                cq[hermitePosition(tau, nu, phi)] += w*single[cp[0]*(AUX_L+1)+tau]*single[cp[1]*(AUX_L+1)+nu]*single[cp[2]*(AUX_L+1)+phi];
}

/** W_tuv += scale sum_(tau,nu,phi) (-1)^(tau+nu+phi) cq_(tau,nu,phi) R_(t+tau,u+nu,v+phi) for t+u+v <= pairOrder. */
DEVICE void addFittingContraction(int pairOrder, int lq, const double* cq, const double* R, double scale, double* W) {
    for (int Nq = 0; Nq <= lq; Nq++)
        for (int tau = Nq; tau >= 0; tau--)
            for (int nu = Nq-tau; nu >= 0; nu--) {
                const int phi = Nq-tau-nu;
                const double e = cq[hermitePosition(tau, nu, phi)];
                if (e == 0)
                    continue;
                const double signedE = scale*(Nq%2 == 0 ? e : -e);
                for (int N = 0; N <= pairOrder; N++)
                    for (int t = N; t >= 0; t--)
                        for (int u = N-t; u >= 0; u--) {
                            const int v = N-t-u;
                            W[hermitePosition(t, u, v)] += signedE*R[hermitePosition(t+tau, u+nu, v+phi)];
                        }
            }
}

/** W_tuv = sum_(tau,nu,phi) (-1)^(tau+nu+phi) cq_(tau,nu,phi) R_(t+tau,u+nu,v+phi) for t+u+v <= pairOrder. */
DEVICE void contractWithFitting(int pairOrder, int lq, const double* cq, const double* R, double* W) {
    for (int n = 0; n < HERMITE_COUNT(pairOrder); n++)
        W[n] = 0;
    addFittingContraction(pairOrder, lq, cq, R, 1.0, W);
}

/**
 * W_tuv += the Coulomb potential of fitting shell q's fitted density (the coefficients c of its cartesian functions) on
 * the Hermite functions up to pairOrder of a primitive pair of exponent p at P, over the shell's primitives: the fitted
 * density's Hermite coefficients per primitive (sum_c c_c E^c), its Boys function and Hermite integrals.
 * single, cq, F and R are the caller's scratch.
 */
DEVICE void addFittingShellPotential(int q, double p, const double* P, int pairOrder, GLOBAL const int* RESTRICT auxL,
                                     GLOBAL const int* RESTRICT auxPrimStart, GLOBAL const int* RESTRICT auxNumPrim,
                                     GLOBAL const int* RESTRICT auxCartesianOffset, GLOBAL const double* RESTRICT auxCenter,
                                     GLOBAL const double* RESTRICT auxExponent, GLOBAL const double* RESTRICT auxCoefficient,
                                     GLOBAL const double* RESTRICT coefficients, GLOBAL const double* RESTRICT boysTable, BoysTable boys,
                                     double* single, double* cq, double* F, double* R, double* W) {
    const int lq = auxL[q], nq = CART_COUNT(lq), L = pairOrder+lq;
    const double X = P[0]-auxCenter[3*q], Y = P[1]-auxCenter[3*q+1], Z = P[2]-auxCenter[3*q+2];
    for (int pq = auxPrimStart[q]; pq < auxPrimStart[q]+auxNumPrim[q]; pq++) {
        const double g = auxExponent[pq], alpha = p*g/(p+g);
        const double prefactor = 2*PI_THREE_CENTRE*PI_THREE_CENTRE*sqrt(PI_THREE_CENTRE)/(p*g*sqrt(p+g))*auxCoefficient[pq];
        singleGaussianExpansion(lq, g, single);
        for (int n = 0; n < HERMITE_COUNT(lq); n++)
            cq[n] = 0;
        for (int c = 0; c < nq; c++)
            addFittingHermite(lq, c, coefficients[auxCartesianOffset[q]+c], single, cq);
        boysFunction(L, alpha*(X*X+Y*Y+Z*Z), boysTable, boys, F);
        hermiteCoulomb(L, alpha, X, Y, Z, F, R);
        addFittingContraction(pairOrder, lq, cq, R, prefactor, W);
    }
}

/** sa = sum_n DA[d count + n] V[n] and sb likewise with DB: the derivative Hermite densities of a pair (direction d)
 * against a potential V on its Hermite functions. */
DEVICE void derivativeSums(const double* DA, const double* DB, int count, int d, const double* V, double* sa, double* sb) {
    double a = 0, b = 0;
    for (int n = 0; n < count; n++) {
        a += DA[d*count+n]*V[n];
        b += DB[d*count+n]*V[n];
    }
    *sa = a;
    *sb = b;
}

/**
 * B[column * rows + row]: (Q|ab) for every significant shell pair (a >= b) and fitting shell Q, the fitting
 * functions transformed by their shell's matrix (to real solid harmonics where pure), the pair's cartesian functions
 * (i, j) i-major from pairColumn, with i >= j when the two shells are one.
 */
KERNEL AT_MOST_128_REGISTERS void threeCentreTensor(int numPairs, int numAuxShells, int rows, GLOBAL const int* RESTRICT pairFirst,
                              GLOBAL const int* RESTRICT pairSecond, GLOBAL const int* RESTRICT pairColumn,
                              GLOBAL const int* RESTRICT shellL, GLOBAL const int* RESTRICT shellPrimStart,
                              GLOBAL const int* RESTRICT shellNumPrim, GLOBAL const double* RESTRICT shellCenter,
                              GLOBAL const double* RESTRICT primExponent, GLOBAL const double* RESTRICT primCoefficient,
                              GLOBAL const int* RESTRICT auxL, GLOBAL const int* RESTRICT auxPrimStart,
                              GLOBAL const int* RESTRICT auxNumPrim, GLOBAL const int* RESTRICT auxOffset,
                              GLOBAL const int* RESTRICT auxSize, GLOBAL const double* RESTRICT auxCenter,
                              GLOBAL const double* RESTRICT auxExponent, GLOBAL const double* RESTRICT auxCoefficient,
                              GLOBAL const double* RESTRICT auxTransform, GLOBAL const int* RESTRICT auxTransformStart,
                              GLOBAL const double* RESTRICT boysTable, double boysStep, double boysEnd, int boysOrders,
                              int boysTaylorTerms, GLOBAL double* RESTRICT B, GLOBAL mm_ulong* RESTRICT counter) {
    const BoysTable boys = boysTableOf(boysStep, boysEnd, boysOrders, boysTaylorTerms);
    LOCAL mm_long chunk[1];
    double acc[CART_COUNT(BASIS_L)*CART_COUNT(BASIS_L)*CART_COUNT(AUX_L)];
    double Ex[VALUE_E], Ey[VALUE_E], Ez[VALUE_E];
    double single[(AUX_L+1)*(AUX_L+1)];
    double R[HERMITE_COUNT(TENSOR_ORDER)], F[TENSOR_ORDER+1];
    double cq[HERMITE_COUNT(AUX_L)], W[HERMITE_COUNT(2*BASIS_L)];
    const mm_long numItems = (mm_long) numPairs*numAuxShells;
    for (mm_long first = nextChunk(counter, chunk); first < numItems; first = nextChunk(counter, chunk)) {
        const mm_long item = first+LOCAL_ID;
        if (item >= numItems)
            continue;
        const int q = (int) (item/numPairs), k = (int) (item%numPairs);
        const int s1 = pairFirst[k], s2 = pairSecond[k];
        const int la = shellL[s1], lb = shellL[s2], lq = auxL[q];
        const int na = CART_COUNT(la), nb = CART_COUNT(lb), nq = CART_COUNT(lq);
        const int L = la+lb+lq, T = la+lb+1;
        for (int n = 0; n < na*nb*nq; n++)
            acc[n] = 0;
        const double A[3] = {shellCenter[3*s1], shellCenter[3*s1+1], shellCenter[3*s1+2]};
        const double Bc[3] = {shellCenter[3*s2], shellCenter[3*s2+1], shellCenter[3*s2+2]};
        for (int pa = shellPrimStart[s1]; pa < shellPrimStart[s1]+shellNumPrim[s1]; pa++)
            for (int pb = shellPrimStart[s2]; pb < shellPrimStart[s2]+shellNumPrim[s2]; pb++) {
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
                    singleGaussianExpansion(lq, g, single);
                    const double prefactor = 2*PI_THREE_CENTRE*PI_THREE_CENTRE*sqrt(PI_THREE_CENTRE)/(p*g*sqrt(p+g))*cab*auxCoefficient[pq];
                    for (int c = 0; c < nq; c++) {
                        for (int n = 0; n < HERMITE_COUNT(lq); n++)
                            cq[n] = 0;
                        addFittingHermite(lq, c, 1.0, single, cq);
                        contractWithFitting(la+lb, lq, cq, R, W);
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
        int column = pairColumn[k];
        GLOBAL const double* transform = auxTransform+auxTransformStart[q];
        for (int i = 0; i < na; i++)
            for (int j = 0; j < nb; j++) {
                if (s1 == s2 && j > i)
                    continue;
                for (int m = 0; m < auxSize[q]; m++) {
                    double value = 0;
                    for (int c = 0; c < nq; c++)
                        value += transform[m*nq+c]*acc[(i*nb+j)*nq+c];
                    B[(mm_long) column*rows+auxOffset[q]+m] = value;
                }
                column++;
            }
    }
}

/* The arguments of the density-fitting gradient kernel (threeCentreGradient), in the order the host passes them
 * (launchThreeCentreGradient). */
#define THREE_CENTRE_GRADIENT_ARGUMENTS \
    int numPairs, int numGroups, int nbf, GLOBAL const int* RESTRICT pairFirst,                             \
    GLOBAL const int* RESTRICT pairSecond, GLOBAL const int* RESTRICT shellL,                               \
    GLOBAL const int* RESTRICT shellAtom, GLOBAL const int* RESTRICT shellPrimStart,                        \
    GLOBAL const int* RESTRICT shellNumPrim, GLOBAL const int* RESTRICT shellCartesianOffset,               \
    GLOBAL const double* RESTRICT shellCenter, GLOBAL const double* RESTRICT primExponent,                  \
    GLOBAL const double* RESTRICT primCoefficient, GLOBAL const int* RESTRICT auxGroupShellStart,           \
    int centreOffset, GLOBAL const int* RESTRICT auxAtom, GLOBAL const int* RESTRICT auxL,                  \
    GLOBAL const int* RESTRICT auxPrimStart, GLOBAL const int* RESTRICT auxNumPrim,                         \
    GLOBAL const int* RESTRICT auxCartesianOffset, GLOBAL const double* RESTRICT auxCenter,                 \
    GLOBAL const double* RESTRICT auxExponent, GLOBAL const double* RESTRICT auxCoefficient,                \
    GLOBAL const double* RESTRICT boysTable, double boysStep, double boysEnd, int boysOrders,               \
    int boysTaylorTerms, GLOBAL const double* RESTRICT density, GLOBAL const double* RESTRICT coefficients, \
    GLOBAL mm_ulong* RESTRICT gradient, GLOBAL mm_ulong* RESTRICT counter

/**
 * The three-centre part of the density-fitted Coulomb gradient, sum_Q c_Q sum_uv D_uv d(Q|uv)/dR, for the cartesian
 * density D (nbf x nbf) and fit coefficients c (cartesian fitting functions), added in fixed point (GRADIENT_SCALE) to
 * gradient[3*atom+d]. A pair of shells a >= b enters with weight 2 (a != b, for (b, a)) or 1, differentiated on each
 * orbital centre by raising and lowering that function's angular momentum in the Hermite coefficients,
 * d/dA_x x_A^i e^(-a x_A^2) = 2a x_A^(i+1) e^(..) - i x_A^(i-1) e^(..), which are contracted with D once per primitive
 * pair (derivative Hermite densities); the fitting function's centre takes minus their sum (translational invariance).
 * A work item takes one shell pair and a run of consecutive fitting shells (auxGroupShellStart), whose pair derivative
 * densities it forms once per primitive pair; the run's shells sit on at most MAX_CENTRES_PER_ITEM centres (runs of
 * shells with one auxAtom), whose gradients it keeps in private memory and adds to gradient[3*(centreOffset+auxAtom)+d]
 * once. Compiled with POINT_CHARGES 1 the "fitting shells" are point charges (l = 0, one primitive whose coefficient is
 * 1, c = the charge's weight), each its own centre auxAtom[q]: the derivative of sum_uv D_uv sum_C c_C <u|1/|r-C||v>.
 */
KERNEL AT_MOST_128_REGISTERS void threeCentreGradient(THREE_CENTRE_GRADIENT_ARGUMENTS) {
    const BoysTable boys = boysTableOf(boysStep, boysEnd, boysOrders, boysTaylorTerms);
    LOCAL mm_long chunk[1];
    double Ex[MAX_E], Ey[MAX_E], Ez[MAX_E];
    double DA[3*MAX_PAIR_HERMITE], DB[3*MAX_PAIR_HERMITE];
    // The gradients of the item's fitting centres over all its primitive pairs, added to the sums once: one atomic per
    // primitive pair and charge put hundreds of thousands of work items on a few hundred addresses.
    double gC[3*MAX_CENTRES_PER_ITEM];
    double single[(AUX_L+1)*(AUX_L+1)];
    double R[MAX_HERMITE], F[MAX_ORDER+1];
    double cq[HERMITE_COUNT(AUX_L)], W[MAX_PAIR_HERMITE];
    const mm_long numItems = (mm_long) numPairs*numGroups;
    for (mm_long first = nextChunk(counter, chunk); first < numItems; first = nextChunk(counter, chunk)) {
        const mm_long item = first+LOCAL_ID;
        if (item >= numItems)
            continue;
        const int group = (int) (item/numPairs), k = (int) (item%numPairs);
        const int firstAux = auxGroupShellStart[group], lastAux = auxGroupShellStart[group+1];
        const int s1 = pairFirst[k], s2 = pairSecond[k];
        const int la = shellL[s1], lb = shellL[s2];
        const int iMax = la+1, jMax = lb+1, T = iMax+jMax+1, pairOrder = la+lb+1;
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
                const int count = HERMITE_COUNT(pairOrder);
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
                    addFittingShellPotential(q, p, P, pairOrder, auxL, auxPrimStart, auxNumPrim, auxCartesianOffset, auxCenter,
                                             auxExponent, auxCoefficient, coefficients, boysTable, boys, single, cq, F, R, W);
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

/**
 * The potential matrix of point charges, sum_C w_C <a|1/|r-C||b> (w_C = -q_C for the electrons' potential energy), for
 * every listed shell pair (a >= b): McMurchie-Davidson's nuclear attraction, (2 pi / p) R_tuv(p, P-C) per primitive
 * pair and charge, summed over a group of charges before it is contracted with the pair's Hermite coefficients.
 * Work item (group of charges, pair): its cartesian block (i, j) i-major goes to
 * partial[group*blockElements + blockStart[pair] + i*nb + j]; sumChargeGroups() adds the groups in order.
 */
KERNEL AT_MOST_128_REGISTERS void pointChargeMatrix(int numPairs, int numGroups, int blockElements, GLOBAL const int* RESTRICT pairFirst,
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
    double acc[CART_COUNT(BASIS_L)*CART_COUNT(BASIS_L)];
    double Ex[VALUE_E], Ey[VALUE_E], Ez[VALUE_E];
    double R[HERMITE_COUNT(2*BASIS_L)], F[2*BASIS_L+1], W[HERMITE_COUNT(2*BASIS_L)];
    const mm_long numItems = (mm_long) numPairs*numGroups;
    for (mm_long first = nextChunk(counter, chunk); first < numItems; first = nextChunk(counter, chunk)) {
        const mm_long item = first+LOCAL_ID;
        if (item >= numItems)
            continue;
        const int group = (int) (item/numPairs), k = (int) (item%numPairs);
        const int s1 = pairFirst[k], s2 = pairSecond[k];
        const int la = shellL[s1], lb = shellL[s2];
        const int na = CART_COUNT(la), nb = CART_COUNT(lb), L = la+lb, T = la+lb+1, count = HERMITE_COUNT(la+lb);
        for (int n = 0; n < na*nb; n++)
            acc[n] = 0;
        const double A[3] = {shellCenter[3*s1], shellCenter[3*s1+1], shellCenter[3*s1+2]};
        const double Bc[3] = {shellCenter[3*s2], shellCenter[3*s2+1], shellCenter[3*s2+2]};
        for (int pa = shellPrimStart[s1]; pa < shellPrimStart[s1]+shellNumPrim[s1]; pa++)
            for (int pb = shellPrimStart[s2]; pb < shellPrimStart[s2]+shellNumPrim[s2]; pb++) {
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
        GLOBAL double* out = partial+(mm_long) group*blockElements+blockStart[k];
        for (int n = 0; n < na*nb; n++)
            out[n] = acc[n];
    }
}

/** total[e] = sum over the groups of partial[group*count + e], in group order (the same sums in every run). */
KERNEL void sumChargeGroups(int count, int numGroups, GLOBAL const double* RESTRICT partial, GLOBAL double* RESTRICT total) {
    for (int e = GLOBAL_ID; e < count; e += GLOBAL_SIZE) {
        double sum = 0;
        for (int g = 0; g < numGroups; g++)
            sum += partial[(mm_long) g*count+e];
        total[e] = sum;
    }
}
