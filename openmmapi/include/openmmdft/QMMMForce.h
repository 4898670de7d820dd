#ifndef OPENMMDFT_QMMMFORCE_H_
#define OPENMMDFT_QMMMFORCE_H_

/* openmm-dft: QM/MM molecular dynamics for OpenMM.
 *
 * QMMMForce is the one Force of the plugin.  Its first capability is the
 * electrostatics of the MM charges, with the exclusions and the 1-4 scaling
 * derived from the bond graph (rather than from hand-made exception lists).
 * The QM region and least-squares fitting build on the same Force.
 */

#include "openmm/Context.h"
#include "openmm/Force.h"
#include "openmmdft/internal/windowsExportDFT.h"
#include <set>
#include <utility>
#include <vector>

namespace OpenMMDFT {

/**
 * QMMMForce computes, for every pair of particles i < j,
 *
 *     E = ONE_4PI_EPS0 * f_ij * q_i * q_j / r_ij
 *
 * where f_ij follows from the shortest path between i and j in the bond graph:
 * 0 if it has one or two bonds (excluded), the 1-4 scale (default 0.5) if it has
 * exactly three, and 1 otherwise (including particles in different molecules).
 * This is the classification NonbondedForce::createExceptionsFromBonds() makes.
 *
 * Units are OpenMM's: charges in e, distances in nm, energies in kJ/mol.
 *
 * The nonbonded methods mean what they mean for the Coulomb part of
 * NonbondedForce: NoCutoff, CutoffNonPeriodic and CutoffPeriodic (the latter
 * two use the reaction-field approximation with the given dielectric).  Scaled
 * 1-4 pairs are computed like NonbondedForce exceptions: plain 1/r, no cutoff,
 * no reaction field, no periodic images.
 */
class OPENMM_EXPORT_DFT QMMMForce : public OpenMM::Force {
public:
    enum NonbondedMethod {
        /** No cutoff, no periodic boundary conditions. */
        NoCutoff = 0,
        /** Reaction field within a cutoff, no periodic boundary conditions. */
        CutoffNonPeriodic = 1,
        /** Reaction field within a cutoff, minimum-image periodic boundary conditions. */
        CutoffPeriodic = 2
    };
    QMMMForce();
    /** Number of particles; must equal the System's when a Context is created. */
    int getNumParticles() const {
        return charges.size();
    }
    /** Add a particle with a charge (e); returns its index. Call once per System particle. */
    int addParticle(double charge);
    void getParticleParameters(int index, double& charge) const;
    void setParticleParameters(int index, double charge);

    /**
     * Add a bond between two particles to the bond graph. A bond that is already
     * present (in either order) is not added again: its existing index is returned.
     * A bond of a particle with itself is refused.
     */
    int addBond(int particle1, int particle2);
    int getNumBonds() const {
        return bonds.size();
    }
    void getBondParameters(int index, int& particle1, int& particle2) const;

    /** Scale factor of pairs exactly three bonds apart (default 0.5). */
    double getCoulomb14Scale() const {
        return coulomb14Scale;
    }
    void setCoulomb14Scale(double scale);

    NonbondedMethod getNonbondedMethod() const {
        return nonbondedMethod;
    }
    void setNonbondedMethod(NonbondedMethod method);
    /** Cutoff distance (nm), used by the cutoff methods (default 1.0). */
    double getCutoffDistance() const {
        return cutoffDistance;
    }
    void setCutoffDistance(double distance);
    /** Dielectric of the reaction field beyond the cutoff (default 78.3). */
    double getReactionFieldDielectric() const {
        return reactionFieldDielectric;
    }
    void setReactionFieldDielectric(double dielectric);

    /**
     * Copy per-particle charges and the 1-4 scale into a Context. The bond graph of a
     * live Context cannot change here (it fixes the exclusions the Context was built
     * with): if it differs, an OpenMMException says so; call Context::reinitialize().
     */
    void updateParametersInContext(OpenMM::Context& context);

    bool usesPeriodicBoundaryConditions() const {
        return nonbondedMethod == CutoffPeriodic;
    }

protected:
    OpenMM::ForceImpl* createImpl() const;

private:
    std::vector<double> charges;
    std::vector<std::pair<int, int> > bonds;
    std::set<std::pair<int, int> > bondSet;  // (min, max) of each bond, to ignore duplicates in O(log n)
    double coulomb14Scale, cutoffDistance, reactionFieldDielectric;
    NonbondedMethod nonbondedMethod;
};

} // namespace OpenMMDFT

#endif /*OPENMMDFT_QMMMFORCE_H_*/
