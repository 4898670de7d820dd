/*
 * Least squares on the CUDA platform (common Compute API kernels) in single, mixed and
 * double precision; the cases and their tolerances are in platforms/common/tests/GpuLeastSquaresTestCases.h.
 * Every test skips cleanly where CUDA cannot run. As in TestCudaQMMMForce, the plugin needs
 * libcuda.so.1, so this program is not linked to it: OpenMM's CUDA platform and then the plugin
 * (OPENMMDFT_CUDA_PLUGIN) are loaded by file at run time (tests/PluginLoading.h).
 */
#include "PluginLoading.h"
#include "../platforms/common/tests/GpuLeastSquaresTestCases.h"
#include "openmm/Platform.h"
#include <memory>

using namespace OpenMM;
using namespace GpuLeastSquaresTest;
using namespace std;

const string& loadCuda() {
    return QMMMTest::loadCudaPluginOnce(QMMMTest::cudaPluginFile());
}

class CudaLeastSquares : public ::testing::TestWithParam<string> {
protected:
    unique_ptr<LeastSquaresSolver> solver;
    void SetUp() override {
        if (!loadCuda().empty())
            GTEST_SKIP() << loadCuda();
        try {
            solver.reset(new LeastSquaresSolver(Platform::getPlatformByName("CUDA"), {{"Precision", GetParam()}}));
        }
        catch (const OpenMMException& e) {
            GTEST_SKIP() << "CUDA in " << GetParam() << " precision unavailable: " << e.what();
        }
    }
};

GPU_LEAST_SQUARES_TESTS(CudaLeastSquares, "CUDA");
