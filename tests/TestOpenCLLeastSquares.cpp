/*
 * Least squares on the OpenCL platform (common Compute API kernels) in single, mixed and
 * double precision; the cases and their tolerances are in platforms/common/tests/GpuLeastSquaresTestCases.h.
 * Skipped (not failed) where no OpenCL device/precision is available.
 */
#include "PluginLoading.h"
#include "../platforms/common/tests/GpuLeastSquaresTestCases.h"
#include "OpenCLQMMMKernelFactory.h"
#include "openmm/Platform.h"
#include <memory>

using namespace OpenMM;
using namespace GpuLeastSquaresTest;
using namespace std;

class OpenCLLeastSquares : public ::testing::TestWithParam<string> {
protected:
    unique_ptr<LeastSquaresSolver> solver;
    void SetUp() override {
        QMMMTest::loadPlatformOnce("libOpenMMOpenCL.so", registerQMMMOpenCLKernelFactories);
        try {
            solver.reset(new LeastSquaresSolver(Platform::getPlatformByName("OpenCL"), {{"Precision", GetParam()}}));
        }
        catch (const OpenMMException& e) {
            GTEST_SKIP() << "OpenCL in " << GetParam() << " precision unavailable: " << e.what();
        }
    }
};

GPU_LEAST_SQUARES_TESTS(OpenCLLeastSquares, "OpenCL");
