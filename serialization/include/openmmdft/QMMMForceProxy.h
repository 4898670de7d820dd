#ifndef OPENMMDFT_QMMMFORCEPROXY_H_
#define OPENMMDFT_QMMMFORCEPROXY_H_

#include "openmmdft/internal/windowsExportDFT.h"
#include "openmm/serialization/SerializationProxy.h"

namespace OpenMMDFT {

/**
 * XML serialization of QMMMForce. Version 1 holds the charges, the bond graph,
 * the nonbonded settings, the force group and the name; version 2 adds the QM
 * region (atoms, charge) and every QM setting. Both versions are read, strictly: a number must be
 * the whole attribute (finite for doubles, in range for ints and enumerations), and an unknown
 * attribute or element, a version newer than this build's, or a QM region in a version-1
 * document is an OpenMMException naming it, never a default or a silently dropped part.
 */
class OPENMM_EXPORT_DFT QMMMForceProxy : public OpenMM::SerializationProxy {
public:
    QMMMForceProxy();
    void serialize(const void* object, OpenMM::SerializationNode& node) const;
    void* deserialize(const OpenMM::SerializationNode& node) const;
};

} // namespace OpenMMDFT

#endif
