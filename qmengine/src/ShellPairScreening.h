#pragma once
// Internal to the engine: the screening bound of a shell pair's product, shared by the Libint and the Hermite
// (point-charge) integrals.
#include "openmmdft/qm/Basis.h"

namespace OpenMMDFT {
namespace QM {

/// Upper bound of |<a|b>|-like products for a shell pair (most diffuse primitives), for screening.
double pairOverlapBound(const Shell& a, const Shell& b);

} // namespace QM
} // namespace OpenMMDFT
