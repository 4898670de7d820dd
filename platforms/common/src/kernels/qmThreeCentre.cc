/**
 * The helpers of the three-centre Coulomb integrals (Q|ab) of density fitting and of the contraction of their nuclear
 * derivatives, by McMurchie-Davidson (McMurchie and Davidson, J. Comput. Phys. 26, 218 (1978); Helgaker, Jorgensen and
 * Olsen, "Molecular Electronic-Structure Theory", 9.5 and 9.9): the product of two cartesian Gaussians is a sum of
 * Hermite Gaussians at P with coefficients E^ij_t per direction, a fitting function one at Q, and
 *   (Lambda_tuv(p) | Lambda_tau,nu,phi(g)) = (-1)^(tau+nu+phi) 2 pi^(5/2) / (p g sqrt(p+g)) R_(t+tau,u+nu,v+phi)(alpha, P-Q).
 * Double precision and atomic units throughout. The kernels themselves are in qmThreeCentreClass.cc, compiled once per
 * class of shell pairs after this file (ThreeCentreProgram.cpp); the sum of the point-charge groups is here.
 *
 * Defines from the host: BASIS_L and AUX_L (the largest l of the orbital and fitting bases), POINT_CHARGES (1: the
 * gradient kernel takes point charges, not fitting functions; at most MAX_CENTRES_PER_ITEM of them per work item;
 * fitting shells of at most as many atoms) and GRADIENT_SCALE (the fixed-point scale of the gradient sums), GROUP_SIZE
 * (the work-group size of the launches). The engine's Boys-function table (BoysFunction.h) comes as a buffer with its
 * step, end, orders per point and Taylor terms.
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
 * counter[0] holds how many items have been handed out, zero at the launch's start; the kernel ends with finishWork()
 * (qmWorkCounter.cc), which leaves it at zero for the next. */
DEVICE mm_long nextChunk(GLOBAL mm_ulong* RESTRICT counter, LOCAL_ARG mm_long* chunk) {
    SYNC_THREADS;  // every item has read the previous chunk
    if (LOCAL_ID == 0)
        chunk[0] = (mm_long) ATOMIC_ADD(counter, (mm_ulong) GROUP_SIZE);
    SYNC_THREADS;
    return chunk[0];
}

/* A loop unrolled completely where its trip count is a compile-time constant (in the compilations for one fitting l,
 * whose three angular momenta are): its private arrays are then indexed by constants, which a GPU keeps in registers
 * instead of local memory. Where the count is a run-time value the loop stays as it is (CUDA's and clang's meaning of the pragma). */
#define UNROLL _Pragma("unroll")

#define HERMITE_COUNT(L) (((L)+1)*((L)+2)*((L)+3)/6)
#define CART_COUNT(L) (((L)+1)*((L)+2)/2)
/* A class kernel's name: f_LA_LB for the class (CLASS_LA, CLASS_LB) it is compiled for. */
#define CLASS_NAME_PASTE(f, a, b) f##_##a##_##b
#define CLASS_NAME_EXPANDED(f, a, b) CLASS_NAME_PASTE(f, a, b)
/* A compilation's name for a class and one fitting l: f_LA_LB_LQ. */
#define CLASS_L_NAME_PASTE(f, a, b, q) f##_##a##_##b##_##q
#define CLASS_L_NAME_EXPANDED(f, a, b, q) CLASS_L_NAME_PASTE(f, a, b, q)

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
        UNROLL
        for (int m = mMax-1; m >= 0; m--)
            F[m] = (2*T*F[m+1]+e)/(2*m+1);
        return;
    }
    const double e = (T < 100 ? exp(-T) : 0.0);
    F[0] = 0.5*sqrt(PI_THREE_CENTRE/T);
    UNROLL
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
    UNROLL
    for (int i = 0; i < n; i++)
        scale *= -2*alpha;
    return scale;
}

DEVICE void hermiteCoulomb(int L, double alpha, double X, double Y, double Z, const double* F, double* R) {
    R[0] = powerOfMinusTwoAlpha(alpha, L)*F[L];
    UNROLL
    for (int n = L-1; n >= 0; n--) {
        UNROLL
        for (int N = L-n; N >= 1; N--)
            UNROLL
            for (int t = N; t >= 0; t--)
                UNROLL
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

/** acc[(i nb + j) stride] += scale sum_tuv E^(ij)_tuv W_tuv for every cartesian pair (i of la, j of lb; nb of lb's):
 * values W on a primitive pair's Hermite functions contracted into the pair's block. */
DEVICE void addPairBlock(int la, int lb, const double* Ex, const double* Ey, const double* Ez, int T, const double* W, double scale,
                         int stride, double* acc) {
    const int nb = CART_COUNT(lb);
    for (int i = 0; i < CART_COUNT(la); i++) {
        int ip[3];
        cartesianPowers(la, i, ip);
        for (int j = 0; j < nb; j++) {
            int jp[3];
            cartesianPowers(lb, j, jp);
            acc[(i*nb+j)*stride] += scale*contractPairHermite(Ex, Ey, Ez, lb, T, ip, jp, W);
        }
    }
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

/* The Hermite coefficients of a fitting primitive's cartesian functions, E^c_(tau,nu,phi) (fittingCartesianHermite),
 * at FITTING_HERMITE_STRIDE doubles per primitive: CART_COUNT(AUX_L) components of HERMITE_COUNT(AUX_L) each. They
 * depend on the exponent alone, so the integral kernels read them (the threads of a warp share one fitting shell)
 * instead of forming them for every primitive pair. */
#define FITTING_HERMITE_STRIDE (CART_COUNT(AUX_L)*HERMITE_COUNT(AUX_L))

/** The fitting primitives' cartesian Hermite coefficients into table (FITTING_HERMITE_STRIDE per primitive; the
 * positions of orders above the shell's l stay as they are), one work item per fitting shell. */
KERNEL void fittingCartesianHermite(int numAuxShells, GLOBAL const int* RESTRICT auxL, GLOBAL const int* RESTRICT auxPrimStart,
                                    GLOBAL const int* RESTRICT auxNumPrim, GLOBAL const double* RESTRICT auxExponent,
                                    GLOBAL double* RESTRICT table) {
    double single[(AUX_L+1)*(AUX_L+1)];
    for (int q = GLOBAL_ID; q < numAuxShells; q += GLOBAL_SIZE) {
        const int lq = auxL[q];
        for (int pq = auxPrimStart[q]; pq < auxPrimStart[q]+auxNumPrim[q]; pq++) {
            singleGaussianExpansion(lq, auxExponent[pq], single);
            for (int c = 0; c < CART_COUNT(lq); c++) {
                GLOBAL double* cq = table+(mm_long) pq*FITTING_HERMITE_STRIDE+c*HERMITE_COUNT(AUX_L);
                for (int n = 0; n < HERMITE_COUNT(lq); n++)
                    cq[n] = 0;
                int cp[3];
                cartesianPowers(lq, c, cp);
                for (int tau = 0; tau <= cp[0]; tau++)
                    for (int nu = 0; nu <= cp[1]; nu++)
                        for (int phi = 0; phi <= cp[2]; phi++)
                            cq[hermitePosition(tau, nu, phi)] =
                                single[cp[0]*(AUX_L+1)+tau]*single[cp[1]*(AUX_L+1)+nu]*single[cp[2]*(AUX_L+1)+phi];
            }
        }
    }
}

/** The fitted density's Hermite coefficients per fitting primitive, fitted[pq HERMITE_COUNT(AUX_L) + n] =
 * auxCoefficient[pq] sum_c coefficients_c E^c_n, from the cartesian table (fittingCartesianHermite) and the fit
 * coefficients of the cartesian fitting functions; one work item per fitting shell. */
KERNEL void fittedDensityHermite(int numAuxShells, GLOBAL const int* RESTRICT auxL, GLOBAL const int* RESTRICT auxPrimStart,
                                 GLOBAL const int* RESTRICT auxNumPrim, GLOBAL const int* RESTRICT auxCartesianOffset,
                                 GLOBAL const double* RESTRICT auxCoefficient, GLOBAL const double* RESTRICT coefficients,
                                 GLOBAL const double* RESTRICT table, GLOBAL double* RESTRICT fitted) {
    for (int q = GLOBAL_ID; q < numAuxShells; q += GLOBAL_SIZE) {
        const int lq = auxL[q];
        for (int pq = auxPrimStart[q]; pq < auxPrimStart[q]+auxNumPrim[q]; pq++)
            for (int n = 0; n < HERMITE_COUNT(lq); n++) {
                double sum = 0;
                for (int c = 0; c < CART_COUNT(lq); c++)
                    sum += coefficients[auxCartesianOffset[q]+c]*table[(mm_long) pq*FITTING_HERMITE_STRIDE+c*HERMITE_COUNT(AUX_L)+n];
                fitted[(mm_long) pq*HERMITE_COUNT(AUX_L)+n] = auxCoefficient[pq]*sum;
            }
    }
}

/** W_tuv += scale sum_(tau,nu,phi) (-1)^(tau+nu+phi) cq_(tau,nu,phi) R_(t+tau,u+nu,v+phi) for t+u+v <= pairOrder. */
DEVICE void addFittingContraction(int pairOrder, int lq, GLOBAL const double* RESTRICT cq, const double* R, double scale, double* W) {
    UNROLL
    for (int Nq = 0; Nq <= lq; Nq++)
        UNROLL
        for (int tau = Nq; tau >= 0; tau--)
            UNROLL
            for (int nu = Nq-tau; nu >= 0; nu--) {
                const int phi = Nq-tau-nu;
                const double e = cq[hermitePosition(tau, nu, phi)];
                if (e == 0)
                    continue;
                const double signedE = scale*(Nq%2 == 0 ? e : -e);
                UNROLL
                for (int N = 0; N <= pairOrder; N++)
                    UNROLL
                    for (int t = N; t >= 0; t--)
                        UNROLL
                        for (int u = N-t; u >= 0; u--) {
                            const int v = N-t-u;
                            W[hermitePosition(t, u, v)] += signedE*R[hermitePosition(t+tau, u+nu, v+phi)];
                        }
            }
}

/** W_tuv = sum_(tau,nu,phi) (-1)^(tau+nu+phi) cq_(tau,nu,phi) R_(t+tau,u+nu,v+phi) for t+u+v <= pairOrder. */
DEVICE void contractWithFitting(int pairOrder, int lq, GLOBAL const double* RESTRICT cq, const double* R, double* W) {
    for (int n = 0; n < HERMITE_COUNT(pairOrder); n++)
        W[n] = 0;
    addFittingContraction(pairOrder, lq, cq, R, 1.0, W);
}

/**
 * W[n] += scale sum_(tau,nu,phi) (-1)^(tau+nu+phi) cq_(tau,nu,phi) R_(t+tau,u+nu,v+phi) for the Hermite functions
 * n = (t,u,v) of orders up to `order` (0, 1 or 2; compact order: 1, x, y, z, xx, xy, xz, yy, yz, zz) and the fitting
 * function's coefficients cq up to lq: addFittingContraction for the small pair orders, whose sums sit in named
 * places (registers on a GPU) where order is a constant of the caller.
 */
DEVICE void addLowOrderContraction(int order, int lq, GLOBAL const double* RESTRICT cq, const double* R, double scale, double* W) {
    double w0 = 0, w1 = 0, w2 = 0, w3 = 0, w4 = 0, w5 = 0, w6 = 0, w7 = 0, w8 = 0, w9 = 0;
    UNROLL
    for (int Nq = 0; Nq <= lq; Nq++)
        UNROLL
        for (int tau = Nq; tau >= 0; tau--)
            UNROLL
            for (int nu = Nq-tau; nu >= 0; nu--) {
                const int phi = Nq-tau-nu;
                const double e = cq[hermitePosition(tau, nu, phi)];
                if (e == 0)
                    continue;
                const double signedE = (Nq%2 == 0 ? e : -e);
                w0 += signedE*R[hermitePosition(tau, nu, phi)];
                if (order >= 1) {
                    w1 += signedE*R[hermitePosition(tau+1, nu, phi)];
                    w2 += signedE*R[hermitePosition(tau, nu+1, phi)];
                    w3 += signedE*R[hermitePosition(tau, nu, phi+1)];
                }
                if (order >= 2) {
                    w4 += signedE*R[hermitePosition(tau+2, nu, phi)];
                    w5 += signedE*R[hermitePosition(tau+1, nu+1, phi)];
                    w6 += signedE*R[hermitePosition(tau+1, nu, phi+1)];
                    w7 += signedE*R[hermitePosition(tau, nu+2, phi)];
                    w8 += signedE*R[hermitePosition(tau, nu+1, phi+1)];
                    w9 += signedE*R[hermitePosition(tau, nu, phi+2)];
                }
            }
    W[0] += scale*w0;
    if (order >= 1) {
        W[1] += scale*w1;
        W[2] += scale*w2;
        W[3] += scale*w3;
    }
    if (order >= 2) {
        W[4] += scale*w4;
        W[5] += scale*w5;
        W[6] += scale*w6;
        W[7] += scale*w7;
        W[8] += scale*w8;
        W[9] += scale*w9;
    }
}

/**
 * W_tuv += the Coulomb potential of fitting shell q's (of l lq) fitted density on the Hermite functions up to pairOrder
 * of a primitive pair of exponent p at P, over the shell's primitives: the fitted density's Hermite coefficients per
 * primitive (fittedDensityHermite), its Boys function and Hermite integrals. F and R are the caller's scratch.
 */
DEVICE void addFittingShellPotentialOfL(int q, int lq, double p, const double* P, int pairOrder, GLOBAL const int* RESTRICT auxPrimStart,
                                        GLOBAL const int* RESTRICT auxNumPrim, GLOBAL const double* RESTRICT auxCenter,
                                        GLOBAL const double* RESTRICT auxExponent, GLOBAL const double* RESTRICT fitted,
                                        GLOBAL const double* RESTRICT boysTable, BoysTable boys, double* F, double* R, double* W) {
    const int L = pairOrder+lq;
    const double X = P[0]-auxCenter[3*q], Y = P[1]-auxCenter[3*q+1], Z = P[2]-auxCenter[3*q+2];
    for (int pq = auxPrimStart[q]; pq < auxPrimStart[q]+auxNumPrim[q]; pq++) {
        const double g = auxExponent[pq], alpha = p*g/(p+g);
        const double prefactor = 2*PI_THREE_CENTRE*PI_THREE_CENTRE*sqrt(PI_THREE_CENTRE)/(p*g*sqrt(p+g));
        boysFunction(L, alpha*(X*X+Y*Y+Z*Z), boysTable, boys, F);
        hermiteCoulomb(L, alpha, X, Y, Z, F, R);
        GLOBAL const double* cq = fitted+(mm_long) pq*HERMITE_COUNT(AUX_L);
        if (pairOrder <= 2)
            addLowOrderContraction(pairOrder, lq, cq, R, prefactor, W);  // the s-s and p-s gradients: sums in registers
        else
            addFittingContraction(pairOrder, lq, cq, R, prefactor, W);
    }
}

/** addFittingShellPotentialOfL with the shell's l read from auxL. */
DEVICE void addFittingShellPotential(int q, double p, const double* P, int pairOrder, GLOBAL const int* RESTRICT auxL,
                                     GLOBAL const int* RESTRICT auxPrimStart, GLOBAL const int* RESTRICT auxNumPrim,
                                     GLOBAL const double* RESTRICT auxCenter, GLOBAL const double* RESTRICT auxExponent,
                                     GLOBAL const double* RESTRICT fitted, GLOBAL const double* RESTRICT boysTable, BoysTable boys,
                                     double* F, double* R, double* W) {
    addFittingShellPotentialOfL(q, auxL[q], p, P, pairOrder, auxPrimStart, auxNumPrim, auxCenter, auxExponent, fitted, boysTable, boys, F,
                                R, W);
}

/**
 * W = w R_tuv(p, PC) for the Hermite functions of orders up to `order` (1 or 2): a point charge's potential on a
 * primitive pair's Hermite functions, from F_0 .. F_order at p |PC|^2 (R^1_000 = -2p F_1, R^2_000 = 4p^2 F_2).
 */
DEVICE void lowOrderChargePotential(int order, double p, const double* PC, const double* F, double w, double* W) {
    const double r1 = -2*p*F[1];
    W[0] = w*F[0];
    W[1] = w*PC[0]*r1;
    W[2] = w*PC[1]*r1;
    W[3] = w*PC[2]*r1;
    if (order >= 2) {
        const double r2 = 4*p*p*F[2];
        W[4] = w*(PC[0]*PC[0]*r2+r1);
        W[5] = w*PC[0]*PC[1]*r2;
        W[6] = w*PC[0]*PC[2]*r2;
        W[7] = w*(PC[1]*PC[1]*r2+r1);
        W[8] = w*PC[1]*PC[2]*r2;
        W[9] = w*(PC[2]*PC[2]*r2+r1);
    }
}

/** The primitive pair of exponents a and b at A and B (|AB|^2 = AB2): its centre P, and exp(-ab/p |AB|^2). */
DEVICE double gaussianProduct(double a, double b, const double* A, const double* B, double AB2, double* P) {
    const double p = a+b;
    for (int d = 0; d < 3; d++)
        P[d] = (a*A[d]+b*B[d])/p;
    return exp(-a*b/p*AB2);
}

/** The shells of pair k in the class's order: sA the one with the larger l (A), sB the other; returns whether that
 * swaps the pair's own order (first, second), in which its results are written back. */
DEVICE int classPairShells(int k, GLOBAL const int* RESTRICT pairFirst, GLOBAL const int* RESTRICT pairSecond,
                           GLOBAL const int* RESTRICT shellL, int* sA, int* sB) {
    const int swapped = (shellL[pairFirst[k]] < shellL[pairSecond[k]]);
    *sA = (swapped ? pairSecond[k] : pairFirst[k]);
    *sB = (swapped ? pairFirst[k] : pairSecond[k]);
    return swapped;
}

/** gradient[3 row + d] += g[d] in fixed point (GRADIENT_SCALE). */
DEVICE void addFixedPointGradient(GLOBAL mm_ulong* RESTRICT gradient, int row, const double* g) {
    for (int d = 0; d < 3; d++)
        ATOMIC_ADD(&gradient[3*row+d], (mm_ulong) ((mm_long) round(g[d]*GRADIENT_SCALE)));
}

/** The place of the order-2 Hermite function e_i + e_k in the compact order (xx 4, xy 5, xz 6, yy 7, yz 8, zz 9). */
DEVICE int secondOrderPosition(int i, int k) {
    const int lo = (i < k ? i : k), hi = (i < k ? k : i);
    return (lo == 0 ? 4+hi : (lo == 1 ? 6+hi : 9));
}

/**
 * The p-s pair's gradient sums against a potential W on its Hermite functions of orders 0 to 2: sa[d] and sb[d] are
 * sum_i D_i c d/dA_d and d/dB_d of (p_i on A, s on B) against W, where d/dA_d p_i = 2a (p_i p_d on A) - delta_id s and
 * d/dB_d s = 2b p_d on B, and the products' Hermite coefficients per direction are E^10 = (PA, 1/2p), E^20 = (PA^2 +
 * 1/2p, PA/p, 1/4p^2), E^01 = (PB, 1/2p), E^11 = (PA PB + 1/2p, (PA + PB)/2p, 1/4p^2).
 */
DEVICE void psDerivativeSums(const double* D, double a, double b, double p, const double* PA, const double* PB, const double* W,
                             double* sa, double* sb) {
    const double h = 0.5/p, h2 = h*h;
    for (int d = 0; d < 3; d++) {
        double ta = 0, tb = 0;
        for (int i = 0; i < 3; i++) {
            if (i == d) {
                const double w2 = W[secondOrderPosition(d, d)];
                ta += D[i]*(2*a*((PA[d]*PA[d]+h)*W[0] + 2*PA[d]*h*W[1+d] + h2*w2) - W[0]);
                tb += D[i]*2*b*((PA[d]*PB[d]+h)*W[0] + h*(PA[d]+PB[d])*W[1+d] + h2*w2);
            }
            else {
                const double w2 = W[secondOrderPosition(i, d)];
                ta += D[i]*2*a*(PA[i]*PA[d]*W[0] + PA[i]*h*W[1+d] + h*PA[d]*W[1+i] + h2*w2);
                tb += D[i]*2*b*(PA[i]*PB[d]*W[0] + PA[i]*h*W[1+d] + h*PB[d]*W[1+i] + h2*w2);
            }
        }
        sa[d] = ta;
        sb[d] = tb;
    }
}

/**
 * The s-s (la 0) or p-s (la 1) pair's gradient sums against a potential W on its Hermite functions of orders up to
 * la+1, for D (the one or three density elements times the primitive pair's coefficient): for s-s,
 * d/dA_d s = 2a p_d, whose Hermite coefficients are PA_d (order 0) and 1/2p (order 1 in d), likewise on B.
 */
DEVICE void lowClassDerivativeSums(int la, const double* D, double a, double b, double p, const double* PA, const double* PB,
                                   const double* W, double* sa, double* sb) {
    if (la == 1) {
        psDerivativeSums(D, a, b, p, PA, PB, W, sa, sb);
        return;
    }
    const double h = 0.5/p;
    for (int d = 0; d < 3; d++) {
        sa[d] = 2*a*D[0]*(PA[d]*W[0] + h*W[1+d]);
        sb[d] = 2*b*D[0]*(PB[d]*W[0] + h*W[1+d]);
    }
}

/** sa = sum_n DA[(d count + n) stride] V[n] and sb likewise with DB: a primitive pair's derivative Hermite densities
 * in the gradient's pair table (pairDerivativeDensities; direction d, count per direction) against a potential V on
 * its Hermite functions. */
DEVICE void tableDerivativeSums(GLOBAL const double* RESTRICT DA, GLOBAL const double* RESTRICT DB, int count, int stride, int d,
                                const double* V, double* sa, double* sb) {
    double a = 0, b = 0;
    UNROLL
    for (int n = 0; n < count; n++) {
        a += DA[(mm_long) (d*count+n)*stride]*V[n];
        b += DB[(mm_long) (d*count+n)*stride]*V[n];
    }
    *sa = a;
    *sb = b;
}

/* The arguments of the density-fitting tensor kernels (threeCentreTensor_LA_LB[_LQ]) after pairBegin and auxBegin, in
 * the order the host passes them (CommonDensityFitting.cpp): numAuxShells counts the launch's fitting shells, listed
 * in auxShellsByL from auxBegin. */
#define THREE_CENTRE_TENSOR_ARGUMENTS \
    int numPairs, int numAuxShells, int rows, GLOBAL const int* RESTRICT pairFirst,                                          \
    GLOBAL const int* RESTRICT pairSecond, GLOBAL const int* RESTRICT pairColumn, GLOBAL const int* RESTRICT shellL,        \
    GLOBAL const int* RESTRICT shellPrimStart, GLOBAL const int* RESTRICT shellNumPrim,                                      \
    GLOBAL const double* RESTRICT shellCenter, GLOBAL const double* RESTRICT primExponent,                                  \
    GLOBAL const double* RESTRICT primCoefficient, GLOBAL const int* RESTRICT auxShellsByL, GLOBAL const int* RESTRICT auxL, \
    GLOBAL const int* RESTRICT auxPrimStart,                                                                                \
    GLOBAL const int* RESTRICT auxNumPrim, GLOBAL const int* RESTRICT auxOffset, GLOBAL const int* RESTRICT auxSize,        \
    GLOBAL const double* RESTRICT auxCenter, GLOBAL const double* RESTRICT auxExponent,                                      \
    GLOBAL const double* RESTRICT auxCoefficient, GLOBAL const double* RESTRICT auxTransform,                                \
    GLOBAL const int* RESTRICT auxTransformStart, GLOBAL const double* RESTRICT fittingHermite,                              \
    GLOBAL const double* RESTRICT boysTable, double boysStep, double boysEnd, int boysOrders, int boysTaylorTerms,           \
    GLOBAL double* RESTRICT B, GLOBAL mm_ulong* RESTRICT counter

/**
 * One tensor item's columns of B: acc[(i nb + j) nq + c] holds (c|ij) for the class's functions i of A (na of them)
 * and j of B (nb) and the fitting shell's cartesian components c (nq); the pair fills its columns from `column` in its
 * own order (i-major over (first shell, second shell), which is (j, i) of the class's if swapped; i >= j where both
 * shells are one, sameShell), each with the shell's rows (size of them from rowOffset, transformed by its size x nq
 * matrix). The loops run over the class's (i, j, c), whose bounds are the caller's constants, so that acc is indexed
 * by constants; the column is worked out from the pair's order.
 */
DEVICE void storeTensorColumns(GLOBAL double* RESTRICT B, int rows, int column, int rowOffset, int na, int nb, int swapped, int sameShell,
                               int nq, int size, GLOBAL const double* RESTRICT transform, const double* acc) {
    const int ownSecond = (swapped ? na : nb);
    UNROLL
    for (int i = 0; i < na; i++)
        UNROLL
        for (int j = 0; j < nb; j++) {
            const int r = (swapped ? j : i), s = (swapped ? i : j);  // the element's place in the pair's own order
            if (sameShell && s > r)
                continue;
            const mm_long col = column + (sameShell ? r*(r+1)/2+s : r*ownSecond+s);
            for (int m = 0; m < size; m++) {
                double value = 0;
                UNROLL
                for (int c = 0; c < nq; c++)
                    value += transform[m*nq+c]*acc[(i*nb+j)*nq+c];
                B[col*rows+rowOffset+m] = value;
            }
        }
}

/* The arguments of the density-fitting gradient kernels (threeCentreGradient_LA_LB) after pairBegin, in the order the
 * host passes them (launchThreeCentreGradient). */
#define THREE_CENTRE_GRADIENT_ARGUMENTS \
    int numPairs, int numGroups, int nbf, GLOBAL const int* RESTRICT pairFirst,                             \
    GLOBAL const int* RESTRICT pairSecond, GLOBAL const int* RESTRICT shellL,                               \
    GLOBAL const int* RESTRICT shellAtom, GLOBAL const int* RESTRICT shellPrimStart,                        \
    GLOBAL const int* RESTRICT shellNumPrim, GLOBAL const int* RESTRICT shellCartesianOffset,               \
    GLOBAL const double* RESTRICT shellCenter, GLOBAL const double* RESTRICT primExponent,                  \
    GLOBAL const double* RESTRICT primCoefficient, GLOBAL const int* RESTRICT auxShellList,                 \
    GLOBAL const int* RESTRICT auxGroupShellStart,                                                          \
    int centreOffset, GLOBAL const int* RESTRICT auxAtom, GLOBAL const int* RESTRICT auxL,                  \
    GLOBAL const int* RESTRICT auxPrimStart, GLOBAL const int* RESTRICT auxNumPrim,                         \
    GLOBAL const int* RESTRICT auxCartesianOffset, GLOBAL const double* RESTRICT auxCenter,                 \
    GLOBAL const double* RESTRICT auxExponent, GLOBAL const double* RESTRICT auxCoefficient,                \
    GLOBAL const double* RESTRICT boysTable, double boysStep, double boysEnd, int boysOrders,               \
    int boysTaylorTerms, GLOBAL const double* RESTRICT density, GLOBAL const double* RESTRICT coefficients, \
    GLOBAL const double* RESTRICT fitted, GLOBAL mm_ulong* RESTRICT gradient, GLOBAL const double* RESTRICT pairTable,    \
    int tableStride, GLOBAL mm_ulong* RESTRICT counter

/** total[e] = sum over the groups of partial[group*count + e], in group order (the same sums in every run). */
KERNEL void sumChargeGroups(int count, int numGroups, GLOBAL const double* RESTRICT partial, GLOBAL double* RESTRICT total) {
    for (int e = GLOBAL_ID; e < count; e += GLOBAL_SIZE) {
        double sum = 0;
        for (int g = 0; g < numGroups; g++)
            sum += partial[(mm_long) g*count+e];
        total[e] = sum;
    }
}
