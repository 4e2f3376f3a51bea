// Dipole, polarizability and charge (qNEP) models in the core against NEP_CPU's double-precision
// references (tests/data/README.md, synthetic model kinds), and the charge models' forces against
// finite differences of their own energy.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <sstream>

#include "nep/coulomb.hpp"
#include "nep/error.hpp"
#include "nep/predict.hpp"
#include "test_support.hpp"

using nep_test::data_path;
using nep_test::max_rel_dev;

namespace {

struct KindRef {
  nep::Model model;
  nep::Structure structure;
  nep::XyzFrame frame;
};

KindRef load(const std::string& stem) {
  KindRef r;
  r.model = nep::read_model(data_path("potentials/" + stem.substr(0, stem.find("__")) + ".txt"));
  const std::string file = data_path("reference/" + stem + ".xyz");
  auto frames = nep::read_xyz(file);
  r.frame = frames.at(0);
  r.structure = nep::structure_from_frame(r.frame, r.model, file);
  return r;
}

std::vector<double> numbers(const std::string& s) {
  std::istringstream is(s);
  std::vector<double> v;
  double x;
  while (is >> x) v.push_back(x);
  return v;
}

const char* kTensorStems[] = {
    "PbTe_NEP4_dipole__rocksalt_216_rattled",         "PbTe_NEP4_dipole__tric_24_rattled_swapped",
    "PbTe_NEP3_dipole__rocksalt_216_rattled",         "PbTe_NEP3_dipole__tric_24_rattled_swapped",
    "PbTe_NEP4_polarizability__rocksalt_216_rattled", "PbTe_NEP4_polarizability__tric_24_rattled_swapped",
    "PbTe_NEP3_polarizability__rocksalt_216_rattled", "PbTe_NEP3_polarizability__tric_24_rattled_swapped"};

const char* kChargeStems[] = {
    "BaTiO3_NEP4_charge1__perovskite_240_rattled",     "BaTiO3_NEP4_charge1__tric_25_close_pairs_a",
    "BaTiO3_NEP4_charge1__tric_25_close_pairs_b",      "BaTiO3_NEP4_zbl_charge1__perovskite_240_rattled",
    "BaTiO3_NEP4_zbl_charge1__tric_25_close_pairs_a",  "BaTiO3_NEP4_zbl_charge1__tric_25_close_pairs_b",
    "BaTiO3_NEP4_charge2__perovskite_240_rattled",     "BaTiO3_NEP4_charge2__tric_25_close_pairs_a",
    "BaTiO3_NEP4_charge2__tric_25_close_pairs_b",      "BaTiO3_NEP4_zbl_charge3__perovskite_240_rattled",
    "BaTiO3_NEP4_zbl_charge3__tric_25_close_pairs_a",  "BaTiO3_NEP4_zbl_charge3__tric_25_close_pairs_b"};

TEST(ModelKinds, ReadsEveryKindAndWritesItBack) {
  const struct {
    const char* file;
    nep::ModelKind kind;
    int version, charge_mode;
    size_t ann;  // the fixtures README's "network" count
  } cases[] = {{"PbTe_NEP4_dipole", nep::ModelKind::Dipole, 4, 0, 2641},
               {"PbTe_NEP3_dipole", nep::ModelKind::Dipole, 3, 0, 1321},
               {"PbTe_NEP4_polarizability", nep::ModelKind::Polarizability, 4, 0, 5282},
               {"PbTe_NEP3_polarizability", nep::ModelKind::Polarizability, 3, 0, 2642},
               {"BaTiO3_NEP4_charge1", nep::ModelKind::Charge, 4, 1, 4802},
               {"BaTiO3_NEP4_zbl_charge1", nep::ModelKind::Charge, 4, 1, 4802},
               {"BaTiO3_NEP4_charge2", nep::ModelKind::Charge, 4, 2, 4802},
               {"BaTiO3_NEP4_zbl_charge3", nep::ModelKind::Charge, 4, 3, 4802}};
  for (const auto& c : cases) {
    SCOPED_TRACE(c.file);
    const nep::Model m = nep::read_model(data_path(std::string("potentials/") + c.file + ".txt"));
    EXPECT_EQ(m.kind, c.kind);
    EXPECT_EQ(m.version, c.version);
    EXPECT_EQ(m.charge_mode, c.charge_mode);
    EXPECT_EQ(m.ann.size() + m.ann_pol.size(), c.ann);
    const std::string text = nep::format_model(m);
    EXPECT_EQ(text.substr(0, text.find(' ')), m.tag());
    const nep::Model back = nep::parse_model(text, "round trip");
    EXPECT_EQ(nep::format_model(back), text);
    EXPECT_EQ(back.ann, m.ann);
    EXPECT_EQ(back.ann_pol, m.ann_pol);
  }
  // the charge model's sqrt(eps_inf) sits before b1 (fixtures README: 1.5315561 for charge1)
  const nep::Model q = nep::read_model(data_path("potentials/BaTiO3_NEP4_charge1.txt"));
  EXPECT_EQ(q.ann[q.ann_sqrt_epsilon_inf_offset()], 1.5315561);
  EXPECT_EQ(q.ann[q.ann_b1_offset()], 7.5242300);
}

TEST(ModelKinds, TensorModelsMatchNepCpu) {
  for (const char* stem : kTensorStems) {
    SCOPED_TRACE(stem);
    const KindRef r = load(stem);
    nep::Calculator calc(r.model, nep::Precision::Double, nep::Backend::Host);
    const nep::TensorPrediction t = calc.compute_tensor(r.structure);
    std::vector<double> got, ref;
    if (r.model.kind == nep::ModelKind::Dipole) {
      got.assign(t.total, t.total + 3);
      ref = numbers(r.frame.info.at("dipole"));
    } else {  // NEP_CPU's order xx yy zz xy yz zx
      got = {t.total[0], t.total[4], t.total[8], t.total[1], t.total[5], t.total[6]};
      ref = numbers(r.frame.info.at("polarizability"));
    }
    ASSERT_EQ(ref.size(), got.size());
    EXPECT_LE(max_rel_dev(got, ref), 1e-10);
    // the per-atom tensors sum to the total
    for (int c = 0; c < 9; ++c) {
      double s = 0.0;
      for (size_t i = 0; i < r.structure.type.size(); ++i) s += t.per_atom[9 * i + c];
      EXPECT_NEAR(s, t.total[c], 1e-11 * (1.0 + std::fabs(t.total[c])));
    }
    // a potential's entry points refuse a tensor model
    EXPECT_THROW(calc.compute(r.structure), nep::Error);
  }
}

// both kernel paths of the host: the fused one (each stage one pass per atom) and the two-pass
// device kernels run on the host
class ChargeModels : public ::testing::TestWithParam<bool> {};

TEST_P(ChargeModels, MatchNepCpu) {
  for (const char* stem : kChargeStems) {
    SCOPED_TRACE(stem);
    const KindRef r = load(stem);
    nep::Calculator calc(r.model, nep::Precision::Double, nep::Backend::Host);
    calc.force_two_pass(GetParam());
    const double e_ref = std::stod(r.frame.info.at("energy"));
    for (auto mode : {nep::ChargeForces::NepCpu, nep::ChargeForces::Exact}) {
      const bool exact = mode == nep::ChargeForces::Exact;
      calc.set_charge_options(true, mode);
      const nep::Prediction p = calc.compute(r.structure, true);
      EXPECT_LE(std::fabs(p.energy - e_ref) / std::fabs(e_ref), 1e-10);
      EXPECT_LE(max_rel_dev(p.eatom, r.frame.column("energies")->values), 1e-10);
      EXPECT_LE(max_rel_dev(p.charge, r.frame.column("charges")->values), 1e-10);
      EXPECT_LE(max_rel_dev(p.bec, r.frame.column("bec")->values), 1e-10);
      EXPECT_LE(max_rel_dev(p.force, r.frame.column(exact ? "forces_gc" : "forces")->values), 1e-10);
      EXPECT_LE(max_rel_dev(p.vatom, r.frame.column(exact ? "virials_gc" : "virials")->values), 1e-10);
      EXPECT_LE(max_rel_dev(std::vector<double>(p.virial, p.virial + 9), numbers(r.frame.info.at(exact ? "virial_gc" : "virial"))),
                1e-10);
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kernels, ChargeModels, ::testing::Values(false, true),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "TwoPass" : "Fused"; });

// forces and virial are the gradient of the energy (central differences, independent of NEP_CPU)
TEST(ModelKinds, ChargeForcesAreTheEnergyGradient) {
  for (const char* stem : {"BaTiO3_NEP4_charge1__tric_25_close_pairs_a", "BaTiO3_NEP4_charge2__tric_25_close_pairs_b",
                           "BaTiO3_NEP4_zbl_charge3__tric_25_close_pairs_a"}) {
    SCOPED_TRACE(stem);
    const KindRef r = load(stem);
    nep::Calculator calc(r.model, nep::Precision::Double, nep::Backend::Host);
    const nep::Prediction p = calc.compute(r.structure, true);
    const double h = 1e-5;
    double worst = 0.0, fmax = 0.0;
    for (size_t k = 0; k < r.structure.x.size(); k += 7) {
      nep::Structure s = r.structure;
      s.x[k] += h;
      const double ep = calc.compute(s, false).energy;
      s.x[k] -= 2 * h;
      const double em = calc.compute(s, false).energy;
      worst = std::max(worst, std::fabs(-(ep - em) / (2 * h) - p.force[k]));
      fmax = std::max(fmax, std::fabs(p.force[k]));
    }
    EXPECT_LT(worst, 2e-6) << "largest |F_fd - F| over sampled components, max |F| " << fmax;
  }
}

// NEP_CPU's Ewald truncates its k-sum where exp(-k^2/4 alpha^2) = exp(-pi^2): what that changes
// against a converged sum (printed; docs/model_kinds.md), and that the sum converges
TEST(ModelKinds, ChargeModelEwaldTruncation) {
  for (const char* stem : kChargeStems) {
    const KindRef r = load(stem);
    if (r.model.charge_mode == 3) continue;
    nep::Calculator calc(r.model, nep::Precision::Double, nep::Backend::Host);
    const nep::Prediction a = calc.compute(r.structure, true);
    calc.set_ewald(1.0, true);
    const nep::Prediction e = calc.compute(r.structure, true);
    calc.set_ewald(1.6, true);
    const nep::Prediction b = calc.compute(r.structure, true);
    calc.set_ewald(2.0, true);
    const nep::Prediction c = calc.compute(r.structure, true);
    auto rel = [](const nep::Prediction& x, const nep::Prediction& y, int what) {
      if (what == 0) return std::fabs(x.energy - y.energy) / std::fabs(y.energy);
      if (what == 1) return max_rel_dev(x.force, y.force);
      if (what == 2) return max_rel_dev(x.vatom, y.vatom);
      return max_rel_dev(std::vector<double>(x.virial, x.virial + 9), std::vector<double>(y.virial, y.virial + 9));
    };
    std::printf("%-50s exact 2pi: E %.1e F %.1e W_i %.1e W %.1e | converged: E %.1e F %.1e W_i %.1e W %.1e\n", stem,
                rel(e, a, 0), rel(e, a, 1), rel(e, a, 2), rel(e, a, 3), rel(c, a, 0), rel(c, a, 1), rel(c, a, 2),
                rel(c, a, 3));
    EXPECT_LT(rel(e, a, 0), 1e-7);  // the fixtures README: exact 2 pi moves results by < 2e-8
    EXPECT_LT(rel(e, a, 1), 1e-7);
    EXPECT_LT(rel(b, c, 0), 1e-12);  // converged
    EXPECT_LT(rel(b, c, 1), 1e-10);
  }
}

// nep-predict's output for the other kinds: the columns and header keys docs/nep_predict.md names,
// holding what the Calculator computes
TEST(ModelKinds, PredictWritesEveryKind) {
  const std::string dir = nep_test::scratch_dir("nep_kinds_predict_");
  for (const char* stem : {"PbTe_NEP4_dipole__tric_24_rattled_swapped", "PbTe_NEP3_polarizability__tric_24_rattled_swapped",
                           "BaTiO3_NEP4_charge1__tric_25_close_pairs_a"}) {
    SCOPED_TRACE(stem);
    const KindRef r = load(stem);
    nep::Calculator calc(r.model, nep::Precision::Double, nep::Backend::Host);
    const std::string out = dir + "/" + stem + ".xyz";
    ASSERT_EQ(nep::predict_xyz(calc, r.model, data_path("reference/" + std::string(stem) + ".xyz"), out), 1);
    const nep::XyzFrame fr = nep::read_xyz(out).at(0);
    if (r.model.kind == nep::ModelKind::Charge) {
      EXPECT_LE(std::fabs(std::stod(fr.info.at("energy")) - std::stod(r.frame.info.at("energy"))), 1e-10 * 400);
      EXPECT_LE(max_rel_dev(fr.column("charges")->values, r.frame.column("charges")->values), 1e-10);
      EXPECT_LE(max_rel_dev(fr.column("bec")->values, r.frame.column("bec")->values), 1e-10);
      EXPECT_LE(max_rel_dev(fr.column("forces")->values, r.frame.column("forces_gc")->values), 1e-10);
      continue;
    }
    const nep::TensorPrediction t = calc.compute_tensor(r.structure);
    const bool dip = r.model.kind == nep::ModelKind::Dipole;
    const std::vector<double> head = numbers(fr.info.at(dip ? "dipole" : "pol"));
    ASSERT_EQ(head.size(), dip ? 3u : 9u);
    for (size_t c = 0; c < head.size(); ++c) EXPECT_NEAR(head[c], t.total[c], 1e-12 * (1 + std::fabs(t.total[c])));
    const auto& col = fr.column(dip ? "atomic_dipole" : "atomic_pol")->values;
    ASSERT_EQ(col.size(), r.structure.type.size() * (dip ? 3 : 9));
    EXPECT_NEAR(col[dip ? 4 : 10], t.per_atom[dip ? 10 : 10], 1e-12 * (1 + std::fabs(t.per_atom[10])));
  }
}

// ---- public GPUMD models against the numbers their files carry (tests/data/README.md, gpumd/) ----

std::vector<std::vector<double>> table(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::vector<double>> rows;
  std::string line;
  while (std::getline(in, line))
    if (!line.empty() && line[0] != '#') rows.push_back(numbers(line));
  return rows;
}

// A rotation R of the structure (cell and positions) rotates a dipole to R mu and a
// polarizability to R alpha R^T (rotation-invariant descriptors, covariant pair vectors): checked
// on GPUMD's public dipole model (a molecule) and polarizability model (a periodic crystal)
nep::Structure rotated(nep::Structure s, const double R[9]) {
  auto rot = [&](double* v) {
    const double a = v[0], b = v[1], c = v[2];
    for (int k = 0; k < 3; ++k) v[k] = R[3 * k] * a + R[3 * k + 1] * b + R[3 * k + 2] * c;
  };
  for (size_t i = 0; i < s.x.size(); i += 3) rot(&s.x[i]);
  for (int r = 0; r < 3; ++r) rot(&s.cell.h[3 * r]);
  return s;
}

TEST(ModelKindsGpumd, TensorsRotateWithTheStructure) {
  const double t = 0.7, u = -0.4;  // R = Rz(t) Rx(u)
  const double R[9] = {std::cos(t), -std::sin(t) * std::cos(u), std::sin(t) * std::sin(u),
                       std::sin(t), std::cos(t) * std::cos(u),  -std::cos(t) * std::sin(u),
                       0.0,         std::sin(u),                 std::cos(u)};
  for (const char* pair : {"SiFCH_NEP4_dipole.txt:SiFCH_molecule.xyz", "BaZrO3_NEP3_polarizability.txt:BaZrO3_320.xyz"}) {
    const std::string ps = pair, model = ps.substr(0, ps.find(':')), xyz = ps.substr(ps.find(':') + 1);
    SCOPED_TRACE(model);
    const std::string file = data_path("gpumd/" + xyz);
    const nep::Model m = nep::read_model(data_path("gpumd/" + model));
    nep::Calculator c(m, nep::Precision::Double, nep::Backend::Host);
    const nep::Structure s = nep::structure_from_frame(nep::read_xyz(file).at(0), m, file);
    const nep::TensorPrediction a = c.compute_tensor(s), b = c.compute_tensor(rotated(s, R));
    double expect[9] = {0}, scale = 0.0;
    if (a.dipole) {
      for (int i = 0; i < 3; ++i)
        for (int k = 0; k < 3; ++k) expect[i] += R[3 * i + k] * a.total[k];
    } else {
      for (int i = 0; i < 3; ++i)
        for (int j = 0; j < 3; ++j)
          for (int k = 0; k < 3; ++k)
            for (int l = 0; l < 3; ++l) expect[3 * i + j] += R[3 * i + k] * a.total[3 * k + l] * R[3 * j + l];
      EXPECT_NEAR(a.total[1], a.total[3], 1e-10 * std::fabs(a.total[0]));  // symmetric
    }
    for (double v : a.total) scale = std::max(scale, std::fabs(v));
    for (int c9 = 0; c9 < (a.dipole ? 3 : 9); ++c9) EXPECT_NEAR(b.total[c9], expect[c9], 1e-10 * scale) << c9;
  }
}

// GPUMD's qNEP training example (nep4_charge2 PbTe, 25 frames): its own predictions on its
// training set (GPUMD in single precision, 6 printed digits). The files were written on
// 2026-04-20, three days before GPUMD added the mean-charge term to its forces (commit d6c042db):
// their forces are NEP_CPU's form, which ChargeForces::NepCpu reproduces.
TEST(ModelKindsGpumd, QnepTrainingPredictions) {
  const std::string dir = data_path("gpumd/qnep_train/");
  const nep::Model m = nep::read_model(dir + "nep.txt");
  const auto frames = nep::read_xyz(dir + "train.xyz");
  const auto energy = table(dir + "energy_train.out"), force = table(dir + "force_train.out");
  const auto charge = table(dir + "charge_train.out"), virial = table(dir + "virial_train.out");
  ASSERT_EQ(energy.size(), frames.size());
  nep::Calculator exact(m, nep::Precision::Double, nep::Backend::Host);
  nep::Calculator cpu(m, nep::Precision::Double, nep::Backend::Host);
  cpu.set_charge_options(false, nep::ChargeForces::NepCpu);
  // GPUMD's charge_train.out holds the network's charges before the shift to the frame's total
  // charge (GPUMD main_nep: charge_shifted = charge + (charge_ref - sum charge) / N), ours after it:
  // compared without each frame's mean
  double de = 0, dq = 0, df = 0, df_cpu = 0, dw_cpu = 0, fmax = 0;
  size_t row = 0;
  for (size_t k = 0; k < frames.size(); ++k) {
    const nep::Structure s = nep::structure_from_frame(frames[k], m, dir + "train.xyz");
    const nep::Prediction p = exact.compute(s, false), pc = cpu.compute(s, false);
    const int n = static_cast<int>(s.type.size());
    de = std::max(de, std::fabs(p.energy / n - energy[k][0]));
    const int idx[6] = {0, 4, 8, 1, 5, 6};  // per atom: xx yy zz xy yz zx
    for (int c = 0; c < 6; ++c) dw_cpu = std::max(dw_cpu, std::fabs(pc.virial[idx[c]] / n - virial[k][c]));
    double qmean = 0.0;
    for (int i = 0; i < n; ++i) qmean += charge[row + i][0] / n;
    for (int i = 0; i < n; ++i, ++row) {
      dq = std::max(dq, std::fabs(p.charge[i] - (charge[row][0] - qmean)));
      for (int a = 0; a < 3; ++a) {
        df = std::max(df, std::fabs(p.force[3 * i + a] - force[row][a]));
        df_cpu = std::max(df_cpu, std::fabs(pc.force[3 * i + a] - force[row][a]));
        fmax = std::max(fmax, std::fabs(force[row][a]));
      }
    }
  }
  std::printf("GPUMD qnep_train (25 frames): max |dE/atom| %.1e eV, |dq| %.1e e; forces without the mean-charge "
              "term (NEP_CPU's, what GPUMD computed before its fix d6c042db) %.1e eV/A, with it %.1e (max |F| %.2f); "
              "|dW/atom| %.1e eV\n", de, dq, df_cpu, df, fmax, dw_cpu);
  EXPECT_LT(de, 2e-5);
  EXPECT_LT(dq, 1e-5);
  EXPECT_LT(df_cpu, 1e-4);
  EXPECT_GT(df, 10 * df_cpu);  // these outputs predate GPUMD's gradient fix: the term is visible
  EXPECT_LT(dw_cpu, 1e-4);
}

}  // namespace
