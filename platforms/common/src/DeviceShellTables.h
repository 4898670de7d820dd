#ifndef OPENMMDFT_DEVICESHELLTABLES_H_
#define OPENMMDFT_DEVICESHELLTABLES_H_
// A basis's flat shell tables (QM::FlatShells) in device memory, for the integral kernels of kernels/qmThreeCentre.cc.
#include "openmmdft/qm/ThreeCentreTask.h"
#include "openmm/OpenMMException.h"
#include "openmm/common/ComputeArray.h"
#include "openmm/common/ComputeContext.h"
#include <algorithm>
#include <string>
#include <vector>

namespace OpenMMDFT {

/** Uploads data, allocating the array on first use (later uploads to it keep its size). */
template <class T>
inline void uploadVector(OpenMM::ComputeContext& cc, OpenMM::ComputeArray& array, const std::vector<T>& data, const char* name) {
    if (!array.isInitialized())
        array.initialize<T>(cc, std::max<size_t>(data.size(), 1), name);
    if (array.getSize() != std::max<size_t>(data.size(), 1))
        throw OpenMM::OpenMMException(std::string("QM: ") + name + " changed size within one geometry");
    if (!data.empty())
        array.upload(data);
}

/** One basis's flat shell tables in device memory. */
struct DeviceShells {
    OpenMM::ComputeArray l, atom, primStart, numPrim, offset, cartesianOffset, size, center, exponent, coefficient;
    void upload(OpenMM::ComputeContext& cc, const QM::FlatShells& shells, int totalFunctions) {
        std::vector<int> sizes(shells.offset.size());
        for (size_t s = 0; s < sizes.size(); s++)
            sizes[s] = (s + 1 < sizes.size() ? shells.offset[s + 1] : totalFunctions) - shells.offset[s];
        uploadVector(cc, l, shells.l, "qmDFShellL");
        uploadVector(cc, atom, shells.atom, "qmDFShellAtom");
        uploadVector(cc, primStart, shells.primStart, "qmDFShellPrimStart");
        uploadVector(cc, numPrim, shells.numPrim, "qmDFShellNumPrim");
        uploadVector(cc, offset, shells.offset, "qmDFShellOffset");
        uploadVector(cc, cartesianOffset, shells.cartesianOffset, "qmDFShellCartesianOffset");
        uploadVector(cc, size, sizes, "qmDFShellSize");
        uploadVector(cc, center, shells.center, "qmDFShellCenter");
        uploadVector(cc, exponent, shells.exponent, "qmDFPrimExponent");
        uploadVector(cc, coefficient, shells.coefficient, "qmDFPrimCoefficient");
    }
};

} // namespace OpenMMDFT

#endif
