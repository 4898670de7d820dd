/* QM/MM MD step cost of QMMMForce on every platform present, in one run on one machine: the C++ twin of
 * bench_qm_platforms.py, for machines where the Python module cannot be loaded (the device tool's GPU
 * machines run another Python than the one the wrapper was built for).
 *
 * System: (H2O)n on a cubic lattice (2.9 Å spacing, random orientations) as the QM region (SVWN5, DZVP,
 * density fitting with def2-universal-jfit, grid (50, 194), SCF convergence 1e-8), inside a shell of rigid
 * MM TIP3P waters from 3.5 Å outside the cluster (a shell 4.5 Å thick, thicker for more than ~60 waters),
 * no cutoff; velocity Verlet at 0.5 fs, each step starting its SCF from the QMMMForce's default guess (ASPC
 * of the previous steps' densities). Per platform: seconds per MD step (after --warmup untimed steps: the first
 * builds the SAD guess and compiles the kernels, the others fill the density history), SCF iterations per step, seconds per SCF iteration (step
 * time over iterations, gradient included), where the XC work ran, the basis values kept, and the ratio of
 * the first platform's step time to this one's (> 1: faster than the first).
 *
 *   BenchQMRegion [--sizes 1,4,8] [--steps 3] [--warmup 1] [--mm-waters 60] [--platforms CPU,CUDA:double,CUDA:mixed]
 *                 [--storage precompute|recompute] [--basis DZVP] [--pruning none|nwchem] [--partition becke|ssf]
 *                 [--coulomb-response N] [--markdown file]
 *
 * --pruning nwchem: NWChem's pruned angular grids (QMMMForce.setGridPruning; PySCF's default grid pruning).
 * --partition ssf: Stratmann, Scuseria and Frisch's atomic partition (QMMMForce.setAtomicPartition) instead of the
 *   default, Becke's.
 * --coulomb-response N: the SCF's Coulomb-response steps (QMMMForce.setCoulombResponseSteps; 0: off; default: the
 *   Force's default).
 */
#include "../tests/PluginLoading.h"
#include "CommaList.h"
#include "WaterCluster.h"
#include "openmmdft/QMMMForce.h"
#include "openmm/Context.h"
#include "openmm/OpenMMException.h"
#include "openmm/Platform.h"
#include "openmm/State.h"
#include "openmm/System.h"
#include "openmm/VerletIntegrator.h"
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstdio>
#include <fstream>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

extern "C" void registerQMMMReferenceKernelFactories();

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace BenchWater;
using namespace std;

namespace {

const double TIP3P_GEOMETRY[3][3] = {{0.0, 0.0, 0.0}, {0.075695, 0.058588, 0.0}, {-0.075695, 0.058588, 0.0}};
const double TIP3P_CHARGES[3] = {-0.834, 0.417, 0.417};

/** The QMMMForce's settings that the command line chooses (the rest are the benchmark's fixed ones). */
struct Options {
    int mmWaters = 60;
    bool recompute = false;
    string basis = "DZVP";
    bool pruned = false;
    bool ssf = false;
    int coulombResponse = -1;  // the Force's default
};

struct Benchmark {
    System system;
    QMMMForce* force;
    vector<Vec3> positions;
};

/** (H2O)n as the QM region in a shell of options.mmWaters rigid MM TIP3P waters (deterministic for given n). */
Benchmark* buildSystem(int n, const Options& options) {
    const int mmWaters = options.mmWaters;
    Benchmark* b = new Benchmark();
    b->force = new QMMMForce();
    mt19937 rng(7);
    vector<Vec3> oxygens;
    b->positions = waterCluster(n, rng);
    for (int k = 0; k < n; k++) {
        const int first = b->system.getNumParticles();
        for (int atom = 0; atom < 3; atom++) {
            b->system.addParticle(atom == 0 ? 15.999 : 1.008);
            b->force->addParticle(0.0);
            b->force->addQMAtom(first + atom, atom == 0 ? 8 : 1);
        }
        b->force->addBond(first, first + 1);
        b->force->addBond(first, first + 2);
        oxygens.push_back(b->positions[first]);
    }
    Vec3 centre;
    for (const Vec3& p : b->positions)
        centre += p / (double) b->positions.size();
    double radius = 0;
    for (const Vec3& p : b->positions)
        radius = max(radius, sqrt((p - centre).dot(p - centre)));
    normal_distribution<double> normal;
    // Beyond 60 MM waters the shell grows with their number (about liquid density), so any number fits.
    const double outer = cbrt(pow(radius + 0.35, 3) + mmWaters * 0.03 * 3 / (4 * M_PI) * 1.6);
    uniform_real_distribution<double> shellRadius(radius + 0.35, mmWaters > 60 ? max(radius + 0.8, outer) : radius + 0.8);
    for (int placed = 0; placed < mmWaters;) {
        Vec3 direction(normal(rng), normal(rng), normal(rng));
        direction /= sqrt(direction.dot(direction));
        const Vec3 o = centre + direction * shellRadius(rng);
        bool clash = false;
        for (const Vec3& other : oxygens)
            clash = clash || sqrt((o - other).dot(o - other)) < 0.28;
        if (clash)
            continue;
        double R[3][3];
        randomRotation(rng, R);
        const int first = b->system.getNumParticles();
        for (int atom = 0; atom < 3; atom++) {
            b->system.addParticle(atom == 0 ? 15.999 : 1.008);
            b->force->addParticle(TIP3P_CHARGES[atom]);
            b->positions.push_back(o + rotated(R, TIP3P_GEOMETRY[atom]));
        }
        b->force->addBond(first, first + 1);
        b->force->addBond(first, first + 2);
        // Rigid TIP3P: the benchmark times the QM part, and rigid MM waters need no bonded terms.
        b->system.addConstraint(first, first + 1, 0.09572);
        b->system.addConstraint(first, first + 2, 0.09572);
        b->system.addConstraint(first + 1, first + 2, 0.15139);
        oxygens.push_back(o);
        placed++;
    }
    b->force->setBasisSet(options.basis);
    b->force->setAuxiliaryBasisSet("def2-universal-jfit");
    b->force->setGrid(50, 194);
    b->force->setSCFConvergence(1e-8);
    if (options.recompute)
        b->force->setBasisFunctionStorage(QMMMForce::Recompute);
    if (options.pruned)
        b->force->setGridPruning(QMMMForce::NWChemPruning);
    if (options.ssf)
        b->force->setAtomicPartition(QMMMForce::StratmannScuseriaFrisch);
    if (options.coulombResponse >= 0)
        b->force->setCoulombResponseSteps(options.coulombResponse);
    b->system.addForce(b->force);
    return b;
}

struct Row {
    int n;
    string platform, precision;
    double firstStep, perStep, iterations;
    string backend;
    double storedMiB;
    string error;
    map<string, double> timings;  // of the last timed step
    int recycledPairs = 0;        // DIIS's recycled combinations in the last timed step (its steady state: up to 96)
    string scfProducts;           // where the SCF's products of basis-sized matrices ran, and the memory they hold there
    double scfProductMiB = 0;
};

Row measure(int n, const Options& options, const string& platformName, const string& precision, int steps, int warmup) {
    Row row{n, platformName, precision, 0, 0, 0, "", 0, ""};
    unique_ptr<Benchmark> b(buildSystem(n, options));
    try {
        Platform& platform = Platform::getPlatformByName(platformName);
        map<string, string> properties;
        if (!precision.empty())
            properties["Precision"] = precision;
        VerletIntegrator integrator(0.0005);
        Context context(b->system, integrator, platform, properties);
        context.setPositions(b->positions);
        typedef chrono::steady_clock Clock;
        auto start = Clock::now();
        // The first QM evaluation (SAD guess, kernel compilation): setting velocities evaluates the forces, and the
        // first step reuses that evaluation (same positions).
        context.setVelocitiesToTemperature(300, 1);
        integrator.step(1);
        row.firstStep = chrono::duration<double>(Clock::now() - start).count();
        // Untimed steps that fill the density history, so that the timed ones see the extrapolation's steady state.
        integrator.step(warmup - 1);
        int iterations = 0;
        start = Clock::now();
        for (int i = 0; i < steps; i++) {
            integrator.step(1);
            iterations += b->force->getQMResults(context).scfIterations;
        }
        row.perStep = chrono::duration<double>(Clock::now() - start).count() / steps;
        row.iterations = iterations / (double) steps;
        const QMResults results = b->force->getQMResults(context);
        row.backend = results.xcBackend;
        row.storedMiB = results.basisValueBytes / 1048576.0;
        row.timings = results.timings;
        row.recycledPairs = results.recycledDIISPairs;
        row.scfProducts = results.scfProducts;
        row.scfProductMiB = results.scfProductBytes / 1048576.0;
    }
    catch (const exception& e) {
        row.error = e.what();
        fprintf(stderr, "n = %d, %s %s: %s\n", n, platformName.c_str(), precision.c_str(), e.what());  // whole, for diagnosis
        row.error = row.error.substr(0, row.error.find('\n')).substr(0, 100);
    }
    return row;
}

} // namespace

int main(int argc, char* argv[]) {
    string sizes = "1,4,8", platforms = "CPU,CUDA:double,CUDA:mixed", markdown;
    int steps = 3, warmup = 1;
    Options options;
    for (int i = 1; i < argc; i++) {
        const string a = argv[i];
        if (a == "--sizes" && i + 1 < argc)
            sizes = argv[++i];
        else if (a == "--platforms" && i + 1 < argc)
            platforms = argv[++i];
        else if (a == "--steps" && i + 1 < argc)
            steps = max(1, atoi(argv[++i]));
        else if (a == "--warmup" && i + 1 < argc)
            warmup = max(1, atoi(argv[++i]));
        else if (a == "--mm-waters" && i + 1 < argc)
            options.mmWaters = max(0, atoi(argv[++i]));
        else if (a == "--storage" && i + 1 < argc)
            options.recompute = string(argv[++i]) == "recompute";
        else if (a == "--markdown" && i + 1 < argc)
            markdown = argv[++i];
        else if (a == "--basis" && i + 1 < argc)
            options.basis = argv[++i];
        else if (a == "--pruning" && i + 1 < argc && (string(argv[i + 1]) == "none" || string(argv[i + 1]) == "nwchem"))
            options.pruned = string(argv[++i]) == "nwchem";
        else if (a == "--partition" && i + 1 < argc && (string(argv[i + 1]) == "becke" || string(argv[i + 1]) == "ssf"))
            options.ssf = string(argv[++i]) == "ssf";
        else if (a == "--coulomb-response" && i + 1 < argc)
            options.coulombResponse = max(0, atoi(argv[++i]));
        else {
            fprintf(stderr, "unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    // OpenMM's platform plugins and this build's GPU plugins are loaded by file (no installed copy of openmm-dft
    // is picked up; see loadPluginsByFile), the Reference/CPU kernels linked in.
    QMMMTest::loadOpenMMPluginIfPresent("libOpenMMCPU.so");
    registerQMMMReferenceKernelFactories();  // after the CPU platform exists, so that it gets the kernels too
    const char* gpuPlatforms[][3] = {{"OpenCL", "libOpenMMOpenCL.so", OPENMMDFT_OPENCL_PLUGIN},
                                     {"CUDA", "libOpenMMCUDA.so", OPENMMDFT_CUDA_PLUGIN}};
    for (auto& gpu : gpuPlatforms) {
        if (platforms.find(gpu[0]) == string::npos || gpu[2][0] == '\0')
            continue;
        const string variable = string("OPENMMDFT_") + (gpu[0][0] == 'O' ? "OPENCL" : "CUDA") + "_PLUGIN_FILE";
        const string reason = QMMMTest::loadPluginsByFile(gpu[1], gpu[2], variable.c_str());
        if (!reason.empty())
            printf("%s platform unavailable: %s\n", gpu[0], reason.c_str());
    }
    const string response = options.coulombResponse < 0 ? "default" : to_string(options.coulombResponse);
    printf("BenchQMRegion: (H2O)n QM in %d MM TIP3P waters, SVWN5/%s/def2-universal-jfit, grid (50,194)%s, %s partition, %s, "
           "Coulomb-response steps %s, %d untimed and %d timed steps; %u hardware threads\n", options.mmWaters, options.basis.c_str(),
           options.pruned ? " NWChem-pruned" : "", options.ssf ? "SSF" : "Becke", options.recompute ? "Recompute" : "Precompute",
           response.c_str(), warmup, steps, thread::hardware_concurrency());
    const char* header = "| n | platform | precision | first step (s) | s per step | SCF iter per step | s per SCF iter | XC | basis MiB | first platform / this |";
    printf("%s\n", header);
    vector<string> table{header, "|---|---|---|---|---|---|---|---|---|---|"}, phaseLines;
    for (const string& size : commaSeparated(sizes)) {
        const int n = atoi(size.c_str());
        double firstTime = 0;
        for (const string& entry : commaSeparated(platforms)) {
            const size_t colon = entry.find(':');
            const string name = entry.substr(0, colon), precision = colon == string::npos ? "" : entry.substr(colon + 1);
            Row row = measure(n, options, name, precision, steps, warmup);
            char line[512];
            if (!row.error.empty())
                snprintf(line, sizeof(line), "| %d | %s | %s | unavailable: %s |", n, name.c_str(), precision.c_str(), row.error.c_str());
            else {
                if (firstTime == 0)
                    firstTime = row.perStep;
                snprintf(line, sizeof(line), "| %d | %s | %s | %.3f | %.4f | %.1f | %.5f | %s | %.1f | %.2f |", n, name.c_str(),
                         precision.empty() ? "-" : precision.c_str(), row.firstStep, row.perStep, row.iterations,
                         row.perStep / row.iterations, row.backend.c_str(), row.storedMiB, firstTime / row.perStep);
            }
            printf("%s\n", line);
            table.push_back(line);
            if (row.error.empty()) {
                // Where the last step's time went (QMResults::timings), for finding what to move to the device next.
                string phases = "    phases of the last step (s):";
                for (const auto& phase : row.timings)
                    if (phase.second >= 0.0005)
                        phases += " " + phase.first + "=" + to_string(phase.second).substr(0, 6);
                phases += " (recycled DIIS pairs: " + to_string(row.recycledPairs) + "; SCF products: " + row.scfProducts +
                          (row.scfProducts == "device" ? ", " + to_string(row.scfProductMiB).substr(0, 6) + " MiB there" : "") + ")";
                printf("%s\n", phases.c_str());
                phaseLines.push_back("- n = " + to_string(n) + ", " + entry + ":" + phases.substr(phases.find(':') + 1));
            }
            fflush(stdout);
        }
    }
    if (!markdown.empty()) {
        ofstream out(markdown);
        for (const string& line : table)
            out << line << "\n";
        out << "\nPhases of the last timed step (QMResults::timings, seconds):\n\n";
        for (const string& line : phaseLines)
            out << line << "\n";
    }
    return 0;
}
