/* A Gaussian shell's values and gradients at one point: the one source of basis-function evaluation for the host
 * (qmengine/src/ShellValues.h includes it as C++) and the GPU platforms (platforms/common compiles it in front of
 * kernels/qmXC.cc). Written in the subset that C++, OpenCL C and CUDA share, with OpenMM's Compute API macros
 * DEVICE, GLOBAL and RESTRICT (the host defines them). Shells up to f (l <= 3).
 *
 * The shell tables (one entry per shell, or per primitive): shellL, shellPure (1: real solid harmonics for l >= 2),
 * shellPrimStart and shellNumPrim into primExponent and primCoefficient (coefficients that include the x^l
 * normalization, libint's convention); pureMatrix: the rows m = -l..l of the cartesian -> real solid harmonic
 * matrices of d (5 x 6) and then f (7 x 10). */

/* Loops whose trip count is a constant of the caller unrolled on the GPU platforms, so that the private arrays are
 * indexed by constants and kept in registers (with the l read at run time they sat in local memory: 448 bytes of
 * stack per thread of evaluateBasis, ptxas for sm_90); the host leaves it to its compiler. */
#ifndef SHELL_UNROLL
#if defined(__OPENCL_VERSION__) || defined(__CUDA_ARCH__)
#define SHELL_UNROLL _Pragma("unroll")
#else
#define SHELL_UNROLL
#endif
#endif

/** The powers (a, b, e) of x^a y^b z^e of cartesian component c of a shell of angular momentum l, in libint's order
 * (x's power descending, then y's): c = i(i+1)/2 + e with a = l - i. */
DEVICE void cartesianPowersOf(int l, int c, int* a, int* b, int* e) {
    int i = 0;
    SHELL_UNROLL
    for (int k = 1; k <= 3; k++)
        i += (k*(k+1)/2 <= c);  // shells up to f: at most 10 components, i <= 3
    *e = c-i*(i+1)/2;
    *b = i-*e;
    *a = l-i;
}

/**
 * The values (and, withGradients: their gradients) of a shell of angular momentum l at (dx, dy, dz) from its centre,
 * given its radial factors there: radial = sum_k c_k e^(-a_k r^2) and radialDerivative = sum_k c_k a_k e^(-a_k r^2).
 * Split from the sum over primitives so that a host can form the radial factors of many points at once. The caller
 * passes l as a constant (shellAngular below) where the loops should unroll.
 */
DEVICE void shellAngularOfL(const int l, int pure, double dx, double dy, double dz, double radial, double radialDerivative,
                            GLOBAL const double* RESTRICT pureMatrix, int withGradients, GLOBAL double* RESTRICT value,
                            GLOBAL double* RESTRICT gradX, GLOBAL double* RESTRICT gradY, GLOBAL double* RESTRICT gradZ) {
    double px[5], py[5], pz[5];
    px[0] = py[0] = pz[0] = 1;
    SHELL_UNROLL
    for (int k = 1; k <= l+1; k++) {
        px[k] = px[k-1]*dx;
        py[k] = py[k-1]*dy;
        pz[k] = pz[k-1]*dz;
    }
    const int nc = (l+1)*(l+2)/2;
    GLOBAL double* out[4] = {value, gradX, gradY, gradZ};
    // The values, then each direction's derivatives: one set of cartesian components at a time (fewer registers).
    SHELL_UNROLL
    for (int q = 0; q < 4; q++) {
        if (q > 0 && !withGradients)
            break;
        double cart[10];
        SHELL_UNROLL
        for (int c = 0; c < nc; c++) {
            int a, b, e;
            cartesianPowersOf(l, c, &a, &b, &e);
            // d/dx [R(r) x^a y^b z^e] = (a x^(a-1) R - 2 x^(a+1) sum c alpha e^(-alpha r2)) y^b z^e, and likewise.
            if (q == 0)
                cart[c] = radial*px[a]*py[b]*pz[e];
            else if (q == 1)
                cart[c] = ((a > 0 ? a*px[a > 0 ? a-1 : 0]*radial : 0.0) - 2.0*px[a+1]*radialDerivative)*py[b]*pz[e];
            else if (q == 2)
                cart[c] = ((b > 0 ? b*py[b > 0 ? b-1 : 0]*radial : 0.0) - 2.0*py[b+1]*radialDerivative)*px[a]*pz[e];
            else
                cart[c] = ((e > 0 ? e*pz[e > 0 ? e-1 : 0]*radial : 0.0) - 2.0*pz[e+1]*radialDerivative)*px[a]*py[b];
        }
        if (pure && l >= 2) {
            // Rows m = -l..l of the cartesian -> real solid harmonic matrix (d at 0, f after d's 5 x 6).
            GLOBAL const double* M = pureMatrix + (l == 2 ? 0 : 30);
            SHELL_UNROLL
            for (int m = 0; m < 2*l+1; m++) {
                double v = 0;
                SHELL_UNROLL
                for (int c = 0; c < nc; c++)
                    v += M[m*nc+c]*cart[c];
                out[q][m] = v;
            }
        }
        else {
            SHELL_UNROLL
            for (int c = 0; c < nc; c++)
                out[q][c] = cart[c];
        }
    }
}

/** shellAngularOfL for a shell of l <= 3 read at run time: one call per l, each with the l a constant. */
DEVICE void shellAngular(int l, int pure, double dx, double dy, double dz, double radial, double radialDerivative,
                         GLOBAL const double* RESTRICT pureMatrix, int withGradients, GLOBAL double* RESTRICT value,
                         GLOBAL double* RESTRICT gradX, GLOBAL double* RESTRICT gradY, GLOBAL double* RESTRICT gradZ) {
    if (l == 0)
        shellAngularOfL(0, pure, dx, dy, dz, radial, radialDerivative, pureMatrix, withGradients, value, gradX, gradY, gradZ);
    else if (l == 1)
        shellAngularOfL(1, pure, dx, dy, dz, radial, radialDerivative, pureMatrix, withGradients, value, gradX, gradY, gradZ);
    else if (l == 2)
        shellAngularOfL(2, pure, dx, dy, dz, radial, radialDerivative, pureMatrix, withGradients, value, gradX, gradY, gradZ);
    else
        shellAngularOfL(3, pure, dx, dy, dz, radial, radialDerivative, pureMatrix, withGradients, value, gradX, gradY, gradZ);
}

/**
 * A shell's values at (dx, dy, dz) from its centre, written to value[0 .. size); withGradients (a uniform flag):
 * also their gradients d/dx, d/dy, d/dz at the point, written to gradX, gradY, gradZ (not touched otherwise).
 */
DEVICE void shellValues(int s, double dx, double dy, double dz, GLOBAL const int* RESTRICT shellL,
                        GLOBAL const int* RESTRICT shellPure, GLOBAL const int* RESTRICT shellPrimStart,
                        GLOBAL const int* RESTRICT shellNumPrim, GLOBAL const double* RESTRICT primExponent,
                        GLOBAL const double* RESTRICT primCoefficient, GLOBAL const double* RESTRICT pureMatrix, int withGradients,
                        GLOBAL double* RESTRICT value,
                        GLOBAL double* RESTRICT gradX, GLOBAL double* RESTRICT gradY, GLOBAL double* RESTRICT gradZ) {
    const double r2 = dx*dx + dy*dy + dz*dz;
    double radial = 0, radialDerivative = 0;  // sum c e^(-a r2), and sum c a e^(-a r2)
    for (int k = shellPrimStart[s]; k < shellPrimStart[s] + shellNumPrim[s]; k++) {
        const double term = primCoefficient[k]*exp(-primExponent[k]*r2);
        radial += term;
        radialDerivative += primExponent[k]*term;
    }
    shellAngular(shellL[s], shellPure[s], dx, dy, dz, radial, radialDerivative, pureMatrix, withGradients, value,
                 gradX, gradY, gradZ);
}
