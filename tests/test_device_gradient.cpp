// The trainer's Kokkos kernels (device_gradient.hpp, on the default execution space: OpenMP here,
// CUDA in a CUDA build) against the host training kernel (train_gradient.hpp), itself held equal
// to the core and to finite differences in test_train_gradient.cpp:
//  - energies, virials and forces of every frame of a batch equal GradientKernel::forward (1e-12);
//  - the batch gradient equals the sum over frames of GradientKernel::accumulate (1e-12 of the
//    largest entry), for batches that mix frames, repeat a structure with other residuals, and
//    reuse frames uploaded in earlier batches (the packed arrays grow between batches);
//  - the same batch twice gives the same bytes;
//  - all of it in both scratch layouts (atom-major, the CPU's; atom-fastest, the GPU's), which
//    agree to round-off.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>

#include "nep/error.hpp"
#include "nep/predict.hpp"
#include "nep/train/device_gradient.hpp"
#include "nep/train/train_gradient.hpp"
#include "nep/xyz.hpp"
#include "test_support.hpp"

namespace {

struct Frame {
  nep::PairBasis pb;
  double wE = 0.0, Delta[9] = {0};
  std::vector<double> delta;
};

Frame make_frame(const nep::Model& m, const nep::Structure& s, unsigned seed, bool virial = true) {
  nep::Calculator calc(m, nep::Precision::Double, nep::Backend::Serial);
  calc.compute(s, false);
  Frame f;
  f.pb = nep::build_pair_basis(m, calc.last_neighbor_list());
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  f.wE = u(rng);
  f.delta.resize(3 * static_cast<size_t>(f.pb.nlocal));
  for (double& d : f.delta) d = u(rng);
  for (double& d : f.Delta) d = virial ? 0.05 * u(rng) : 0.0;
  return f;
}

double max_abs(const std::vector<double>& v) {
  double a = 0.0;
  for (double x : v) a = std::max(a, std::fabs(x));
  return a;
}

// One batch on the device against the host kernel; returns the device gradient.
std::vector<double> check_batch(nep::DeviceGradient& dev, const nep::Model& m, const std::vector<Frame>& fr,
                                const std::vector<int>& batch, const std::string& what) {
  const nep::GradientKernel host(m);
  nep::GradientKernel::Scratch sc;
  for (int f : batch)
    if (!dev.resident(f)) dev.upload(f, fr[f].pb);
  const int nb = static_cast<int>(batch.size());
  std::vector<double> energy(nb), virial(9 * nb), force, wE(nb), Delta(9 * nb), delta;
  dev.forward(m, batch, energy.data(), virial.data(), force);
  std::vector<double> grad_host(host.num_parameters(), 0.0);
  size_t at = 0;
  for (int b = 0; b < nb; ++b) {
    const Frame& f = fr[batch[b]];
    const int n = f.pb.nlocal;
    double e = 0.0, w[9];
    std::vector<double> fh(3 * static_cast<size_t>(n));
    host.forward(f.pb, e, w, fh.data(), sc);
    EXPECT_NEAR(energy[b], e, 1e-12 * std::fabs(e)) << what << " frame " << batch[b];
    EXPECT_LE(nep_test::max_rel_dev(std::vector<double>(&virial[9 * b], &virial[9 * b] + 9), std::vector<double>(w, w + 9)), 1e-12)
        << what << " frame " << batch[b];
    EXPECT_LE(nep_test::max_rel_dev(std::vector<double>(force.begin() + at, force.begin() + at + 3 * n), fh), 1e-12)
        << what << " frame " << batch[b];
    host.accumulate(f.pb, 0, n, f.wE, f.delta.data(), f.Delta, grad_host.data(), sc);
    wE[b] = f.wE;
    std::copy(f.Delta, f.Delta + 9, &Delta[9 * b]);
    delta.insert(delta.end(), f.delta.begin(), f.delta.end());
    at += 3 * static_cast<size_t>(n);
  }
  EXPECT_EQ(force.size(), at) << what;
  std::vector<double> grad(host.num_parameters(), 7.0);  // overwritten
  dev.gradient(wE.data(), delta.data(), Delta.data(), grad.data());
  const double gmax = max_abs(grad_host);
  EXPECT_GT(gmax, 0.0) << what;
  double worst = 0.0;
  int worst_p = -1;
  for (size_t p = 0; p < grad.size(); ++p) {
    const double d = std::fabs(grad[p] - grad_host[p]);
    if (!(d <= worst)) {
      worst = d;
      worst_p = static_cast<int>(p);
    }
  }
  EXPECT_LE(worst, 1e-12 * gmax) << what << ": parameter " << worst_p << " of " << grad.size() << " device "
                                 << grad[std::max(worst_p, 0)] << " host " << grad_host[std::max(worst_p, 0)];
  return grad;
}

// both scratch layouts in every test: atom-major (the CPU default) and atom-fastest (the GPU's)
using Layout = nep::DeviceGradient::Layout;
const Layout kLayouts[] = {Layout::AtomMajor, Layout::AtomFastest};
std::string name(Layout l) { return l == Layout::AtomMajor ? " (atom-major)" : " (atom-fastest)"; }

class DeviceGradientTest : public ::testing::TestWithParam<std::string> {};

TEST_P(DeviceGradientTest, BatchesEqualHostKernel) {
  const auto ref = nep_test::load_reference(GetParam());
  std::vector<Frame> fr;
  fr.push_back(make_frame(ref.model, ref.structure, 1));
  fr.push_back(make_frame(ref.model, ref.structure, 2, false));  // same structure, other residuals, no virial
  std::vector<std::vector<double>> by_layout;
  for (Layout l : kLayouts) {
    nep::DeviceGradient dev(ref.model, l);
    check_batch(dev, ref.model, fr, {0}, GetParam() + " batch {0}" + name(l));
    const auto g1 = check_batch(dev, ref.model, fr, {1, 0}, GetParam() + " batch {1,0}" + name(l));
    const auto g2 = check_batch(dev, ref.model, fr, {1, 0}, GetParam() + " batch {1,0} again" + name(l));
    EXPECT_TRUE(g1 == g2) << "same batch, same parameters: same bytes" << name(l);
    EXPECT_GT(dev.device_bytes(), fr[0].pb.bytes());
    by_layout.push_back(g1);
  }
  // the compiler may contract the two layouts' loops into FMAs differently: round-off apart
  EXPECT_LE(nep_test::max_rel_dev(by_layout[1], by_layout[0]), 1e-13) << "layouts";
  std::printf("%s: layouts differ by %.2e (max rel)\n", GetParam().c_str(), nep_test::max_rel_dev(by_layout[1], by_layout[0]));
}

INSTANTIATE_TEST_SUITE_P(Models, DeviceGradientTest,
                         ::testing::Values("PbTe_NEP4__tric_24_rattled_swapped", "PbTe_NEP3__tric_24_rattled_swapped",
                                           "Si_2022_NEP4_5body__tric_24_rattled", "C_2022_NEP4__tric_24_rattled",
                                           "PbTe_NEP4__rocksalt_216_rattled"));

// Two structures of one model (24 and 216 atoms, several 64-atom blocks) and a ZBL model over
// five frames, uploaded over three batches.
TEST(DeviceGradient, MixedFramesAndGrowingUploads) {
  const auto a = nep_test::load_reference("PbTe_NEP4__tric_24_rattled_swapped");
  const auto b = nep_test::load_reference("PbTe_NEP4__rocksalt_216_rattled");
  std::vector<Frame> fr = {make_frame(a.model, a.structure, 3), make_frame(a.model, b.structure, 4)};
  for (Layout l : kLayouts) {
    nep::DeviceGradient dev(a.model, l);
    check_batch(dev, a.model, fr, {0}, "PbTe 24" + name(l));
    check_batch(dev, a.model, fr, {1}, "PbTe 216" + name(l));  // more atoms: the scratch grows
    check_batch(dev, a.model, fr, {0, 1}, "PbTe 24 + 216" + name(l));
  }
}

TEST(DeviceGradient, ZblModelOverGrowingUploads) {
  const auto [model, file, frames] = nep_test::load_crconi_zbl_set();
  ASSERT_NE(model.zbl, nep::ZblMode::None);
  ASSERT_EQ(frames.size(), 5u);
  std::vector<Frame> fr;
  for (size_t k = 0; k < frames.size(); ++k)
    fr.push_back(make_frame(model, nep::structure_from_frame(frames[k], model, file), 10 + static_cast<unsigned>(k)));
  for (Layout l : kLayouts) {
    nep::DeviceGradient dev(model, l);
    check_batch(dev, model, fr, {1, 0}, "CrCoNi {1,0}" + name(l));
    check_batch(dev, model, fr, {4, 2, 0}, "CrCoNi {4,2,0}" + name(l));
    check_batch(dev, model, fr, {3, 1, 2, 0, 4}, "CrCoNi all" + name(l));
  }
}

TEST(DeviceGradient, RefusesUnknownFramesAndGradientBeforeForward) {
  const auto ref = nep_test::load_reference("PbTe_NEP4__tric_24_rattled_swapped");
  nep::DeviceGradient dev(ref.model);
  std::vector<double> e(1), w(9), f, g(nep::num_trainable_parameters(ref.model));
  EXPECT_THROW(dev.gradient(e.data(), f.data(), w.data(), g.data()), nep::Error);
  EXPECT_THROW(dev.forward(ref.model, {0}, e.data(), w.data(), f), nep::Error);
  EXPECT_FALSE(nep::device_execution_space().empty());
}

}  // namespace
