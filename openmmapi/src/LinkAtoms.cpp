#include "openmmdft/internal/LinkAtoms.h"
#include <map>
#include <set>
#include <utility>

using namespace OpenMMDFT;
using namespace std;

double OpenMMDFT::defaultLinkBondLength(int atomicNumber) {
    // Equilibrium X-H bond lengths (nm): where a link hydrogen sits on the Q1-M1 line.
    static const map<int, double> lengths = {{6, 0.109}, {7, 0.101}, {8, 0.096}, {14, 0.148}, {15, 0.142}, {16, 0.134}};
    auto found = lengths.find(atomicNumber);
    return found == lengths.end() ? 0.0 : found->second;
}

vector<LinkAtomBond> OpenMMDFT::linkAtomBondsOf(const QMMMForce& force) {
    map<int, int> qmAtomOfParticle;
    for (int i = 0; i < force.getNumQMAtoms(); i++) {
        int particle, z;
        force.getQMAtomParameters(i, particle, z);
        qmAtomOfParticle[particle] = i;
    }
    vector<LinkAtomBond> links;
    set<int> m1s;
    for (int b = 0; b < force.getNumBonds(); b++) {
        int p1, p2;
        force.getBondParameters(b, p1, p2);
        auto q1 = qmAtomOfParticle.find(p1), q2 = qmAtomOfParticle.find(p2);
        if ((q1 == qmAtomOfParticle.end()) == (q2 == qmAtomOfParticle.end()))
            continue;
        const bool firstIsQM = q1 != qmAtomOfParticle.end();
        const int qmAtom = firstIsQM ? q1->second : q2->second;
        int particle, z;
        force.getQMAtomParameters(qmAtom, particle, z);
        const map<int, double>& lengths = force.getLinkAtomBondLengthsSet();
        auto length = lengths.find(z);
        links.push_back({qmAtom, particle, firstIsQM ? p2 : p1, length != lengths.end() ? length->second : defaultLinkBondLength(z), {}});
        m1s.insert(links.back().mmParticle);
    }
    if (links.empty())
        return links;
    map<int, vector<int> > mmNeighbours;  // of the M1s
    for (int b = 0; b < force.getNumBonds(); b++) {
        int p1, p2;
        force.getBondParameters(b, p1, p2);
        for (int k = 0; k < 2; k++, swap(p1, p2))
            if (m1s.count(p1) && !m1s.count(p2) && !qmAtomOfParticle.count(p2))
                mmNeighbours[p1].push_back(p2);
    }
    for (LinkAtomBond& link : links)
        link.boundaryNeighbours = mmNeighbours[link.mmParticle];
    return links;
}
