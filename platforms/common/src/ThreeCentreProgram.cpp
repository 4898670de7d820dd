// The compile-time settings of the density-fitting integral kernels (ThreeCentreProgram.h).
#include "ThreeCentreProgram.h"
#include "CommonQMMMKernelSources.h"
#include <algorithm>
#include <cstdio>
#include <string>
#include <tuple>

using namespace std;

std::map<std::string, std::string> OpenMMDFT::threeCentreDefines(int basisL, int auxL, bool pointCharges) {
    std::map<std::string, std::string> defines;
    defines["BASIS_L"] = std::to_string(basisL);
    defines["AUX_L"] = std::to_string(auxL);
    defines["POINT_CHARGES"] = pointCharges ? "1" : "0";
    defines["GROUP_SIZE"] = std::to_string(THREE_CENTRE_GROUP_SIZE);
    defines["MAX_CENTRES_PER_ITEM"] =
        std::to_string(pointCharges ? THREE_CENTRE_MAX_CHARGES_PER_ITEM : THREE_CENTRE_MAX_FITTING_CENTRES_PER_ITEM);
    char scale[64];
    std::snprintf(scale, sizeof(scale), "%.17e", THREE_CENTRE_GRADIENT_SCALE);
    defines["GRADIENT_SCALE"] = scale;
    return defines;
}

std::string OpenMMDFT::threeCentreProgramSource(int basisL, int auxL, bool pointCharges) {
    string source = string(CommonQMMMKernelSources::qmWorkCounter) + CommonQMMMKernelSources::qmThreeCentre;
    // A compilation of one of the per-class files for the class (la, lb) and fitting l lq (-1: any l).
    auto add = [&](const string& file, int la, int lb, int lq) {
        source += "\n#define CLASS_LA " + to_string(la) + "\n#define CLASS_LB " + to_string(lb) + "\n#define CLASS_LQ " + to_string(lq) +
                  "\n" + file + "\n#undef CLASS_LA\n#undef CLASS_LB\n#undef CLASS_LQ\n";
    };
    auto addClass = [&](int la, int lb) {
        add(CommonQMMMKernelSources::qmThreeCentreClass, la, lb, -1);
        // The gradient kernels per fitting l (fitting functions only: a point charge has no l to unroll).
        for (int lq = 0; lq <= auxL && !pointCharges; lq++)
            if (gradientUnrolled(la, lb, lq))
                add(CommonQMMMKernelSources::qmThreeCentreClass, la, lb, lq);
    };
    auto addTensor = [&](int la, int lb, int lq) { add(CommonQMMMKernelSources::qmThreeCentreTensor, la, lb, lq); };
    for (int la = 0; la <= basisL; la++)
        for (int lb = 0; lb <= la; lb++) {
            addClass(la, lb);
            addTensor(la, lb, -1);
            for (int lq = 0; lq <= auxL; lq++)
                if (tensorUnrolled(la, lb, lq))
                    addTensor(la, lb, lq);
        }
    // The metric's gradient pairs each fitting shell with a unit s function: classes (l, 0) up to auxL.
    for (int la = basisL + 1; la <= auxL; la++)
        addClass(la, 0);
    return source;
}

std::string OpenMMDFT::classKernelName(const std::string& kernel, int la, int lb) {
    return kernel + "_" + to_string(la) + "_" + to_string(lb);
}

bool OpenMMDFT::gradientUnrolled(int la, int lb, int lq) {
    if (writtenClass(la, lb))
        return la + 1 + lq <= THREE_CENTRE_GRADIENT_UNROLL_ORDER;
    return la + lb + 1 + lq <= THREE_CENTRE_GENERAL_GRADIENT_UNROLL_ORDER;
}

std::string OpenMMDFT::gradientKernelName(int la, int lb, int lq) {
    const std::string name = classKernelName("threeCentreGradient", la, lb);
    return gradientUnrolled(la, lb, lq) ? name + "_" + to_string(lq) : name;
}

bool OpenMMDFT::tensorUnrolled(int la, int lb, int lq) {
    if (writtenClass(la, lb))
        return la + lb + lq <= THREE_CENTRE_TENSOR_UNROLL_ORDER;
    return la + lb <= 2 && la + lb + lq <= THREE_CENTRE_GENERAL_TENSOR_UNROLL_ORDER;
}

std::string OpenMMDFT::tensorKernelName(int la, int lb, int lq) {
    const std::string name = classKernelName("threeCentreTensor", la, lb);
    return tensorUnrolled(la, lb, lq) ? name + "_" + to_string(lq) : name;
}

OpenMMDFT::PairClasses OpenMMDFT::PairClasses::of(const vector<int>& first, const vector<int>& second, const vector<int>& l,
                                                  const vector<int>& numPrim) {
    const int numPairs = (int) first.size();
    auto key = [&](int k) {
        const int a = first[k], b = second[k];
        return make_tuple(max(l[a], l[b]), min(l[a], l[b]), numPrim[a] * numPrim[b]);
    };
    PairClasses classes;
    classes.order.resize(numPairs);
    for (int k = 0; k < numPairs; k++)
        classes.order[k] = k;
    stable_sort(classes.order.begin(), classes.order.end(), [&](int x, int y) { return key(x) < key(y); });
    for (int k = 0; k < numPairs; k++) {
        const auto pairKey = key(classes.order[k]);
        const int la = get<0>(pairKey), lb = get<1>(pairKey);
        if (classes.ranges.empty() || classes.ranges.back().la != la || classes.ranges.back().lb != lb)
            classes.ranges.push_back({la, lb, k, k, 0});
        classes.ranges.back().end = k + 1;
        classes.ranges.back().maxPrimitivePairs = max(classes.ranges.back().maxPrimitivePairs, get<2>(pairKey));
    }
    return classes;
}

vector<int> OpenMMDFT::PairClasses::sorted(const vector<int>& values) const {
    vector<int> result(order.size());
    for (size_t k = 0; k < order.size(); k++)
        result[k] = values[order[k]];
    return result;
}
