/* The ELLPACK sparse-product classification against a breadth-first search of the bond graph. */
#include "openmmdft/internal/BondGraph.h"
#include "openmm/OpenMMException.h"
#include <gtest/gtest.h>
#include <algorithm>
#include <queue>
#include <random>
#include <set>

using namespace OpenMMDFT;
using namespace std;

static BondPathClasses classifyByBreadthFirstSearch(int n, const vector<pair<int, int> >& bonds) {
    vector<vector<int> > adj(n);
    for (auto& b : bonds) {
        adj[b.first].push_back(b.second);
        adj[b.second].push_back(b.first);
    }
    BondPathClasses classes;
    for (int i = 0; i < n; i++) {
        vector<int> dist(n, -1);
        queue<int> q;
        dist[i] = 0;
        q.push(i);
        while (!q.empty()) {
            int a = q.front();
            q.pop();
            if (dist[a] == 3)
                continue;
            for (int b : adj[a])
                if (dist[b] < 0) {
                    dist[b] = dist[a] + 1;
                    q.push(b);
                }
        }
        for (int j = i + 1; j < n; j++) {
            if (dist[j] == 1 || dist[j] == 2)
                classes.excluded.push_back({i, j});
            else if (dist[j] == 3)
                classes.scaled14.push_back({i, j});
        }
    }
    return classes;
}

TEST(BondGraph, EllpackWidthIsLargestDegree) {
    EllpackAdjacency a(8, {{0, 1}, {0, 2}, {0, 3}, {0, 4}, {0, 5}, {0, 6}, {6, 7}, {1, 0}});
    EXPECT_EQ(a.getWidth(), 6);
    EXPECT_EQ(a.getNumRows(), 8);
    EXPECT_EQ(a.getColumns()[6 * 7 + 0], 6);
    EXPECT_EQ(a.getColumns()[6 * 7 + 1], -1);
}

TEST(BondGraph, NoBonds) {
    EllpackAdjacency a(5, {});
    EXPECT_EQ(a.getWidth(), 0);
    BondPathClasses c = classifyBondPaths(a);
    EXPECT_TRUE(c.excluded.empty());
    EXPECT_TRUE(c.scaled14.empty());
}

TEST(BondGraph, RingsMatchBreadthFirstSearch) {
    // 3-, 4-, 5-, 6-membered rings and fused rings: the shortest path decides, as in createExceptionsFromBonds.
    for (int n = 3; n <= 8; n++) {
        vector<pair<int, int> > bonds;
        for (int i = 0; i < n; i++)
            bonds.push_back({i, (i + 1) % n});
        bonds.push_back({0, n});
        BondPathClasses expected = classifyByBreadthFirstSearch(n + 1, bonds);
        BondPathClasses actual = classifyBondPaths(EllpackAdjacency(n + 1, bonds));
        EXPECT_EQ(actual.excluded, expected.excluded) << "ring " << n;
        EXPECT_EQ(actual.scaled14, expected.scaled14) << "ring " << n;
    }
}

TEST(BondGraph, RandomGraphsMatchBreadthFirstSearch) {
    mt19937 rng(42);
    for (int trial = 0; trial < 50; trial++) {
        int n = 5 + trial;
        uniform_int_distribution<int> pick(0, n - 1);
        vector<pair<int, int> > bonds;
        for (int b = 0; b < n + trial % 7; b++) {
            int i = pick(rng), j = pick(rng);
            if (i != j)
                bonds.push_back({i, j});
        }
        set<pair<int, int> > unique;
        vector<pair<int, int> > dedup;
        for (auto b : bonds)
            if (unique.insert({min(b.first, b.second), max(b.first, b.second)}).second)
                dedup.push_back(b);
        BondPathClasses expected = classifyByBreadthFirstSearch(n, dedup);
        BondPathClasses actual = classifyBondPaths(EllpackAdjacency(n, bonds));
        EXPECT_EQ(actual.excluded, expected.excluded) << "trial " << trial;
        EXPECT_EQ(actual.scaled14, expected.scaled14) << "trial " << trial;
    }
}

TEST(BondGraph, BadBondsAreRefused) {
    EXPECT_THROW(EllpackAdjacency(3, {{0, 3}}), OpenMM::OpenMMException);
    EXPECT_THROW(EllpackAdjacency(3, {{1, 1}}), OpenMM::OpenMMException);
    EXPECT_THROW(EllpackAdjacency(3, {{-1, 1}}), OpenMM::OpenMMException);
}
