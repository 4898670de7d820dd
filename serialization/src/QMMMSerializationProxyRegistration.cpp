#include "openmmdft/QMMMForce.h"
#include "openmmdft/QMMMForceProxy.h"
#include "openmm/serialization/SerializationProxy.h"

using namespace OpenMM;
using namespace OpenMMDFT;

/* Registers the XML proxies when the library is loaded, so XmlSerializer knows QMMMForce
 * as soon as the library (or the Python module linking it) is. */
extern "C" OPENMM_EXPORT_DFT void registerQMMMSerializationProxies() {
    SerializationProxy::registerProxy(typeid(QMMMForce), new QMMMForceProxy());
}

namespace {
struct RegisterProxiesAtLoad {
    RegisterProxiesAtLoad() {
        registerQMMMSerializationProxies();
    }
} registerProxiesAtLoad;
}
