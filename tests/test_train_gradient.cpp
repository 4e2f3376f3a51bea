// The trainer's kernels (train_gradient.hpp, on the cached pair basis) against the core:
//  - forward(): energy, forces and virial equal the core's (1e-10 relative), ZBL included;
//  - its network energy equals the core's energy, and its directional derivative Phi equals
//    -sum delta.F - sum Delta.W with F, W from the core (1e-10 relative);
//  - wE dE/dtheta - dPhi/dtheta equals central finite differences of
//    J(theta) = wE E + sum delta.F + sum Delta.W evaluated by the core.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "nep/predict.hpp"
#include "nep/xyz.hpp"

#include "nep/train/train_gradient.hpp"
#include "test_support.hpp"

namespace {

struct Probe {
  double wE;
  std::vector<double> delta;
  double Delta[9];
};

Probe make_probe(int natoms, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  Probe p;
  p.wE = u(rng);
  p.delta.resize(3 * natoms);
  for (double& d : p.delta) d = u(rng);
  for (double& d : p.Delta) d = 0.05 * u(rng);
  return p;
}

double core_functional(const nep::Model& m, const nep::Structure& s, const Probe& p) {
  nep::Calculator calc(m, nep::Precision::Double, nep::Backend::Serial);
  const auto r = calc.compute(s, false);
  double j = p.wE * r.energy;
  for (size_t k = 0; k < r.force.size(); ++k) j += p.delta[k] * r.force[k];
  for (int c = 0; c < 9; ++c) j += p.Delta[c] * r.virial[c];
  return j;
}

class TrainGradientTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TrainGradientTest, EnergyAndDirectionalDerivativeEqualCore) {
  const auto ref = nep_test::load_reference(GetParam());
  const int n = static_cast<int>(ref.structure.type.size());
  nep::Calculator calc(ref.model, nep::Precision::Double, nep::Backend::Serial);
  const auto core = calc.compute(ref.structure, false);
  const auto& nl = calc.last_neighbor_list();
  const nep::PairBasis pb = nep::build_pair_basis(ref.model, nl);
  nep::GradientKernel kernel(ref.model);
  std::vector<double> grad(kernel.num_parameters(), 0.0);
  nep::GradientKernel::Scratch sc;
  for (unsigned seed : {1u, 2u}) {
    const Probe p = make_probe(n, seed);
    double e = 0.0, phi = 0.0;
    kernel.accumulate(pb, 0, nl.nlocal, p.wE, p.delta.data(), p.Delta, grad.data(), sc, &e, &phi);
    double phi_core = 0.0, scale = 0.0;
    for (int k = 0; k < 3 * n; ++k) {
      phi_core -= p.delta[k] * core.force[k];
      scale += std::fabs(p.delta[k] * core.force[k]);
    }
    for (int c = 0; c < 9; ++c) {
      phi_core -= p.Delta[c] * core.virial[c];
      scale += std::fabs(p.Delta[c] * core.virial[c]);
    }
    EXPECT_NEAR(e, core.energy, 1e-10 * std::fabs(core.energy));
    EXPECT_NEAR(phi, phi_core, 1e-10 * scale);
  }
}

// forward() on the basis against the core (Calculator folds forces onto the structure's atoms,
// as forward() does).
void expect_forward_equals_core(const nep::Model& m, const nep::Structure& s, const std::string& what) {
  nep::Calculator calc(m, nep::Precision::Double, nep::Backend::Serial);
  const auto core = calc.compute(s, false);
  const nep::PairBasis pb = nep::build_pair_basis(m, calc.last_neighbor_list());
  nep::GradientKernel kernel(m);
  nep::GradientKernel::Scratch sc;
  double e = 0.0, w[9];
  std::vector<double> f(3 * s.type.size(), 7.0);  // overwritten
  kernel.forward(pb, e, w, f.data(), sc);
  EXPECT_LE(std::fabs(e - core.energy) / std::fabs(core.energy), 1e-10) << what;
  EXPECT_LE(nep_test::max_rel_dev(f, core.force), 1e-10) << what;
  EXPECT_LE(nep_test::max_rel_dev(std::vector<double>(w, w + 9), std::vector<double>(core.virial, core.virial + 9)), 1e-10)
      << what;
  double fmax = 0.0;
  for (double v : core.force) fmax = std::max(fmax, std::fabs(v));
  EXPECT_GT(fmax, 0.0) << what;
}

TEST_P(TrainGradientTest, BasisForwardEqualsCore) {
  const auto ref = nep_test::load_reference(GetParam());
  expect_forward_equals_core(ref.model, ref.structure, GetParam());
}

// ZBL (typewise, nep4_zbl): the cached ZBL totals plus the network part equal the core.
TEST(TrainForward, ZblModelEqualsCore) {
  const auto [model, file, frames] = nep_test::load_crconi_zbl_set();
  ASSERT_NE(model.zbl, nep::ZblMode::None);
  ASSERT_EQ(frames.size(), 5u);
  for (const auto& fr : frames)
    expect_forward_equals_core(model, nep::structure_from_frame(fr, model, file), "frame at line " + std::to_string(fr.line));
}

// The basis holds every pair inside a cutoff once, and its radial sums are the pairs' f_k.
TEST(PairBasis, CountsPairsAndSumsTheirBasis) {
  const auto ref = nep_test::load_reference("PbTe_NEP4__tric_24_rattled_swapped");
  nep::Calculator calc(ref.model, nep::Precision::Double, nep::Backend::Serial);
  calc.compute(ref.structure, false);
  const auto& nl = calc.last_neighbor_list();
  const nep::PairBasis pb = nep::build_pair_basis(ref.model, nl);
  const nep::Model& m = ref.model;
  long nr = 0, na = 0;
  for (int i = 0; i < nl.nlocal; ++i)
    for (int k = 0; k < nl.num_neighbors[i]; ++k) {
      const int j = nl.neighbors[static_cast<size_t>(i) * nl.max_neighbors + k];
      double d2 = 0;
      for (int c = 0; c < 3; ++c) d2 += std::pow(nl.x[3 * j + c] - nl.x[3 * i + c], 2);
      const double rr = 0.5 * (m.rc_radial[nl.type[i]] + m.rc_radial[nl.type[j]]);
      const double ra = 0.5 * (m.rc_angular[nl.type[i]] + m.rc_angular[nl.type[j]]);
      nr += d2 < rr * rr;
      na += d2 < ra * ra;
    }
  EXPECT_EQ(static_cast<long>(pb.r_owner.size()), nr);
  EXPECT_EQ(static_cast<long>(pb.a_owner.size()), na);
  EXPECT_GT(na, 0);
  EXPECT_EQ(pb.r_begin.back(), nr);
  EXPECT_EQ(pb.a_begin.back(), na);
  // f_0 = (T_0 + 1)/2 fc = fc: the k = 0 radial sum is the sum of the cutoff function
  double sum_b0 = 0.0, sum_fc = 0.0;
  for (int i = 0; i < pb.nlocal; ++i)
    for (int t = 0; t < pb.T; ++t) sum_b0 += pb.B[(static_cast<size_t>(i) * pb.T + t) * pb.KR];
  for (size_t p = 0; p < pb.r_owner.size(); ++p) {
    const double* g = &pb.r_geom[4 * p];
    const int i = static_cast<int>(std::upper_bound(pb.r_begin.begin(), pb.r_begin.end(), static_cast<int>(p)) - pb.r_begin.begin()) - 1;
    const double rc = 0.5 * (m.rc_radial[pb.type[i]] + m.rc_radial[pb.r_type[p]]);
    sum_fc += 0.5 * (1.0 + std::cos(M_PI / (g[3] * rc)));
  }
  EXPECT_NEAR(sum_b0, sum_fc, 1e-12 * sum_fc);
  EXPECT_GT(pb.bytes(), static_cast<size_t>(nr) * 8 * (4 + pb.KR));
}

TEST_P(TrainGradientTest, ParameterGradientMatchesFiniteDifferences) {
  const auto ref = nep_test::load_reference(GetParam());
  const int n = static_cast<int>(ref.structure.type.size());
  const Probe p = make_probe(n, 3);
  nep::Calculator calc(ref.model, nep::Precision::Double, nep::Backend::Serial);
  calc.compute(ref.structure, false);
  nep::GradientKernel kernel(ref.model);
  const int P = kernel.num_parameters();
  std::vector<double> grad(P, 0.0);
  nep::GradientKernel::Scratch sc;
  kernel.accumulate(nep::build_pair_basis(ref.model, calc.last_neighbor_list()), 0, n, p.wE, p.delta.data(), p.Delta, grad.data(), sc);
  double gmax = 0.0;
  for (double g : grad) gmax = std::max(gmax, std::fabs(g));
  ASSERT_GT(gmax, 0.0);

  // a spread of parameters: first/last of the network blocks, and of both c blocks
  const nep::Model& m = ref.model;
  const int n_ann = m.num_ann_parameters() - 1, n_cR = m.num_c_radial();
  std::vector<int> idx = {0, 1, m.num_neurons * m.dim() - 1, m.num_neurons * m.dim() + 2, n_ann - 1,
                          n_ann, n_ann + n_cR / 2, n_ann + n_cR - 1, n_ann + n_cR, P - 1, P - 7};
  std::mt19937 rng(11);
  for (int k = 0; k < 12; ++k) idx.push_back(static_cast<int>(rng() % P));
  std::vector<double> theta(P);
  nep::get_trainable_parameters(m, theta.data());
  int checked = 0;
  for (int i : idx) {
    const double h = 1e-5 * std::max(1.0, std::fabs(theta[i]));
    double j[2];
    for (int sgn = 0; sgn < 2; ++sgn) {
      nep::Model mm = m;
      auto t = theta;
      t[i] += sgn ? -h : h;
      nep::set_trainable_parameters(mm, t.data());
      j[sgn] = core_functional(mm, ref.structure, p);
    }
    const double fd = (j[0] - j[1]) / (2 * h);
    EXPECT_NEAR(grad[i], fd, 2e-6 * gmax + 1e-6 * std::fabs(fd)) << "parameter " << i << " of " << P;
    ++checked;
  }
  EXPECT_GE(checked, 20);
}

INSTANTIATE_TEST_SUITE_P(Models, TrainGradientTest,
                         ::testing::Values("PbTe_NEP4__tric_24_rattled_swapped", "PbTe_NEP3__tric_24_rattled_swapped",
                                           "Si_2022_NEP4_5body__tric_24_rattled", "C_2022_NEP4__tric_24_rattled",
                                           "PbTe_NEP4__rocksalt_216_rattled"));

TEST(TrainParameters, RoundTripThroughModel) {
  const auto m = nep::read_model(nep_test::data_path("potentials/PbTe_NEP4.txt"));
  std::vector<double> theta(nep::num_trainable_parameters(m));
  nep::get_trainable_parameters(m, theta.data());
  nep::Model m2 = m;
  for (double& v : m2.ann) v = 0.0;
  for (double& v : m2.c) v = 0.0;
  nep::set_trainable_parameters(m2, theta.data());
  m2.ann.back() = m.ann.back();  // b1 is not trainable
  EXPECT_EQ(nep::format_model(m2), nep::format_model(m));
}

}  // namespace
