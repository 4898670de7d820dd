#ifndef OPENMMDFT_DENSITYEXTRAPOLATIONORDER_H_
#define OPENMMDFT_DENSITYEXTRAPOLATIONORDER_H_

#include "openmmdft/QMMMForce.h"
#include "openmmdft/internal/windowsExportDFT.h"

namespace OpenMMDFT {

/**
 * The orders each density extrapolation takes, checked where the Force is set up and where the QM driver builds its
 * history from it: ASPC 1-6 (Kolafa's coefficients), PolynomialExtrapolation 1-6, XLBOMD 3-7 (Niklasson's tabulated
 * dissipation coefficients); PreviousDensity uses no order and accepts any. Otherwise an OpenMMException that names
 * the method and the range.
 */
OPENMM_EXPORT_DFT void checkDensityExtrapolationOrder(QMMMForce::DensityExtrapolation method, int order);

} // namespace OpenMMDFT

#endif
