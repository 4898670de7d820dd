#ifndef OPENMMDFT_DENSELAYOUT_H_
#define OPENMMDFT_DENSELAYOUT_H_

/* Layout helpers the least-squares front end and its platform kernels share: the problem arrives row-major, LAPACK
 * and the device kernels work column-major, and the density fitting's metric (millions of elements) passes through. */

#include <algorithm>
#include <cstddef>

namespace OpenMMDFT {

/** out[j * ldOut + i] = in[i * ldIn + j] for i < rows, j < cols: the transpose of a row-major rows x cols block (or
 *  equally a column-major cols x rows one), by 64 x 64 tiles so that the strided side stays in cache. */
inline void transposeTiled(const double* in, int rows, int cols, size_t ldIn, double* out, size_t ldOut) {
    const int B = 64;
    for (int i0 = 0; i0 < rows; i0 += B)
        for (int j0 = 0; j0 < cols; j0 += B)
            for (int i = i0; i < std::min(rows, i0 + B); i++)
                for (int j = j0; j < std::min(cols, j0 + B); j++)
                    out[(size_t) j * ldOut + i] = in[(size_t) i * ldIn + j];
}

/** Whether the n x n a (either layout) is c times the identity with c != 0, and c. */
inline bool isScaledIdentity(const double* a, int n, double& c) {
    c = a[0];
    if (c == 0)
        return false;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++)
            if (a[(size_t) i * n + j] != (i == j ? c : 0.0))
                return false;
    return true;
}

} // namespace OpenMMDFT

#endif
