#include "ReferenceBondScaledCoulomb.h"
#include "openmm/reference/ReferenceNeighborList.h"
#include "openmm/reference/SimTKOpenMMRealType.h"
#include <cmath>
#include <set>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

ReferenceBondScaledCoulomb::ReferenceBondScaledCoulomb(int numParticles, const BondPathClasses& classes) :
        numParticles(numParticles), pairs14(classes.scaled14), scale14(0.5), cutoff(0), krf(0), crf(0), method(QMMMForce::NoCutoff) {
    // Both excluded and 1-4 pairs are skipped by the all-pairs loop; the 1-4 pairs are added separately.
    vector<vector<int> > partners(numParticles);
    for (auto* list : {&classes.excluded, &classes.scaled14})
        for (auto& p : *list) {
            partners[p.first].push_back(p.second);
            partners[p.second].push_back(p.first);
        }
    exclusionStart.push_back(0);
    for (auto& row : partners) {
        exclusionIndex.insert(exclusionIndex.end(), row.begin(), row.end());
        exclusionStart.push_back(exclusionIndex.size());
    }
    exclusionSets.resize(numParticles);
    for (int i = 0; i < numParticles; i++)
        exclusionSets[i].insert(partners[i].begin(), partners[i].end());
}

void ReferenceBondScaledCoulomb::setMethod(QMMMForce::NonbondedMethod method, double cutoff, double dielectric) {
    this->method = method;
    this->cutoff = cutoff;
    if (method == QMMMForce::NoCutoff) {
        krf = crf = 0;
    }
    else {
        // Reaction field, as in NonbondedForce: E = C qq (1/r + krf r^2 - crf), zero at the cutoff.
        krf = pow(cutoff, -3.0) * (dielectric - 1.0) / (2.0 * dielectric + 1.0);
        crf = (1.0 / cutoff) * (3.0 * dielectric) / (2.0 * dielectric + 1.0);
        // A skin of 0.1 nm keeps the list valid for ~10-20 MD steps of thermal motion.
        neighborList.reset(new VerletNeighborList(exclusionSets, cutoff, 0.1));
    }
}

namespace {

/** What the inner loop of the cutoff methods needs: the cutoff, reaction field and reduced box. */
struct RowParameters {
    bool periodic;
    double cutoff2, krf, crf;
    double ax = 0, bx = 0, by = 0, cx = 0, cy = 0, cz = 0, invA = 0, invB = 0, invC = 0;
};

/** Round to the nearest integer with plain SSE2 arithmetic (|x| < 2^51), so the loop vectorizes without SSE4.1's roundpd. */
inline double roundNearest(double x) {
    const double magic = 6755399441055744.0;  // 1.5 * 2^52
    return (x + magic) - magic;
}

/**
 * Minimum image, energy and force scale of one particle's partners. Built for AVX2 and for
 * the x86-64 baseline, picked at load time, as OpenMM's own CPU kernels dispatch on the CPU.
 * Returns the energy; fs[k] = -dE/dr / r for partner k (0 beyond the cutoff).
 */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
double cutoffRow(int n, double* dx, double* dy, double* dz, const double* qj, double* fs, double qi, const RowParameters& p) {
    if (p.periodic) {
        #pragma omp simd
        for (int k = 0; k < n; k++) {
            double sc = roundNearest(dz[k] * p.invC);
            dx[k] -= sc * p.cx;
            dy[k] -= sc * p.cy;
            dz[k] -= sc * p.cz;
            double sb = roundNearest(dy[k] * p.invB);
            dx[k] -= sb * p.bx;
            dy[k] -= sb * p.by;
            dx[k] -= roundNearest(dx[k] * p.invA) * p.ax;
        }
    }
    double energy = 0;
    const double cutoff2 = p.cutoff2, krf = p.krf, crf = p.crf;
    #pragma omp simd reduction(+:energy)
    for (int k = 0; k < n; k++) {
        double r2 = dx[k] * dx[k] + dy[k] * dy[k] + dz[k] * dz[k];
        double inverseR = 1.0 / sqrt(r2);
        double qq = qi * qj[k];
        const bool included = r2 < cutoff2 && qq != 0;  // a select: a pair without charge may sit at r = 0
        energy += included ? qq * (inverseR + krf * r2 - crf) : 0.0;
        fs[k] = included ? qq * (inverseR * inverseR * inverseR - 2.0 * krf) : 0.0;
    }
    return energy;
}

/** Energy and force scales of particle i with every j > i (no cutoff); weight[j] = 0 masks exclusions. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
double allPairsRow(int i, int n, const double* x, const double* y, const double* z, const double* q, const double* weight, double* fs, double qi) {
    double energy = 0;
    #pragma omp simd reduction(+:energy)
    for (int j = i + 1; j < n; j++) {
        double dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
        double inverseR = 1.0 / sqrt(dx * dx + dy * dy + dz * dz);
        double e = qi * q[j] * inverseR;
        // A select, not a product with the weight: an excluded pair, or one without charge (a QM atom's MM charge is
        // zero), may sit at r = 0 (a Drude particle on its parent, a dummy on a nucleus), where 0 * inf would be NaN.
        const bool included = weight[j] != 0 && qi * q[j] != 0;
        energy += included ? e : 0.0;
        fs[j] = included ? e * inverseR * inverseR : 0.0;
    }
    return energy;
}

} // namespace

double ReferenceBondScaledCoulomb::compute(const vector<Vec3>& positions, const Vec3* boxVectors, vector<Vec3>& forces, ThreadPool& threads) {
    int numThreads = threads.getNumThreads();
    threadForces.resize(numThreads);
    for (auto& f : threadForces)
        f.assign(numParticles, Vec3());
    double energy = (method == QMMMForce::NoCutoff ? pairsNoCutoff(positions, forces, threads) : pairsWithCutoff(positions, boxVectors, forces, threads));
    for (int t = 0; t < numThreads; t++)
        for (int i = 0; i < numParticles; i++)
            forces[i] += threadForces[t][i];
    return energy + scaledPairs(positions, forces);
}

double ReferenceBondScaledCoulomb::pairsNoCutoff(const vector<Vec3>& positions, vector<Vec3>& forces, ThreadPool& threads) {
    int numThreads = threads.getNumThreads();
    vector<double> x(numParticles), y(numParticles), z(numParticles);
    for (int i = 0; i < numParticles; i++) {
        x[i] = positions[i][0];
        y[i] = positions[i][1];
        z[i] = positions[i][2];
    }
    vector<double> threadEnergy(numThreads, 0.0);
    // Rows go to the threads round robin, a fixed assignment (rows shorten steadily, so the loads stay even): each
    // thread's partial forces and energy, added in thread order, then have the same bits on every run, as a dynamic
    // hand-out would not give (MD runs are reproducible).
    threads.execute([&](ThreadPool& pool, int thread) {
        // A per-particle weight (1, or 0 for the partners of row i) masks exclusions inside a
        // contiguous, vectorizable loop over j > i; it is reset after each row.
        vector<double> weight(numParticles, 1.0), fs(numParticles);
        vector<Vec3>& f = threadForces[thread];
        double energy = 0;
        for (int i = thread; i < numParticles; i += numThreads) {
            for (int k = exclusionStart[i]; k < exclusionStart[i + 1]; k++)
                weight[exclusionIndex[k]] = 0.0;
            energy += allPairsRow(i, numParticles, x.data(), y.data(), z.data(), charges.data(), weight.data(), fs.data(), ONE_4PI_EPS0 * charges[i]);
            Vec3 fi;
            for (int j = i + 1; j < numParticles; j++) {
                Vec3 fij = (positions[j] - positions[i]) * fs[j];
                fi -= fij;
                f[j] += fij;
            }
            f[i] += fi;
            for (int k = exclusionStart[i]; k < exclusionStart[i + 1]; k++)
                weight[exclusionIndex[k]] = 1.0;
        }
        threadEnergy[thread] = energy;
    });
    threads.waitForThreads();
    double energy = 0;
    for (double e : threadEnergy)
        energy += e;
    return energy;
}


double ReferenceBondScaledCoulomb::pairsWithCutoff(const vector<Vec3>& positions, const Vec3* boxVectors, vector<Vec3>& forces, ThreadPool& threads) {
    bool periodic = (method == QMMMForce::CutoffPeriodic);
    neighborList->update(positions, boxVectors, periodic);
    const vector<int>& start = neighborList->rowStart();
    const vector<int>& partners = neighborList->partners();
    int numThreads = threads.getNumThreads();
    vector<double> threadEnergy(numThreads, 0.0);
    const double cutoff2 = cutoff * cutoff, krf = this->krf, crf = this->crf;
    RowParameters box{periodic, cutoff2, krf, crf};
    if (periodic) {
        box.ax = boxVectors[0][0];
        box.bx = boxVectors[1][0];
        box.by = boxVectors[1][1];
        box.cx = boxVectors[2][0];
        box.cy = boxVectors[2][1];
        box.cz = boxVectors[2][2];
        box.invA = 1 / box.ax;
        box.invB = 1 / box.by;
        box.invC = 1 / box.cz;
    }
    // Blocks of rows go to the threads round robin, a fixed assignment, for the same bits on every run (as above).
    const int blockSize = 64;
    threads.execute([&](ThreadPool& pool, int thread) {
        vector<Vec3>& f = threadForces[thread];
        // Each row's partners are gathered into contiguous scratch arrays so cutoffRow is a
        // plain loop the compiler vectorizes; forces are scattered afterwards.
        vector<double> dx, dy, dz, fs, qj;
        double energy = 0;
        for (int block = thread; block * blockSize < numParticles; block += numThreads) {
            int last = min(numParticles, (block + 1) * blockSize);
            for (int i = block * blockSize; i < last; i++) {
                int first = start[i], n = start[i + 1] - first;
                if (n == 0)
                    continue;
                dx.resize(n);
                dy.resize(n);
                dz.resize(n);
                fs.resize(n);
                qj.resize(n);
                const Vec3 pi = positions[i];  // partners are gathered: the arithmetic runs on contiguous arrays
                for (int k = 0; k < n; k++) {
                    const Vec3& pj = positions[partners[first + k]];
                    dx[k] = pj[0] - pi[0];
                    dy[k] = pj[1] - pi[1];
                    dz[k] = pj[2] - pi[2];
                    qj[k] = charges[partners[first + k]];
                }
                energy += cutoffRow(n, dx.data(), dy.data(), dz.data(), qj.data(), fs.data(), ONE_4PI_EPS0 * charges[i], box);
                Vec3 fi;
                for (int k = 0; k < n; k++) {
                    Vec3 fij(dx[k] * fs[k], dy[k] * fs[k], dz[k] * fs[k]);
                    fi -= fij;
                    f[partners[first + k]] += fij;
                }
                f[i] += fi;
            }
        }
        threadEnergy[thread] = energy;
    });
    threads.waitForThreads();
    double energy = 0;
    for (double e : threadEnergy)
        energy += e;
    return energy;
}

double ReferenceBondScaledCoulomb::scaledPairs(const vector<Vec3>& positions, vector<Vec3>& forces) const {
    // Like NonbondedForce exceptions: plain scaled 1/r, no cutoff, no reaction field, no periodic image.
    double energy = 0;
    for (auto& p : pairs14) {
        if (charges[p.first] * charges[p.second] == 0)
            continue;  // nothing to add, and the pair may sit at r = 0
        Vec3 d = positions[p.second] - positions[p.first];
        double inverseR = 1.0 / sqrt(d.dot(d));
        double e = ONE_4PI_EPS0 * scale14 * charges[p.first] * charges[p.second] * inverseR;
        energy += e;
        Vec3 fij = d * (e * inverseR * inverseR);
        forces[p.first] -= fij;
        forces[p.second] += fij;
    }
    return energy;
}
