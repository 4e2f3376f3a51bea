// Physics checks that need no reference data: finite-difference forces, virial from finite
// strain, invariance under translation, rotation and permutation of atoms.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>

#include "test_support.hpp"

namespace {

double energy_of(nep::Calculator& c, const nep::Structure& s) { return c.compute(s, false).energy; }

class PhysicsTest : public ::testing::TestWithParam<std::string> {};

TEST_P(PhysicsTest, ForcesAreMinusEnergyGradient) {
  const auto ref = nep_test::load_reference(GetParam());
  nep::Calculator calc(ref.model);
  const auto p = calc.compute(ref.structure, false);
  std::mt19937 rng(7);
  const double h = 1e-5;
  for (int trial = 0; trial < 6; ++trial) {
    const int i = static_cast<int>(rng() % ref.structure.type.size());
    const int d = static_cast<int>(rng() % 3);
    auto s = ref.structure;
    s.x[3 * i + d] += h;
    const double ep = energy_of(calc, s);
    s.x[3 * i + d] -= 2 * h;
    const double em = energy_of(calc, s);
    const double fd = -(ep - em) / (2 * h);
    EXPECT_NEAR(p.force[3 * i + d], fd, 1e-7 * (1 + std::fabs(fd))) << "atom " << i << " dim " << d;
  }
}

TEST_P(PhysicsTest, VirialIsMinusStrainDerivative) {
  // r_b -> r_b + eps r_a for cell and positions gives W_ab = -dE/deps
  const auto ref = nep_test::load_reference(GetParam());
  nep::Calculator calc(ref.model);
  const auto p = calc.compute(ref.structure, false);
  double wmax = 0;
  for (double w : p.virial) wmax = std::max(wmax, std::fabs(w));
  const double eps = 1e-6;
  for (int a = 0; a < 3; ++a)
    for (int b = 0; b < 3; ++b) {
      double e[2];
      for (int sgn = 0; sgn < 2; ++sgn) {
        auto s = ref.structure;
        const double de = sgn ? -eps : eps;
        for (size_t i = 0; i < s.type.size(); ++i) s.x[3 * i + b] += de * s.x[3 * i + a];
        for (int k = 0; k < 3; ++k) s.cell.h[3 * k + b] += de * s.cell.h[3 * k + a];
        e[sgn] = energy_of(calc, s);
      }
      const double w_fd = -(e[0] - e[1]) / (2 * eps);
      EXPECT_NEAR(p.virial[3 * a + b], w_fd, 1e-6 * wmax) << "component " << a << b;
    }
}

TEST_P(PhysicsTest, InvariantUnderTranslationRotationPermutation) {
  const auto ref = nep_test::load_reference(GetParam());
  nep::Calculator calc(ref.model);
  const auto p0 = calc.compute(ref.structure, true);
  const double escale = std::fabs(p0.energy);
  double fscale = 0;
  for (double f : p0.force) fscale = std::max(fscale, std::fabs(f));

  {  // translation by a non-lattice vector
    auto s = ref.structure;
    for (size_t i = 0; i < s.type.size(); ++i) {
      s.x[3 * i] += 0.37;
      s.x[3 * i + 1] -= 1.21;
      s.x[3 * i + 2] += 2.9;
    }
    const auto p = calc.compute(s, false);
    EXPECT_NEAR(p.energy, p0.energy, 1e-11 * escale);
    EXPECT_LE(nep_test::max_rel_dev(p.force, p0.force), 1e-9);
  }
  {  // rotation of cell and positions: energies equal, forces rotate
    const double th = 0.7, ph = -0.4;
    const double Rz[9] = {std::cos(th), -std::sin(th), 0, std::sin(th), std::cos(th), 0, 0, 0, 1};
    const double Rx[9] = {1, 0, 0, 0, std::cos(ph), -std::sin(ph), 0, std::sin(ph), std::cos(ph)};
    double R[9] = {0};
    for (int i = 0; i < 3; ++i)
      for (int j = 0; j < 3; ++j)
        for (int k = 0; k < 3; ++k) R[3 * i + j] += Rx[3 * i + k] * Rz[3 * k + j];
    auto rot = [&](const double* v, double* out) {
      for (int i = 0; i < 3; ++i) out[i] = R[3 * i] * v[0] + R[3 * i + 1] * v[1] + R[3 * i + 2] * v[2];
    };
    auto s = ref.structure;
    for (size_t i = 0; i < s.type.size(); ++i) rot(&ref.structure.x[3 * i], &s.x[3 * i]);
    for (int k = 0; k < 3; ++k) rot(&ref.structure.cell.h[3 * k], &s.cell.h[3 * k]);
    const auto p = calc.compute(s, false);
    EXPECT_NEAR(p.energy, p0.energy, 1e-10 * escale);
    std::vector<double> frot(p0.force.size());
    for (size_t i = 0; i < s.type.size(); ++i) rot(&p0.force[3 * i], &frot[3 * i]);
    for (size_t k = 0; k < frot.size(); ++k) EXPECT_NEAR(p.force[k], frot[k], 1e-9 * fscale);
  }
  {  // permutation of atoms: per-atom results permute
    auto s = ref.structure;
    std::vector<int> perm(s.type.size());
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), std::mt19937(11));
    for (size_t i = 0; i < perm.size(); ++i) {
      s.type[i] = ref.structure.type[perm[i]];
      for (int d = 0; d < 3; ++d) s.x[3 * i + d] = ref.structure.x[3 * perm[i] + d];
    }
    const auto p = calc.compute(s, true);
    EXPECT_NEAR(p.energy, p0.energy, 1e-11 * escale);
    for (size_t i = 0; i < perm.size(); ++i) {
      EXPECT_NEAR(p.eatom[i], p0.eatom[perm[i]], 1e-11 * escale / perm.size() + 1e-12);
      for (int d = 0; d < 3; ++d) EXPECT_NEAR(p.force[3 * i + d], p0.force[3 * perm[i] + d], 1e-10 * fscale);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Models, PhysicsTest,
                         ::testing::Values("PbTe_NEP4__tric_24_rattled_swapped", "C_2022_NEP4__tric_24_rattled",
                                           "Si_2022_NEP4_5body__tric_24_rattled", "PbTe_NEP3__tric_24_rattled_swapped",
                                           // per-type cutoffs; NEP5; ZBL on pairs at 1.15-1.45 A:
                                           // universal, flexible, typewise (+ per-type cutoffs)
                                           "PbTe_NEP4_typewise_cutoff__tric_24_rattled_swapped",
                                           "PbTe_NEP5__tric_24_rattled_swapped",
                                           "BaTiO3_NEP5_zbl__tric_25_close_pairs",
                                           "BaTiO3_NEP4_flexible_zbl__tric_25_close_pairs",
                                           "BaTiO3_NEP4_typewise_zbl_typewise_cutoff__tric_25_close_pairs"));

// The typewise ZBL of a real model (nep_CrCoNi) on a compressed frame: FD forces.
TEST(PhysicsZbl, TypewiseZblForcesMatchFiniteDifference) {
  const auto model = nep::read_model(nep_test::data_path("potentials/nep_CrCoNi.txt"));
  nep::Structure s;
  // compressed fcc 2x2x2 (32 atoms) with a = 3.0 A: nearest neighbours at 2.12 A, inside ZBL range
  const double a = 3.0;
  const double basis[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
  std::mt19937 rng(3);
  std::uniform_real_distribution<double> u(-0.1, 0.1);
  for (int i = 0; i < 2; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 2; ++k)
        for (const auto& b : basis) {
          s.x.push_back((i + b[0]) * a + u(rng));
          s.x.push_back((j + b[1]) * a + u(rng));
          s.x.push_back((k + b[2]) * a + u(rng));
          s.type.push_back(static_cast<int>(s.type.size() % 3));
        }
  s.cell.h[0] = s.cell.h[4] = s.cell.h[8] = 2 * a;
  nep::Calculator calc(model);
  const auto p = calc.compute(s, false);
  const double h = 1e-5;
  for (int i : {0, 5, 17}) {
    for (int d = 0; d < 3; ++d) {
      auto sp = s, sm = s;
      sp.x[3 * i + d] += h;
      sm.x[3 * i + d] -= h;
      const double fd = -(energy_of(calc, sp) - energy_of(calc, sm)) / (2 * h);
      EXPECT_NEAR(p.force[3 * i + d], fd, 1e-6 * (1 + std::fabs(fd)));
    }
  }
}

}  // namespace
