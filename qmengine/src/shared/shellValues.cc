/* A Gaussian shell's values and gradients at one point: the one source of basis-function evaluation for the host
 * (qmengine/src/ShellValues.h includes it as C++) and the GPU platforms (platforms/common compiles it in front of
 * kernels/qmXC.cc). Written in the subset that C++, OpenCL C and CUDA share, with OpenMM's Compute API macros
 * DEVICE, GLOBAL and RESTRICT (the host defines them). Shells up to f (l <= 3).
 *
 * The shell tables (one entry per shell, or per primitive): shellL, shellPure (1: real solid harmonics for l >= 2),
 * shellPrimStart and shellNumPrim into primExponent and primCoefficient (coefficients that include the x^l
 * normalization, libint's convention); cartPowers: (a, b, c) of x^a y^b z^c for every cartesian component of
 * l = 0..3 in libint's order; pureMatrix: the rows m = -l..l of the cartesian -> real solid harmonic matrices of
 * d (5 x 6) and then f (7 x 10). */

/**
 * The values (and, withGradients: their gradients) of a shell of angular momentum l at (dx, dy, dz) from its centre,
 * given its radial factors there: radial = sum_k c_k e^(-a_k r^2) and radialDerivative = sum_k c_k a_k e^(-a_k r^2).
 * Split from the sum over primitives so that a host can form the radial factors of many points at once.
 */
DEVICE void shellAngular(int l, int pure, double dx, double dy, double dz, double radial, double radialDerivative,
                         GLOBAL const int* RESTRICT cartPowers, GLOBAL const double* RESTRICT pureMatrix, int withGradients,
                         GLOBAL double* RESTRICT value, GLOBAL double* RESTRICT gradX, GLOBAL double* RESTRICT gradY,
                         GLOBAL double* RESTRICT gradZ) {
    double px[5], py[5], pz[5];
    px[0] = py[0] = pz[0] = 1;
    for (int k = 1; k <= l+1; k++) {
        px[k] = px[k-1]*dx;
        py[k] = py[k-1]*dy;
        pz[k] = pz[k-1]*dz;
    }
    // Cartesian components of shell l start at component l(l+1)(l+2)/6 of the table (libint's order).
    const int first = l*(l+1)*(l+2)/6, nc = (l+1)*(l+2)/2;
    double cart[4][10];
    for (int c = 0; c < nc; c++) {
        const int a = cartPowers[3*(first+c)], b = cartPowers[3*(first+c)+1], e = cartPowers[3*(first+c)+2];
        cart[0][c] = radial*px[a]*py[b]*pz[e];
        if (withGradients) {
            // d/dx [R(r) x^a y^b z^e] = (a x^(a-1) R - 2 x^(a+1) sum c alpha e^(-alpha r2)) y^b z^e, and likewise.
            cart[1][c] = ((a > 0 ? a*px[a-1]*radial : 0.0) - 2.0*px[a+1]*radialDerivative)*py[b]*pz[e];
            cart[2][c] = ((b > 0 ? b*py[b-1]*radial : 0.0) - 2.0*py[b+1]*radialDerivative)*px[a]*pz[e];
            cart[3][c] = ((e > 0 ? e*pz[e-1]*radial : 0.0) - 2.0*pz[e+1]*radialDerivative)*px[a]*py[b];
        }
    }
    GLOBAL double* out[4] = {value, gradX, gradY, gradZ};
    for (int q = 0; q < (withGradients ? 4 : 1); q++) {
        if (pure && l >= 2) {
            // Rows m = -l..l of the cartesian -> real solid harmonic matrix (d at 0, f after d's 5 x 6).
            GLOBAL const double* M = pureMatrix + (l == 2 ? 0 : 30);
            for (int m = 0; m < 2*l+1; m++) {
                double v = 0;
                for (int c = 0; c < nc; c++)
                    v += M[m*nc+c]*cart[q][c];
                out[q][m] = v;
            }
        }
        else
            for (int c = 0; c < nc; c++)
                out[q][c] = cart[q][c];
    }
}

/**
 * A shell's values at (dx, dy, dz) from its centre, written to value[0 .. size); withGradients (a uniform flag):
 * also their gradients d/dx, d/dy, d/dz at the point, written to gradX, gradY, gradZ (not touched otherwise).
 */
DEVICE void shellValues(int s, double dx, double dy, double dz, GLOBAL const int* RESTRICT shellL,
                        GLOBAL const int* RESTRICT shellPure, GLOBAL const int* RESTRICT shellPrimStart,
                        GLOBAL const int* RESTRICT shellNumPrim, GLOBAL const double* RESTRICT primExponent,
                        GLOBAL const double* RESTRICT primCoefficient, GLOBAL const int* RESTRICT cartPowers,
                        GLOBAL const double* RESTRICT pureMatrix, int withGradients, GLOBAL double* RESTRICT value,
                        GLOBAL double* RESTRICT gradX, GLOBAL double* RESTRICT gradY, GLOBAL double* RESTRICT gradZ) {
    const double r2 = dx*dx + dy*dy + dz*dz;
    double radial = 0, radialDerivative = 0;  // sum c e^(-a r2), and sum c a e^(-a r2)
    for (int k = shellPrimStart[s]; k < shellPrimStart[s] + shellNumPrim[s]; k++) {
        const double term = primCoefficient[k]*exp(-primExponent[k]*r2);
        radial += term;
        radialDerivative += primExponent[k]*term;
    }
    shellAngular(shellL[s], shellPure[s], dx, dy, dz, radial, radialDerivative, cartPowers, pureMatrix, withGradients, value,
                 gradX, gradY, gradZ);
}
