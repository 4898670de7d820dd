/**
 * SCF iterations per MD step for the starting guesses of the QM engine, along a smooth trajectory: a QM water
 * whose atoms oscillate (amplitudes 0.01-0.06 bohr, periods 9-25 fs, like its stretches and bends) among 20 MM
 * charges that drift slowly, 0.5 fs steps, SVWN5/DZVP/DF, grid (50, 194), SCF convergence 1e-8. Guesses: the
 * previous density, ASPC (Kolafa's coefficients, DensityExtrapolation::aspcCoefficients) and plain Lagrange
 * extrapolation through order + 1 past densities (not time-reversible; for comparison). Per step it prints the
 * iterations and the first orbital-gradient errors (the largest element of FDS - SDF per iteration), then the mean
 * over steps 8 onwards, so that the guess's error and the SCF's rate of convergence can be told apart.
 *
 *   BenchSCFGuess [--steps 40] [--orders 3,5,7]
 */
#include "DensityExtrapolation.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace OpenMMDFT;
using namespace OpenMMDFT::QM;

namespace {

/** The QM water and the MM charges at time t (fs), bohr. */
void frame(double t, std::vector<QMAtom>& atoms, std::vector<PointCharge>& charges) {
    atoms = {{8, {0, 0, 0.2217}}, {1, {0, 1.4309, -0.8867}}, {1, {0, -1.4309, -0.8867}}};
    const double amplitude[3][3] = {{0.01, 0.012, 0.02}, {0.05, 0.06, 0.04}, {0.045, 0.05, 0.06}};
    const double period[3][3] = {{20, 25, 18}, {9.1, 9.5, 11}, {9.3, 10.2, 12}};
    for (int i = 0; i < 3; i++)
        for (int d = 0; d < 3; d++)
            atoms[i].xyz[d] += amplitude[i][d] * std::sin(2 * M_PI * t / period[i][d] + i + d);
    charges.clear();
    std::mt19937 rng(3);
    std::normal_distribution<double> normal;
    for (int k = 0; k < 20; k++) {
        double u[3] = {normal(rng), normal(rng), normal(rng)};
        const double norm = std::sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]), radius = 6 + (k % 5);
        PointCharge c;
        for (int d = 0; d < 3; d++)
            c.xyz[d] = u[d] / norm * radius + 0.1 * std::sin(2 * M_PI * t / (40 + k) + d);
        c.charge = (k % 3 == 0 ? -0.834 : 0.417);
        charges.push_back(c);
    }
}

/** Lagrange extrapolation to t = 0 through the densities at t = -1, -2, ... (newest first). */
Eigen::MatrixXd lagrange(const std::deque<Eigen::MatrixXd>& past, int points) {
    Eigen::MatrixXd guess = Eigen::MatrixXd::Zero(past[0].rows(), past[0].cols());
    for (int i = 0; i < points; i++) {
        double c = 1;
        for (int j = 0; j < points; j++)
            if (j != i)
                c *= (j + 1.0) / (j - i);
        guess += c * past[i];
    }
    return guess;
}

double run(const std::string& method, int order, int steps, bool verbose, int recycle) {
    QMSettings s;
    s.basisSet = "DZVP";
    s.grid.radialPoints = 50;
    s.grid.angularPoints = 194;
    s.convergence = 1e-8;
    s.recycledSubspace = recycle;
    KohnShamLDA engine(s);
    std::deque<Eigen::MatrixXd> past;  // newest first
    DensityGuess last;
    double total = 0;
    int counted = 0;
    for (int step = 0; step < steps; step++) {
        std::vector<QMAtom> atoms;
        std::vector<PointCharge> charges;
        frame(0.5 * step, atoms, charges);
        std::unique_ptr<DensityGuess> guess;
        if (!past.empty()) {
            guess.reset(new DensityGuess);
            const int points = std::min((int) past.size(), order + 1);
            if (method == "previous")
                guess->density = past[0];
            else if (method == "ASPC") {
                const std::vector<double> B = DensityExtrapolation::aspcCoefficients(points);
                guess->density = Eigen::MatrixXd::Zero(past[0].rows(), past[0].cols());
                for (int i = 0; i < points; i++)
                    guess->density += B[i] * past[i];
            }
            else
                guess->density = lagrange(past, points);
        }
        if (guess) { // the SCF subspace of the previous steps (empty when recycling is off)
            guess->fockChanges = last.fockChanges;
            guess->errorChanges = last.errorChanges;
            guess->coulombChanges = last.coulombChanges;
        }
        const QMResult r = engine.compute(atoms, 0, charges, guess.get());
        last = r.guess();
        past.push_front(r.density);
        if (past.size() > 9)
            past.pop_back();
        if (step >= 8) {
            total += r.iterations;
            counted++;
        }
        if (verbose) {
            printf("  step %2d: %2d iterations, errors", step, r.iterations);
            for (size_t k = 0; k < r.errorHistory.size() && k < 6; k++)
                printf(" %.1e", r.errorHistory[k]);
            printf("\n");
        }
    }
    return total / counted;
}

} // namespace

int main(int argc, char* argv[]) {
    int steps = 40;
    std::string orders = "3,5,7";
    bool verbose = false;
    int recycled = QMSettings().recycledSubspace;
    for (int i = 1; i < argc; i++) {
        const std::string a = argv[i];
        if (a == "--steps" && i + 1 < argc)
            steps = std::max(10, atoi(argv[++i]));
        else if (a == "--orders" && i + 1 < argc)
            orders = argv[++i];
        else if (a == "--recycle" && i + 1 < argc)
            recycled = atoi(argv[++i]);
        else if (a == "--verbose")
            verbose = true;
        else {
            fprintf(stderr, "unknown argument %s\n", a.c_str());
            return 2;
        }
    }
    printf("BenchSCFGuess: QM water among 20 MM charges, SVWN5/DZVP/DF, (50, 194), SCF 1e-8, 0.5 fs, %d steps\n", steps);
    printf("| guess | order | recycled DIIS pairs | SCF iterations per step (steps 8 on) |\n|---|---|---|---|\n");
    for (int recycle : {0, recycled}) {
        printf("| previous density | - | %d | %.2f |\n", recycle, run("previous", 0, steps, verbose, recycle));
        std::stringstream list(orders);
        std::string item;
        while (std::getline(list, item, ','))
            for (const char* method : {"ASPC", "Lagrange"})
                printf("| %s | %s | %d | %.2f |\n", method, item.c_str(), recycle,
                       run(method, atoi(item.c_str()), steps, verbose, recycle));
    }
    return 0;
}
