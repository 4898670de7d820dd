/* The device XC back end's cases (GpuXCBackendTestCases.h, GpuMatrixProductTestCases.h) as one list of GoogleTest
 * tests for every GPU platform: GPU_XC_BACKEND_TESTS(Platform, Factory, inverseOnDevice) defines
 * PlatformDensityFitting.DeviceIntegralsMatchLibint, PlatformMatrixProducts.*, PlatformFinalOrbitals.*,
 * PlatformPointCharges.* and Cases/PlatformXCBackend.MatchesTheHostThroughTheEngine/*. Factory is a type whose default constructor makes the
 * platform's double-precision Context and sets `factory` (the XC back end factory) or `reason` (why there is none:
 * the test skips); inverseOnDevice says whether the factory inverts the metric on the device (CUDA's cuSOLVER). */
#pragma once
#include "GpuXCBackendTestCases.h"
#include "GpuMatrixProductTestCases.h"
#include <gtest/gtest.h>

/** One test of the list: the platform's factory made, the case run on it or skipped with the reason. */
#define GPU_XC_BACKEND_TEST(Suite, Name, Factory, call) \
    TEST(Suite, Name) {                                   \
        Factory device;                                   \
        if (!device.reason.empty())                       \
            GTEST_SKIP() << device.reason;                \
        call;                                             \
    }

#define GPU_XC_BACKEND_TESTS(Platform, Factory, inverseOnDevice)                                                           \
    GPU_XC_BACKEND_TEST(Platform##DensityFitting, DeviceIntegralsMatchLibint, Factory,                                    \
                        GpuXCTest::testDeviceDensityFittingCases(device.factory))                                          \
    GPU_XC_BACKEND_TEST(Platform##MatrixProducts, DeviceProductsMatchHost, Factory,                                       \
                        GpuXCTest::testDeviceMatrixProductsMatchHost(device.factory))                                      \
    GPU_XC_BACKEND_TEST(Platform##MatrixProducts, HeldMatricesMatchHost, Factory,                                         \
                        GpuXCTest::testDeviceHeldMatricesMatchHost(device.factory))                                        \
    GPU_XC_BACKEND_TEST(Platform##MatrixProducts, SCFWithDeviceProductsMatchesHost, Factory,                              \
                        GpuXCTest::testDeviceSCFProductsMatchHost(device.factory))                                         \
    GPU_XC_BACKEND_TEST(Platform##MatrixProducts, MetricInverse, Factory,                                                 \
                        GpuXCTest::testDeviceMetricInverse(device.factory, inverseOnDevice))                               \
    GPU_XC_BACKEND_TEST(Platform##FinalOrbitals, MadeBesideTheGradient, Factory,                                          \
                        GpuXCTest::testDeviceFinalOrbitalsBesideTheGradient(device.factory))                               \
    GPU_XC_BACKEND_TEST(Platform##PointCharges, DeviceMatrixAndGradientMatchHost, Factory,                                \
                        GpuXCTest::testDevicePointChargeCases(device.factory))                                             \
    class Platform##XCBackend : public ::testing::TestWithParam<GpuXCTest::Case> {};                                      \
    TEST_P(Platform##XCBackend, MatchesTheHostThroughTheEngine) {                                                         \
        Factory device;                                                                                                    \
        if (!device.reason.empty())                                                                                        \
            GTEST_SKIP() << device.reason;                                                                                 \
        GpuXCTest::testDeviceXCMatchesHost(device.factory, GetParam());                                                    \
    }                                                                                                                      \
    INSTANTIATE_TEST_SUITE_P(Cases, Platform##XCBackend, ::testing::ValuesIn(GpuXCTest::allCases()))
