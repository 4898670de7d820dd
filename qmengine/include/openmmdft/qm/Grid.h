#pragma once
// Molecular integration grid (seed 001 §1.4.2.2, §3.2): atom-centred radial x Lebedev
// shells, Becke or Stratmann-Scuseria-Frisch partition, points grouped into atom
// spheres and cubes, each group with its list of significant shells.
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Settings.h"
#include "openmmdft/qm/Types.h"
#include <array>
#include "openmmdft/qm/WorkInFlight.h"
#include <memory>
#include <vector>

namespace OpenMMDFT {
namespace QM {

/// Radial quadrature of integral f(r) r^2 dr (weights include r^2 dr, not 4 pi).
struct RadialGrid {
    std::vector<double> r, w; ///< increasing r
};
/// Treutler-Ahlrichs M4 mapping with alpha = 0.6 (JCP 102, 346 (1995)), xi per element if asked.
RadialGrid treutlerAhlrichsGrid(int n, int Z, bool atomicXi);
/// Becke's Gauss-Chebyshev (second kind) grid, r = rm (1+x)/(1-x), rm = half the Bragg radius (H: full).
RadialGrid beckeGrid(int n, int Z);

/// Lebedev-Laikov grid on the unit sphere; weights sum to 1.
struct AngularGrid {
    std::vector<std::array<double, 3>> xyz;
    std::vector<double> w;
};
/// Throws OpenMMException if npoints is not a tabulated size (6 ... 1202).
const AngularGrid& lebedevGrid(int npoints);
std::vector<int> lebedevSizes();

/// The Lebedev size of each radial shell of an atom of element Z (radial.r in increasing order) under a pruning
/// scheme, angularPoints where the scheme keeps the full grid (PySCF's nwchem_prune and treutler_prune).
std::vector<int> prunedAngularSizes(GridPruning pruning, int Z, const RadialGrid& radial, int angularPoints);

/// Becke (3 iterations of p(x) = 1.5x - 0.5x^3) or SSF (a = 0.64) cell function s(nu).
double cellFunction(AtomicPartition partition, double nu);

/// A group of grid points sharing one list of significant shells.
struct GridBatch {
    bool sphere = false;          ///< an atom sphere (else a cube)
    int atom = -1;                ///< the sphere's atom
    std::array<double, 3> center{}; ///< sphere centre / cube centre
    double radius = 0;            ///< sphere radius / half cube diagonal
    std::array<double, 3> lo{}, hi{}; ///< tight bounding box of the points
    std::vector<double> x, y, z, w;   ///< points and total weights (quadrature x partition)
    std::vector<int> parentAtom;      ///< atom whose grid each point came from (for weight gradients)
    std::vector<int> shells;          ///< significant shells
    std::vector<int> functions;       ///< their basis functions, in basis order
    size_t size() const { return w.size(); }
};

/**
 * Where the partition weights of the raw grid are computed: MolecularGrid's own host threads unless one of these
 * is given (the GPU platforms evaluate them on the device). partition receives W_A(R_A + r_i u_j) for every
 * atom A, radial point i (radial[A].r) and point j of the Lebedev grid with angularSizes[A][i] points, in that
 * order, with the same cell screening as the host's.
 */
/** Partition weights that PartitionWeightEvaluator::startWeights() started (all the shells' points, as weights()
 *  writes them), while the caller goes on. */
typedef WorkInFlight<std::vector<double>> PartitionWeightsInFlight;

class PartitionWeightEvaluator {
public:
    virtual ~PartitionWeightEvaluator() = default;
    virtual void weights(const std::vector<QMAtom>& atoms, const GridSettings& settings, const std::vector<RadialGrid>& radial,
                         const std::vector<std::vector<int>>& angularSizes, std::vector<double>& partition) const = 0;
    /**
     * weights(), started: an evaluator whose device has a queue of its own for it runs it there, beside the work the
     * caller queues meanwhile (the fitting tensor); by default it is computed in finish(). The arguments are copied.
     */
    virtual std::unique_ptr<PartitionWeightsInFlight> startWeights(const std::vector<QMAtom>& atoms, const GridSettings& settings,
                                                                   const std::vector<RadialGrid>& radial,
                                                                   const std::vector<std::vector<int>>& angularSizes) const;
};

/**
 * The first part of a MolecularGrid: each atom's radial shells with their Lebedev sizes and the partition weights of
 * all their points (shell (A, i)'s weights start at shellStart[A radialPoints + i]). Apart so that a device that
 * computes the weights can do so before other work it has queued (the fitting tensor), and the grouping follow.
 */
struct AtomicGridWeights {
    std::vector<RadialGrid> radial;
    std::vector<std::vector<int>> angularSizes;
    std::vector<size_t> shellStart;
    std::vector<double> partition;
};
AtomicGridWeights atomicGridWeights(const std::vector<QMAtom>& atoms, const GridSettings& settings, int threads = 1,
                                    const PartitionWeightEvaluator* evaluator = nullptr);

/** atomicGridWeights, started: the evaluator's weights in flight (PartitionWeightEvaluator::startWeights) while the
 *  caller goes on; without an evaluator the host computes them in startAtomicGridWeights. */
class AtomicGridWeightsInFlight {
public:
    AtomicGridWeightsInFlight(AtomicGridWeights shells, std::unique_ptr<PartitionWeightsInFlight> started);
    /** The weights, once done: call at most once. */
    AtomicGridWeights finish();
private:
    AtomicGridWeights shells_;
    std::unique_ptr<PartitionWeightsInFlight> started_;
};
AtomicGridWeightsInFlight startAtomicGridWeights(const std::vector<QMAtom>& atoms, const GridSettings& settings, int threads = 1,
                                                 const PartitionWeightEvaluator* evaluator = nullptr);

class MolecularGrid {
public:
    MolecularGrid(const std::vector<QMAtom>& atoms, const BasisSet& basis, const GridSettings& settings,
                  int threads = 1, const PartitionWeightEvaluator* evaluator = nullptr);
    /// From weights made by atomicGridWeights for these atoms and settings: the points grouped and screened.
    MolecularGrid(const std::vector<QMAtom>& atoms, const BasisSet& basis, const GridSettings& settings, int threads,
                  AtomicGridWeights weights);
    const std::vector<GridBatch>& batches() const { return batches_; }
    size_t numPoints() const { return numPoints_; }
    /// Average number of significant functions per point (a screening statistic).
    double averageFunctionsPerPoint() const;
private:
    std::vector<GridBatch> batches_;
    size_t numPoints_ = 0;
};

/**
 * Derivatives of the partition weights for gradients: W_A(r) = P_A(r) / sum_C P_C(r) and dW_A/dR_B at a fixed
 * point r for every atom B (the same screening and size adjustment as the grid's weights).
 */
class PartitionWeightDerivatives {
public:
    PartitionWeightDerivatives(const std::vector<QMAtom>& atoms, const GridSettings& settings);
    ~PartitionWeightDerivatives();
    /// Returns W_A(r); dW (numAtoms x 3, row-major, resized here) receives dW_A/dR_B with r held fixed.
    double compute(int A, const double r[3], std::vector<double>& dW) const;
private:
    struct Impl;
    std::unique_ptr<Impl> impl_;
};
/**
 * The pair data of the atomic partition, for code that evaluates it elsewhere (the GPU platforms' partition-
 * weight derivatives): invR[i n + j] = 1 / R_ij (0 on the diagonal), sizeAdjustment[i n + j] = Becke's a_ij
 * (0 without size adjustment), nearest[i] = the distance to atom i's nearest neighbour (bohr), and
 * neighbourOrder[i n + k] = the k-th nearest atom to atom i (k = 0: i itself).
 */
void partitionPairData(const std::vector<QMAtom>& atoms, const GridSettings& settings, std::vector<double>& invR,
                       std::vector<double>& sizeAdjustment, std::vector<double>& nearest, std::vector<int>& neighbourOrder);
/// The cell screening of the partition (the same wherever it is evaluated): at a point of atom A, a cell c != A is
/// left out of sum_c P_c when s(nu_cA) < 1e-15, or when P_c, its factors taken in A's neighbour order, falls below
/// this times P_A.
double partitionRelativeCellCutoff();
/// The half-width a of Stratmann, Scuseria and Frisch's cell function (their eq. 14).
double ssfHalfWidth();
/// The partition weight P_A(r) / sum_B P_B(r) of atom A at point r.
double partitionWeight(const std::vector<QMAtom>& atoms, int A, const double r[3], const GridSettings& settings);

} // namespace QM
} // namespace OpenMMDFT
