#ifndef OPENMMDFT_XCPROGRAM_H_
#define OPENMMDFT_XCPROGRAM_H_
// The XC program (kernels/qmXC.cc, after the engine's shared shell evaluation): its source, and the sizes that the
// host's launches and work lists and the kernels' local arrays must agree on, defined here once and handed to the
// kernels as defines.
#include <map>
#include <string>

namespace OpenMMDFT {

/// Points per density block and functions per side of a V tile of the tiled kernels (XC_BLOCK, XC_TILE).
constexpr int XC_BLOCK_POINTS = 32, XC_TILE_FUNCTIONS = 64;
/// Work items per group of the tiled kernels, densityBlocks and matrixTiles (XC_GROUP): their tiles are loaded 256
/// elements at a time.
constexpr int XC_TILED_GROUP = 256;
/// Work items per batch of batchSums, whose local sums are a tree of that many (BATCH_SUM_GROUP).
constexpr int XC_BATCH_SUM_GROUP = 64;
/// Slices of a batch's points that gradientFunctions sums apart (FUNCTION_GRADIENT_SLICES).
constexpr int XC_FUNCTION_GRADIENT_SLICES = 4;
/// The partition-weight derivatives' largest atom count (their work group's gradient in local memory: 3 of them per
/// atom) and work-group size (PARTITION_MAX_ATOMS, PARTITION_GROUP).
constexpr int XC_PARTITION_MAX_ATOMS = 128, XC_PARTITION_GROUP = 128;

/**
 * How the partition-weight derivatives' kernel takes a point's kept cells (PARTITION_KEPT_PRODUCTS, PARTITION_CELL_BLOCK):
 * the products of the first keptProducts kept cells are recorded by the first pass (24, so that the kernel's local
 * arrays fit the 32 KB every OpenCL device has; the further cells' products are formed again), and cellBlock cells at a
 * time sweep over the atoms (8: their data in registers). Other values serve tests, which with small ones take every
 * path on small molecules.
 */
struct XCPartitionSizes {
    int keptProducts = 24;
    int cellBlock = 8;
};
/// Work items per column of densityFittingProject, a tree of local sums (DF_GROUP).
constexpr int XC_DENSITY_FITTING_GROUP = 128;

/** The XC program's source: the engine's shell evaluation (shellValues()), then kernels/qmXC.cc (with the density
 * fitting's contractions) and kernels/qmPairDensity.cc (its pair vectors from and to held matrices). */
std::string xcProgramSource();

/** The XC program's defines: the sizes above, and VWN's paramagnetic fit (Vosko, Wilk, Nusair 1980), VWN5 for
 * parametrization 0, the RPA fit for 1. */
std::map<std::string, std::string> xcProgramDefines(int parametrization, const XCPartitionSizes& partition = XCPartitionSizes());

} // namespace OpenMMDFT

#endif
