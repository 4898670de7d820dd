#include "openmmdft/internal/BondGraph.h"
#include "openmm/OpenMMException.h"
#include <algorithm>
#include <sstream>

using namespace OpenMM;
using namespace OpenMMDFT;
using namespace std;

EllpackAdjacency::EllpackAdjacency(int numParticles, const vector<pair<int, int> >& bonds) : numRows(numParticles), width(0) {
    vector<vector<int> > rows(numParticles);
    for (int b = 0; b < (int) bonds.size(); b++) {
        int i = bonds[b].first, j = bonds[b].second;
        if (i < 0 || j < 0 || i >= numParticles || j >= numParticles) {
            stringstream msg;
            msg << "QMMMForce: bond " << b << " (" << i << "-" << j << ") refers to a particle that does not exist (there are "
                << numParticles << " particles)";
            throw OpenMMException(msg.str());
        }
        if (i == j) {
            stringstream msg;
            msg << "QMMMForce: bond " << b << " bonds particle " << i << " to itself";
            throw OpenMMException(msg.str());
        }
        rows[i].push_back(j);
        rows[j].push_back(i);
    }
    for (auto& row : rows) {
        sort(row.begin(), row.end());
        row.erase(unique(row.begin(), row.end()), row.end());
        width = max(width, (int) row.size());
    }
    columns.assign((size_t) numParticles * width, -1);
    for (int i = 0; i < numParticles; i++)
        copy(rows[i].begin(), rows[i].end(), columns.begin() + (size_t) i * width);
}

namespace {

/** A sparse boolean matrix in ELLPACK form, as a plain N x width array padded with -1. */
struct Ellpack {
    int rows, width;
    vector<int> cols;
    const int* row(int i) const {
        return cols.data() + (size_t) i * width;
    }
};

/** Boolean product X*A: row i holds every column reachable from row i of X by one more bond. */
Ellpack booleanProduct(const Ellpack& x, const Ellpack& a) {
    vector<vector<int> > rows(x.rows);
    int width = 0;
    for (int i = 0; i < x.rows; i++) {
        vector<int>& row = rows[i];
        for (int k = 0; k < x.width && x.row(i)[k] >= 0; k++) {
            const int* aRow = a.row(x.row(i)[k]);
            for (int m = 0; m < a.width && aRow[m] >= 0; m++)
                row.push_back(aRow[m]);
        }
        sort(row.begin(), row.end());
        row.erase(unique(row.begin(), row.end()), row.end());
        width = max(width, (int) row.size());
    }
    Ellpack product{x.rows, width, vector<int>((size_t) x.rows * width, -1)};
    for (int i = 0; i < x.rows; i++)
        copy(rows[i].begin(), rows[i].end(), product.cols.begin() + (size_t) i * width);
    return product;
}

} // namespace

BondPathClasses OpenMMDFT::classifyBondPaths(const EllpackAdjacency& adjacency) {
    Ellpack a{adjacency.getNumRows(), adjacency.getWidth(), adjacency.getColumns()};
    Ellpack a2 = booleanProduct(a, a);   // walks of two bonds
    Ellpack a3 = booleanProduct(a2, a);  // walks of three bonds
    BondPathClasses classes;
    vector<int> near;
    for (int i = 0; i < a.rows; i++) {
        // Shortest path of 1 or 2 bonds: in A or A^2 (and not the particle itself).
        near.clear();
        for (int k = 0; k < a.width && a.row(i)[k] >= 0; k++)
            near.push_back(a.row(i)[k]);
        for (int k = 0; k < a2.width && a2.row(i)[k] >= 0; k++)
            near.push_back(a2.row(i)[k]);
        sort(near.begin(), near.end());
        near.erase(unique(near.begin(), near.end()), near.end());
        for (int j : near)
            if (j > i)
                classes.excluded.push_back(make_pair(i, j));
        // Shortest path of exactly 3 bonds: in A^3 but neither near nor the particle itself.
        for (int k = 0; k < a3.width && a3.row(i)[k] >= 0; k++) {
            int j = a3.row(i)[k];
            if (j > i && !binary_search(near.begin(), near.end(), j))
                classes.scaled14.push_back(make_pair(i, j));
        }
    }
    return classes;
}
