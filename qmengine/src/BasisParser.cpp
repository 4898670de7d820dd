// Reader of NWChem-format basis files as written by the Basis Set Exchange.
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Elements.h"
#include <openmm/OpenMMException.h>
#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#ifndef QMENGINE_SOURCE_DATA_DIR
#define QMENGINE_SOURCE_DATA_DIR ""
#endif
#ifndef QMENGINE_INSTALLED_DATA_DIR
#define QMENGINE_INSTALLED_DATA_DIR ""
#endif

namespace OpenMMDFT {
namespace QM {

namespace {

std::string upper(std::string s) {
    for (char& c : s)
        c = (char) std::toupper((unsigned char) c);
    return s;
}

std::string lower(std::string s) {
    for (char& c : s)
        c = (char) std::tolower((unsigned char) c);
    return s;
}

std::vector<std::string> tokens(const std::string& line) {
    std::istringstream ss(line);
    std::vector<std::string> out;
    std::string t;
    while (ss >> t)
        out.push_back(t);
    return out;
}

// Fortran writes 1.0D+01; strtod wants 1.0E+01.
bool parseNumber(std::string t, double& value) {
    for (char& c : t)
        if (c == 'D' || c == 'd')
            c = 'E';
    char* end = nullptr;
    value = std::strtod(t.c_str(), &end);
    return end != t.c_str() && *end == '\0';
}

int shellLetter(char c) {
    static const std::string letters = "SPDFGHI";
    const size_t pos = letters.find((char) std::toupper((unsigned char) c));
    return pos == std::string::npos ? -1 : (int) pos;
}

[[noreturn]] void malformed(const std::string& source, int lineNumber, const std::string& why) {
    throw OpenMM::OpenMMException("QM: malformed basis file '" + source + "' at line " +
                                  std::to_string(lineNumber) + ": " + why);
}

bool isElementToken(const std::string& t) {
    return !t.empty() && std::all_of(t.begin(), t.end(), [](char c) { return std::isalpha((unsigned char) c); });
}

} // namespace

BasisDefinition parseNWChemBasis(std::istream& in, const std::string& sourceName) {
    BasisDefinition def;
    def.name = sourceName;
    enum class State { Outside, Basis, AfterBasis, ECP } state = State::Outside;
    bool sawBasisBlock = false;
    // The shell being read: its element, letters (e.g. "SP"), exponents and coefficient columns.
    int currentZ = 0;
    std::string currentType;
    std::vector<double> exps;
    std::vector<std::vector<double>> columns;
    int headerLine = 0;

    auto flush = [&]() {
        if (currentType.empty())
            return;
        if (exps.empty())
            malformed(sourceName, headerLine, "shell without primitives");
        std::vector<ShellDefinition>& shells = def.elements[currentZ];
        if (currentType.size() > 1) { // SP (or SPD) shells: one column per letter
            if (columns.size() != currentType.size())
                malformed(sourceName, headerLine, "shell " + currentType + " needs " +
                          std::to_string(currentType.size()) + " coefficient columns");
            for (size_t k = 0; k < currentType.size(); k++)
                shells.push_back({shellLetter(currentType[k]), exps, columns[k]});
        }
        else // general contraction: every column is one contracted shell
            for (const auto& col : columns)
                shells.push_back({shellLetter(currentType[0]), exps, col});
        currentType.clear();
        exps.clear();
        columns.clear();
    };

    std::string line;
    int lineNumber = 0;
    while (std::getline(in, line)) {
        lineNumber++;
        const size_t hash = line.find('#');
        if (hash != std::string::npos)
            line.erase(hash);
        const std::vector<std::string> t = tokens(line);
        if (t.empty())
            continue;
        const std::string key = upper(t[0]);
        if (key == "BASIS") {
            flush();
            if (sawBasisBlock) { // later blocks (e.g. "cd basis" in DZVP files) are other sets
                state = State::AfterBasis;
                continue;
            }
            sawBasisBlock = true;
            state = State::Basis;
            for (const auto& w : t) {
                if (upper(w) == "SPHERICAL")
                    def.sphericalByDefault = true;
                else if (upper(w) == "CARTESIAN")
                    def.sphericalByDefault = false;
            }
            continue;
        }
        if (key == "ECP") {
            flush();
            if (state == State::Basis)
                state = State::AfterBasis;
            state = State::ECP;
            continue;
        }
        if (key == "END") {
            flush();
            state = sawBasisBlock ? State::AfterBasis : State::Outside;
            continue;
        }
        if (state == State::ECP) {
            if (isElementToken(t[0]) && key != "NELEC" && t.size() >= 2)
                def.elementsWithECP.insert(atomicNumber(t[0]));
            continue;
        }
        if (state == State::AfterBasis)
            continue;
        if (state == State::Outside)
            malformed(sourceName, lineNumber, "text outside a BASIS ... END block: '" + line + "'");
        // Inside the basis block: a shell header "O SP" or a line of numbers.
        double value;
        if (!parseNumber(t[0], value)) {
            if (t.size() != 2 || !isElementToken(t[0]))
                malformed(sourceName, lineNumber, "expected '<element> <shell type>', got '" + line + "'");
            flush();
            const std::string type = upper(t[1]);
            for (char c : type)
                if (shellLetter(c) < 0)
                    malformed(sourceName, lineNumber, "unknown shell type '" + t[1] + "'");
            currentZ = atomicNumber(t[0]);
            currentType = type;
            headerLine = lineNumber;
            continue;
        }
        if (currentType.empty())
            malformed(sourceName, lineNumber, "numbers before any shell header");
        if (t.size() < 2)
            malformed(sourceName, lineNumber, "a primitive needs an exponent and coefficients");
        if (!exps.empty() && columns.size() != t.size() - 1)
            malformed(sourceName, lineNumber, "inconsistent number of coefficient columns");
        if (value <= 0)
            malformed(sourceName, lineNumber, "exponent must be positive");
        exps.push_back(value);
        columns.resize(t.size() - 1);
        for (size_t k = 1; k < t.size(); k++) {
            double c;
            if (!parseNumber(t[k], c))
                malformed(sourceName, lineNumber, "cannot read number '" + t[k] + "'");
            columns[k - 1].push_back(c);
        }
    }
    flush();
    if (state == State::Basis)
        malformed(sourceName, lineNumber, "BASIS block without END");
    if (def.elements.empty())
        malformed(sourceName, lineNumber, "no basis functions found");
    return def;
}

std::string resolveDataDirectory(const std::string& configured) {
    if (!configured.empty())
        return configured;
    if (const char* env = std::getenv("OPENMMDFT_QM_DATA_DIR"))
        if (*env)
            return env;
    // An installed copy wins over the source tree, which may be gone on the machine that runs.
    const std::string installed = QMENGINE_INSTALLED_DATA_DIR;
    if (!installed.empty() && std::ifstream(installed + "/basis/sto-3g.nw").good())
        return installed;
    return QMENGINE_SOURCE_DATA_DIR;
}

namespace {
// "6-31G*" -> "6-31gs", "6-31G(d,p)" -> "6-31gss", "DGaussA1_DFT_Cfit" -> "dgauss-a1-dft-cfit".
std::string shippedFileName(const std::string& name) {
    std::string n = lower(name);
    const std::pair<const char*, const char*> replace[] = {{"(d,p)", "**"}, {"(d)", "*"}, {"_", "-"}};
    for (const auto& r : replace)
        for (size_t p; (p = n.find(r.first)) != std::string::npos;)
            n.replace(p, std::string(r.first).size(), r.second);
    std::string out;
    for (char c : n)
        out += c == '*' ? std::string("s") : std::string(1, c);
    if (out == "sto3g")
        out = "sto-3g";
    if (out == "dgaussa1-dft-cfit" || out == "dgauss-a1-cfit")
        out = "dgauss-a1-dft-cfit";
    if (out == "dgaussa2-dft-cfit" || out == "dgauss-a2-cfit")
        out = "dgauss-a2-dft-cfit";
    if (out == "def2-universal-j" || out == "weigend-jfit")
        out = "def2-universal-jfit";
    return out + ".nw";
}
} // namespace

BasisDefinition loadBasisDefinition(const std::string& nameOrPath, const std::string& dataDirectory) {
    {
        std::ifstream direct(nameOrPath);
        if (direct.good() && nameOrPath.find('/') != std::string::npos) {
            BasisDefinition def = parseNWChemBasis(direct, nameOrPath);
            return def;
        }
    }
    const std::string dir = resolveDataDirectory(dataDirectory);
    const std::string path = dir + "/basis/" + shippedFileName(nameOrPath);
    std::ifstream in(path);
    if (!in.good()) {
        std::ifstream direct(nameOrPath);
        if (direct.good())
            return parseNWChemBasis(direct, nameOrPath);
        throw OpenMM::OpenMMException("QM: unknown basis set '" + nameOrPath + "' (neither a file nor " + path + ")");
    }
    BasisDefinition def = parseNWChemBasis(in, nameOrPath);
    def.name = nameOrPath;
    return def;
}

} // namespace QM
} // namespace OpenMMDFT
