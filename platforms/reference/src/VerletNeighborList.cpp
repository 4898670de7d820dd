#include "VerletNeighborList.h"
#include "openmm/reference/ReferenceNeighborList.h"
#include <algorithm>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

VerletNeighborList::VerletNeighborList(const vector<set<int> >& exclusions, double cutoff, double skin) :
        exclusions(exclusions), cutoff(cutoff), skin(skin), builtSkin(0) {
}

bool VerletNeighborList::update(const vector<Vec3>& positions, const Vec3* boxVectors, bool periodic) {
    bool rebuild = builtPositions.size() != positions.size();
    if (!rebuild && periodic)
        for (int k = 0; k < 3; k++)
            rebuild |= (boxVectors[k] != builtBox[k]);
    if (!rebuild) {
        // Two particles that each moved less than skin/2 cannot have come from beyond cutoff + skin.
        double limit = 0.25 * builtSkin * builtSkin;
        for (size_t i = 0; i < positions.size() && !rebuild; i++) {
            Vec3 d = positions[i] - builtPositions[i];
            rebuild = (d.dot(d) > limit);
        }
    }
    if (!rebuild)
        return false;
    double listSkin = skin;
    if (periodic) {
        // The list cutoff may not exceed half the box width (minimum image); shrink the skin to fit.
        double halfWidth = 0.5 * min(boxVectors[0][0], min(boxVectors[1][1], boxVectors[2][2]));
        listSkin = max(0.0, min(skin, halfWidth - cutoff));
    }
    build(positions, boxVectors, periodic, cutoff + listSkin);
    builtSkin = listSkin;
    builtPositions = positions;
    if (periodic)
        for (int k = 0; k < 3; k++)
            builtBox[k] = boxVectors[k];
    return true;
}

void VerletNeighborList::build(const vector<Vec3>& positions, const Vec3* boxVectors, bool periodic, double listCutoff) {
    NeighborList pairs;
    computeNeighborListVoxelHash(pairs, positions.size(), positions, exclusions, boxVectors, periodic, listCutoff, 0.0);
    int n = positions.size();
    start.assign(n + 1, 0);
    for (auto& p : pairs)
        start[min(p.first, p.second) + 1]++;
    for (int i = 0; i < n; i++)
        start[i + 1] += start[i];
    neighbors.resize(pairs.size());
    vector<int> fill(start.begin(), start.end() - 1);
    for (auto& p : pairs)
        neighbors[fill[min(p.first, p.second)]++] = max(p.first, p.second);
}
