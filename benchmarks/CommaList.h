#ifndef OPENMMDFT_BENCHMARKS_COMMALIST_H_
#define OPENMMDFT_BENCHMARKS_COMMALIST_H_
/* The benchmarks' list arguments ("--sizes 1,4,8", "--platforms CPU,CUDA:double"). */
#include <sstream>
#include <string>
#include <vector>

/** The items of a comma-separated list, empty ones left out. */
inline std::vector<std::string> commaSeparated(const std::string& text) {
    std::vector<std::string> items;
    std::stringstream list(text);
    for (std::string item; std::getline(list, item, ',');)
        if (!item.empty())
            items.push_back(item);
    return items;
}

#endif
