// The core against NEP_CPU double-precision references (tests/data/reference, see its README):
// every quantity within 1e-10 relative (double) on Serial and OpenMP; float within 1e-5 rel. RMS.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <sstream>

#include <Kokkos_Core.hpp>

#include "nep/list_evaluate.hpp"
#include "nep/predict.hpp"
#include "test_support.hpp"

// which backends this Kokkos build has
#ifdef KOKKOS_ENABLE_SERIAL
#define NEP_TEST_SERIAL
#endif
#ifdef KOKKOS_ENABLE_OPENMP
#define NEP_TEST_OPENMP
#endif
#ifdef KOKKOS_ENABLE_CUDA
#define NEP_TEST_DEVICE
#endif

using nep_test::load_reference;
using nep_test::max_rel_dev;

namespace {

const char* kFixtures[] = {
    "C_2022_NEP4__diamond_216_rattled",           "C_2022_NEP4__tric_24_rattled",
    "PbTe_NEP3__rocksalt_216_rattled",            "PbTe_NEP3__tric_24_rattled_swapped",
    "PbTe_NEP4__rocksalt_216_rattled",            "PbTe_NEP4__tric_24_rattled_swapped",
    "Si_2022_NEP4_3body__diamond_216_rattled",    "Si_2022_NEP4_3body__tric_24_rattled",
    "Si_2022_NEP4_5body__diamond_216_rattled",    "Si_2022_NEP4_5body__tric_24_rattled",
    // synthetic models (tests/data/README.md): per-type cutoffs, NEP5, flexible / universal /
    // typewise ZBL with per-type cutoffs; the tric_25 structures put pairs inside the ZBL range
    "PbTe_NEP4_typewise_cutoff__rocksalt_216_rattled", "PbTe_NEP4_typewise_cutoff__tric_24_rattled_swapped",
    "PbTe_NEP5__rocksalt_216_rattled",            "PbTe_NEP5__tric_24_rattled_swapped",
    "BaTiO3_NEP4_flexible_zbl__perovskite_240_rattled", "BaTiO3_NEP4_flexible_zbl__tric_25_close_pairs",
    "BaTiO3_NEP5_zbl__perovskite_240_rattled",    "BaTiO3_NEP5_zbl__tric_25_close_pairs",
    "BaTiO3_NEP5_zbl_flexible_typewise_cutoff__perovskite_240_rattled",
    "BaTiO3_NEP5_zbl_flexible_typewise_cutoff__tric_25_close_pairs",
    "BaTiO3_NEP4_typewise_zbl_typewise_cutoff__perovskite_240_rattled",
    "BaTiO3_NEP4_typewise_zbl_typewise_cutoff__tric_25_close_pairs"};

struct Case {
  std::string stem;
  nep::Backend backend;
};

class ReferenceTest : public ::testing::TestWithParam<Case> {};

TEST_P(ReferenceTest, DoubleMatchesNepCpu) {
  const auto ref = load_reference(GetParam().stem);
  nep::Calculator calc(ref.model, nep::Precision::Double, GetParam().backend);
  const auto p = calc.compute(ref.structure, true);
  EXPECT_LE(std::fabs(p.energy - ref.energy) / std::fabs(ref.energy), 1e-10);
  EXPECT_LE(max_rel_dev(p.eatom, ref.eatom), 1e-10);
  EXPECT_LE(max_rel_dev(p.force, ref.force), 1e-10);
  EXPECT_LE(max_rel_dev(p.vatom, ref.vatom), 1e-10);
  EXPECT_LE(max_rel_dev(std::vector<double>(p.virial, p.virial + 9), std::vector<double>(ref.virial, ref.virial + 9)), 1e-10);
  // the per-atom virial sums to the global one
  for (int c = 0; c < 9; ++c) {
    double s = 0;
    for (size_t i = 0; i < p.eatom.size(); ++i) s += p.vatom[9 * i + c];
    EXPECT_NEAR(s, p.virial[c], 1e-10 * (1 + std::fabs(p.virial[c])));
  }
}

// float compute: every quantity a user reads within 1e-5 of the double reference (the fixtures
// README's rule with tolerance 1e-5: largest deviation over the largest reference value); the
// global virial, a sum over atoms with cancellation, against the sum of its terms' magnitudes
// (the scale a sum's rounding error grows with)
TEST_P(ReferenceTest, FloatWithinTolerance) {
  const auto ref = load_reference(GetParam().stem);
  nep::Calculator calc(ref.model, nep::Precision::Float, GetParam().backend);
  const auto p = calc.compute(ref.structure, true);
  EXPECT_LE(std::fabs(p.energy - ref.energy) / std::fabs(ref.energy), 1e-5);
  EXPECT_LE(max_rel_dev(p.eatom, ref.eatom), 1e-5);
  EXPECT_LE(max_rel_dev(p.force, ref.force), 1e-5);
  EXPECT_LE(max_rel_dev(p.vatom, ref.vatom), 1e-5);
  double terms = 0.0;  // max over components of sum_i |W_i|
  for (int c = 0; c < 9; ++c) {
    double s = 0.0;
    for (size_t i = 0; i < ref.eatom.size(); ++i) s += std::fabs(ref.vatom[9 * i + c]);
    terms = std::max(terms, s);
  }
  for (int c = 0; c < 9; ++c) EXPECT_LE(std::fabs(p.virial[c] - ref.virial[c]), 1e-5 * terms) << "component " << c;
}

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (const char* s : kFixtures) {
#ifdef NEP_TEST_SERIAL
    v.push_back({s, nep::Backend::Serial});
#endif
#ifdef NEP_TEST_OPENMP
    v.push_back({s, nep::Backend::OpenMP});
#endif
#ifdef NEP_TEST_DEVICE
    v.push_back({s, nep::Backend::Device});
#endif
  }
  return v;
}

std::string case_name(const ::testing::TestParamInfo<Case>& info) {
  static const char* const names[] = {"_Serial", "_OpenMP", "_Device"};
  return info.param.stem + names[static_cast<int>(info.param.backend)];
}

INSTANTIATE_TEST_SUITE_P(Fixtures, ReferenceTest, ::testing::ValuesIn(all_cases()), case_name);

// The device kernels (two passes: descriptor, then forces) run on the host when asked
// (Evaluator::force_two_pass), so machines without a GPU hold them to the references too.
class TwoPassTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TwoPassTest, DoubleMatchesNepCpu) {
  const auto ref = load_reference(GetParam());
  const nep::NeighborList nl = nep::build_neighbor_list(ref.structure.x, ref.structure.type, ref.structure.cell,
                                                        ref.model.cutoff_max());
  nep::SerialEvaluator ev(ref.model);
  ev.force_two_pass(true);
  using Ev = nep::SerialEvaluator;
  const int nall = nl.nall, nlocal = nl.nlocal, maxn = std::max(1, nl.max_neighbors);
  std::vector<int> neigh(static_cast<size_t>(nlocal) * maxn, 0);
  std::copy(nl.neighbors.begin(), nl.neighbors.end(), neigh.begin());
  std::vector<double> f(3 * static_cast<size_t>(nall), 0.0), w(9 * static_cast<size_t>(nall), 0.0), e(nall, 0.0);
  const nep::EnergyVirial r =
      ev.compute(nlocal, Ev::t_int(), Ev::t_x(nl.x.data(), nall), Ev::t_int(nl.type.data(), nall),
                 Ev::t_int(nl.num_neighbors.data(), nlocal), Ev::t_neighbors(neigh.data(), nlocal, maxn),
                 Ev::t_f(f.data(), nall), Ev::t_eatom(e.data(), nall), Ev::t_vatom(w.data(), nall));
  std::vector<double> force(3 * static_cast<size_t>(nlocal), 0.0), vatom(9 * static_cast<size_t>(nlocal), 0.0);
  for (int i = 0; i < nall; ++i) {
    for (int c = 0; c < 3; ++c) force[3 * nl.owner[i] + c] += f[3 * i + c];
    for (int c = 0; c < 9; ++c) vatom[9 * nl.owner[i] + c] += w[9 * i + c];
  }
  EXPECT_LE(std::fabs(r.energy - ref.energy) / std::fabs(ref.energy), 1e-10);
  EXPECT_LE(max_rel_dev(std::vector<double>(e.begin(), e.begin() + nlocal), ref.eatom), 1e-10);
  EXPECT_LE(max_rel_dev(force, ref.force), 1e-10);
  EXPECT_LE(max_rel_dev(vatom, ref.vatom), 1e-10);
  EXPECT_LE(max_rel_dev(std::vector<double>(r.virial, r.virial + 9), std::vector<double>(ref.virial, ref.virial + 9)), 1e-10);
}

INSTANTIATE_TEST_SUITE_P(Fixtures, TwoPassTest, ::testing::ValuesIn(std::vector<std::string>(std::begin(kFixtures), std::end(kFixtures))),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// "zbl 0 0 0.7" is flexible ZBL with the 4th token ignored (NEP_CPU and GPUMD test "0 0" first):
// the same model as "zbl 0 0", so it must reproduce that model's NEP_CPU references.
TEST(ReferenceZbl, FlexibleZblWithIgnoredFactorReadsAsFlexible) {
  const auto plain = nep::read_model(nep_test::data_path("potentials/BaTiO3_NEP4_flexible_zbl.txt"));
  const auto with_factor = nep::read_model(nep_test::data_path("potentials/BaTiO3_NEP4_flexible_zbl_with_factor.txt"));
  EXPECT_EQ(with_factor.zbl, nep::ZblMode::Flexible);
  EXPECT_EQ(nep::format_model(with_factor), nep::format_model(plain));
  for (const char* stem : {"BaTiO3_NEP4_flexible_zbl__tric_25_close_pairs", "BaTiO3_NEP4_flexible_zbl__perovskite_240_rattled"}) {
    const auto ref = load_reference(stem);
    nep::Calculator calc(with_factor, nep::Precision::Double, nep::Backend::Host);
    const auto p = calc.compute(ref.structure, true);
    EXPECT_LE(std::fabs(p.energy - ref.energy) / std::fabs(ref.energy), 1e-10) << stem;
    EXPECT_LE(max_rel_dev(p.force, ref.force), 1e-10) << stem;
    EXPECT_LE(max_rel_dev(p.vatom, ref.vatom), 1e-10) << stem;
  }
}

// Typewise ZBL (nep4_zbl, 'zbl 1.25 2.5 0.7'): five compressed CrCoNi frames labelled by NEP_CPU
// (double) — energies, forces and total virials, ZBL contributing up to ~100 eV per frame.
TEST(ReferenceZbl, CrCoNiTypewiseZblMatchesNepCpuLabels) {
  const auto [model, file, frames] = nep_test::load_crconi_zbl_set();
  ASSERT_EQ(frames.size(), 5u);
  nep::Calculator calc(model, nep::Precision::Double, nep::Backend::Device);
  for (const auto& fr : frames) {
    const auto s = nep::structure_from_frame(fr, model, file);
    const auto p = calc.compute(s, false);
    const double e_ref = std::stod(fr.info.at("energy"));
    std::istringstream vs(fr.info.at("virial"));
    std::vector<double> w_ref(9);
    for (double& v : w_ref) vs >> v;
    EXPECT_LE(std::fabs(p.energy - e_ref) / std::fabs(e_ref), 1e-10) << "frame at line " << fr.line;
    EXPECT_LE(max_rel_dev(p.force, fr.column("forces")->values), 1e-10) << "frame at line " << fr.line;
    EXPECT_LE(max_rel_dev(std::vector<double>(p.virial, p.virial + 9), w_ref), 1e-10) << "frame at line " << fr.line;
  }
}

}  // namespace
