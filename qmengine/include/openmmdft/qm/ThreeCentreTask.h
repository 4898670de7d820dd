#pragma once
// The three-centre Coulomb integrals (P|ab) of density fitting, flattened so that a GPU platform can compute them
// and the contractions of their nuclear derivatives with McMurchie-Davidson (McMurchie and Davidson, J. Comput.
// Phys. 26, 218 (1978); Helgaker, Jorgensen and Olsen, "Molecular Electronic-Structure Theory", 9.9): the same shells,
// function pairs and screening as the host's DensityFittedCoulomb, and the host's Boys-function table.
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Types.h"
#include <utility>
#include <vector>

namespace OpenMMDFT {
namespace QM {

/// One basis's shells as flat arrays (atomic units; coefficients as in Shell, normalization embedded).
struct FlatShells {
    std::vector<int> l, atom, primStart, numPrim;
    std::vector<int> offset;           ///< first function in the basis's own functions (pure where it is pure)
    std::vector<int> cartesianOffset;  ///< first function in the all-cartesian basis
    std::vector<double> center;       ///< x y z per shell
    std::vector<double> exponent, coefficient;
    int maxL = 0;
};

struct ThreeCentreTask {
    FlatShells basis, aux;
    /// Significant shell pairs (first >= second) and the first column of B that each fills: the pair's cartesian
    /// functions (i, j), i-major, with i >= j when both shells are one.
    std::vector<int> pairFirst, pairSecond, pairColumn;
    int rows = 0;     ///< auxiliary functions (pure where the auxiliary basis is pure)
    int columns = 0;  ///< cartesian function pairs
    /// Per auxiliary shell, its (functions x cartesian components) transform, row-major, starting at auxTransformStart.
    std::vector<double> auxTransform;
    std::vector<int> auxTransformStart;
    /// The Boys function table of the host (BoysFunction.h): F_m(k step) at [k * boysOrders + m].
    std::vector<double> boysTable;
    double boysStep = 0, boysEnd = 0;
    int boysOrders = 0, boysTaylorTerms = 0, boysPoints = 0;
};

/// The task of the significant shell pairs (first >= second) of basis, whose B columns start at pairColumn.
ThreeCentreTask makeThreeCentreTask(const BasisSet& basis, const BasisSet& auxiliary, const std::vector<std::pair<int, int>>& shellPairs,
                                    const std::vector<int>& pairColumn, int columns);

/**
 * Point charges (nuclei or MM charges) as the task's "fitting functions": one s function per charge, of one primitive
 * with coefficient 1, centred on it, its atom the charge's index; pairs of basis, with shell pairs screened by the
 * overlap bound below threshold as in pointChargeGradient (threshold <= 0: every pair). A device evaluates the
 * point-charge limit of the three-centre integrals for them.
 */
ThreeCentreTask makePointChargeTask(const BasisSet& basis, const std::vector<PointCharge>& charges, double threshold);

} // namespace QM
} // namespace OpenMMDFT
