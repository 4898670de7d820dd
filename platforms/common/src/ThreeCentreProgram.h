#ifndef OPENMMDFT_THREECENTREPROGRAM_H_
#define OPENMMDFT_THREECENTREPROGRAM_H_

#include "openmmdft/qm/ThreeCentreTask.h"
#include "openmm/common/ComputeProgram.h"
#include <functional>
#include <map>
#include <string>
#include <vector>

namespace OpenMMDFT {

/// Fixed-point scale of the three-centre gradient sums: 2^44, so that each term is rounded to 3e-14 Eh/bohr and a
/// component may reach 5e5 Eh/bohr.
constexpr double THREE_CENTRE_GRADIENT_SCALE = 17592186044416.0;

/// Centres per work item of the gradient kernel at most, point charges and atoms of fitting shells: the kernel keeps
/// their gradients in private memory and adds them to the sums once per item, not once per primitive pair. Runs of
/// fitting shells long enough for the item target span about 7 atoms of 24 waters; 8 keep the private stack as it
/// was with one atom per item (16 took 384 bytes more).
constexpr int THREE_CENTRE_MAX_CHARGES_PER_ITEM = 16;
constexpr int THREE_CENTRE_MAX_FITTING_CENTRES_PER_ITEM = 8;

/// Work-group size of every launch of the program's integral kernels (their CUDA register bound assumes it): 128, so
/// that the work groups OpenMM launches (6 per multiprocessor on CUDA) fill the 512 threads a multiprocessor holds at
/// 128 registers (64: 384).
constexpr int THREE_CENTRE_GROUP_SIZE = 128;

/**
 * The defines of kernels/qmThreeCentre.cc for orbital shells up to basisL and fitting shells up to auxL; pointCharges
 * compiles the gradient kernel for point charges instead of fitting functions. A compile-time choice: with it as a
 * run-time flag in one kernel the density-fitting gradient ran 4.8x slower on an H200 (0.76 s against 0.16 s for 24
 * waters in DZVP), though the instructions of the fitting path were nearly the same.
 */
std::map<std::string, std::string> threeCentreDefines(int basisL, int auxL, bool pointCharges);

/// The gradient kernels of the classes without written kernels (all but s-s and p-s) read their primitive pairs'
/// derivative Hermite densities from a table made once per gradient (pairDerivativeDensities) instead of forming them
/// in every work item, again for each of a pair's runs of fitting shells (on PoCL, 2 cores, 4 QM waters: the
/// three-centre gradient 0.166 -> 0.087 s, the point charges' 0.011 -> 0.003 s). The table holds at most this many
/// doubles (256 MiB): a class whose table would be larger is launched a part of its pairs at a time.
constexpr size_t GRADIENT_PAIR_TABLE_DOUBLES = 32 * 1024 * 1024;

/** Whether the pair class (la, lb) has kernels written for its functions (s-s and p-s: CLASS_WRITTEN and
 * TENSOR_WRITTEN of the kernel files); the others share the general kernels. */
inline bool writtenClass(int la, int lb) {
    return lb == 0 && la <= 1;
}

/// The tensor kernels of the written classes (s-s, p-s) have compilations for one fitting l each, their loops unrolled
/// and their private arrays indexed by constants, so kept in registers on a GPU, where la + lb + lq is at most this
/// (ptxas, sm_90: no stack frame at all for most of them, against 440-864 bytes; BenchKernelResources). Above it, and
/// in the general classes, the unrolled values did not fit in the registers (ptxas spilled kilobytes), and the
/// OpenCL compiler took 3x as long for a compilation per class and l.
constexpr int THREE_CENTRE_TENSOR_UNROLL_ORDER = 3;

/// The tensor kernels of the classes of pair order 2 (p-p, d-s) have compilations for one fitting l too, where
/// la + lb + lq is at most this: their arrays (the block of results, the Hermite integrals) sized for that l, not for
/// the largest fitting l (ptxas, sm_90: p-p 2192 bytes of stack -> 232, 592 and 928 for fitting s, p, d; d-s 1760 ->
/// 112, 448, 720; spills of at most 300 bytes). The classes of higher order kept kilobytes of stack and spilled
/// kilobytes more (d-p with fitting s: 1424 bytes of stack and 1356 of spill stores; d-d: 3520 and 4136).
constexpr int THREE_CENTRE_GENERAL_TENSOR_UNROLL_ORDER = 4;

/** Whether the tensor kernel of the pair class (la, lb) has a compilation for the fitting l lq alone
 * (THREE_CENTRE_TENSOR_UNROLL_ORDER for s-s and p-s, THREE_CENTRE_GENERAL_TENSOR_UNROLL_ORDER for p-p and d-s). */
bool tensorUnrolled(int la, int lb, int lq);

/// Likewise the gradient kernels of the written classes for fitting functions, where la + 1 + lq (the order of the
/// Hermite integrals against the pair's derivative densities) is at most this (ptxas, sm_90: s-s 496 bytes of stack
/// -> 0 for fitting s, p, d; p-s 864 -> 32 and 72 for s and p; p-s with fitting d, at order 4, kept 240 bytes and
/// spilled 360).
constexpr int THREE_CENTRE_GRADIENT_UNROLL_ORDER = 3;

/// The gradient kernel of the other classes (p-p, d-s, d-p, d-d, and the metric's f and g with the unit function) has
/// compilations for one fitting l where la + lb + 1 + lq is at most this: its Hermite integrals R sized for that l
/// (not for the largest fitting l) and indexed by constants, and its potential on the pair's Hermite functions in
/// registers where they fit (ptxas, sm_90: p-p and d-s 1104 bytes of stack -> 16, 168 and 448 for fitting s, p, d;
/// d-p 1544 -> 160 and 592 for s and p; d-d 2304 -> 448 for s). At order 6 the unrolled values spilled kilobytes
/// (p-p with fitting f: 1864 bytes of spill stores), and each compilation costs the OpenCL compiler time.
constexpr int THREE_CENTRE_GENERAL_GRADIENT_UNROLL_ORDER = 5;

/** Whether the gradient kernel of the pair class (la, lb) has a compilation for fitting functions of l lq alone
 * (THREE_CENTRE_GRADIENT_UNROLL_ORDER for s-s and p-s, THREE_CENTRE_GENERAL_GRADIENT_UNROLL_ORDER for the others). */
bool gradientUnrolled(int la, int lb, int lq);

/** "threeCentreGradient_la_lb_lq" where gradientUnrolled(), else "threeCentreGradient_la_lb". */
std::string gradientKernelName(int la, int lb, int lq);

/** Cartesian functions of a shell of angular momentum l (the kernels' CART_COUNT). */
inline int cartesianCount(int l) {
    return (l + 1) * (l + 2) / 2;
}

/** Hermite functions of orders up to l (the kernels' HERMITE_COUNT). */
inline int hermiteCount(int l) {
    return (l + 1) * (l + 2) * (l + 3) / 6;
}

/**
 * The source of the three-centre program for orbital shells up to basisL and fitting shells up to auxL:
 * kernels/qmThreeCentre.cc's helpers, then kernels/qmThreeCentreClass.cc once per class of shell pairs (la, lb),
 * la >= lb, la <= basisL, whose kernels are named kernel_la_lb (classKernelName), and again per fitting l for the
 * gradient kernel where gradientUnrolled() (gradientKernelName; not with pointCharges, whose "fitting shells" are
 * charges), with kernels/qmThreeCentreTensor.cc once per class and once more per fitting l where tensorUnrolled()
 * (tensorKernelName), and for the metric's gradient (a fitting shell paired with a unit s function) the gradient
 * kernel of the classes (la, 0), basisL < la <= auxL.
 */
std::string threeCentreProgramSource(int basisL, int auxL, bool pointCharges);

/** The name of kernel's compilation for the pair class (la, lb), la >= lb: "kernel_la_lb". */
std::string classKernelName(const std::string& kernel, int la, int lb);

/** The name of the tensor kernel for the pair class (la, lb) and fitting shells of l lq: "threeCentreTensor_la_lb_lq"
 * where tensorUnrolled(), else "threeCentreTensor_la_lb" (fitting l read at run time). */
std::string tensorKernelName(int la, int lb, int lq);

/** The pairs of one class (la >= lb, the larger and the smaller l of the two shells) in a list sorted by class. */
struct PairClassRange {
    int la, lb, begin, end;
    int maxPrimitivePairs;  ///< the largest product of the two shells' primitive counts among the class's pairs
};

/**
 * The shell pairs of a task sorted into classes for the class kernels: order[k] is the task's pair at place k, sorted
 * by the larger l, the smaller l, then the product of the two shells' primitive counts (so that the threads of a warp,
 * consecutive pairs, run the same loops); ranges the classes' places.
 */
struct PairClasses {
    std::vector<int> order;
    std::vector<PairClassRange> ranges;
    /** The classes of the pairs (first[k], second[k]) of shells with angular momenta l and primitive counts numPrim. */
    static PairClasses of(const std::vector<int>& first, const std::vector<int>& second, const std::vector<int>& l,
                          const std::vector<int>& numPrim);
    /** values permuted into the sorted order: values[order[k]] at k. */
    std::vector<int> sorted(const std::vector<int>& values) const;
};

/** The compiled three-centre program for (basisL, auxL, pointCharges), made once per Context by its owner. */
using ThreeCentreProgramSource = std::function<OpenMM::ComputeProgram(int basisL, int auxL, bool pointCharges)>;

} // namespace OpenMMDFT

#endif
