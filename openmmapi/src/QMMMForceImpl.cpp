#include "openmmdft/internal/QMMMForceImpl.h"
#include "openmmdft/QMMMKernels.h"
#include "openmmdft/internal/LinkAtoms.h"
#include "openmm/OpenMMException.h"
#include "openmm/NonbondedForce.h"
#include "openmm/System.h"
#include "openmm/internal/ContextImpl.h"
#include <algorithm>
#include <map>
#include <cmath>
#include <sstream>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

QMMMForceImpl::QMMMForceImpl(const QMMMForce& owner) : owner(owner) {
}

QMMMForceImpl::~QMMMForceImpl() {
}

static vector<pair<int, int> > bondsOf(const QMMMForce& force) {
    vector<pair<int, int> > bonds(force.getNumBonds());
    for (int i = 0; i < force.getNumBonds(); i++)
        force.getBondParameters(i, bonds[i].first, bonds[i].second);
    return bonds;
}

/** The smallest perpendicular width of a (reduced, triclinic) box. */
static double smallestBoxWidth(const Vec3& a, const Vec3& b, const Vec3& c) {
    // OpenMM's reduced form has a = (ax,0,0), b = (bx,by,0), c = (cx,cy,cz): widths are ax, by, cz.
    return min(a[0], min(b[1], c[2]));
}

/** A periodic method's cutoff against the box: the cutoff given, since a Context keeps the one it was created with. */
static void checkCutoffAgainstBox(double cutoff, const Vec3& a, const Vec3& b, const Vec3& c) {
    for (const Vec3* v : {&a, &b, &c})
        for (int d = 0; d < 3; d++)
            if (!std::isfinite((*v)[d])) {
                stringstream msg;
                msg << "QMMMForce: the periodic box vectors are not finite (" << a << ", " << b << ", " << c << " nm)";
                throw OpenMMException(msg.str());
            }
    double width = smallestBoxWidth(a, b, c);
    if (cutoff > 0.5 * width) {
        stringstream msg;
        msg << "QMMMForce: the cutoff distance (" << cutoff
            << " nm) cannot be larger than half the periodic box width (" << 0.5 * width << " nm)";
        throw OpenMMException(msg.str());
    }
}

static vector<pair<int, int> > qmAtomsOf(const QMMMForce& force) {
    vector<pair<int, int> > atoms(force.getNumQMAtoms());
    for (int i = 0; i < force.getNumQMAtoms(); i++)
        force.getQMAtomParameters(i, atoms[i].first, atoms[i].second);
    return atoms;
}

/**
 * A bond between a QM atom and an MM particle gets a link atom: its QM atom's element needs a link bond length, and its
 * MM end (M1) needs exactly one QM neighbour and at least one MM neighbour (the M2s that take its boundary charge).
 */
static void validateLinkAtoms(const QMMMForce& force, const vector<LinkAtomBond>& links) {
    map<int, int> qmNeighbours;  // of each M1: one link per QM neighbour
    for (const LinkAtomBond& link : links)
        qmNeighbours[link.mmParticle]++;
    for (const LinkAtomBond& link : links) {
        stringstream msg;
        msg << "QMMMForce: the bond between QM atom " << link.qmParticle << " and MM particle " << link.mmParticle
            << " crosses the QM/MM boundary and needs a link atom, but ";
        if (link.bondLength == 0) {
            int particle, z;
            force.getQMAtomParameters(link.qmAtom, particle, z);
            msg << "element " << z << " has no link atom bond length (defaults exist for C, N, O, Si, P, S): call "
                << "setLinkAtomBondLength";
            throw OpenMMException(msg.str());
        }
        if (qmNeighbours[link.mmParticle] > 1) {
            msg << "MM particle " << link.mmParticle << " is bonded to " << qmNeighbours[link.mmParticle]
                << " QM atoms: put it into the QM region or cut the QM region elsewhere";
            throw OpenMMException(msg.str());
        }
        if (link.boundaryNeighbours.empty()) {
            msg << "MM particle " << link.mmParticle << " has no other MM neighbour (that is not bonded to the QM region "
                << "itself) to take its boundary charge: put it into the QM region";
            throw OpenMMException(msg.str());
        }
    }
}

/** The QM region: particles exist, the electron count (with one per link hydrogen) is even, link atoms are possible. */
static void validateQMRegion(const QMMMForce& force) {
    if (force.getNumQMAtoms() == 0)
        return;
    vector<bool> isQM(force.getNumParticles(), false);
    long long electrons = -(long long) force.getQMCharge();  // a charge near INT_MIN must not overflow the count
    for (auto& atom : qmAtomsOf(force)) {
        if (atom.first >= force.getNumParticles()) {
            stringstream msg;
            msg << "QMMMForce: QM atom particle index " << atom.first << " is out of range (the Force has "
                << force.getNumParticles() << " particles)";
            throw OpenMMException(msg.str());
        }
        isQM[atom.first] = true;
        electrons += atom.second;
    }
    const vector<LinkAtomBond> links = linkAtomBondsOf(force);
    validateLinkAtoms(force, links);
    electrons += links.size();
    if (electrons <= 0 || electrons > 1000000) {
        stringstream msg;
        msg << "QMMMForce: the QM region has " << electrons << " electrons (QM charge " << force.getQMCharge() << ")";
        if (electrons > 0)
            msg << ", more than a QM region can hold";
        throw OpenMMException(msg.str());
    }
    if (electrons % 2 != 0) {
        stringstream msg;
        msg << "QMMMForce: the QM region has an odd number of electrons (" << electrons;
        if (!links.empty())
            msg << ", with its " << links.size() << " link hydrogens";
        msg << "); open-shell systems are not supported (restricted Kohn-Sham only)";
        throw OpenMMException(msg.str());
    }
}

/**
 * With Ewald the MM-MM Coulomb terms stay in the System's NonbondedForce (OpenMM's PME or Ewald sum): one must be there,
 * with the MM charges this Force embeds the QM region in (otherwise they would be lost or counted with other charges),
 * and a QM atom charged in any NonbondedForce would interact twice with the MM charges (classically there, quantum
 * mechanically here).
 */
static void checkQMChargesLeftToThisForce(const QMMMForce& force, const System& system) {
    const vector<pair<int, int> > qmAtoms = qmAtomsOf(force);
    const NonbondedForce* ewaldForce = nullptr;
    for (int f = 0; f < system.getNumForces(); f++) {
        const NonbondedForce* nonbonded = dynamic_cast<const NonbondedForce*>(&system.getForce(f));
        if (nonbonded == nullptr || nonbonded->getNumParticles() != force.getNumParticles())
            continue;
        for (auto& atom : qmAtoms) {
            double charge, sigma, epsilon;
            nonbonded->getParticleParameters(atom.first, charge, sigma, epsilon);
            if (charge != 0) {
                stringstream msg;
                msg << "QMMMForce (Ewald): QM atom " << atom.first << " has charge " << charge << " in the System's "
                    << "NonbondedForce, which keeps the MM-MM Coulomb terms with this method; the QM region's electrostatics "
                    << "are this Force's, so set the QM atoms' NonbondedForce charges and the charge products of their "
                    << "exceptions to zero (openmmdft.createQMMMSystem does)";
                throw OpenMMException(msg.str());
            }
        }
        const NonbondedForce::NonbondedMethod method = nonbonded->getNonbondedMethod();
        if (method == NonbondedForce::PME || method == NonbondedForce::Ewald || method == NonbondedForce::LJPME)
            ewaldForce = nonbonded;
    }
    if (ewaldForce == nullptr)
        throw OpenMMException("QMMMForce (Ewald): the MM-MM Coulomb terms stay in the System's NonbondedForce with this method, "
                              "but the System has no NonbondedForce with PME, LJPME or Ewald for its particles (with cutoff "
                              "methods QMMMForce carries them itself: openmmdft.createQMMMSystem chooses)");
    vector<bool> isQM(force.getNumParticles(), false);
    for (auto& atom : qmAtoms)
        isQM[atom.first] = true;
    for (int p = 0; p < force.getNumParticles(); p++) {
        double charge, nonbondedCharge, sigma, epsilon;
        force.getParticleParameters(p, charge);
        ewaldForce->getParticleParameters(p, nonbondedCharge, sigma, epsilon);
        if (!isQM[p] && !(fabs(charge - nonbondedCharge) <= 1e-6 * max(1.0, fabs(charge)))) {
            stringstream msg;
            msg << "QMMMForce (Ewald): MM particle " << p << " has charge " << charge << " here but " << nonbondedCharge
                << " in the System's NonbondedForce, which keeps the MM-MM Coulomb terms with this method: the QM region "
                << "would be embedded in other charges than the MM ones interact with (openmmdft.createQMMMSystem keeps them equal)";
            throw OpenMMException(msg.str());
        }
    }
}

void QMMMForceImpl::validate(const QMMMForce& force, const System& system) {
    // One QMMMForce carries every Coulomb interaction of the System; a second would count the MM-MM pairs twice, and
    // each QM region would see the other's atoms as MM charges.
    vector<int> qmmmForces;
    for (int f = 0; f < system.getNumForces(); f++)
        if (dynamic_cast<const QMMMForce*>(&system.getForce(f)) != nullptr)
            qmmmForces.push_back(f);
    if (qmmmForces.size() > 1) {
        stringstream msg;
        msg << "QMMMForce: the System holds " << qmmmForces.size() << " QMMMForces (Forces";
        for (int f : qmmmForces)
            msg << " " << f;
        msg << "), but one carries all the Coulomb interactions and the whole QM region: put every QM atom into one of them";
        throw OpenMMException(msg.str());
    }
    if (force.getNumParticles() != system.getNumParticles()) {
        stringstream msg;
        msg << "QMMMForce has " << force.getNumParticles() << " particles but the System has "
            << system.getNumParticles() << ": call addParticle once per System particle";
        throw OpenMMException(msg.str());
    }
    for (int i = 0; i < force.getNumBonds(); i++) {
        int p1, p2;
        force.getBondParameters(i, p1, p2);
        if (p1 >= force.getNumParticles() || p2 >= force.getNumParticles()) {
            stringstream msg;
            msg << "QMMMForce: bond " << i << " (" << p1 << "-" << p2 << ") refers to a particle that does not exist (the Force has "
                << force.getNumParticles() << " particles)";
            throw OpenMMException(msg.str());
        }
    }
    validateQMRegion(force);
    if (force.getNonbondedMethod() != QMMMForce::NoCutoff && !(force.getCutoffDistance() > 0))
        throw OpenMMException("QMMMForce: the cutoff distance must be positive");
    if (force.usesPeriodicBoundaryConditions()) {
        Vec3 a, b, c;
        system.getDefaultPeriodicBoxVectors(a, b, c);
        checkCutoffAgainstBox(force.getCutoffDistance(), a, b, c);
    }
    if (force.getNonbondedMethod() == QMMMForce::Ewald)
        checkQMChargesLeftToThisForce(force, system);
}

void QMMMForceImpl::initialize(ContextImpl& context) {
    validate(owner, context.getSystem());
    initialBonds = bondsOf(owner);
    initialQMAtoms = qmAtomsOf(owner);
    initialMethod = owner.getNonbondedMethod();
    initialCutoff = owner.getCutoffDistance();
    initialDielectric = owner.getReactionFieldDielectric();
    kernel = context.getPlatform().createKernel(CalcQMMMForceKernel::Name(), context);
    if (owner.getNumQMAtoms() > 0 && !kernel.getAs<CalcQMMMForceKernel>().supportsQMRegion())
        throw OpenMMException("QMMMForce: the " + context.getPlatform().getName() + " platform's kernel cannot compute a QM "
                              "region: create the Context on the CPU platform, "
                              "e.g. Context(system, integrator, Platform.getPlatformByName('CPU'))");
    kernel.getAs<CalcQMMMForceKernel>().initialize(context.getSystem(), owner);
}

double QMMMForceImpl::calcForcesAndEnergy(ContextImpl& context, bool includeForces, bool includeEnergy, int groups) {
    // The QM region may have a force group of its own (setQMForceGroup), like NonbondedForce's reciprocal space.
    const bool includeMM = (groups & (1 << owner.getForceGroup())) != 0;
    const bool includeQM = (groups & (1 << (owner.getQMForceGroup() < 0 ? owner.getForceGroup() : owner.getQMForceGroup()))) != 0;
    if (!includeMM && !includeQM)
        return 0.0;
    if (initialMethod == QMMMForce::CutoffPeriodic || initialMethod == QMMMForce::Ewald) {
        // A barostat can shrink the box during a run, so this is checked every evaluation, with the method and cutoff
        // this Context has (the Force's may have been changed since, without effect until a reinitialize()).
        Vec3 a, b, c;
        context.getPeriodicBoxVectors(a, b, c);
        checkCutoffAgainstBox(initialCutoff, a, b, c);
    }
    CalcQMMMForceKernel& qmmmKernel = kernel.getAs<CalcQMMMForceKernel>();
    double energy = qmmmKernel.execute(context, includeForces, includeEnergy, includeMM, includeQM);
    if (includeEnergy && !std::isfinite(energy) && !qmmmKernel.lastEvaluationRejected())
        throw OpenMMException("QMMMForce: the energy is NaN or infinite; check the positions for NaN or overlapping charges");
    return energy;
}

vector<string> QMMMForceImpl::getKernelNames() {
    vector<string> names;
    names.push_back(CalcQMMMForceKernel::Name());
    return names;
}

vector<pair<int, int> > QMMMForceImpl::getBondedParticles() const {
    // Tells the Context which particles belong to the same molecule (used to keep molecules whole).
    return bondsOf(owner);
}

void QMMMForceImpl::updateParametersInContext(ContextImpl& context) {
    // Everything is checked before anything is applied, so a refused update changes nothing.
    if (owner.getNumParticles() != context.getSystem().getNumParticles())
        throw OpenMMException("QMMMForce.updateParametersInContext: the number of particles has changed");
    vector<pair<int, int> > bonds = bondsOf(owner);
    if (bonds != initialBonds)
        throw OpenMMException("QMMMForce.updateParametersInContext: the bond graph has changed since the Context was created; "
                              "exclusions are fixed for the life of a Context, call Context.reinitialize() to rebuild them");
    if (qmAtomsOf(owner) != initialQMAtoms)
        throw OpenMMException("QMMMForce.updateParametersInContext: the QM atoms have changed since the Context was created; "
                              "call Context.reinitialize()");
    // The cutoff and method shape the MM pair kernel's neighbour lists (and, on the GPU platforms,
    // its compiled kernels), as for NonbondedForce: fixed for the life of a Context.
    if (owner.getNonbondedMethod() != initialMethod || owner.getCutoffDistance() != initialCutoff ||
        owner.getReactionFieldDielectric() != initialDielectric)
        throw OpenMMException("QMMMForce.updateParametersInContext: the nonbonded method, cutoff distance and reaction-field "
                              "dielectric are fixed for the life of a Context; call Context.reinitialize() to change them");
    validate(owner, context.getSystem());
    kernel.getAs<CalcQMMMForceKernel>().copyParametersToContext(context, owner);
    context.systemChanged();
}

QMResults QMMMForceImpl::getQMResults() const {
    return kernel.getAs<const CalcQMMMForceKernel>().getQMResults();
}
