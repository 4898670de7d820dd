#ifndef OPENMMDFT_QMMMFORCEPROXY_H_
#define OPENMMDFT_QMMMFORCEPROXY_H_

#include "openmmdft/internal/windowsExportDFT.h"
#include "openmm/serialization/SerializationProxy.h"

namespace OpenMMDFT {

/**
 * XML serialization of QMMMForce. Version 1 holds the charges, the bond graph,
 * the nonbonded settings, the force group and the name; version 2 adds the QM
 * region (atoms, charge) and every QM setting. Both versions are read.
 */
class OPENMM_EXPORT_DFT QMMMForceProxy : public OpenMM::SerializationProxy {
public:
    QMMMForceProxy();
    void serialize(const void* object, OpenMM::SerializationNode& node) const;
    void* deserialize(const OpenMM::SerializationNode& node) const;
};

} // namespace OpenMMDFT

#endif
