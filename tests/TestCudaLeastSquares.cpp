/*
 * Least squares (issue 4) on the CUDA platform (common Compute API kernels) in single, mixed and
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

TEST_P(CudaLeastSquares, AllMethodsAgainstDgelsd) { testAgainstDgelsd(*solver, "CUDA", GetParam(), smallCases()); }
TEST_P(CudaLeastSquares, Large5000x1000AgainstDgelsd) { testAgainstDgelsd(*solver, "CUDA", GetParam(), largeCases()); }
TEST_P(CudaLeastSquares, GaussSeidel) { testGaussSeidel(*solver, GetParam()); }
TEST_P(CudaLeastSquares, ConstrainedAgainstDgglse) { testConstrained(*solver, GetParam()); }
TEST_P(CudaLeastSquares, GivenNormalEquations) { testGivenNormalEquations(*solver, GetParam()); }
TEST_P(CudaLeastSquares, InverseOfGivenMatrix) { testManyRightHandSides(*solver, GetParam()); }
TEST_P(CudaLeastSquares, ErrorsAndUnsupported) { testErrors(*solver); }

INSTANTIATE_TEST_SUITE_P(Precisions, CudaLeastSquares, ::testing::Values("single", "mixed", "double"),
                         [](const ::testing::TestParamInfo<string>& info) { return info.param; });
