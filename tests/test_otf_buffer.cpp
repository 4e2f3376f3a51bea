// On-the-fly buffer: the seeded split/reservoir (algorithm R) keeps each frame with probability
// capacity/n, reopening replays the reservoirs exactly while reading only the frames they hold,
// dropping frames after a restart point works, and the store keeps every frame.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include "nep/error.hpp"
#include "nep/train/otf_buffer.hpp"
#include "nep/xyz.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

std::string fresh_path(const std::string& name) {
  const fs::path dir = nep_test::scratch_dir("nep_otf_buffer_test_");
  const fs::path p = dir / name;
  fs::remove(p);
  return p.string();
}

// frame k: two Si atoms, energy = -k (identifies the frame)
nep::TrainingFrame frame(int k) {
  nep::TrainingFrame f;
  f.species = {"Si", "Si"};
  f.pos = {0, 0, 0, 1.2 + 0.01 * k, 1.3, 1.4};
  const double h[9] = {5, 0, 0, 0, 5, 0, 0, 0, 5};
  std::copy(h, h + 9, f.cell);
  f.has_energy = f.has_forces = f.has_virial = true;
  f.energy = -k;
  f.forces = {0.1 * k, 0, 0, -0.1 * k, 0, 0};
  for (int c = 0; c < 9; ++c) f.virial[c] = c + k;
  return f;
}

std::vector<double> energies(const std::vector<nep::TrainingFrame>& v) {
  std::vector<double> e;
  for (const auto& f : v) e.push_back(f.energy);
  return e;
}

TEST(OtfBuffer, ReservoirKeepsEachFrameWithProbabilityCapacityOverN) {
  // over many seeds, every one of n = 40 training frames sits in a 10-slot reservoir ~1/4 of the time
  const int n = 40, cap = 10, seeds = 4000;
  std::vector<int> hits(n, 0);
  for (int s = 0; s < seeds; ++s) {
    std::vector<int> slots(cap, -1);
    for (int k = 0; k < n; ++k) {
      const int64_t j = nep::OtfBuffer::reservoir_slot(static_cast<uint64_t>(s), cap, k, false);
      if (j >= 0) slots[j] = k;
    }
    for (int k : slots) ++hits[k];
  }
  for (int k = 0; k < n; ++k) EXPECT_NEAR(hits[k] / double(seeds), 0.25, 0.035) << "frame " << k;
}

TEST(OtfBuffer, HeldOutFractionFollowsTheSeed) {
  int held = 0;
  for (int k = 0; k < 20000; ++k) held += nep::OtfBuffer::is_heldout(7, 0.2, k);
  EXPECT_NEAR(held / 20000.0, 0.2, 0.01);
  EXPECT_FALSE(nep::OtfBuffer::is_heldout(7, 0.0, 3));
}

TEST(OtfBuffer, ReopenReplaysTheReservoirsAndKeepsEveryFrameOnDisk) {
  const std::string path = fresh_path("replay.h5");
  nep::OtfBufferOptions o;
  o.path = path;
  o.seed = 11;
  o.capacity = 5;
  o.heldout = 0.25;
  std::vector<double> train, held;
  int n_held = 0;
  {
    nep::OtfBuffer b(o);
    for (int k = 0; k < 60; ++k) n_held += b.add(frame(k));
    EXPECT_EQ(b.frames(), 60);
    EXPECT_EQ(static_cast<int>(b.train().size()), 5);
    EXPECT_EQ(static_cast<int64_t>(b.heldout().size()), std::min<int64_t>(n_held, b.heldout_capacity()));
    train = energies(b.train());
    held = energies(b.heldout());
  }
  EXPECT_GT(n_held, 5);
  EXPECT_LT(n_held, 25);
  // every held-out frame is one the rule holds out; training frames never are
  for (double e : held) EXPECT_TRUE(nep::OtfBuffer::is_heldout(11, 0.25, static_cast<int64_t>(-e)));
  for (double e : train) EXPECT_FALSE(nep::OtfBuffer::is_heldout(11, 0.25, static_cast<int64_t>(-e)));
  {
    nep::OtfBuffer again(o);
    EXPECT_EQ(again.frames(), 60);
    EXPECT_EQ(energies(again.train()), train);
    EXPECT_EQ(energies(again.heldout()), held);
    const auto f = again.train()[0];
    const auto ref = frame(static_cast<int>(-f.energy));
    EXPECT_EQ(f.pos, ref.pos);
    EXPECT_EQ(f.forces, ref.forces);
  }
  EXPECT_EQ(nep::read_frame_store(path).size(), 60u);
}

// the reservoir's slots are not the arrival order once it is full; train_in_arrival_order is,
// after a reopen too (frame k has energy -k)
TEST(OtfBuffer, TrainingFramesInArrivalOrder) {
  nep::OtfBufferOptions o;
  o.path = fresh_path("arrival.h5");
  o.seed = 5;
  o.capacity = 8;
  auto arrival_sorted = [](const std::vector<double>& e) {
    for (size_t i = 1; i < e.size(); ++i)
      if (-e[i] <= -e[i - 1]) return false;
    return true;
  };
  std::vector<double> ordered;
  {
    nep::OtfBuffer b(o);
    for (int k = 0; k < 40; ++k) b.add(frame(k));
    EXPECT_FALSE(arrival_sorted(energies(b.train())));  // slots replaced out of order (seed 5)
    ordered = energies(b.train_in_arrival_order());
    ASSERT_EQ(ordered.size(), 8u);
    EXPECT_TRUE(arrival_sorted(ordered));
    std::vector<double> slots = energies(b.train());
    std::sort(slots.begin(), slots.end(), [](double a, double c) { return a > c; });
    EXPECT_EQ(slots, ordered);  // the same frames
  }
  nep::OtfBuffer again(o);
  EXPECT_EQ(energies(again.train_in_arrival_order()), ordered);
}

TEST(OtfBuffer, RestartPointDropsNewerFramesAndAppendingContinues) {
  const std::string a = fresh_path("a.h5"), b = fresh_path("b.h5");
  nep::OtfBufferOptions o;
  o.seed = 3;
  o.capacity = 4;
  o.heldout = 0.1;
  o.path = a;
  {
    nep::OtfBuffer x(o);
    for (int k = 0; k < 30; ++k) x.add(frame(k));
  }
  {
    nep::OtfBuffer x(o, 18);  // restart taken after 18 frames; 12 newer ones are dropped
    EXPECT_EQ(x.dropped(), 12);
    EXPECT_EQ(x.frames(), 18);
    for (int k = 18; k < 25; ++k) x.add(frame(k));
  }
  o.path = b;  // the uninterrupted history
  std::vector<double> ref_train;
  {
    nep::OtfBuffer y(o);
    for (int k = 0; k < 25; ++k) y.add(frame(k));
    ref_train = energies(y.train());
  }
  o.path = a;
  nep::OtfBuffer x(o);
  EXPECT_EQ(x.frames(), 25);
  EXPECT_EQ(energies(x.train()), ref_train);
  const auto all = nep::read_frame_store(a);
  for (int k = 0; k < 25; ++k) EXPECT_EQ(all[k].energy, -k);
  EXPECT_THROW(nep::OtfBuffer(o, 40), nep::Error);  // more frames expected than the file holds
}

TEST(OtfBuffer, BadOptionsAndPaths) {
  nep::OtfBufferOptions o;
  o.path = "/nonexistent/dir/x.h5";
  EXPECT_THROW({ nep::OtfBuffer b(o); }, nep::Error);
  o.path = fresh_path("opts.h5");
  o.capacity = 0;
  EXPECT_THROW({ nep::OtfBuffer b(o); }, nep::Error);
  o.capacity = 2;
  o.heldout = 1.0;
  EXPECT_THROW({ nep::OtfBuffer b(o); }, nep::Error);
}

}  // namespace
