/* The Gram matrix of DIIS's recycled error changes at the start of an MD step's SCF: formed from scratch (every pair
 * with every other, streamedGram) against grown from the last step's (the new pairs' products with all, the rest
 * kept: streamedCrossGram), on the same machine in one run, with the largest difference of the two.
 *   BenchRecycledGram [--basis 456] [--pairs 96] [--new 4] [--threads 2] [--repeat 5]
 * 456 functions are 24 waters in DZVP; 96 pairs is the default QMSettings::recycledSubspace (reached after about 24
 * MD steps of 4 SCF iterations), 4 new pairs per step. */
#include "openmmdft/qm/DenseAlgebra.h"
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

using namespace OpenMMDFT::QM;

namespace {
double seconds() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

double median(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}
} // namespace

int main(int argc, char** argv) {
    int basis = 456, pairs = 96, fresh = 4, threads = 2, repeat = 5;
    for (int i = 1; i + 1 < argc; i += 2) {
        int* target = !std::strcmp(argv[i], "--basis") ? &basis : !std::strcmp(argv[i], "--pairs") ? &pairs
                    : !std::strcmp(argv[i], "--new") ? &fresh : !std::strcmp(argv[i], "--threads") ? &threads
                    : !std::strcmp(argv[i], "--repeat") ? &repeat : nullptr;
        if (target == nullptr) {
            std::fprintf(stderr, "unknown option %s\n", argv[i]);
            return 1;
        }
        *target = std::atoi(argv[i + 1]);
    }
    if (basis < 1 || pairs < 1 || fresh < 1 || fresh > pairs || threads < 1 || repeat < 1) {
        std::fprintf(stderr, "BenchRecycledGram: sizes must be positive and --new at most --pairs\n");
        return 1;
    }
    std::mt19937 rng(7);
    std::normal_distribution<double> normal;
    std::vector<Eigen::MatrixXd> store(pairs, Eigen::MatrixXd(basis, basis));
    for (Eigen::MatrixXd& m : store)
        for (Eigen::Index i = 0; i < m.size(); i++)
            m.data()[i] = normal(rng);
    MatrixList all, newest;
    for (const Eigen::MatrixXd& m : store)
        all.push_back(&m);
    newest.assign(all.begin(), all.begin() + fresh);
    // The last step's Gram matrix of the pairs that stay (all but the new ones), kept as the SCF keeps it.
    const MatrixList kept(all.begin() + fresh, all.end());
    const Eigen::MatrixXd keptGram = streamedGram(kept, threads);
    std::vector<double> scratch, grown;
    Eigen::MatrixXd fromScratch, fromGrowth;
    for (int r = 0; r < repeat; r++) {
        double t = seconds();
        fromScratch = streamedGram(all, threads);
        scratch.push_back(seconds() - t);
        t = seconds();
        const Eigen::MatrixXd cross = streamedCrossGram(newest, all, threads);
        fromGrowth.resize(pairs, pairs);
        fromGrowth.topRows(fresh) = cross;
        fromGrowth.leftCols(fresh) = cross.transpose();
        fromGrowth.bottomRightCorner(pairs - fresh, pairs - fresh) = keptGram;
        grown.push_back(seconds() - t);
    }
    const double difference = (fromScratch - fromGrowth).cwiseAbs().maxCoeff() / fromScratch.cwiseAbs().maxCoeff();
    std::printf("recycled pairs' Gram matrix, %d pairs of %d x %d, %d new, %d threads (median of %d):\n", pairs, basis,
                basis, fresh, threads, repeat);
    std::printf("| from scratch (ms) | grown (ms) | ratio | largest difference (relative) |\n|---|---|---|---|\n");
    std::printf("| %.2f | %.2f | %.1f | %.1e |\n", 1e3 * median(scratch), 1e3 * median(grown), median(scratch) / median(grown),
                difference);
    return 0;
}
