#include "ReferenceBondScaledCoulomb.h"
#include "openmm/reference/ReferenceNeighborList.h"
#include "openmm/reference/SimTKOpenMMRealType.h"
#include <atomic>
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
    vector<double> threadEnergy(numThreads, 0.0);
    atomic<int> nextRow(0);
    threads.execute([&](ThreadPool& pool, int thread) {
        // A stamp per particle marks the partners of row i without clearing an array per row.
        vector<int> stamp(numParticles, -1);
        vector<Vec3>& f = threadForces[thread];
        double energy = 0;
        for (int i = nextRow++; i < numParticles; i = nextRow++) {
            for (int k = exclusionStart[i]; k < exclusionStart[i + 1]; k++)
                stamp[exclusionIndex[k]] = i;
            Vec3 fi;
            double qi = ONE_4PI_EPS0 * charges[i];
            for (int j = i + 1; j < numParticles; j++) {
                if (stamp[j] == i)
                    continue;
                Vec3 d = positions[j] - positions[i];
                double inverseR = 1.0 / sqrt(d.dot(d));
                double e = qi * charges[j] * inverseR;
                energy += e;
                Vec3 fij = d * (e * inverseR * inverseR);
                fi -= fij;
                f[j] += fij;
            }
            f[i] += fi;
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
    const double cutoff2 = cutoff * cutoff;
    atomic<int> nextBlock(0);
    const int blockSize = 64;
    threads.execute([&](ThreadPool& pool, int thread) {
        vector<Vec3>& f = threadForces[thread];
        double energy = 0;
        for (int block = nextBlock++; block * blockSize < numParticles; block = nextBlock++) {
            int last = min(numParticles, (block + 1) * blockSize);
            for (int i = block * blockSize; i < last; i++) {
                Vec3 fi;
                double qi = ONE_4PI_EPS0 * charges[i];
                for (int k = start[i]; k < start[i + 1]; k++) {
                    int j = partners[k];
                    Vec3 d = positions[j] - positions[i];
                    if (periodic) {
                        // Minimum image in OpenMM's reduced triclinic form.
                        d -= boxVectors[2] * floor(d[2] / boxVectors[2][2] + 0.5);
                        d -= boxVectors[1] * floor(d[1] / boxVectors[1][1] + 0.5);
                        d -= boxVectors[0] * floor(d[0] / boxVectors[0][0] + 0.5);
                    }
                    double r2 = d.dot(d);
                    if (r2 >= cutoff2)
                        continue;
                    double r = sqrt(r2), inverseR = 1.0 / r;
                    double qq = qi * charges[j];
                    energy += qq * (inverseR + krf * r2 - crf);
                    // -dE/dr / r, applied along d = r_j - r_i.
                    Vec3 fij = d * (qq * (inverseR * inverseR * inverseR - 2.0 * krf));
                    fi -= fij;
                    f[j] += fij;
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
