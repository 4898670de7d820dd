#include "openmmdft/qm/PairDensityMap.h"
#include "openmmdft/qm/Angular.h"
#include "openmmdft/qm/Basis.h"
#include "Parallel.h"
#include <openmm/OpenMMException.h>

namespace OpenMMDFT {
namespace QM {

void PairDensityMap::forRunChunks(const std::function<void(int, int)>& body) const {
    // A few chunks of whole runs per thread: one run is a few pairs, too little to hand out alone.
    const int runs = (int) runStart_.size() - 1, chunks = std::min(runs, 8 * std::max(1, threads_));
    parallelFor(chunks, threads_, [&](int c, int) {
        body(runStart_[(int) ((long long) runs * c / chunks)], runStart_[(int) ((long long) runs * (c + 1) / chunks)]);
    });
}

PairDensityMap::PairDensityMap(const BasisSet& basis, std::vector<std::pair<int, int>> pairs, int threads)
    : size_(basis.size()), threads_(threads), pairs_(std::move(pairs)) {
    std::vector<int> shellOf;
    for (int s = 0; s < basis.numShells(); s++)
        shellOf.insert(shellOf.end(), basis.shells()[s].cartesianSize(), s);
    // Each shell pair one run: two runs of one shell pair would write the same elements of J on two threads.
    const int numShells = basis.numShells();
    std::vector<char> seen((size_t) numShells * numShells, 0);
    for (size_t k = 0; k < pairs_.size(); k++)
        if (k == 0 || shellOf[pairs_[k].first] != shellOf[pairs_[k - 1].first] ||
            shellOf[pairs_[k].second] != shellOf[pairs_[k - 1].second]) {
            char& taken = seen[(size_t) shellOf[pairs_[k].first] * numShells + shellOf[pairs_[k].second]];
            if (taken)
                throw OpenMM::OpenMMException("QM: the density fitting's function pairs of one shell pair are not consecutive "
                                              "(internal error)");
            taken = 1;
            runStart_.push_back((int) k);
        }
    runStart_.push_back((int) pairs_.size());
    termStart_.push_back(0);
    for (int s = 0; s < basis.numShells(); s++) {
        const Shell& shell = basis.shells()[s];
        for (int c = 0; c < shell.cartesianSize(); c++) {
            if (!shell.pure) {
                termFunction_.push_back(basis.offset(s) + c);
                termValue_.push_back(1.0);
            }
            else {
                const Eigen::MatrixXd& toPure = cartesianToPure(shell.l);
                for (int m = 0; m < toPure.rows(); m++)
                    if (toPure(m, c) != 0) {
                        termFunction_.push_back(basis.offset(s) + m);
                        termValue_.push_back(toPure(m, c));
                    }
            }
            termStart_.push_back((int) termFunction_.size());
        }
    }
}

Eigen::VectorXd PairDensityMap::gather(const Eigen::MatrixXd& density) const {
    Eigen::VectorXd d(pairs_.size());
    forRunChunks([&](int first, int last) {
        for (int k = first; k < last; k++) {
            const int u = pairs_[k].first, v = pairs_[k].second;
            double sum = 0;
            for (int p = termStart_[u]; p < termStart_[u + 1]; p++) {
                double inner = 0;
                for (int q = termStart_[v]; q < termStart_[v + 1]; q++)
                    inner += termValue_[q] * density(termFunction_[p], termFunction_[q]);
                sum += termValue_[p] * inner;
            }
            d[k] = u == v ? sum : 2 * sum;
        }
    });
    return d;
}

Eigen::MatrixXd PairDensityMap::scatter(const Eigen::VectorXd& pairValues) const {
    // sum over ordered pairs (u, v) of T_au J~_uv T_bv: a listed pair u != v stands for (u, v) and (v, u), the second
    // of which is the first's term with a and b exchanged.
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(size_, size_);
    forRunChunks([&](int first, int last) {
        for (int k = first; k < last; k++) {
            const int u = pairs_[k].first, v = pairs_[k].second;
            const double value = pairValues[k];
            for (int p = termStart_[u]; p < termStart_[u + 1]; p++) {
                const int a = termFunction_[p];
                const double va = termValue_[p] * value;
                for (int q = termStart_[v]; q < termStart_[v + 1]; q++) {
                    const int b = termFunction_[q];
                    J(a, b) += va * termValue_[q];
                    if (u != v)
                        J(b, a) += va * termValue_[q];
                }
            }
        }
    });
    return J;
}

} // namespace QM
} // namespace OpenMMDFT
