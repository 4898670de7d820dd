#pragma once
// Internal to the engine: the Boys function F_m(T) = int_0^1 t^(2m) exp(-T t^2) dt of the Coulomb integrals over
// Gaussians (McMurchie and Davidson, J. Comput. Phys. 26, 218 (1978); Helgaker, Jorgensen and Olsen, "Molecular
// Electronic-Structure Theory", section 9.8.1).

#include <vector>

namespace OpenMMDFT {
namespace QM {

constexpr int kMaxBoysOrder = 16;
/// The table behind boysFunction (also uploaded to GPU platforms, which evaluate F_m the same way).
constexpr double kBoysTableStep = 0.05;
constexpr double kBoysTableEnd = 45.0;
constexpr int kBoysTaylorTerms = 7;
constexpr int kBoysTableOrders = kMaxBoysOrder + kBoysTaylorTerms;
/// F_m(k kBoysTableStep) at [k * kBoysTableOrders + m], k = 0 .. kBoysTableEnd / kBoysTableStep.
const std::vector<double>& boysTableValues();

/// F_0(T) ... F_mMax(T) into F (0 <= mMax <= kMaxBoysOrder, T >= 0), to about 1e-15 relative: for T below 45 the
/// highest order from a 7-term Taylor expansion about a tabulated point (step 0.05) and the others by downward
/// recursion; beyond, F_0 = sqrt(pi/T)/2 (erfc(sqrt(45)) is 1e-21) and upward recursion, which is stable there.
void boysFunction(int mMax, double T, double* F);

/// Lanes boysFunctionBlock evaluates together (the charges of one hermiteCoulombBlock).
constexpr int kBoysBlock = 8;

/// boysFunction at kBoysBlock arguments T[lane], into F[m * kBoysBlock + lane]: a block wholly beyond the table (far
/// charges, the common case with many MM charges) takes the upward recursion lane-parallel.
void boysFunctionBlock(int mMax, const double* T, double* F);

} // namespace QM
} // namespace OpenMMDFT
