/**
 * The bond graph on the device: sparse boolean products of ELLPACK matrices and
 * the classification of particle pairs by the length of their shortest bond path.
 *
 * Every matrix here is an ELLPACK array of column indices stored column-major:
 * entry k of row i is at [k*numRows + i], rows are padded with -1 and every used
 * entry precedes the padding.  One thread handles one row; neighbouring threads
 * read neighbouring addresses, so the loads coalesce.
 */

/**
 * product = x * a (boolean).  Row i of the product holds, once each, every column
 * reachable from row i of x by one more bond.  productWidth is the allocated
 * width (an upper bound, xWidth*aWidth); rowLength[i] receives the used width.
 */
KERNEL void sparseBooleanProduct(int numRows, GLOBAL const int* RESTRICT x, int xWidth, GLOBAL const int* RESTRICT a, int aWidth,
        GLOBAL int* RESTRICT product, int productWidth, GLOBAL int* RESTRICT rowLength) {
    for (int row = GLOBAL_ID; row < numRows; row += GLOBAL_SIZE) {
        int length = 0;
        for (int k = 0; k < xWidth; k++) {
            int middle = x[k*numRows+row];
            if (middle < 0)
                break;
            for (int m = 0; m < aWidth; m++) {
                int column = a[m*numRows+middle];
                if (column < 0)
                    break;
                // Keep each column once: look for it among those written so far.
                int seen = 0;
                for (int n = 0; n < length && !seen; n++)
                    seen = (product[n*numRows+row] == column);
                if (!seen) {
                    product[length*numRows+row] = column;
                    length++;
                }
            }
        }
        for (int n = length; n < productWidth; n++)
            product[n*numRows+row] = -1;
        rowLength[row] = length;
    }
}

DEVICE int rowContains(GLOBAL const int* RESTRICT matrix, int width, int numRows, int row, int column) {
    for (int k = 0; k < width; k++) {
        int c = matrix[k*numRows+row];
        if (c < 0)
            return 0;
        if (c == column)
            return 1;
    }
    return 0;
}

/**
 * Classify the partners of each particle from A, A^2 and A^3:
 *   shortest path of 1 or 2 bonds (in A or A^2, not the particle itself) -> excluded,
 *   exactly 3 bonds (in A^3 but not in A, A^2 or the particle itself)   -> scaled 1-4.
 * Both outputs are ELLPACK (column-major, -1 padded) with both directions of every pair.
 */
KERNEL void classifyBondPaths(int numRows, GLOBAL const int* RESTRICT a, int aWidth, GLOBAL const int* RESTRICT a2, int a2Width,
        GLOBAL const int* RESTRICT a3, int a3Width, GLOBAL int* RESTRICT excluded, int excludedWidth,
        GLOBAL int* RESTRICT scaled, int scaledWidth) {
    for (int row = GLOBAL_ID; row < numRows; row += GLOBAL_SIZE) {
        int numExcluded = 0;
        for (int k = 0; k < aWidth; k++) {
            int column = a[k*numRows+row];
            if (column < 0)
                break;
            excluded[numExcluded*numRows+row] = column;
            numExcluded++;
        }
        for (int k = 0; k < a2Width; k++) {
            int column = a2[k*numRows+row];
            if (column < 0)
                break;
            if (column != row && !rowContains(a, aWidth, numRows, row, column)) {
                excluded[numExcluded*numRows+row] = column;
                numExcluded++;
            }
        }
        for (int n = numExcluded; n < excludedWidth; n++)
            excluded[n*numRows+row] = -1;
        int numScaled = 0;
        for (int k = 0; k < a3Width; k++) {
            int column = a3[k*numRows+row];
            if (column < 0)
                break;
            if (column != row && !rowContains(a, aWidth, numRows, row, column) && !rowContains(a2, a2Width, numRows, row, column)) {
                scaled[numScaled*numRows+row] = column;
                numScaled++;
            }
        }
        for (int n = numScaled; n < scaledWidth; n++)
            scaled[n*numRows+row] = -1;
    }
}
