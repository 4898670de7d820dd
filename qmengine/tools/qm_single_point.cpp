// Command-line single point of the QM engine, for benchmarks against other programs.
//   openmmdft_qm_single_point molecule.xyz [--basis def2-SVP] [--aux def2-universal-jfit] [--exact]
//       [--grid 75 302] [--threads 1] [--charge 0] [--cartesian|--spherical] [--rpa] [--ssf]
//       [--becke-radial] [--recompute] [--mm charges.txt] [--repeat 1] [--gradient]
// molecule.xyz: standard XYZ in angstrom; charges.txt: lines "x y z q" (angstrom, e).
#include "openmmdft/qm/Elements.h"
#include "openmmdft/qm/KohnShamLDA.h"
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>

using namespace OpenMMDFT::QM;

int main(int argc, char** argv) {
    if (argc < 2) {
        std::fprintf(stderr, "usage: %s molecule.xyz [options] (see the source)\n", argv[0]);
        return 2;
    }
    const double bohr = 1.0 / 0.52917721092;
    QMSettings s;
    std::string mmFile;
    int charge = 0, repeat = 1;
    bool gradient = false;
    for (int i = 2; i < argc; i++) {
        const std::string a = argv[i];
        auto next = [&]() -> std::string {
            if (i + 1 >= argc)
                throw std::runtime_error("missing value after " + a);
            return argv[++i];
        };
        if (a == "--basis") s.basisSet = next();
        else if (a == "--aux") s.auxiliaryBasisSet = next();
        else if (a == "--exact") s.coulomb = CoulombMethod::Exact;
        else if (a == "--grid") { s.grid.radialPoints = std::stoi(next()); s.grid.angularPoints = std::stoi(next()); }
        else if (a == "--threads") s.threads = std::stoi(next());
        else if (a == "--charge") charge = std::stoi(next());
        else if (a == "--cartesian") s.angular = AngularConvention::Cartesian;
        else if (a == "--spherical") s.angular = AngularConvention::Spherical;
        else if (a == "--rpa") s.functional = Functional::SVWN_RPA;
        else if (a == "--ssf") s.grid.partition = AtomicPartition::StratmannScuseriaFrisch;
        else if (a == "--becke-radial") s.grid.radialScheme = RadialScheme::BeckeChebyshev;
        else if (a == "--recompute") s.storage = BasisFunctionStorage::Recompute;
        else if (a == "--mm") mmFile = next();
        else if (a == "--repeat") repeat = std::stoi(next());
        else if (a == "--gradient") gradient = true;
        else {
            std::fprintf(stderr, "unknown option %s\n", a.c_str());
            return 2;
        }
    }
    std::vector<QMAtom> atoms;
    {
        std::ifstream in(argv[1]);
        int n = 0;
        std::string line;
        if (!(in >> n) || !std::getline(in, line) || !std::getline(in, line)) {
            std::fprintf(stderr, "cannot read %s\n", argv[1]);
            return 1;
        }
        for (int k = 0; k < n; k++) {
            std::string sym;
            double x, y, z;
            in >> sym >> x >> y >> z;
            atoms.push_back({atomicNumber(sym), {x * bohr, y * bohr, z * bohr}});
        }
    }
    std::vector<PointCharge> mm;
    if (!mmFile.empty()) {
        std::ifstream in(mmFile);
        double x, y, z, q;
        while (in >> x >> y >> z >> q)
            mm.push_back({{x * bohr, y * bohr, z * bohr}, q});
    }
    KohnShamLDA ks(s);
    QMResult r;
    for (int k = 0; k < repeat; k++) {
        const auto t0 = std::chrono::steady_clock::now();
        r = ks.compute(atoms, charge, mm);
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        std::printf("run %d: seconds %.3f\n", k + 1, t);
    }
    std::printf("energy %.10f\niterations %d\none_electron %.10f\ncoulomb %.10f\nxc %.10f\n"
                "nuclear_repulsion %.10f\nqmmm %.10f\nhomo_lumo_gap %.6f\nbasis_functions %d\ngrid_points %zu\n",
                r.total, r.iterations, r.oneElectron, r.coulomb, r.xc, r.nuclearRepulsion, r.qmmm, r.homoLumoGap,
                ks.basis().size(), r.gridPoints);
    for (const auto& kv : r.timings)
        std::printf("time.%s %.3f\n", kv.first.c_str(), kv.second);
    if (gradient) {
        const QMGradient g = ks.gradient(r);
        for (int i = 0; i < (int) atoms.size(); i++)
            std::printf("gradient %d %.10f %.10f %.10f\n", i, g.atoms(i, 0), g.atoms(i, 1), g.atoms(i, 2));
        for (const auto& kv : g.timings)
            std::printf("time.%s %.3f\n", kv.first.c_str(), kv.second);
    }
    return 0;
}
