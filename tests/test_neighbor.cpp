// Standalone neighbour list: pair counts against brute force over explicit images, including
// cells thinner than the cutoff (self-images).
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "nep/neighbor.hpp"

namespace {

// brute force: count (i, j, image) with |r_j + n.h - r_i| < rc, excluding the i == j, n == 0 term
long brute_pairs(const std::vector<double>& x, const nep::Cell& c, double rc, int nimg) {
  const int n = static_cast<int>(x.size() / 3);
  long count = 0;
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j)
      for (int a = -nimg; a <= nimg; ++a)
        for (int b = -nimg; b <= nimg; ++b)
          for (int k = -nimg; k <= nimg; ++k) {
            if (i == j && a == 0 && b == 0 && k == 0) continue;
            double d2 = 0;
            for (int dd = 0; dd < 3; ++dd) {
              const double r = x[3 * j + dd] + a * c.h[dd] + b * c.h[3 + dd] + k * c.h[6 + dd] - x[3 * i + dd];
              d2 += r * r;
            }
            count += d2 < rc * rc;
          }
  return count;
}

TEST(Neighbor, ThinTriclinicCellMatchesBruteForce) {
  nep::Cell c;
  const double h[9] = {3.1, 0, 0, 0.9, 2.8, 0, -0.7, 0.5, 3.3};
  std::copy(h, h + 9, c.h);
  std::mt19937 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 4.0);  // some atoms outside the cell
  std::vector<double> x;
  for (int i = 0; i < 7 * 3; ++i) x.push_back(u(rng));
  std::vector<int> type(7, 0);
  const double rc = 6.5;  // more than twice every thickness
  const auto nl = nep::build_neighbor_list(x, type, c, rc);
  long total = 0;
  for (int v : nl.num_neighbors) total += v;
  EXPECT_EQ(total, brute_pairs(x, c, rc, 6));
  // every ghost is an exact lattice translate of its owner
  for (int g = nl.nlocal; g < nl.nall; ++g) EXPECT_LT(nl.owner[g], nl.nlocal);
}

TEST(Neighbor, NonPeriodicDirectionGetsNoImages) {
  nep::Cell c;
  c.h[0] = c.h[4] = c.h[8] = 4.0;
  c.pbc[2] = false;
  std::vector<double> x = {0.5, 0.5, 0.5, 0.5, 0.5, 3.5};
  const auto nl = nep::build_neighbor_list(x, {0, 0}, c, 3.2);
  for (int g = nl.nlocal; g < nl.nall; ++g) EXPECT_NEAR(nl.x[3 * g + 2], nl.x[3 * nl.owner[g] + 2], 1e-12);
}

TEST(Neighbor, RejectsSingularCell) {
  nep::Cell c;  // all zeros
  EXPECT_THROW(nep::build_neighbor_list({0, 0, 0}, {0}, c, 3.0), std::runtime_error);
}

}  // namespace
