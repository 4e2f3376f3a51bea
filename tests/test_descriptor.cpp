// The descriptor output of the core against an independent oracle written from the NEP paper:
// radial q_n = sum_j sum_k c_nk f_k(r_ij), and the 3-body angular terms through the spherical-
// harmonic addition theorem, q_nL = (2L+1)/(4 pi) sum_{j,k} g_n(r_ij) g_n(r_ik) P_L(cos theta_jik),
// which needs neither the moment tables nor their normalisations.
#include <gtest/gtest.h>

#include <cmath>

#include "test_support.hpp"

namespace {

// Chebyshev radial basis f_k(d), k = 0..K-1 (NEP Eq. 5), written plainly
std::vector<double> basis(int K, double d, double rc) {
  const double pi = 3.14159265358979323846;
  const double fc = 0.5 * std::cos(pi * d / rc) + 0.5;
  const double x = 2.0 * (d / rc - 1.0) * (d / rc - 1.0) - 1.0;
  std::vector<double> f(K);
  double t0 = 1.0, t1 = x;
  for (int k = 0; k < K; ++k) {
    double tk = k == 0 ? 1.0 : (k == 1 ? x : 2.0 * x * t1 - t0);
    if (k >= 2) {
      t0 = t1;
      t1 = tk;
    }
    f[k] = 0.5 * (tk + 1.0) * fc;
  }
  return f;
}

double legendre(int L, double z) {
  double p0 = 1.0, p1 = z;
  if (L == 0) return p0;
  for (int l = 2; l <= L; ++l) {
    const double p2 = ((2 * l - 1) * z * p1 - (l - 1) * p0) / l;
    p0 = p1;
    p1 = p2;
  }
  return p1;
}

class DescriptorTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DescriptorTest, MatchesRadialSumAndAdditionTheorem) {
  const auto ref = nep_test::load_reference(GetParam());
  const nep::Model& m = ref.model;
  nep::Calculator calc(m);
  const auto p = calc.compute(ref.structure, false, true);
  const nep::NeighborList& nl = calc.last_neighbor_list();
  const int T = m.num_types(), D = m.dim(), NR = m.n_max_radial + 1, NA = m.n_max_angular + 1;
  const int KR = m.basis_size_radial + 1, KA = m.basis_size_angular + 1;
  ASSERT_EQ(p.descriptor.size(), size_t(nl.nlocal) * D);
  const double pi = 3.14159265358979323846;
  double worst = 0.0;
  for (int i = 0; i < nl.nlocal; ++i) {
    const int ti = nl.type[i];
    std::vector<double> q(D, 0.0);
    struct Nb {
      double u[3], d;
      int tj;
    };
    std::vector<Nb> ang;
    for (int jj = 0; jj < nl.num_neighbors[i]; ++jj) {
      const int j = nl.neighbors[size_t(i) * nl.max_neighbors + jj];
      const int tj = nl.type[j];
      double r[3], d2 = 0;
      for (int c = 0; c < 3; ++c) {
        r[c] = nl.x[3 * j + c] - nl.x[3 * i + c];
        d2 += r[c] * r[c];
      }
      const double d = std::sqrt(d2);
      const double rcR = 0.5 * (m.rc_radial[ti] + m.rc_radial[tj]), rcA = 0.5 * (m.rc_angular[ti] + m.rc_angular[tj]);
      if (d < rcR) {
        const auto f = basis(KR, d, rcR);
        for (int n = 0; n < NR; ++n)
          for (int k = 0; k < KR; ++k) q[n] += m.c[(n * KR + k) * T * T + ti * T + tj] * f[k];
      }
      if (d < rcA) ang.push_back({{r[0] / d, r[1] / d, r[2] / d}, d, tj});
    }
    // g_n for each angular neighbour
    std::vector<std::vector<double>> g(ang.size(), std::vector<double>(NA, 0.0));
    for (size_t a = 0; a < ang.size(); ++a) {
      const double rcA = 0.5 * (m.rc_angular[ti] + m.rc_angular[ang[a].tj]);
      const auto f = basis(KA, ang[a].d, rcA);
      for (int n = 0; n < NA; ++n)
        for (int k = 0; k < KA; ++k)
          g[a][n] += m.c[m.num_c_radial() + (n * KA + k) * T * T + ti * T + ang[a].tj] * f[k];
    }
    for (int L = 1; L <= m.l_max; ++L)
      for (int n = 0; n < NA; ++n) {
        double s = 0.0;
        for (size_t a = 0; a < ang.size(); ++a)
          for (size_t b = 0; b < ang.size(); ++b) {
            const double cosab = ang[a].u[0] * ang[b].u[0] + ang[a].u[1] * ang[b].u[1] + ang[a].u[2] * ang[b].u[2];
            s += g[a][n] * g[b][n] * legendre(L, cosab);
          }
        q[NR + (L - 1) * NA + n] = (2 * L + 1) / (4 * pi) * s;
      }
    const int checked = NR + m.l_max * NA;  // 4-/5-body terms are covered by the NEP_CPU fixtures
    double scale = 0.0;
    for (int d = 0; d < checked; ++d) scale = std::max(scale, std::fabs(q[d]));
    for (int d = 0; d < checked; ++d)
      worst = std::max(worst, std::fabs(p.descriptor[size_t(i) * D + d] - q[d]) / std::max(scale, 1e-300));
  }
  EXPECT_LE(worst, 1e-12) << "max relative deviation of the descriptor";
}

INSTANTIATE_TEST_SUITE_P(Models, DescriptorTest,
                         ::testing::Values("PbTe_NEP4__tric_24_rattled_swapped", "C_2022_NEP4__tric_24_rattled",
                                           "Si_2022_NEP4_3body__tric_24_rattled"));

}  // namespace
