#include "openmmdft/internal/QMEmbedding.h"
#include "openmm/OpenMMException.h"
#include "openmmdft/internal/LinkAtoms.h"
#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <numeric>
#include <sstream>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

vector<double> OpenMMDFT::chargesOfMMPairs(const QMMMForce& force) {
    vector<double> charges(force.getNumParticles());
    for (int i = 0; i < force.getNumParticles(); i++)
        force.getParticleParameters(i, charges[i]);
    for (int i = 0; i < force.getNumQMAtoms(); i++) {
        int particle, z;
        force.getQMAtomParameters(i, particle, z);
        charges[particle] = 0.0;
    }
    return charges;
}

void OpenMMDFT::checkPositionsAreFinite(const vector<Vec3>& positions, const string& why) {
    vector<size_t> bad;
    for (size_t i = 0; i < positions.size(); i++)
        if (!isfinite(positions[i][0]) || !isfinite(positions[i][1]) || !isfinite(positions[i][2]))
            bad.push_back(i);
    if (bad.empty())
        return;
    stringstream msg;
    if (bad.size() == 1)
        msg << "QMMMForce: the position of particle " << bad[0] << " is NaN or infinite";
    else {
        // All of them (up to a few): a platform that moves molecules into a periodic box whole carries one atom's NaN
        // to the rest of its molecule, and the first of them need not be the atom that was set.
        const size_t shown = std::min<size_t>(bad.size(), 8);
        msg << "QMMMForce: the positions of particles ";
        for (size_t k = 0; k < shown; k++)
            msg << (k == 0 ? "" : ", ") << bad[k];
        if (bad.size() > shown)
            msg << " and " << bad.size() - shown << " more";
        msg << " are NaN or infinite (with a periodic box, one atom's NaN can reach every atom of its molecule when the "
               "platform moves molecules into the box)";
    }
    if (!why.empty())
        msg << " (" << why << ")";
    throw OpenMMException(msg.str());
}

Vec3 QMEmbedding::minimumImage(const Vec3& a, const Vec3& b, const Vec3* box) {
    Vec3 d = b - a;
    d -= box[2] * floor(d[2] / box[2][2] + 0.5);
    d -= box[1] * floor(d[1] / box[1][1] + 0.5);
    d -= box[0] * floor(d[0] / box[0][0] + 0.5);
    return d;
}

double QMEmbedding::smallestWidth(const Vec3* box) {
    // Reduced form: a = (ax,0,0), b = (bx,by,0), c = (cx,cy,cz); the widths between opposite faces are ax, by, cz.
    return min(box[0][0], min(box[1][1], box[2][2]));
}

QMEmbedding::QMEmbedding(const QMMMForce& force) {
    const int n = force.getNumParticles();
    qmIndexOfParticle.assign(n, -1);
    for (int i = 0; i < force.getNumQMAtoms(); i++) {
        int particle, z;
        force.getQMAtomParameters(i, particle, z);
        qmIndexOfParticle[particle] = i;
        qmParticles.push_back(particle);
        qmAtomicNumbers.push_back(z);
    }
    vector<vector<int> > neighbours(n);
    for (int i = 0; i < force.getNumBonds(); i++) {
        int p1, p2;
        force.getBondParameters(i, p1, p2);
        neighbours[p1].push_back(p2);
        neighbours[p2].push_back(p1);
    }
    for (const LinkAtomBond& link : linkAtomBondsOf(force)) {
        links.push_back({link.qmAtom, link.mmParticle, link.bondLength});
        mmNeighboursOfLink.push_back(link.boundaryNeighbours);
    }
    // Molecules = connected components within the QM region and within the MM region (a bond across the boundary
    // is a link atom's), each as a breadth-first spanning tree from its lowest index.
    vector<bool> seen(n, false);
    mmMoleculeOfParticle.assign(n, -1);
    localIndexOfParticle.assign(n, -1);
    for (int root = 0; root < n; root++) {
        if (seen[root])
            continue;
        const bool qm = qmIndexOfParticle[root] >= 0;
        Molecule mol;
        mol.particles.push_back(root);
        mol.parent.push_back(-1);
        seen[root] = true;
        for (size_t k = 0; k < mol.particles.size(); k++)
            for (int next : neighbours[mol.particles[k]])
                if (!seen[next] && (qmIndexOfParticle[next] >= 0) == qm) {
                    seen[next] = true;
                    mol.particles.push_back(next);
                    mol.parent.push_back((int) k);
                }
        if (!qm)
            for (size_t k = 0; k < mol.particles.size(); k++) {
                mmMoleculeOfParticle[mol.particles[k]] = mmMolecules.size();
                localIndexOfParticle[mol.particles[k]] = k;
            }
        (qm ? qmMolecules : mmMolecules).push_back(mol);
    }
    linksOfMolecule.assign(mmMolecules.size(), vector<int>());
    for (size_t l = 0; l < links.size(); l++)
        linksOfMolecule[mmMoleculeOfParticle[links[l].mmParticle]].push_back(l);
    setParameters(force);
}

void QMEmbedding::setParameters(const QMMMForce& force) {
    // The links themselves follow from the bonds and the QM atoms, which an update may not change; their lengths
    // (setLinkAtomBondLength) may.
    // Everything that can fail is checked before anything changes: a refused update leaves the embedding as it was.
    const vector<LinkAtomBond> bonds = linkAtomBondsOf(force);
    if (bonds.size() != links.size())
        throw OpenMMException("QMMMForce: the link atoms changed; call reinitialize() instead of updateParametersInContext()");
    const bool newSwitching = force.getUseEmbeddingSwitchingFunction() && force.getNonbondedMethod() != QMMMForce::NoCutoff;
    if (newSwitching && !(force.getEmbeddingSwitchingDistance() < force.getCutoffDistance())) {
        stringstream msg;
        msg << "QMMMForce: the embedding switching distance (" << force.getEmbeddingSwitchingDistance()
            << " nm) must be smaller than the cutoff (" << force.getCutoffDistance() << " nm)";
        throw OpenMMException(msg.str());
    }
    for (size_t l = 0; l < links.size(); l++)
        links[l].bondLength = bonds[l].bondLength;
    charges.resize(force.getNumParticles());
    for (int i = 0; i < force.getNumParticles(); i++)
        force.getParticleParameters(i, charges[i]);
    // Boundary charges: each M1's charge q leaves the embedding, q0 = q / n for each of its n M1-M2 bonds.
    sitesOfMolecule.assign(mmMolecules.size(), vector<BoundarySite>());
    vector<double> m1Charges(links.size());
    for (size_t l = 0; l < links.size(); l++) {
        m1Charges[l] = charges[links[l].mmParticle];
        charges[links[l].mmParticle] = 0.0;
    }
    // Charge shift: the pair restoring a bond's dipole sits this fraction of the M1-M2 bond either side of M2
    // (0.15 A per 2.5 A of bond, as ChemShell and ASH place it).
    const double pairOffset = 0.06;
    const bool chargeShift = force.getBoundaryChargeScheme() == QMMMForce::ChargeShift;
    for (size_t l = 0; l < links.size(); l++) {
        const int m1 = links[l].mmParticle;
        const double q0 = m1Charges[l] / mmNeighboursOfLink[l].size();
        vector<BoundarySite>& sites = sitesOfMolecule[mmMoleculeOfParticle[m1]];
        const int local1 = localIndexOfParticle[m1];
        for (int m2 : mmNeighboursOfLink[l]) {
            const int local2 = localIndexOfParticle[m2];
            if (chargeShift) {
                // q0 onto M2; the dipole -q0 (M2 - M1) as -c at M2 + a (M2 - M1) and +c at M2 - a (M2 - M1), c = q0 / (2a).
                charges[m2] += q0;
                const double c = q0 / (2 * pairOffset);
                sites.push_back({local1, local2, -pairOffset, 1 + pairOffset, -c});
                sites.push_back({local1, local2, pairOffset, 1 - pairOffset, c});
            }
            else {
                // RCD: 2 q0 at the bond's middle and q0 less on M2, the bond's dipole as with q0 on M1.
                charges[m2] -= q0;
                sites.push_back({local1, local2, 0.5, 0.5, 2 * q0});
            }
        }
    }
    method = force.getNonbondedMethod();
    periodic = force.usesPeriodicBoundaryConditions();
    cutoff = force.getCutoffDistance();
    useSwitching = newSwitching;
    switchingDistance = force.getEmbeddingSwitchingDistance();
}

vector<Vec3> QMEmbedding::wholeMolecule(const Molecule& mol, const vector<Vec3>& positions, const Vec3* box) const {
    vector<Vec3> whole(mol.particles.size());
    for (size_t k = 0; k < mol.particles.size(); k++) {
        const Vec3& p = positions[mol.particles[k]];
        if (mol.parent[k] < 0)
            whole[k] = p;
        else {
            // Bonds are short, so the minimum image of a bonded pair is the bond itself.
            const int parent = mol.parent[k];
            whole[k] = whole[parent] + minimumImage(positions[mol.particles[parent]], p, box);
        }
    }
    return whole;
}

vector<Vec3> QMEmbedding::placeQMRegion(const vector<Vec3>& positions, const Vec3* box) const {
    vector<Vec3> qm(qmParticles.size());
    if (!periodic) {
        for (size_t i = 0; i < qmParticles.size(); i++)
            qm[i] = positions[qmParticles[i]];
        return qm;
    }
    const size_t numMolecules = qmMolecules.size();
    vector<vector<Vec3> > whole(numMolecules);
    for (size_t m = 0; m < numMolecules; m++)
        whole[m] = wholeMolecule(qmMolecules[m], positions, box);
    // Prim's order: each step places the unplaced molecule closest (by minimum image) to the placed ones.
    vector<bool> placed(numMolecules, false);
    vector<Vec3> placedAtoms = whole[0];
    placed[0] = true;
    for (size_t step = 1; step < numMolecules; step++) {
        double best = numeric_limits<double>::infinity();
        size_t bestMolecule = 0;
        Vec3 bestShift;
        for (size_t m = 0; m < numMolecules; m++) {
            if (placed[m])
                continue;
            for (const Vec3& a : whole[m])
                for (const Vec3& q : placedAtoms) {
                    Vec3 d = minimumImage(q, a, box);
                    double r2 = d.dot(d);
                    if (r2 < best) {
                        best = r2;
                        bestMolecule = m;
                        bestShift = q + d - a;
                    }
                }
        }
        placed[bestMolecule] = true;
        for (Vec3& a : whole[bestMolecule]) {
            a += bestShift;
            placedAtoms.push_back(a);
        }
    }
    for (size_t m = 0; m < numMolecules; m++)
        for (size_t k = 0; k < whole[m].size(); k++)
            qm[qmIndexOfParticle[qmMolecules[m].particles[k]]] = whole[m][k];
    return qm;
}

QMEmbedding::Placement QMEmbedding::place(const vector<Vec3>& positions, const Vec3* box) const {
    Placement out;
    out.qmPositions = placeQMRegion(positions, box);
    const vector<Vec3>& qm = out.qmPositions;
    for (size_t i = 0; i < qm.size(); i++)
        for (size_t j = 0; j < i; j++) {
            Vec3 d = qm[i] - qm[j];
            out.qmExtent = max(out.qmExtent, sqrt(d.dot(d)));
        }
    if (periodic && out.qmExtent + 2 * cutoff > smallestWidth(box)) {
        stringstream msg;
        msg << "QMMMForce: the QM region (extent " << out.qmExtent << " nm) plus twice the cutoff (" << 2 * cutoff
            << " nm) does not fit in the periodic box (smallest width " << smallestWidth(box)
            << " nm): the embedding would see some MM charges twice or not at all. Use a larger box, a smaller cutoff "
            << "or a smaller QM region (QM extent + 2 x cutoff <= smallest box width)";
        throw OpenMMException(msg.str());
    }
    out.linkMMPositions.assign(links.size(), Vec3());
    vector<bool> linkPlaced(links.size(), false);
    auto add = [&](const Vec3& p, int particle, double charge, double scale) {
        if (charge != 0.0) {
            out.mmPositions.push_back(p);
            out.mmCharges.push_back(scale * charge);
            out.mmBaseCharges.push_back(charge);
            out.mmParticles.push_back(particle);
        }
    };
    // A molecule's charges, each particle at placed(k), and its boundary charges and link M1s.
    auto addMolecule = [&](size_t m, const function<Vec3(size_t)>& placed, double scale) {
        const Molecule& mol = mmMolecules[m];
        for (size_t k = 0; k < mol.particles.size(); k++)
            add(placed(k), mol.particles[k], charges[mol.particles[k]], scale);
        for (const BoundarySite& site : sitesOfMolecule[m]) {
            const int charge = out.mmCharges.size();
            add(placed(site.local1) * site.weight1 + placed(site.local2) * site.weight2, mol.particles[site.local2], site.charge, scale);
            if ((int) out.mmCharges.size() > charge)
                out.sites.push_back({charge, mol.particles[site.local1], mol.particles[site.local2], site.weight1, site.weight2});
        }
        for (int l : linksOfMolecule[m]) {
            out.linkMMPositions[l] = placed(localIndexOfParticle[links[l].mmParticle]);
            linkPlaced[l] = true;
        }
    };
    const double cutoff2 = cutoff * cutoff;
    for (size_t m = 0; m < mmMolecules.size(); m++) {
        const Molecule& mol = mmMolecules[m];
        if (method == QMMMForce::NoCutoff) {
            addMolecule(m, [&](size_t k) { return positions[mol.particles[k]]; }, 1.0);
            continue;
        }
        // The closest pair of a molecule atom and a QM atom (by minimum image when periodic) decides whether the
        // molecule is embedded, where it is placed (periodic: that image, unique under the fit condition above),
        // and its switching scale.
        vector<Vec3> whole = periodic ? wholeMolecule(mol, positions, box) : vector<Vec3>();
        double best = cutoff2;
        Vec3 shift, delta;
        int closestAtom = -1, closestQM = -1;
        for (size_t k = 0; k < mol.particles.size(); k++) {
            const Vec3& a = periodic ? whole[k] : positions[mol.particles[k]];
            for (size_t j = 0; j < qm.size(); j++) {
                Vec3 d = periodic ? minimumImage(qm[j], a, box) : a - qm[j];
                double r2 = d.dot(d);
                if (r2 < best) {
                    best = r2;
                    shift = qm[j] + d - a;
                    delta = d;
                    closestAtom = k;
                    closestQM = j;
                }
            }
        }
        if (closestAtom < 0)
            continue;
        double scale = 1.0, slope = 0.0;
        if (useSwitching)
            switchingFunction(sqrt(best), scale, slope);
        const int firstCharge = out.mmCharges.size();
        addMolecule(m, [&](size_t k) { return periodic ? whole[k] + shift : positions[mol.particles[k]]; }, scale);
        if (slope != 0.0)
            out.switched.push_back({firstCharge, (int) out.mmCharges.size(), mol.particles[closestAtom], closestQM, delta, slope});
    }
    // Link hydrogens after the QM atoms, at the link bond length from Q1 towards M1 as placed.
    for (size_t l = 0; l < links.size(); l++) {
        if (!linkPlaced[l]) {
            stringstream msg;
            msg << "QMMMForce: MM particle " << links[l].mmParticle << ", bonded to QM atom " << qmParticles[links[l].qmAtom]
                << ", is beyond the cutoff (" << cutoff << " nm) of the QM region, so its link atom has no position";
            throw OpenMMException(msg.str());
        }
        const Vec3 q1 = out.qmPositions[links[l].qmAtom], bond = out.linkMMPositions[l] - q1;
        const double length = sqrt(bond.dot(bond));
        if (!(length > 1e-3)) {  // 0.01 A: the direction of the cut bond, and with it the link atom, is undefined
            stringstream msg;
            msg << "QMMMForce: MM particle " << links[l].mmParticle << " is " << length << " nm from QM atom "
                << qmParticles[links[l].qmAtom] << ", to which it is bonded, so the link atom between them has no direction";
            throw OpenMMException(msg.str());
        }
        out.qmPositions.push_back(q1 + bond * (links[l].bondLength / length));
    }
    checkSeparation(out);
    return out;
}

void QMEmbedding::switchingFunction(double r, double& scale, double& slope) const {
    // OpenMM's switching polynomial (as NonbondedForce::setUseSwitchingFunction): C2-continuous at both ends.
    scale = 1.0;
    slope = 0.0;
    if (r <= switchingDistance)
        return;
    const double width = cutoff - switchingDistance, x = (r - switchingDistance) / width;
    scale = 1 + x * x * x * (-10 + x * (15 - 6 * x));
    slope = x * x * (-30 + x * (60 - 30 * x)) / width;
}

double QMEmbedding::getCharge(int particle) const {
    return charges[particle];
}

void QMEmbedding::checkSeparation(const Placement& placement) const {
    // A point charge on (or nearly on) a nucleus makes the energy infinite or meaningless; say so
    // here rather than let the SCF fail with an infinite energy.
    const double closest = 0.01; // nm (0.1 A), the QM engine's limit for two nuclei too
    for (size_t c = 0; c < placement.mmPositions.size(); c++)
        for (size_t i = 0; i < placement.qmPositions.size(); i++) {
            Vec3 d = placement.mmPositions[c] - placement.qmPositions[i];
            double r = sqrt(d.dot(d));
            if (r < closest) {
                stringstream msg;
                msg << "QMMMForce: the MM charge of particle " << placement.mmParticles[c] << " (" << placement.mmCharges[c]
                    << " e) sits on the nucleus of ";
                if (i < qmParticles.size())
                    msg << "QM atom " << qmParticles[i];
                else
                    msg << "the link hydrogen of QM atom " << qmParticles[links[i - qmParticles.size()].qmAtom];
                msg << " (" << r << " nm apart; at least 0.01 nm is required)";
                throw OpenMMException(msg.str());
            }
        }
}
