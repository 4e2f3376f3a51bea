// The core's fused host kernel (src/core/evaluator_host_kernel.hpp) beyond the reference fixtures:
// its vectorisable tanh against libm, and the fused and two-pass kernels on what LAMMPS hands
// the core besides plain periodic boxes: an ilist naming a subset of atoms, atoms and
// neighbours of type -1 (pair hybrid NULL), per-atom energies and virials.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <random>

#include "nep/core/host_tanh.hpp"
#include "nep/list_evaluate.hpp"
#include "test_support.hpp"

namespace {

TEST(HostTanh, WithinOneUlpScaleOfLibm) {
  double worst = 0.0;
  for (int k = -300000; k <= 300000; ++k) {
    const double z = k * 1e-4;  // -30 .. 30
    const double ref = std::tanh(z);
    const double got = nep::detail::tanh_host(z);
    if (ref != 0.0) worst = std::max(worst, std::fabs(got - ref) / std::fabs(ref));
    else EXPECT_EQ(got, 0.0);
  }
  for (double z : {1e-300, 1e-30, 1e-12, 3e-9, 1e-5}) {
    EXPECT_LE(std::fabs(nep::detail::tanh_host(z) - std::tanh(z)), 1e-15 * std::fabs(std::tanh(z))) << z;
    EXPECT_LE(std::fabs(nep::detail::tanh_host(-z) - std::tanh(-z)), 1e-15 * std::fabs(std::tanh(z))) << z;
  }
  EXPECT_LE(worst, 1e-15);
  EXPECT_EQ(nep::detail::tanh_host(25.0), 1.0);
  EXPECT_EQ(nep::detail::tanh_host(-1e300), -1.0);
  EXPECT_TRUE(std::isnan(nep::detail::tanh_host(std::numeric_limits<double>::quiet_NaN())));
}

struct Outputs {
  nep::EnergyVirial total;
  std::vector<double> f, e, w;
};

// Evaluates the atoms of `ilist` (all atoms of type >= 0 see the rest as neighbours).
Outputs evaluate(nep::SerialEvaluator& ev, const nep::NeighborList& nl, const std::vector<int>& type,
                 const std::vector<int>& ilist) {
  using Ev = nep::SerialEvaluator;
  const int nall = nl.nall, maxn = std::max(1, nl.max_neighbors);
  std::vector<int> neigh(static_cast<size_t>(nl.nlocal) * maxn, 0);
  std::copy(nl.neighbors.begin(), nl.neighbors.end(), neigh.begin());
  Outputs o;
  o.f.assign(3 * static_cast<size_t>(nall), 0.0);
  o.w.assign(9 * static_cast<size_t>(nall), 0.0);
  o.e.assign(nall, -7.0);  // untouched entries keep this
  o.total = ev.compute(int(ilist.size()), Ev::t_int(ilist.data(), ilist.size()), Ev::t_x(nl.x.data(), nall),
                       Ev::t_int(type.data(), nall), Ev::t_int(nl.num_neighbors.data(), nl.nlocal),
                       Ev::t_neighbors(neigh.data(), nl.nlocal, maxn), Ev::t_f(o.f.data(), nall),
                       Ev::t_eatom(o.e.data(), nall), Ev::t_vatom(o.w.data(), nall));
  return o;
}

void expect_close(const std::vector<double>& a, const std::vector<double>& b, const char* what) {
  ASSERT_EQ(a.size(), b.size());
  double scale = 0.0;
  for (double v : b) scale = std::max(scale, std::fabs(v));
  for (size_t k = 0; k < a.size(); ++k) ASSERT_NEAR(a[k], b[k], 1e-12 * scale) << what << " entry " << k;
}

class FusedVsTwoPass : public ::testing::TestWithParam<std::string> {};

TEST_P(FusedVsTwoPass, SubsetAndNullTypes) {
  const auto ref = nep_test::load_reference(GetParam());
  const nep::NeighborList nl =
      nep::build_neighbor_list(ref.structure.x, ref.structure.type, ref.structure.cell, ref.model.cutoff_max());
  // every 5th atom (and all its images) not handled by the model; every 3rd handled atom evaluated
  std::vector<int> type = nl.type;
  for (int i = 0; i < nl.nall; ++i)
    if (nl.owner[i] % 5 == 2) type[i] = -1;
  std::vector<int> ilist;
  for (int i = 0; i < nl.nlocal; ++i)
    if (i % 3 != 1) ilist.push_back(i);
  nep::SerialEvaluator fused(ref.model), two(ref.model);
  two.force_two_pass(true);
  const Outputs a = evaluate(fused, nl, type, ilist), b = evaluate(two, nl, type, ilist);
  EXPECT_NEAR(a.total.energy, b.total.energy, 1e-12 * std::fabs(b.total.energy));
  for (int c = 0; c < 9; ++c) EXPECT_NEAR(a.total.virial[c], b.total.virial[c], 1e-11 * (1 + std::fabs(b.total.virial[c])));
  expect_close(a.e, b.e, "eatom");
  expect_close(a.f, b.f, "force");
  expect_close(a.w, b.w, "vatom");
  // atoms of type -1 in ilist get zero energy; atoms outside ilist are not written
  for (int i : ilist)
    if (type[i] < 0) EXPECT_EQ(a.e[i], 0.0);
  for (int i = 1; i < nl.nlocal; i += 3) EXPECT_EQ(a.e[i], -7.0);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, FusedVsTwoPass,
                         ::testing::Values("PbTe_NEP4__rocksalt_216_rattled", "C_2022_NEP4__tric_24_rattled",
                                           "BaTiO3_NEP5_zbl_flexible_typewise_cutoff__tric_25_close_pairs",
                                           "BaTiO3_NEP4_typewise_zbl_typewise_cutoff__perovskite_240_rattled"));

}  // namespace
