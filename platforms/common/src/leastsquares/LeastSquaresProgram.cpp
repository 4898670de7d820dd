#include "LeastSquaresProgram.h"
#include "CommonLeastSquaresKernelSources.h"

using namespace std;

namespace OpenMMDFT {

string leastSquaresProgramSource() {
    typedef CommonLeastSquaresKernelSources S;
    // The tiled product twice: for inputs in the storage type (A, b) and in the accumulation type.
    return S::lsqCommon + "#define IN STORE\n#define GEMM gemmStore\n" + S::lsqGemm + "#undef IN\n#undef GEMM\n#define IN ACC\n#define GEMM gemmAcc\n" +
           S::lsqGemm + S::lsqTriangular + S::lsqCholesky + S::lsqLU + S::lsqQR + S::lsqGaussSeidel;
}

string matrixProductProgramSource() {
    typedef CommonLeastSquaresKernelSources S;
    return S::lsqCommon + "#define IN ACC\n#define GEMM matrixProduct\n" + S::lsqGemm;
}

map<string, string> leastSquaresProgramDefines(bool storeDouble, bool accDouble) {
    return {{"STORE", storeDouble ? "double" : "float"},
            {"ACC", accDouble ? "double" : "float"},
            {"BLOCK", to_string(LEAST_SQUARES_BLOCK)},
            {"NB", to_string(LEAST_SQUARES_NB)}};
}

} // namespace OpenMMDFT
