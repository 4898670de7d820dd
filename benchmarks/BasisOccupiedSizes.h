#pragma once
// The --sizes argument of the SCF micro-benchmarks: basis functions / occupied orbitals, comma-separated (152/40 and
// 456/120 are 8 and 24 waters in DZVP).
#include <cstdio>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

/** Parses "456/120,152/40" into sizes; false (sizes as far as read), with the usage on stderr, where an item has no
 *  slash. */
inline bool parseBasisOccupiedSizes(const std::string& value, std::vector<std::pair<int, int>>& sizes) {
    sizes.clear();
    std::stringstream list(value);
    std::string item;
    while (std::getline(list, item, ',')) {
        const size_t slash = item.find('/');
        if (slash == std::string::npos) {
            std::fprintf(stderr, "--sizes: give basis/occupied, e.g. 456/120\n");
            return false;
        }
        sizes.push_back({std::stoi(item.substr(0, slash)), std::stoi(item.substr(slash + 1))});
    }
    return true;
}
