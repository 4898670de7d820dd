#ifndef OPENMMDFT_BONDGRAPH_H_
#define OPENMMDFT_BONDGRAPH_H_

#include "openmmdft/internal/windowsExportDFT.h"
#include <utility>
#include <vector>

namespace OpenMMDFT {

/**
 * The bond graph as a sparse adjacency matrix in ELLPACK form (seed 000): an
 * N x K array of column indices, K = the largest degree, rows padded with -1.
 * Every row has the same width, so a row-per-thread product on a GPU reads
 * memory in lockstep, and the products A*A, A*A*A that find paths of two and
 * three bonds stay O(N K^3) instead of the O(N^3) of dense matrices.
 */
class OPENMM_EXPORT_DFT EllpackAdjacency {
public:
    /**
     * Build from a bond list. Throws OpenMMException naming the bond if a bond
     * refers to a particle outside [0, numParticles) or bonds a particle to itself.
     * Duplicate bonds (either order) count once.
     */
    EllpackAdjacency(int numParticles, const std::vector<std::pair<int, int> >& bonds);
    int getNumRows() const {
        return numRows;
    }
    /** K: the width of every row (the largest degree; 0 with no bonds). */
    int getWidth() const {
        return width;
    }
    /** Row-major N x K column indices, -1 for padding; each row sorted ascending. */
    const std::vector<int>& getColumns() const {
        return columns;
    }
private:
    int numRows, width;
    std::vector<int> columns;
};

/**
 * The pairs the Coulomb kernel treats specially, from the sparse products of the
 * adjacency matrix: pairs whose shortest bond path has one or two bonds
 * (excluded) and exactly three bonds (scaled 1-4). Each pair is (i, j) with i < j,
 * sorted. This is the CPU form of the computation the GPU platforms run on the device.
 */
struct OPENMM_EXPORT_DFT BondPathClasses {
    std::vector<std::pair<int, int> > excluded;
    std::vector<std::pair<int, int> > scaled14;
};

OPENMM_EXPORT_DFT BondPathClasses classifyBondPaths(const EllpackAdjacency& adjacency);

} // namespace OpenMMDFT

#endif
