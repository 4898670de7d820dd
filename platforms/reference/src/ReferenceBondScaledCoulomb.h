#ifndef OPENMMDFT_REFERENCEBONDSCALEDCOULOMB_H_
#define OPENMMDFT_REFERENCEBONDSCALEDCOULOMB_H_

#include "openmmdft/QMMMForce.h"
#include "openmmdft/internal/BondGraph.h"
#include "openmm/Vec3.h"
#include "openmm/internal/ThreadPool.h"
#include "VerletNeighborList.h"
#include <memory>
#include <set>
#include <vector>

namespace OpenMMDFT {

/**
 * Coulomb energy and forces of point charges with bond-derived exclusions and
 * scaled 1-4 pairs, in double precision on the CPU. The pair loop runs on the
 * Context's thread pool (one thread on the Reference platform, several on CPU);
 * each thread accumulates its own forces, summed in thread order, so results
 * are deterministic for a given thread count.
 */
class ReferenceBondScaledCoulomb {
public:
    ReferenceBondScaledCoulomb(int numParticles, const BondPathClasses& classes);
    void setCharges(const std::vector<double>& charges) {
        this->charges = charges;
    }
    void setScale14(double scale) {
        scale14 = scale;
    }
    void setMethod(QMMMForce::NonbondedMethod method, double cutoff, double dielectric);
    /** Adds to forces (kJ/mol/nm) and returns the energy (kJ/mol). */
    double compute(const std::vector<OpenMM::Vec3>& positions, const OpenMM::Vec3* boxVectors,
                   std::vector<OpenMM::Vec3>& forces, OpenMM::ThreadPool& threads);
private:
    double pairsNoCutoff(const std::vector<OpenMM::Vec3>& positions, std::vector<OpenMM::Vec3>& forces, OpenMM::ThreadPool& threads);
    double pairsWithCutoff(const std::vector<OpenMM::Vec3>& positions, const OpenMM::Vec3* boxVectors,
                           std::vector<OpenMM::Vec3>& forces, OpenMM::ThreadPool& threads);
    double scaledPairs(const std::vector<OpenMM::Vec3>& positions, std::vector<OpenMM::Vec3>& forces) const;
    int numParticles;
    std::vector<int> exclusionStart, exclusionIndex;  // CSR: the excluded and 1-4 partners of each particle
    std::vector<std::pair<int, int> > pairs14;
    std::vector<double> charges;
    double scale14, cutoff, krf, crf;
    QMMMForce::NonbondedMethod method;
    std::vector<std::vector<OpenMM::Vec3> > threadForces;
    std::vector<std::set<int> > exclusionSets;  // the same partners, in the form the neighbor list takes
    std::unique_ptr<VerletNeighborList> neighborList;
};

} // namespace OpenMMDFT

#endif
