#ifndef OPENMMDFT_CENTREGROUPS_H_
#define OPENMMDFT_CENTREGROUPS_H_
// How the three-centre gradient kernel splits its "fitting shells" (fitting functions or point charges) among work
// items: each item is (shell pair, run of consecutive fitting shells), and the pair's derivative Hermite densities are
// formed once per item, so the longer the runs the less that work is repeated; the more runs, the more items to spread
// over a GPU. Host code, shared by the density fitting and the point charges.
#include <vector>

namespace OpenMMDFT {

/**
 * Runs of consecutive fitting shells, as long as possible while numPairs x (number of runs) still reaches targetItems
 * (one shell per run if even that falls short), each run touching at most maxCentres centres (a centre: a maximal run
 * of consecutive shells with one centre index; the kernel keeps each centre's gradient in private memory).
 * shellCentre[s] is shell s's centre. Returns the first shell of every run, then
 * shellCentre.size().
 */
std::vector<int> centreGroups(const std::vector<int>& shellCentre, long long numPairs, double targetItems, int maxCentres);

} // namespace OpenMMDFT

#endif
