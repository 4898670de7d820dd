/* DIIS's recycled pairs (error, Fock and Coulomb changes of the last MD steps' SCFs) on the same machine in one run,
 * each with the largest difference of the two ways:
 * - their Gram matrix at the start of an MD step's SCF: formed from scratch (every pair with every other,
 *   streamedGram) against grown from the last step's (the new pairs' products with all, the rest kept:
 *   streamedCrossGram), both on packed pairs;
 * - an SCF iteration's products with them (the new error's dots with the error changes, the Fock and Coulomb changes
 *   combined): whole matrices against packed by their upper triangles (packAntisymmetric, packSymmetric: the errors
 *   are antisymmetric, F and J symmetric), the packing of the error and the unpacking of the sums included; and
 *   packed in double against packed in single precision, as the SCF keeps them (packedPair: half the bytes to read).
 *   BenchRecycledPairs [--basis 456] [--pairs 96] [--new 4] [--threads 2] [--repeat 5]
 * 456 functions are 24 waters in DZVP; 96 pairs is the default QMSettings::recycledSubspace (reached after about 24
 * MD steps of 4 SCF iterations), 4 new pairs per step. */
#include "MedianTime.h"
#include "openmmdft/qm/DenseAlgebra.h"
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

using namespace OpenMMDFT::QM;

using BenchTime::median;
using BenchTime::seconds;

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
    auto randomMatrix = [&](int sign) {  // sign 1: symmetric, -1: antisymmetric
        Eigen::MatrixXd m(basis, basis);
        for (Eigen::Index i = 0; i < m.size(); i++)
            m.data()[i] = normal(rng);
        return Eigen::MatrixXd(m + sign * m.transpose());
    };
    // Whole matrices, and the same packed (as the SCF keeps them).
    std::vector<Eigen::MatrixXd> errorsWhole, focksWhole, coulombsWhole, errorsPacked, focks, coulombs;
    for (int j = 0; j < pairs; j++) {
        errorsWhole.push_back(randomMatrix(-1));
        focksWhole.push_back(randomMatrix(1));
        coulombsWhole.push_back(randomMatrix(1));
        errorsPacked.push_back(packAntisymmetric(errorsWhole.back()));
        focks.push_back(packSymmetric(focksWhole.back()));
        coulombs.push_back(packSymmetric(coulombsWhole.back()));
    }
    MatrixList all, newest;
    for (const Eigen::MatrixXd& m : errorsPacked)
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

    // One SCF iteration's products with the pairs (DIIS::extrapolate's with the recycled pairs).
    auto list = [](const std::vector<Eigen::MatrixXd>& matrices) {
        MatrixList l;
        for (const Eigen::MatrixXd& m : matrices)
            l.push_back(&m);
        return l;
    };
    const MatrixList errorsWholeList = list(errorsWhole), focksWholeList = list(focksWhole),
                     coulombsWholeList = list(coulombsWhole), fockList = list(focks), coulombList = list(coulombs);
    const Eigen::MatrixXd error = randomMatrix(-1), fock = randomMatrix(1);
    Eigen::VectorXd weights(pairs);
    for (int j = 0; j < pairs; j++)
        weights[j] = normal(rng);
    // The packed pairs' products of one iteration (in double or single precision), the packing of the error and the
    // unpacking of the sums included: its seconds; dots and the combined Fock matrix into the last two.
    auto packedIteration = [&](const auto& errorTerms, const auto& fockTerms, const auto& coulombTerms, Eigen::VectorXd& dots,
                               Eigen::MatrixXd& fockSum) {
        const double t = seconds();
        dots = streamedDots(errorTerms, packAntisymmetric(error), threads);
        fockSum = fock;
        Eigen::MatrixXd coulombSum = fock;
        for (auto target : {std::make_pair(&fockTerms, &fockSum), std::make_pair(&coulombTerms, &coulombSum)}) {
            Eigen::VectorXd sum = Eigen::VectorXd::Zero(packedSymmetricSize(basis));
            addStreamedCombination(*target.first, weights, sum, threads);
            addUnpackedSymmetric(sum, *target.second);
        }
        return seconds() - t;
    };
    std::vector<double> whole, packed;
    Eigen::VectorXd dotsWhole, dotsPacked;
    Eigen::MatrixXd fockWhole, fockPacked;
    for (int r = 0; r < repeat; r++) {
        double t = seconds();
        dotsWhole = streamedDots(errorsWholeList, Eigen::Map<const Eigen::VectorXd>(error.data(), error.size()), threads);
        fockWhole = fock;
        Eigen::MatrixXd coulombWhole = fock;
        addStreamedCombination(focksWholeList, weights, Eigen::Map<Eigen::VectorXd>(fockWhole.data(), fockWhole.size()), threads);
        addStreamedCombination(coulombsWholeList, weights, Eigen::Map<Eigen::VectorXd>(coulombWhole.data(), coulombWhole.size()),
                               threads);
        whole.push_back(seconds() - t);
        packed.push_back(packedIteration(all, fockList, coulombList, dotsPacked, fockPacked));
    }
    // The same products with the pairs in single precision (the products accumulate in double).
    std::vector<SharedPair> errorsSingle, focksSingle, coulombsSingle;
    for (int j = 0; j < pairs; j++) {
        errorsSingle.push_back(packedPair(errorsPacked[j]));
        focksSingle.push_back(packedPair(focks[j]));
        coulombsSingle.push_back(packedPair(coulombs[j]));
    }
    auto pairList = [](const std::vector<SharedPair>& shared) {
        PairList l;
        for (const SharedPair& p : shared)
            l.push_back(p.get());
        return l;
    };
    const PairList errorSingleList = pairList(errorsSingle), fockSingleList = pairList(focksSingle),
                   coulombSingleList = pairList(coulombsSingle);
    std::vector<double> single;
    Eigen::VectorXd dotsSingle;
    Eigen::MatrixXd fockSingle;
    for (int r = 0; r < repeat; r++)
        single.push_back(packedIteration(errorSingleList, fockSingleList, coulombSingleList, dotsSingle, fockSingle));
    const double singleDifference =
        std::max((dotsSingle - dotsPacked).cwiseAbs().maxCoeff() / dotsPacked.cwiseAbs().maxCoeff(),
                 (fockSingle - fockPacked).cwiseAbs().maxCoeff() / fockPacked.cwiseAbs().maxCoeff());
    const double iterationDifference =
        std::max((dotsWhole - dotsPacked).cwiseAbs().maxCoeff() / dotsWhole.cwiseAbs().maxCoeff(),
                 (fockWhole - fockPacked).cwiseAbs().maxCoeff() / fockWhole.cwiseAbs().maxCoeff());

    std::printf("DIIS's recycled pairs: %d pairs for %d functions, %d new per step, %d threads (median of %d)\n", pairs,
                basis, fresh, threads, repeat);
    std::printf("| operation | reference (ms) | this (ms) | ratio | largest difference (relative) |\n|---|---|---|---|---|\n");
    std::printf("| Gram matrix per MD step: from scratch / grown | %.2f | %.2f | %.1f | %.1e |\n", 1e3 * median(scratch),
                1e3 * median(grown), median(scratch) / median(grown), difference);
    std::printf("| products per SCF iteration: whole / packed | %.2f | %.2f | %.1f | %.1e |\n", 1e3 * median(whole),
                1e3 * median(packed), median(whole) / median(packed), iterationDifference);
    std::printf("| products per SCF iteration: packed double / packed single | %.2f | %.2f | %.1f | %.1e |\n", 1e3 * median(packed),
                1e3 * median(single), median(packed) / median(single), singleDifference);
    return 0;
}
