// Reader of NWChem-format basis files as written by the Basis Set Exchange.
#include "openmmdft/qm/Basis.h"
#include "openmmdft/qm/Elements.h"
#include <openmm/OpenMMException.h>
#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
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

// Fortran writes 1.0D+01. The whole token must be one number: from_chars (unlike strtod) ignores
// the locale and takes no leading blanks or hexadecimal, and reports overflow such as 1e400
// instead of returning inf.
enum class NumberText { Finite, NotFinite, OutOfRange, NotANumber };

NumberText parseNumber(std::string t, double& value) {
    for (char& c : t)
        if (c == 'D' || c == 'd')
            c = 'E';
    const char* begin = t.c_str();
    const char* end = begin + t.size();
    if (t.size() > 1 && t[0] == '+' && t[1] != '-' && t[1] != '+') // from_chars takes no '+'
        begin++;
    const std::from_chars_result r = std::from_chars(begin, end, value);
    if (r.ec == std::errc::result_out_of_range && r.ptr == end) // 1e400, or 1e-400 (not zero either)
        return NumberText::OutOfRange;
    if (r.ec != std::errc() || r.ptr != end)
        return NumberText::NotANumber;
    return std::isfinite(value) ? NumberText::Finite : NumberText::NotFinite;
}

// A line of numbers, as opposed to a shell header: "nan" and "inf" count as (bad) numbers so that
// they are reported as such, not as unknown elements.
bool startsLikeNumber(const std::string& t) {
    const std::string l = lower(t);
    return std::isdigit((unsigned char) t[0]) || t[0] == '+' || t[0] == '-' || t[0] == '.' ||
           l.rfind("nan", 0) == 0 || l.rfind("inf", 0) == 0;
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

/** A number of a primitive ("exponent", "coefficient"), refusing text that is not one finite number. */
double readNumber(const std::string& token, const char* what, const std::string& source, int lineNumber) {
    double value = 0;
    switch (parseNumber(token, value)) {
    case NumberText::Finite:
        return value;
    case NumberText::NotFinite:
        malformed(source, lineNumber, std::string(what) + " '" + token + "' is not a finite number");
    case NumberText::OutOfRange:
        malformed(source, lineNumber, std::string(what) + " '" + token + "' is out of the range of a double");
    case NumberText::NotANumber:
        break;
    }
    malformed(source, lineNumber, std::string(what) + " '" + token + "' is not a number");
}

/** The atomic number of a symbol in the file, with the line in the message when it is unknown. */
int elementAt(const std::string& symbol, const std::string& source, int lineNumber) {
    try {
        return atomicNumber(symbol);
    }
    catch (const OpenMM::OpenMMException&) {
        malformed(source, lineNumber, "unknown element '" + symbol + "'");
    }
}

bool sameShell(const ShellDefinition& a, const ShellDefinition& b) {
    return a.l == b.l && a.exponents == b.exponents && a.coefficients == b.coefficients;
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

    // Header line of every shell read so far, parallel to def.elements, to name both lines of a repeat.
    std::map<int, std::vector<int>> shellLines;

    // A shell given twice adds a linearly dependent function: an auxiliary set's fitting metric
    // becomes singular, an orbital set's overlap too. Neither is what the file's author meant.
    auto add = [&](const ShellDefinition& shell) {
        std::vector<ShellDefinition>& shells = def.elements[currentZ];
        std::vector<int>& lines = shellLines[currentZ];
        for (size_t i = 0; i < shells.size(); i++)
            if (sameShell(shells[i], shell))
                malformed(sourceName, headerLine, "this " + std::string(1, "SPDFGHI"[shell.l]) + " shell of " +
                          elementSymbol(currentZ) + " repeats the one at line " + std::to_string(lines[i]) +
                          " (same exponents and coefficients)");
        shells.push_back(shell);
        lines.push_back(headerLine);
    };

    auto flush = [&]() {
        if (currentType.empty())
            return;
        if (exps.empty())
            malformed(sourceName, headerLine, "shell without primitives");
        if (currentType.size() > 1) { // SP (or SPD) shells: one column per letter
            if (columns.size() != currentType.size())
                malformed(sourceName, headerLine, "shell " + currentType + " needs " +
                          std::to_string(currentType.size()) + " coefficient columns");
            for (size_t k = 0; k < currentType.size(); k++)
                add({shellLetter(currentType[k]), exps, columns[k]});
        }
        else // general contraction: every column is one contracted shell
            for (const auto& col : columns)
                add({shellLetter(currentType[0]), exps, col});
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
                def.elementsWithECP.insert(elementAt(t[0], sourceName, lineNumber));
            continue;
        }
        if (state == State::AfterBasis)
            continue;
        if (state == State::Outside)
            malformed(sourceName, lineNumber, "text outside a BASIS ... END block: '" + line + "'");
        // Inside the basis block: a shell header "O SP" or a line of numbers.
        if (!startsLikeNumber(t[0])) {
            if (t.size() != 2 || !isElementToken(t[0]))
                malformed(sourceName, lineNumber, "expected '<element> <shell type>', got '" + line + "'");
            flush();
            const std::string type = upper(t[1]);
            for (char c : type)
                if (shellLetter(c) < 0)
                    malformed(sourceName, lineNumber, "unknown shell type '" + t[1] + "'");
            currentZ = elementAt(t[0], sourceName, lineNumber);
            currentType = type;
            headerLine = lineNumber;
            continue;
        }
        if (currentType.empty())
            malformed(sourceName, lineNumber, "numbers before any shell header");
        if (t.size() < 2)
            malformed(sourceName, lineNumber, "a primitive needs an exponent and coefficients, got '" + line + "'");
        if (!exps.empty() && columns.size() != t.size() - 1)
            malformed(sourceName, lineNumber, "inconsistent number of coefficient columns (" +
                      std::to_string(t.size() - 1) + " here, " + std::to_string(columns.size()) +
                      " on the shell's first line)");
        const double exponent = readNumber(t[0], "exponent", sourceName, lineNumber);
        if (exponent <= 0)
            malformed(sourceName, lineNumber, "exponent '" + t[0] + "' must be positive");
        exps.push_back(exponent);
        columns.resize(t.size() - 1);
        for (size_t k = 1; k < t.size(); k++)
            columns[k - 1].push_back(readNumber(t[k], "coefficient", sourceName, lineNumber));
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
    BasisDefinition def = parseNWChemBasis(in, path); // errors name the file that holds the mistake
    def.name = nameOrPath;
    return def;
}

} // namespace QM
} // namespace OpenMMDFT
