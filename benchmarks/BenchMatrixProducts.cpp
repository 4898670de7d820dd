/* The SCF's products of basis-sized matrices on the host (OpenBLAS) against a GPU platform's device (the plugin's
 * CommonMatrixProducts: each product's two matrices go up, the product comes back), on the same machine in one run:
 * the shapes of one SCF iteration for a basis of n functions and n_occ occupied orbitals (24 waters in DZVP: 456/120),
 * each timed alone (median of --repeat runs after one untimed), and the difference of the two results.
 *   BenchMatrixProducts [--platform CUDA|OpenCL] [--sizes 152/40,456/120] [--repeat 7]
 * The device's products are reached through the plugin's factory hook (openmmdft<Platform>XCBackendFactory), the
 * plugin loaded by file as BenchQMRegion loads it. The OpenBLAS thread count is OpenBLAS's own (OPENBLAS_NUM_THREADS).
 * Then the orbital updates of an SCF iteration as chains of products (OrbitalUpdateChains.h): on the host, on the device
 * one product at a time, and on the device with held matrices, with the bytes that cross the bus.
 * On PoCL (OpenCL on the CPU) the device's side runs on the same cores: it shows that the route works, not its speed. */
#include "BasisOccupiedSizes.h"
#include "DeviceFactory.h"
#include "MedianTime.h"
#include "OrbitalUpdateChains.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include "openmmdft/qm/MatrixProducts.h"
#include "openmmdft/qm/XCBackend.h"
#include <algorithm>
#include <cstdio>
#include <functional>
#include <memory>
#include <string>
#include <vector>

using namespace OpenMMDFT::QM;
using BenchTime::medianSeconds;

namespace {

/** One product of an SCF iteration: op(A) op(B) with A m x k (or k x m) and B k x n (or n x k). */
struct Shape {
    const char* what;
    int m, k, n;
    bool transposeA, transposeB;
};

} // namespace

int main(int argc, char** argv) {
    std::string platformName = "CUDA";
    std::vector<std::pair<int, int>> sizes = {{152, 40}, {456, 120}};
    int repeat = 7;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (i + 1 >= argc) {
            std::fprintf(stderr, "%s needs a value\n", a.c_str());
            return 2;
        }
        const std::string value = argv[++i];
        if (a == "--platform")
            platformName = value;
        else if (a == "--repeat")
            repeat = std::max(1, std::stoi(value));
        else if (a == "--sizes") {
            if (!parseBasisOccupiedSizes(value, sizes))
                return 2;
        }
        else {
            std::fprintf(stderr, "unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    BenchDevice::DevicePlatform platform;
    const std::string reason = BenchDevice::openDevicePlatform(platformName, platform);
    if (!reason.empty()) {
        std::printf("BenchMatrixProducts: %s\n", reason.c_str());
        return 1;
    }
    const std::shared_ptr<const XCBackendFactory>& factory = platform.factory;
    const MatrixProducts* device = factory->matrixProducts();
    if (device == nullptr) {
        std::printf("BenchMatrixProducts: the %s plugin gives no device matrix products\n", platformName.c_str());
        return 1;
    }
    std::printf("BenchMatrixProducts: %s (%s), double precision; median of %d runs; device size limit %.1e flops\n",
                platformName.c_str(), platform.deviceName().c_str(),
                repeat, device->minimumFlops());
    std::printf("| basis | occupied | product | m x k x n | host (ms) | device (ms) | host / device | largest difference |\n");
    std::printf("|---|---|---|---|---|---|---|---|\n");
    for (const auto& size : sizes) {
        const int n = size.first, no = size.second, nv = n - no;
        const Shape shapes[] = {{"F C (rotation's F in the orbitals)", n, n, n, false, false},
                                {"C^T (F C)", n, n, n, true, false},
                                {"F Y (the error's, Y = occupied factor)", n, n, no, false, false},
                                {"X^T (F Y)", n, n, no, true, false},
                                {"(X^T F Y)(X^T S Y)^T", n, no, n, false, true},
                                {"Y Y^T (the density)", n, no, n, false, true},
                                {"C_v^T (M C_o) (the response's)", nv, n, no, true, false},
                                {"G_vv t (Riccati step)", nv, nv, no, false, false},
                                {"t^T t", no, nv, no, true, false}};
        double hostTotal = 0, deviceTotal = 0;
        for (const Shape& s : shapes) {
            const Eigen::MatrixXd A = s.transposeA ? Eigen::MatrixXd::Random(s.k, s.m) : Eigen::MatrixXd::Random(s.m, s.k);
            const Eigen::MatrixXd B = s.transposeB ? Eigen::MatrixXd::Random(s.n, s.k) : Eigen::MatrixXd::Random(s.k, s.n);
            Eigen::MatrixXd onHost, onDevice;
            const double host = medianSeconds([&] { onHost = product(A, s.transposeA, B, s.transposeB); }, repeat);
            const double there = medianSeconds([&] { onDevice = device->product(A, s.transposeA, B, s.transposeB); }, repeat);
            hostTotal += host;
            deviceTotal += there;
            std::printf("| %d | %d | %s | %d x %d x %d | %.3f | %.3f | %.2f | %.1e |\n", n, no, s.what, s.m, s.k, s.n, 1e3 * host, 1e3 * there,
                        host / there, (onHost - onDevice).cwiseAbs().maxCoeff());
        }
        std::printf("| %d | %d | all of the above | | %.3f | %.3f | %.2f | |\n", n, no, 1e3 * hostTotal, 1e3 * deviceTotal,
                    hostTotal / deviceTotal);
    }
    std::printf("\nThe orbital updates of one SCF iteration (median of %d; MB crossing the bus per update):\n\n", repeat);
    std::printf("| basis | occupied | products | SCF error from the factor (ms) | MB | block diagonalization and rotation (ms) | MB |"
                " Coulomb response, 2 steps (ms) | MB | largest difference from the host's (orbitals; error relative) |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
    for (const auto& size : sizes)
        OrbitalUpdateBench::printOrbitalUpdates(size.first, size.second, *device, repeat, medianSeconds);
    return 0;
}
