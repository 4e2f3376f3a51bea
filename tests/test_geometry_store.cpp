// Frame geometries kept from round to round (src/train/geometry_store.hpp): a stored geometry is
// found only for the byte-identical frame under the same architecture; a cache with a store builds
// each frame once across caches; rounds and arrival-order rounds trained on stored geometries give
// the same model bytes as without a store.
#include <gtest/gtest.h>

#include <cmath>

#include <Kokkos_Core.hpp>

#include "nep/train/config.hpp"
#include "nep/train/otf_round.hpp"
#include "nep/xyz.hpp"
#include "otf_round_fixtures.hpp"
#include "test_support.hpp"
#include "train/dataset.hpp"
#include "train/geometry_store.hpp"

namespace {

std::vector<nep::TrainingFrame> frames(int a, int b) { return nep_test::pbte_frames(a, b); }
nep::TrainConfig config(const std::string& extra = "") { return nep_test::small_round_config(extra); }

TEST(GeometryStore, FindsOnlyTheExactFrameUnderTheSameArchitecture) {
  nep::KokkosSession kokkos;
  const nep::Model m = nep::make_model_skeleton(config());
  const nep::train::Dataset data = nep::train::make_dataset(frames(0, 2), "set", m);
  nep::train::NeighborCache cache(data, m, 100, true);
  const auto g = cache.get(0);
  nep::train::GeometryStore store;
  const std::vector<double> sig = nep::train::GeometryStore::signature(m);
  store.put(sig, data.frames[0], data.types[0], false, g);
  EXPECT_EQ(store.find(sig, data.frames[0], data.types[0], false), g);
  EXPECT_EQ(store.find(sig, data.frames[0], data.types[0], true), nullptr);  // stored without its basis
  store.put(sig, data.frames[0], data.types[0], true, g);
  EXPECT_EQ(store.find(sig, data.frames[0], data.types[0], true), g);
  EXPECT_EQ(store.entries(), 1u);
  EXPECT_EQ(store.find(sig, data.frames[1], data.types[1], false), nullptr);
  nep::TrainingFrame moved = data.frames[0];
  moved.pos[4] = std::nextafter(moved.pos[4], 1e9);  // one ulp
  EXPECT_EQ(store.find(sig, moved, data.types[0], false), nullptr);
  nep::TrainingFrame masked = data.frames[0];
  masked.force_weight.assign(masked.natoms(), 1.0);
  masked.force_weight[3] = 0.0;
  EXPECT_EQ(store.find(sig, masked, data.types[0], false), nullptr);
  std::vector<int> swapped = data.types[0];
  swapped[0] = 1 - swapped[0];
  EXPECT_EQ(store.find(sig, data.frames[0], swapped, false), nullptr);
  nep::TrainingFrame sheared = data.frames[0];
  sheared.cell[1] += 1e-12;
  EXPECT_EQ(store.find(sig, sheared, data.types[0], false), nullptr);
  EXPECT_EQ(store.hits(), 2);
  store.retain({&data.frames[1]});  // frame 0 is no longer the round's
  EXPECT_EQ(store.entries(), 0u);
  store.put(sig, data.frames[0], data.types[0], true, g);
  const nep::Model other = nep::make_model_skeleton(nep::parse_train_config(
      "type 2 Te Pb\ncutoff 5 3.5\nn_max 4 4\nbasis_size 4 4\nl_max 4 2 0\nneuron 8\n", "nep.in"));
  const std::vector<double> other_sig = nep::train::GeometryStore::signature(other);  // another angular cutoff
  EXPECT_EQ(store.find(other_sig, data.frames[0], data.types[0], false), nullptr);
  EXPECT_EQ(store.entries(), 0u);
}

TEST(GeometryStore, ACacheWithAStoreBuildsEachFrameOnce) {
  nep::KokkosSession kokkos;
  const nep::Model m = nep::make_model_skeleton(config());
  const nep::train::Dataset data = nep::train::make_dataset(frames(0, 4), "set", m);
  nep::train::GeometryStore store;
  nep::train::NeighborCache first(data, m, 100, true, &store);
  for (int f = 0; f < 4; ++f) first.get(f);
  EXPECT_EQ(first.builds(), 4);
  EXPECT_EQ(store.entries(), 4u);
  nep::train::NeighborCache second(data, m, 100, true, &store);
  for (int f = 0; f < 4; ++f) EXPECT_EQ(second.get(f), first.get(f));  // the same geometry, not a copy
  EXPECT_EQ(second.builds(), 0);
  EXPECT_EQ(second.reused(), 4);
  EXPECT_EQ(second.bytes(), first.bytes());
  // a cache without room for a stored frame uses it once and drops it from the store
  nep::train::NeighborCache tight(data, m, 0, true, &store);
  EXPECT_EQ(tight.get(2), first.get(2));
  EXPECT_EQ(tight.builds(), 0);
  EXPECT_EQ(store.entries(), 3u);
}

// Rounds as fix nep/train runs them (a committee of 2, a warm-started second round on 2 more frames,
// an arrival-order final round): with one store across them, the same model bytes as without.
TEST(GeometryStore, RoundsOnStoredGeometriesGiveTheSameModels) {
  nep::KokkosSession kokkos;
  auto rounds = [](std::shared_ptr<nep::train::GeometryStore> store) {
    std::vector<std::string> out;
    nep::OtfRoundInput in;
    in.cfg = config();
    in.committee = 2;
    in.geometry = store;
    in.train = frames(0, 6);
    in.heldout = frames(20, 22);
    const nep::OtfRoundResult r1 = nep::train_otf_round(in, nullptr);
    out.push_back(nep::format_model(r1.model));
    out.push_back(nep::format_model(r1.members.at(0)));
    in.train = frames(0, 8);
    in.has_start = true;
    in.start = r1.model;
    in.member_starts = r1.members;
    in.round = 2;
    const nep::OtfRoundResult r2 = nep::train_otf_round(in, nullptr);
    out.push_back(nep::format_model(r2.model));
    out.push_back(nep::format_model(r2.members.at(0)));
    in.committee = 1;
    in.member_starts.clear();
    in.arrival_stages = 3;
    in.epochs = 3;
    in.round = 3;
    out.push_back(nep::format_model(nep::train_otf_round(in, nullptr).model));
    return out;
  };
  const auto store = std::make_shared<nep::train::GeometryStore>();
  const auto with = rounds(store), without = rounds(nullptr);
  ASSERT_EQ(with.size(), without.size());
  for (size_t k = 0; k < with.size(); ++k) EXPECT_EQ(with[k], without[k]) << "model " << k;
  // round 2 found round 1's 6 training and 2 held-out frames; the arrival-order round's 4 calls (on
  // the first 3, 6, 8 and 8 frames, each with the 2 held-out ones) found every frame they used
  EXPECT_EQ(store->hits(), 8 + (3 + 2) + (6 + 2) + (8 + 2) + (8 + 2));
  EXPECT_EQ(store->entries(), 10u);
}

// The worker keeps only the geometries of the round it runs: the frames of the buffer at its start.
TEST(GeometryStore, TheWorkerKeepsOnlyTheCurrentRoundsFrames) {
  nep::KokkosSession kokkos;
  const auto store = std::make_shared<nep::train::GeometryStore>();
  nep::OtfWorker worker;
  nep::OtfRoundInput in;
  in.cfg = config();
  in.epochs = 1;
  in.geometry = store;
  in.train = frames(0, 6);
  in.heldout = frames(20, 22);
  worker.start(in);
  worker.join();
  EXPECT_EQ(store->entries(), 8u);
  in.train = frames(4, 9);  // frames 0-3 left the buffer
  worker.start(in);
  worker.join();
  EXPECT_EQ(store->entries(), 7u);
  EXPECT_EQ(store->hits(), 2 + 2);  // frames 4, 5 and the held-out pair
}

}  // namespace
