#ifndef OPENMMDFT_LINKATOMS_H_
#define OPENMMDFT_LINKATOMS_H_

#include "openmmdft/QMMMForce.h"
#include "openmmdft/internal/windowsExportDFT.h"
#include <vector>

namespace OpenMMDFT {

/** A covalent bond across the QM/MM boundary, capped by a hydrogen link atom. */
struct LinkAtomBond {
    int qmAtom;       ///< index among the Force's QM atoms (Q1)
    int qmParticle;   ///< Q1's particle
    int mmParticle;   ///< M1
    double bondLength; ///< Q1 to link hydrogen, nm (0 when Q1's element has none: the Force is refused then)
    /** M1's MM neighbours that are not M1s themselves (those keep no charge to share): the M2s that take its boundary
     * charge (none: the Force is refused). */
    std::vector<int> boundaryNeighbours;
};

/** The Force's link atoms: its bonds between a QM atom and an MM particle, in bond order (bond indices must be in range). */
OPENMM_EXPORT_DFT std::vector<LinkAtomBond> linkAtomBondsOf(const QMMMForce& force);

/** The default X-H bond length (nm) for a QM atom of this element, 0 when there is none. */
OPENMM_EXPORT_DFT double defaultLinkBondLength(int atomicNumber);

} // namespace OpenMMDFT

#endif
