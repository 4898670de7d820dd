// Runs of fitting shells per work item of the three-centre gradient kernel (CentreGroups.h).
#include "CentreGroups.h"
#include "openmm/OpenMMException.h"
#include <cmath>

using namespace std;

namespace {

/** Greedy runs of at most length shells and maxCentres centres each: their first shells, then the end. */
vector<int> runsOf(const vector<int>& shellCentre, int length, int maxCentres) {
    vector<int> start;
    const int n = (int) shellCentre.size();
    int shells = 0, centres = 0;
    for (int s = 0; s < n; s++) {
        const bool newCentre = (s == 0 || shellCentre[s] != shellCentre[s - 1]);
        if (shells == 0 || shells == length || (newCentre && centres == maxCentres)) {
            start.push_back(s);
            shells = centres = 0;
        }
        shells++;
        centres += (shells == 1 || newCentre);
    }
    start.push_back(n);
    return start;
}

} // namespace

vector<int> OpenMMDFT::centreGroups(const vector<int>& shellCentre, long long numPairs, double targetItems, int maxCentres) {
    if (maxCentres < 1)
        throw OpenMM::OpenMMException("QM: centreGroups needs at least one centre per run (internal error)");
    const int n = (int) shellCentre.size();
    if (n == 0)
        return {0};
    const double runsWanted = ceil(targetItems / (double) max(numPairs, 1LL));
    // The number of runs falls as the length limit grows: the longest limit that still gives runsWanted.
    int low = 1, high = n;
    while (low < high) {
        const int middle = (low + high + 1) / 2;
        if ((double) runsOf(shellCentre, middle, maxCentres).size() - 1 >= runsWanted)
            low = middle;
        else
            high = middle - 1;
    }
    return runsOf(shellCentre, low, maxCentres);
}
