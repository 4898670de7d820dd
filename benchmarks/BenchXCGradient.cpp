/* The XC gradient alone, on the host back end against a GPU platform's device back end, on the same machine in one run:
 * (H2O)n of BenchQMRegion (SVWN5, DZVP, density fitting, grid (50, 194), the converged SCF density of the device
 * engine), each back end's gradient timed with the grid's response (the exact derivative of the moving grid's
 * quadrature, as the forces use it) and on a fixed grid; the difference is the partition-weight derivatives' cost.
 * Median of --repeat runs after one untimed run (which, on the device, makes the gradient's arrays and kernels).
 *   BenchXCGradient [--platform CUDA|OpenCL] [--sizes 4] [--repeat 5] [--partition becke|ssf] [--threads N]
 * The host back end uses --threads threads (0: all); the device's work is queued by one host thread and waited for. On
 * PoCL (OpenCL on the CPU) the device's side runs on the same cores: it shows the cost structure, not a GPU's speed. */
#include "CommaList.h"
#include "DeviceFactory.h"
#include "MedianTime.h"
#include "WaterCluster.h"
#include "openmmdft/internal/AtomicUnits.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include "openmmdft/qm/XCBackend.h"
#include <algorithm>
#include <cstdio>
#include <functional>
#include <random>
#include <string>
#include <vector>

using namespace OpenMMDFT::QM;
using BenchTime::medianSeconds;

namespace {

/** BenchQMRegion's (H2O)n (its random generator's seed, 7), in bohr. */
std::vector<QMAtom> waterClusterAtoms(int n) {
    std::mt19937 rng(7);
    const std::vector<OpenMM::Vec3> positions = BenchWater::waterCluster(n, rng);
    std::vector<QMAtom> atoms;
    for (size_t i = 0; i < positions.size(); i++) {
        QMAtom atom{i % 3 == 0 ? 8 : 1, {0, 0, 0}};
        for (int d = 0; d < 3; d++)
            atom.xyz[d] = positions[i][d] * OpenMMDFT::AtomicUnits::BOHR_PER_NM;
        atoms.push_back(atom);
    }
    return atoms;
}

} // namespace

int main(int argc, char** argv) {
    std::string platformName = "CUDA";
    std::vector<int> sizes = {4};
    int repeat = 5, threads = 0;
    bool ssf = false;
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
        else if (a == "--threads")
            threads = std::max(0, std::stoi(value));
        else if (a == "--partition" && (value == "becke" || value == "ssf"))
            ssf = value == "ssf";
        else if (a == "--sizes") {
            sizes.clear();
            for (const std::string& item : commaSeparated(value))
                sizes.push_back(std::max(1, std::stoi(item)));
        }
        else {
            std::fprintf(stderr, "unknown argument %s %s\n", a.c_str(), value.c_str());
            return 2;
        }
    }
    BenchDevice::DevicePlatform platform;
    const std::string reason = BenchDevice::openDevicePlatform(platformName, platform);
    if (!reason.empty()) {
        std::printf("BenchXCGradient: %s\n", reason.c_str());
        return 1;
    }
    std::printf("BenchXCGradient: %s (%s), double precision; (H2O)n, SVWN5/DZVP/def2-universal-jfit, grid (50, 194), %s "
                "partition; median of %d runs; host threads %d (0: all)\n",
                platformName.c_str(), platform.deviceName().c_str(), ssf ? "SSF" : "Becke", repeat, threads);
    std::printf("| n | points | host: moving grid (s) | host: fixed grid (s) | device: moving grid (s) | device: fixed grid (s) | "
                "partition derivatives: host (s) | device (s) | host / device | largest difference (Eh/bohr) |\n");
    std::printf("|---|---|---|---|---|---|---|---|---|---|\n");
    HostXCBackendFactory hostFactory;
    for (int n : sizes) {
        QMSettings s;
        s.basisSet = "DZVP";
        s.auxiliaryBasisSet = "def2-universal-jfit";
        s.grid.radialPoints = 50;
        s.grid.angularPoints = 194;
        if (ssf)
            s.grid.partition = AtomicPartition::StratmannScuseriaFrisch;
        s.convergence = 1e-8;
        s.threads = threads;
        const std::vector<QMAtom> atoms = waterClusterAtoms(n);
        KohnShamLDA engine(s, platform.factory);
        const QMResult result = engine.compute(atoms, 0, {});
        const Eigen::MatrixXd& D = result.density;
        const XCGeometry geometry{engine.basis(), engine.grid(), atoms, s};
        const std::unique_ptr<XCBackend> host = hostFactory.create(geometry), device = platform.factory->create(geometry);
        Eigen::MatrixXd hostGradient, deviceGradient;
        auto timed = [&](XCBackend& xc, bool moving, Eigen::MatrixXd& gradient) {
            return medianSeconds([&] { gradient = xc.startGradient(D, moving)->finish(); }, repeat);
        };
        const double hostMoving = timed(*host, true, hostGradient), deviceMoving = timed(*device, true, deviceGradient);
        const double difference = (deviceGradient - hostGradient).cwiseAbs().maxCoeff();
        Eigen::MatrixXd fixedGradient;
        const double hostFixed = timed(*host, false, fixedGradient), deviceFixed = timed(*device, false, fixedGradient);
        const double hostPartition = hostMoving - hostFixed, devicePartition = deviceMoving - deviceFixed;
        std::printf("| %d | %d | %.4f | %.4f | %.4f | %.4f | %.4f | %.4f | %.2f | %.1e |\n", n, (int) result.gridPoints, hostMoving, hostFixed,
                    deviceMoving, deviceFixed, hostPartition, devicePartition, hostPartition / devicePartition, difference);
        std::fflush(stdout);
    }
    return 0;
}
