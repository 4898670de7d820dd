// The compile-time settings of the density-fitting integral kernels (ThreeCentreProgram.h).
#include "ThreeCentreProgram.h"
#include <cstdio>
#include <string>

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
