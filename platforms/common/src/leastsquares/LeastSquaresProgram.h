#ifndef OPENMMDFT_LEASTSQUARESPROGRAM_H_
#define OPENMMDFT_LEASTSQUARESPROGRAM_H_

#include <map>
#include <string>

namespace OpenMMDFT {

/** Work-group size of the least-squares kernels that use one work group per item. */
const int LEAST_SQUARES_BLOCK = 128;
/** Panel width of the blocked factorizations (columns factored before one tiled trailing update). */
const int LEAST_SQUARES_NB = 64;

/**
 * The device program of the GPU least-squares kernel (kernels/lsq*.cc, in one source), and the defines
 * it is compiled with. Kept apart from the kernel class so that the CUDA compile check
 * (tests/TestCudaKernelCompile) builds exactly this text without linking a platform.
 */
std::string leastSquaresProgramSource();
std::map<std::string, std::string> leastSquaresProgramDefines(bool storeDouble, bool accDouble);
/** The tiled product alone (kernels/lsqGemm.cc as the kernel "matrixProduct", inputs in the accumulation type), for
 *  the SCF's products of basis-sized matrices (CommonMatrixProducts); compiled with leastSquaresProgramDefines. */
std::string matrixProductProgramSource();

} // namespace OpenMMDFT

#endif
