/**
 * dst block = src block, rows x cols of column-major matrices (element (i, j) at offset + i + j ld): the held
 * matrices of CommonMatrixProducts, a sum's first term copied into its result before the product is added to it, a
 * block made whole before it is downloaded.
 */
KERNEL void copyMatrixBlock(int rows, int cols, GLOBAL const double* RESTRICT src, int srcOffset, int srcLd,
                            GLOBAL double* RESTRICT dst, int dstOffset, int dstLd) {
    for (int index = GLOBAL_ID; index < rows*cols; index += GLOBAL_SIZE) {
        const int i = index%rows, j = index/rows;
        dst[dstOffset+i+j*dstLd] = src[srcOffset+i+j*srcLd];
    }
}
