#ifndef OPENMMDFT_VERLETNEIGHBORLIST_H_
#define OPENMMDFT_VERLETNEIGHBORLIST_H_

#include "openmm/Vec3.h"
#include <set>
#include <vector>

namespace OpenMMDFT {

/**
 * Pairs of particles within cutoff + skin, excluded pairs left out, kept between
 * evaluations and rebuilt only when some particle has moved more than half the skin
 * (or the box has changed): the pair loop then runs over ~cutoff^3 instead of the
 * 27-cell volume every step. Pairs are stored per first particle (CSR, j > i) so
 * threads can take rows.
 */
class VerletNeighborList {
public:
    VerletNeighborList(const std::vector<std::set<int> >& exclusions, double cutoff, double skin);
    /** Rebuild if needed; returns true if it did. */
    bool update(const std::vector<OpenMM::Vec3>& positions, const OpenMM::Vec3* boxVectors, bool periodic);
    const std::vector<int>& rowStart() const {
        return start;
    }
    const std::vector<int>& partners() const {
        return neighbors;
    }
private:
    void build(const std::vector<OpenMM::Vec3>& positions, const OpenMM::Vec3* boxVectors, bool periodic, double listCutoff);
    const std::vector<std::set<int> >& exclusions;
    double cutoff, skin, builtSkin;
    std::vector<OpenMM::Vec3> builtPositions;
    OpenMM::Vec3 builtBox[3];
    std::vector<int> start, neighbors;
};

} // namespace OpenMMDFT

#endif
