// Frames carved around centre atoms (nep/carve.hpp) and their per-atom force weights in the loss:
//  - a region of radius core + 2 rc gives every core atom the NEP force it has in the whole
//    periodic system (1e-10 relative to the largest force), and one of core + rc does not (1e-3);
//  - the region's atoms are exactly those within the radius (counted by brute force over images);
//  - masked atoms' labels do not enter the loss, its gradient, or the force RMSE; a frame without
//    energy leaves the energy terms (and b1's residual) alone;
//  - the batch gradient with masks equals central finite differences of the batch loss;
//  - the basis cache leaves out a forces-only frame's sites without a labelled atom in their
//    environment (train::force_sites): loss, force errors and gradient equal those of the whole
//    basis to round-off, with fewer pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>

#include "nep/calculator.hpp"
#include "nep/carve.hpp"
#include "nep/error.hpp"
#include "nep/train/config.hpp"
#include "nep/train/train_gradient.hpp"
#include "test_support.hpp"
#include "train/batch_loss.hpp"
#include "train/dataset.hpp"
#include "train/session.hpp"

namespace {

// rattled diamond Si, cells^3 conventional cells; forces from `m` (Serial, double)
nep::TrainingFrame si_frame(const nep::Model& m, int cells, unsigned seed) {
  const double a = 5.43;
  const double basis[8][3] = {{0, 0, 0}, {0, .5, .5}, {.5, 0, .5}, {.5, .5, 0},
                              {.25, .25, .25}, {.25, .75, .75}, {.75, .25, .75}, {.75, .75, .25}};
  std::mt19937 rng(seed);
  std::normal_distribution<double> g(0.0, 0.08);
  nep::TrainingFrame fr;
  for (int i = 0; i < cells; ++i)
    for (int j = 0; j < cells; ++j)
      for (int k = 0; k < cells; ++k)
        for (const auto& b : basis) {
          fr.species.push_back("Si");
          fr.pos.push_back(a * (i + b[0]) + g(rng));
          fr.pos.push_back(a * (j + b[1]) + g(rng));
          fr.pos.push_back(a * (k + b[2]) + g(rng));
        }
  // a slightly triclinic cell: the minimum image must not assume an orthogonal one
  const double L = a * cells;
  const double h[9] = {L, 0, 0, 0.3, L, 0, -0.2, 0.4, L};
  std::copy(h, h + 9, fr.cell);
  nep::Structure s;
  s.type.assign(fr.natoms(), 0);
  s.x = fr.pos;
  std::copy(h, h + 9, s.cell.h);
  nep::Calculator calc(m, nep::Precision::Double, nep::Backend::Serial);
  const nep::Prediction p = calc.compute(s, false);
  fr.forces = p.force;
  fr.has_forces = fr.has_energy = true;
  fr.energy = p.energy;
  return fr;
}

std::vector<double> nep_forces(const nep::Model& m, const nep::TrainingFrame& fr) {
  nep::Structure s;
  s.type.assign(fr.natoms(), 0);
  s.x = fr.pos;
  std::copy(fr.cell, fr.cell + 9, s.cell.h);
  std::copy(fr.pbc, fr.pbc + 3, s.cell.pbc);
  nep::Calculator calc(m, nep::Precision::Double, nep::Backend::Serial);
  return calc.compute(s, false).force;
}

// worst |F_carved - F_full| over the core atoms, relative to the largest core force
double core_deviation(const nep::Model& m, const nep::TrainingFrame& carved, int* core_atoms) {
  const std::vector<double> f = nep_forces(m, carved);
  double worst = 0.0, big = 0.0;
  *core_atoms = 0;
  for (int i = 0; i < carved.natoms(); ++i) {
    if (carved.force_weight[i] == 0.0) continue;
    ++*core_atoms;
    for (int d = 0; d < 3; ++d) {
      worst = std::max(worst, std::fabs(f[3 * i + d] - carved.forces[3 * i + d]));
      big = std::max(big, std::fabs(carved.forces[3 * i + d]));
    }
  }
  return worst / big;
}

TEST(Carve, CoreForcesEqualTheWholeSystemsAndANeighbourShellAloneDoesNot) {
  nep::KokkosSession kokkos;
  const nep::Model m = nep::read_model(nep_test::data_path("potentials/Si_2022_NEP4_5body.txt"));
  const nep::TrainingFrame full = si_frame(m, 6, 5);  // 1728 atoms, 32.6 A
  const double core = 3.0, rc = m.cutoff_max(), outer = nep::carve_outer_radius(core, rc);
  ASSERT_DOUBLE_EQ(outer, 13.0);
  for (int centre : {0, 777, 1727}) {
    const nep::TrainingFrame c = nep::carve_frame(full, centre, core, rc);
    EXPECT_FALSE(c.has_energy || c.has_virial || c.pbc[0] || c.pbc[1] || c.pbc[2]);
    // the atoms within `outer` of the centre, counted over 27 images by brute force
    int expect = 0;
    for (int i = 0; i < full.natoms(); ++i) {
      double best = 1e30;
      for (int a = -1; a <= 1; ++a)
        for (int b = -1; b <= 1; ++b)
          for (int e = -1; e <= 1; ++e) {
            double r2 = 0.0;
            for (int d = 0; d < 3; ++d) {
              const double x = full.pos[3 * i + d] + a * full.cell[d] + b * full.cell[3 + d] + e * full.cell[6 + d];
              r2 += std::pow(x - full.pos[3 * centre + d], 2);
            }
            best = std::min(best, r2);
          }
      expect += best < outer * outer;
    }
    EXPECT_EQ(c.natoms(), expect) << "centre " << centre;
    int n_core = 0;
    EXPECT_LE(core_deviation(m, c, &n_core), 1e-10) << "centre " << centre;
    EXPECT_GE(n_core, 4) << "centre " << centre;
    // a region of core + rc (the core atoms' own neighbours only) misses the neighbours'
    // environments, which reach the core forces
    const nep::TrainingFrame thin = nep::carve_frame(full, centre, core, 0.5 * rc);
    EXPECT_LT(thin.natoms(), c.natoms());
    EXPECT_GT(core_deviation(m, thin, &n_core), 1e-3) << "centre " << centre;
  }
  EXPECT_THROW(nep::carve_frame(full, 0, 7.0, rc), nep::Error);  // 17 A does not fit a 32.6 A cell
}

nep::train::BatchResult batch(const nep::Model& m, const nep::train::Dataset& data, std::vector<double>* grad) {
  nep::train::NeighborCache cache(data, m, 100, true);
  std::vector<int> ids;
  std::vector<std::shared_ptr<const nep::train::FrameGeometry>> lists;
  for (int f = 0; f < static_cast<int>(data.size()); ++f) {
    ids.push_back(f);
    lists.push_back(cache.get(f, true));
  }
  nep::train::BatchLoss loss(1);
  std::vector<double> g(nep::num_trainable_parameters(m), 0.0);
  const nep::train::BatchResult r = loss.evaluate(m, data, ids, lists, nep::train::LossWeights{0.3, 1.0, 0.1}, g.data());
  if (grad) *grad = g;
  return r;
}

// a small Si frame and two carved regions of a large one, labels from another model (so that
// every residual is non-zero)
std::vector<nep::TrainingFrame> mixed_frames(const nep::Model& teacher) {
  std::vector<nep::TrainingFrame> v;
  v.push_back(si_frame(teacher, 2, 9));
  v.back().has_virial = false;
  const nep::TrainingFrame big = si_frame(teacher, 4, 7);  // 21.7 A: a 9 A region fits
  v.push_back(nep::carve_frame(big, 3, 1.0, 4.0));
  v.push_back(nep::carve_frame(big, 300, 1.0, 4.0));
  return v;
}

TEST(Carve, MaskedLabelsAndMissingEnergiesLeaveTheLossAlone) {
  nep::KokkosSession kokkos;
  const nep::Model teacher = nep::read_model(nep_test::data_path("potentials/Si_2022_NEP4_3body.txt"));
  const nep::Model m = nep::read_model(nep_test::data_path("potentials/Si_2022_NEP4_5body.txt"));
  std::vector<nep::TrainingFrame> frames = mixed_frames(teacher);
  const nep::train::Dataset data = nep::train::make_dataset(frames, "mixed", m);
  std::vector<double> g0;
  const nep::train::BatchResult r0 = batch(m, data, &g0);
  EXPECT_EQ(r0.errors.n_e, 1);
  EXPECT_EQ(r0.errors.n_f, 3L * (frames[0].natoms() + frames[1].force_labelled_atoms() + frames[2].force_labelled_atoms()));
  EXPECT_GT(frames[1].force_labelled_atoms(), 0);
  EXPECT_LT(frames[1].force_labelled_atoms(), frames[1].natoms() / 10);
  // change every masked label and give the carved frames energies they must not use
  for (int f = 1; f < 3; ++f) {
    for (int i = 0; i < frames[f].natoms(); ++i)
      if (frames[f].force_weight[i] == 0.0)
        for (int d = 0; d < 3; ++d) frames[f].forces[3 * i + d] += 3.0;
    frames[f].energy = 1e3;
  }
  std::vector<double> g1;
  const nep::train::BatchResult r1 = batch(m, nep::train::make_dataset(frames, "mixed", m), &g1);
  EXPECT_EQ(r1.loss, r0.loss);
  EXPECT_EQ(r1.errors.se_f, r0.errors.se_f);
  EXPECT_EQ(r1.errors.residual_e, r0.errors.residual_e);
  EXPECT_EQ(g1, g0);
  // unmasking shows the changed labels (the test sees them at all)
  for (int f = 1; f < 3; ++f) frames[f].force_weight.clear();
  const nep::train::BatchResult r2 = batch(m, nep::train::make_dataset(frames, "mixed", m), nullptr);
  EXPECT_GT(r2.errors.se_f, 2.0 * r0.errors.se_f);
}

TEST(Carve, MaskedBatchGradientMatchesFiniteDifferences) {
  nep::KokkosSession kokkos;
  const nep::Model teacher = nep::read_model(nep_test::data_path("potentials/Si_2022_NEP4_3body.txt"));
  const nep::Model m = nep::read_model(nep_test::data_path("potentials/Si_2022_NEP4_5body.txt"));
  std::vector<nep::TrainingFrame> frames = mixed_frames(teacher);
  frames[1].force_weight[frames[1].natoms() / 2] = 0.5;  // a fractional weight too
  const nep::train::Dataset data = nep::train::make_dataset(frames, "mixed", m);
  std::vector<double> g;
  batch(m, data, &g);
  const int P = static_cast<int>(g.size());
  std::vector<double> theta(P);
  nep::get_trainable_parameters(m, theta.data());
  double gmax = 0.0;
  for (double x : g) gmax = std::max(gmax, std::fabs(x));
  ASSERT_GT(gmax, 0.0);
  std::mt19937 rng(13);
  std::vector<int> idx = {0, 1, P - 1, P / 2};
  for (int k = 0; k < 10; ++k) idx.push_back(static_cast<int>(rng() % P));
  for (int i : idx) {
    const double h = 1e-5 * std::max(1.0, std::fabs(theta[i]));
    double l[2];
    for (int s = 0; s < 2; ++s) {
      nep::Model mm = m;
      auto t = theta;
      t[i] += s ? -h : h;
      nep::set_trainable_parameters(mm, t.data());
      l[s] = batch(mm, data, nullptr).loss;
    }
    const double fd = (l[0] - l[1]) / (2 * h);
    EXPECT_NEAR(g[i], fd, 2e-6 * gmax + 1e-6 * std::fabs(fd)) << "parameter " << i << " of " << P;
  }
}

// every frame's neighbour list and basis built here, with every atom a site (no force_sites)
nep::train::BatchResult whole_basis_batch(const nep::Model& m, const nep::train::Dataset& data, std::vector<double>& g,
                                          size_t* pairs) {
  std::vector<int> ids;
  std::vector<std::shared_ptr<const nep::train::FrameGeometry>> lists;
  *pairs = 0;
  for (int f = 0; f < data.size(); ++f) {
    const nep::TrainingFrame& fr = data.frames[f];
    nep::Cell cell;
    for (int k = 0; k < 9; ++k) cell.h[k] = fr.cell[k];
    for (int k = 0; k < 3; ++k) cell.pbc[k] = fr.pbc[k];
    auto geom = std::make_shared<nep::train::FrameGeometry>();
    geom->nl = nep::build_neighbor_list(fr.pos, data.types[f], cell, m.cutoff_max());
    geom->basis = nep::build_pair_basis(m, geom->nl);
    *pairs += geom->basis.r_owner.size() + geom->basis.a_owner.size();
    ids.push_back(f);
    lists.push_back(geom);
  }
  nep::train::BatchLoss loss(1);
  g.assign(nep::num_trainable_parameters(m), 0.0);
  return loss.evaluate(m, data, ids, lists, nep::train::LossWeights{0.3, 1.0, 0.1}, g.data());
}

TEST(Carve, SitesWithoutALabelledNeighbourAreLeftOutExactly) {
  nep::KokkosSession kokkos;
  const nep::Model teacher = nep::read_model(nep_test::data_path("potentials/Si_2022_NEP4_3body.txt"));
  const nep::Model m = nep::read_model(nep_test::data_path("potentials/Si_2022_NEP4_5body.txt"));
  std::vector<nep::TrainingFrame> frames = mixed_frames(teacher);
  const nep::TrainingFrame big = si_frame(teacher, 4, 7);
  frames.push_back(nep::carve_frame(big, 100, 2.5, 4.0));  // several labelled atoms
  const nep::train::Dataset data = nep::train::make_dataset(frames, "mixed", m);
  std::vector<double> g_whole, g_kept;
  size_t pairs_whole = 0, pairs_kept = 0;
  const nep::train::BatchResult whole = whole_basis_batch(m, data, g_whole, &pairs_whole);
  nep::train::NeighborCache cache(data, m, 100, true);
  int left_out = 0;
  for (int f = 0; f < data.size(); ++f) {
    const auto geom = cache.get(f, true);
    pairs_kept += geom->basis.r_owner.size() + geom->basis.a_owner.size();
    // expected by brute force: a site is needed when it, or an atom within the cutoff, is labelled
    // (the frames are open clusters or whole periodic frames with energies)
    const nep::TrainingFrame& fr = frames[f];
    for (int i = 0; i < fr.natoms(); ++i) {
      bool need = fr.has_energy || fr.force_weight_of(i) > 0.0;
      for (int j = 0; j < fr.natoms() && !need; ++j) {
        double r2 = 0.0;
        for (int d = 0; d < 3; ++d) r2 += std::pow(fr.pos[3 * j + d] - fr.pos[3 * i + d], 2);
        need = fr.force_weight_of(j) > 0.0 && r2 < m.cutoff_max() * m.cutoff_max();
      }
      const std::vector<char> sites = nep::train::force_sites(fr, geom->nl);
      const bool kept = sites.empty() || sites[i];
      EXPECT_EQ(kept, need) << "frame " << f << " atom " << i;
      EXPECT_EQ(geom->basis.type[i] >= 0, need) << "frame " << f << " atom " << i;
      left_out += !kept;
    }
  }
  EXPECT_GT(left_out, 0);
  EXPECT_TRUE(nep::train::force_sites(frames[0], cache.get(0, true)->nl).empty());  // a frame with an energy keeps every site
  EXPECT_LT(2 * pairs_kept, pairs_whole);           // the carved frames hold most of the pairs
  std::vector<double> g;
  const nep::train::BatchResult kept = batch(m, data, &g);
  EXPECT_NEAR(kept.loss, whole.loss, 1e-12 * whole.loss);
  EXPECT_NEAR(kept.errors.se_f, whole.errors.se_f, 1e-12 * whole.errors.se_f);
  EXPECT_EQ(kept.errors.n_f, whole.errors.n_f);
  double gmax = 0.0;
  for (double x : g_whole) gmax = std::max(gmax, std::fabs(x));
  ASSERT_GT(gmax, 0.0);
  for (size_t k = 0; k < g.size(); ++k) EXPECT_NEAR(g[k], g_whole[k], 1e-11 * gmax) << "parameter " << k;
}

}  // namespace
