#pragma once
// Internal to the engine: e^x for x <= 0 in plain arithmetic, so that a loop of it over points compiles to vector
// instructions (std::exp is a call per element). Cody-Waite reduction x = k ln2 + r, |r| <= ln2/2, then the Taylor
// series of e^r to r^13 (its remainder is below 2e-17 relative) and 2^k from the exponent bits (Muller, "Elementary
// Functions", ch. 11). Within 2 ulp of std::exp for -708 <= x <= 0; 0 below (e^-708 ~ 3e-308: nothing a Gaussian
// basis function or a Boys function can still use).
#include <cstdint>
#include <cstring>

namespace OpenMMDFT {
namespace QM {

inline double expOfNonPositive(double x) {
    constexpr double kLog2e = 1.4426950408889634;
    constexpr double kLn2High = 6.93147180369123816490e-01, kLn2Low = 1.90821492927058770002e-10;  // ln 2 in two parts
    constexpr double kRoundShift = 6755399441055744.0;  // 1.5 x 2^52: adding it rounds to an integer, kept in the low bits
    const bool underflow = x < -708.0;
    x = underflow ? -708.0 : x;
    double kShifted = x * kLog2e + kRoundShift;
    std::uint64_t kBits;
    std::memcpy(&kBits, &kShifted, sizeof kBits);
    const double k = kShifted - kRoundShift;
    const double r = (x - k * kLn2High) - k * kLn2Low;
    double p = 1.0 / 6227020800.0;  // 1/13!
    p = p * r + 1.0 / 479001600.0;
    p = p * r + 1.0 / 39916800.0;
    p = p * r + 1.0 / 3628800.0;
    p = p * r + 1.0 / 362880.0;
    p = p * r + 1.0 / 40320.0;
    p = p * r + 1.0 / 5040.0;
    p = p * r + 1.0 / 720.0;
    p = p * r + 1.0 / 120.0;
    p = p * r + 1.0 / 24.0;
    p = p * r + 1.0 / 6.0;
    p = p * r + 0.5;
    p = p * r + 1.0;
    p = p * r + 1.0;
    // k (-1022 <= k <= 0) sits in the low bits of kBits as a two's-complement integer; adding the bias there and
    // shifting it into the exponent field gives 2^k.
    const std::uint64_t scaleBits = (kBits + 1023) << 52;
    double scale;
    std::memcpy(&scale, &scaleBits, sizeof scale);
    return underflow ? 0.0 : p * scale;
}

} // namespace QM
} // namespace OpenMMDFT
