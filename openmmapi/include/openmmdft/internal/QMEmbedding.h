#ifndef OPENMMDFT_QMEMBEDDING_H_
#define OPENMMDFT_QMEMBEDDING_H_

#include "openmmdft/QMMMForce.h"
#include "openmm/Vec3.h"
#include "openmmdft/internal/windowsExportDFT.h"
#include <string>
#include <vector>

namespace OpenMMDFT {

/**
 * The charges of the MM pair kernels on every platform: the Force's, with every QM atom's set to zero
 * (a QM atom interacts through its electrons and nucleus, not through its MM charge).
 */
OPENMM_EXPORT_DFT std::vector<double> chargesOfMMPairs(const QMMMForce& force);

/**
 * Throws OpenMMException naming the particles whose positions are NaN or infinite (up to eight); `why`, when not
 * empty, is added in parentheses (e.g. that the previous evaluation gave NaN forces on purpose).
 */
OPENMM_EXPORT_DFT void checkPositionsAreFinite(const std::vector<OpenMM::Vec3>& positions, const std::string& why = "");

/**
 * Where the QM region and the MM charges it sees are, at one set of positions: the geometry part of
 * electrostatic embedding, shared by every platform. Positions in nm (OpenMM units).
 *
 * Molecules are the connected parts of the bond graph. Each is made whole by following its bonds (a
 * breadth-first spanning tree, each atom at the minimum image of the atom it is bonded to), which is
 * right for any molecule size as long as every bond is shorter than half the box.
 *
 * Periodic boxes: the QM molecules are placed one by one next to those already placed (the closest
 * minimum-image pair decides; Prim's order), so a QM cluster stays whole across box faces. An MM
 * molecule is embedded when one of its atoms is within the cutoff of any QM atom by minimum image,
 * and it is placed as a whole at that image. The image is unique when
 *
 *     QM extent + 2 x cutoff <= smallest box width,
 *
 * (the extent is the largest distance between two QM atoms; two images of one MM atom, each within
 * the cutoff of some QM atom, would be less than that apart, and no lattice vector is shorter than
 * the smallest width). A box that violates it is refused: a non-periodic QM region in it would see
 * some MM charges twice or not at all.
 *
 * With the embedding switching function the molecule's charges are scaled by S(R) of its closest distance R
 * to the QM region (QMMMForce::setUseEmbeddingSwitchingFunction), and Placement::switched lists the molecules
 * whose scale is between 0 and 1, for the force term dE/dS dS/dR.
 *
 * Covalent bonds across the boundary (QMMMForce::getNumLinkAtoms): molecules here are the connected parts of
 * the bond graph within the QM region and within the MM region. Each Q1-M1 bond caps the QM region with a
 * hydrogen at the link bond length from Q1 towards M1 (placed after the QM atoms in Placement::qmPositions).
 * M1's charge leaves the embedding and is spread over its M1-M2 bonds by the boundary charge scheme
 * (QMMMForce::BoundaryChargeScheme): M2 charges change, and boundary charges sit at fixed fractions of the
 * M1-M2 bonds (Placement::sites). The MM-MM electrostatics do not see any of this.
 */
class OPENMM_EXPORT_DFT QMEmbedding {
public:
    /** Reads the QM atoms and the bond graph (fixed for a Context) and the charges. */
    explicit QMEmbedding(const QMMMForce& force);
    /** Re-read the MM charges, the nonbonded method and the cutoff. */
    void setParameters(const QMMMForce& force);

    struct Placement {
        std::vector<OpenMM::Vec3> qmPositions;   ///< QM-atom order, whole, nm
        std::vector<OpenMM::Vec3> mmPositions;   ///< the embedded charges, each molecule whole, nm
        std::vector<double> mmCharges;           ///< e, nonzero only (scaled by S with the switching function)
        std::vector<int> mmParticles;            ///< the particle of each embedded charge
        double qmExtent = 0;                     ///< largest QM-QM distance, nm
        /** A molecule inside the switching shell (0 < S < 1): its charges' range in the lists above, the closest
         * pair (an MM particle, a QM atom), their displacement mm - qm (nm, as placed) and dS/dR (1/nm). */
        struct Switched {
            int firstCharge, endCharge;
            int mmParticle, qmAtom;
            OpenMM::Vec3 delta;
            double slope;
        };
        std::vector<Switched> switched;
        std::vector<double> mmBaseCharges;       ///< the embedded charges before the switching scale, e
        /** An embedded charge at weight1 x particle1 + weight2 x particle2 (a boundary charge of a link atom); its
         * mmParticles entry is particle2. */
        struct Site {
            int charge;
            int particle1, particle2;
            double weight1, weight2;
        };
        std::vector<Site> sites;
        std::vector<OpenMM::Vec3> linkMMPositions;  ///< M1 of each link atom as placed, nm
    };
    /**
     * The QM region and the MM charges it sees at these positions. boxVectors (OpenMM's reduced
     * triclinic form) are read only for CutoffPeriodic. Throws OpenMMException when the box is too
     * small for the QM region and the cutoff.
     */
    Placement place(const std::vector<OpenMM::Vec3>& positions, const OpenMM::Vec3* boxVectors) const;

    /** Minimum-image displacement b - a in OpenMM's reduced triclinic box. */
    static OpenMM::Vec3 minimumImage(const OpenMM::Vec3& a, const OpenMM::Vec3& b, const OpenMM::Vec3* box);
    /** The smallest perpendicular width of a reduced triclinic box: min(ax, by, cz). */
    static double smallestWidth(const OpenMM::Vec3* box);

    const std::vector<int>& getQMParticles() const {
        return qmParticles;
    }
    const std::vector<int>& getQMAtomicNumbers() const {
        return qmAtomicNumbers;
    }
    bool isQMParticle(int particle) const {
        return qmIndexOfParticle[particle] >= 0;
    }
    /** A hydrogen capping the bond from QM atom qmAtom (Q1) to MM particle mmParticle (M1), bondLength nm from Q1. */
    struct Link {
        int qmAtom, mmParticle;
        double bondLength;
    };
    const std::vector<Link>& getLinks() const {
        return links;
    }
    /** A particle's charge (e) as the QM region sees it, before switching: its MM charge, changed on the M1 and
     * M2 atoms of link atoms by the boundary charge scheme. */
    double getCharge(int particle) const;
private:
    /** One molecule: its particles in breadth-first order, and the position in that list of each one's tree parent (-1: root). */
    struct Molecule {
        std::vector<int> particles;
        std::vector<int> parent;
    };
    /** The molecule made whole from its root's position as given. */
    std::vector<OpenMM::Vec3> wholeMolecule(const Molecule& mol, const std::vector<OpenMM::Vec3>& positions,
                                            const OpenMM::Vec3* box) const;
    /** S(r) and dS/dr (1/nm) of the embedding switching function. */
    void switchingFunction(double r, double& scale, double& slope) const;
    /** Throws OpenMMException when an embedded charge is closer than 0.01 nm to a QM nucleus. */
    void checkSeparation(const Placement& placement) const;
    std::vector<OpenMM::Vec3> placeQMRegion(const std::vector<OpenMM::Vec3>& positions, const OpenMM::Vec3* box) const;
    std::vector<int> qmParticles, qmAtomicNumbers;
    std::vector<int> qmIndexOfParticle;         // -1 for MM particles
    std::vector<Molecule> qmMolecules, mmMolecules;
    std::vector<double> charges;                // as embedded (boundary scheme applied)
    std::vector<Link> links;
    /** A boundary charge at weight1 x M1 + weight2 x M2, by position in its MM molecule's particle list. */
    struct BoundarySite {
        int local1, local2;
        double weight1, weight2, charge;
    };
    std::vector<std::vector<int> > mmNeighboursOfLink;  // the M2s of each link
    std::vector<int> mmMoleculeOfParticle, localIndexOfParticle;
    std::vector<std::vector<BoundarySite> > sitesOfMolecule;  // by MM molecule
    std::vector<std::vector<int> > linksOfMolecule;           // links whose M1 is in the MM molecule
    QMMMForce::NonbondedMethod method;
    bool periodic;                              // CutoffPeriodic or Ewald
    double cutoff;
    bool useSwitching;
    double switchingDistance;
};

} // namespace OpenMMDFT

#endif
