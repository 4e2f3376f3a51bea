// The trainer's parameter gradients (train_gradient.hpp) against the core:
//  - its network energy equals the core's energy, and its directional derivative Phi equals
//    -sum delta.F - sum Delta.W with F, W from the core (1e-10 relative);
//  - wE dE/dtheta - dPhi/dtheta equals central finite differences of
//    J(theta) = wE E + sum delta.F + sum Delta.W evaluated by the core.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "nep/train_gradient.hpp"
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
  nep::GradientKernel kernel(ref.model);
  std::vector<double> grad(kernel.num_parameters(), 0.0);
  nep::GradientKernel::Scratch sc;
  for (unsigned seed : {1u, 2u}) {
    const Probe p = make_probe(n, seed);
    double e = 0.0, phi = 0.0;
    kernel.accumulate(nl, 0, nl.nlocal, p.wE, p.delta.data(), p.Delta, grad.data(), sc, &e, &phi);
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
  kernel.accumulate(calc.last_neighbor_list(), 0, n, p.wE, p.delta.data(), p.Delta, grad.data(), sc);
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
                                           "Si_2022_NEP4_5body__tric_24_rattled", "C_2022_NEP4__tric_24_rattled"));

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
