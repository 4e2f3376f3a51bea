// On-the-fly training rounds (train_otf_round): the expanding descriptor scaler keeps a warm-start
// model the same function (1e-12), a round lowers the loss and is deterministic, a round that
// diverges (absurd learning rate) is caught and its start model kept, and a committee member's
// pass over a bootstrap subset of the round's shared frames equals the pass over those frames copied;
// member resets fall on the staggered rounds and a reset member forgets its warm start; a committee
// round's deviation on its training frames (the grade reference) equals the core's forces reduced by hand;
// a committee's models trained side by side are the bytes of the same models trained one after another.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <Kokkos_Core.hpp>

#include "nep/calculator.hpp"
#include "nep/error.hpp"
#include "nep/train/otf_round.hpp"
#include "nep/train/config.hpp"
#include "nep/xyz.hpp"
#include "otf_round_fixtures.hpp"
#include "test_support.hpp"
#include "train/batch_loss.hpp"
#include "train/dataset.hpp"
#include "train/session.hpp"

namespace {

std::vector<nep::TrainingFrame> frames(int a, int b) { return nep_test::pbte_frames(a, b); }
nep::TrainConfig config(const std::string& extra = "") { return nep_test::small_round_config(extra); }

TEST(OtfRound, ExpandingTheScalerKeepsTheModelTheSameFunction) {
  nep::KokkosSession kokkos;
  nep::Model m = nep::read_model(nep_test::data_path("potentials/PbTe_NEP4.txt"));
  for (double& s : m.q_scaler) s *= 50.0;  // as if fitted to a much narrower range than the data
  nep::train::Dataset data = nep::train::make_dataset(frames(0, 3), "PbTe", m);
  nep::train::NeighborCache cache(data, m, 100, false);
  nep::train::BatchLoss loss(1);
  const nep::train::Comm comm = nep::train::Comm::local();
  std::vector<nep::train::FramePrediction> before(3), after(3);
  nep::train::ErrorSums e;
  for (int f = 0; f < 3; ++f) loss.predict(m, data, f, cache.get(f)->nl, before[f], e);
  const nep::Model old = m;
  nep::train::fit_descriptor_scaler(m, data, cache, loss, comm, nep::train::ScalerMode::Expand);
  int widened = 0;
  for (size_t d = 0; d < m.q_scaler.size(); ++d) {
    EXPECT_LE(m.q_scaler[d], old.q_scaler[d]);
    widened += m.q_scaler[d] < old.q_scaler[d];
  }
  EXPECT_GT(widened, 0);
  for (int f = 0; f < 3; ++f) {
    loss.predict(m, data, f, cache.get(f)->nl, after[f], e);
    EXPECT_NEAR(after[f].energy, before[f].energy, 1e-12 * std::fabs(before[f].energy));
    for (size_t k = 0; k < before[f].force.size(); ++k) EXPECT_NEAR(after[f].force[k], before[f].force[k], 1e-11);
  }
}

// min_updates: a small buffer gets enough optimiser updates (6 frames, batch 2: 3 batches per
// epoch; nep.in's epoch 6)
TEST(OtfRound, MinUpdatesRaisesTheEpochsOfSmallBuffers) {
  nep::KokkosSession kokkos;
  nep::OtfRoundInput in;
  in.cfg = config();
  in.train = frames(0, 6);
  in.min_updates = 40;  // ceil(40 / 3) = 14 epochs
  EXPECT_EQ(nep::train_otf_round(in, nullptr).epochs, 14);
  in.min_updates = 10;  // ceil(10 / 3) = 4 < 6: nep.in's 6 stand
  EXPECT_EQ(nep::train_otf_round(in, nullptr).epochs, 6);
  in.committee = 2;     // members get the same rule
  in.min_updates = 40;
  const nep::OtfRoundResult r = nep::train_otf_round(in, nullptr);
  EXPECT_EQ(r.epochs, 14);
  ASSERT_EQ(r.members.size(), 1u);
}

TEST(OtfRound, RoundsTrainWarmStartAndAreDeterministic) {
  nep::KokkosSession kokkos;
  nep::OtfRoundInput in;
  in.cfg = config();
  in.train = frames(0, 6);
  in.heldout = frames(6, 8);
  const nep::OtfRoundResult r1 = nep::train_otf_round(in, nullptr);
  EXPECT_EQ(r1.epochs, 6);
  EXPECT_FALSE(r1.reverted);
  EXPECT_GT(r1.heldout_rmse_f, 0.0);
  in.has_start = true;
  in.start = r1.model;
  in.round = 2;
  in.threads = 2;
  const nep::OtfRoundResult r2 = nep::train_otf_round(in, nullptr);
  EXPECT_LE(r2.train_rmse_f, r1.train_rmse_f);  // warm start from r1 on the same data improves it
  in.threads = 1;
  const nep::OtfRoundResult r2b = nep::train_otf_round(in, nullptr);
  EXPECT_EQ(nep::format_model(r2.model), nep::format_model(r2b.model));  // threads 2 vs 1: same bytes
}

TEST(OtfRound, ArrivalStageFrameCounts) {
  EXPECT_EQ(nep::arrival_stage_frames(200, 10), (std::vector<int>{20, 40, 60, 80, 100, 120, 140, 160, 180, 200, 200}));
  EXPECT_EQ(nep::arrival_stage_frames(10, 3), (std::vector<int>{4, 7, 10, 10}));
  EXPECT_EQ(nep::arrival_stage_frames(3, 5), (std::vector<int>{1, 2, 3, 3}));  // repeated counts dropped
  EXPECT_EQ(nep::arrival_stage_frames(7, 0), (std::vector<int>{7}));
  EXPECT_THROW(nep::arrival_stage_frames(0, 2), nep::Error);
  EXPECT_THROW(nep::arrival_stage_frames(5, -1), nep::Error);
}

// An arrival-order round trains stages on the first 3 and then all 6 frames (nep.in's 6 epochs each),
// then its own epochs on all 6 (frames 0..5 of the PbTe set), from fresh values whatever start it is given;
// the order of the frames matters; it equals the stages run as rounds one after the other.
TEST(OtfRound, ArrivalOrderRoundTrainsPrefixesFirst) {
  nep::KokkosSession kokkos;
  nep::OtfRoundInput in;
  in.cfg = config();
  in.train = frames(0, 6);
  in.heldout = frames(6, 8);
  in.epochs = 4;
  in.round = 3;
  in.arrival_stages = 2;  // counts 3, 6, then the round on 6
  const nep::OtfRoundResult r = nep::train_otf_round(in, nullptr);
  EXPECT_EQ(r.epochs, 6 + 6 + 4);
  EXPECT_EQ(r.n_train, 6);
  EXPECT_GT(r.heldout_rmse_f, 0.0);
  // the stages by hand: fresh on 3 frames, warm on 6, then 4 epochs on 6
  nep::OtfRoundInput s;
  s.cfg = in.cfg;
  s.heldout = in.heldout;
  const int counts[3] = {3, 6, 6};
  nep::Model m;
  for (int k = 0; k < 3; ++k) {
    s.train = frames(0, counts[k]);
    s.has_start = k > 0;
    s.start = m;
    s.round = (3u << 8) + static_cast<uint64_t>(k) + 1;
    s.epochs = k < 2 ? 0 : 4;
    m = nep::train_otf_round(s, nullptr).model;
  }
  EXPECT_EQ(nep::format_model(r.model), nep::format_model(m));
  // a start model is ignored
  nep::OtfRoundInput w = in;
  w.has_start = true;
  w.start = m;
  EXPECT_EQ(nep::format_model(nep::train_otf_round(w, nullptr).model), nep::format_model(r.model));
  // another arrival order is another curriculum
  nep::OtfRoundInput rev = in;
  std::reverse(rev.train.begin(), rev.train.end());
  EXPECT_NE(nep::format_model(nep::train_otf_round(rev, nullptr).model), nep::format_model(r.model));
  // the ordinary round on the same frames differs too
  nep::OtfRoundInput plain = in;
  plain.arrival_stages = 0;
  EXPECT_NE(nep::format_model(nep::train_otf_round(plain, nullptr).model), nep::format_model(r.model));
}

TEST(OtfRound, ADivergedRoundKeepsItsStartModel) {
  nep::KokkosSession kokkos;
  nep::OtfRoundInput in;
  in.cfg = config();
  in.train = frames(0, 6);
  const nep::OtfRoundResult r1 = nep::train_otf_round(in, nullptr);
  in.cfg = config("lr 10\nmax_grad_norm 0\nweight_decay 0\n");  // steps of ~10 per parameter
  in.has_start = true;
  in.start = r1.model;
  in.round = 2;
  const nep::OtfRoundResult r2 = nep::train_otf_round(in, nullptr);
  EXPECT_TRUE(r2.reverted);
  EXPECT_NEAR(r2.train_rmse_f, r1.train_rmse_f, 1e-9 * r1.train_rmse_f);
  // the kept model is r1's function (its scaler may have been widened, the weights rescaled)
  nep::train::Dataset data = nep::train::make_dataset(frames(0, 2), "PbTe", r1.model);
  nep::train::NeighborCache cache(data, r1.model, 100, false);
  nep::train::BatchLoss loss(1);
  nep::train::ErrorSums e;
  for (int f = 0; f < 2; ++f) {
    nep::train::FramePrediction p1, p2;
    loss.predict(r1.model, data, f, cache.get(f)->nl, p1, e);
    loss.predict(r2.model, data, f, cache.get(f)->nl, p2, e);
    EXPECT_NEAR(p2.energy, p1.energy, 1e-10 * std::fabs(p1.energy));
    for (size_t k = 0; k < p1.force.size(); ++k) EXPECT_NEAR(p2.force[k], p1.force[k], 1e-10);
  }
}

// Committee members share the round's Dataset and NeighborCache through a FrameSubset (indices,
// repeats allowed) instead of a copy of the resampled frames: scaler fit, evaluation and training
// epochs over the subset give the same model bytes as over a Dataset of the copied frames.
TEST(OtfRound, ASubsetPassEqualsThePassOverItsCopiedFrames) {
  using namespace nep::train;
  nep::KokkosSession kokkos;
  const nep::TrainConfig cfg = config();
  const std::vector<nep::TrainingFrame> all = frames(0, 6);
  const std::vector<int> pick = {3, 0, 3, 5, 1, 1};
  std::vector<nep::TrainingFrame> copied;
  for (int f : pick) copied.push_back(all[static_cast<size_t>(f)]);
  const nep::Model skeleton = nep::make_model_skeleton(cfg);
  auto run = [&](const std::vector<nep::TrainingFrame>& fr, FrameSubset subset) {
    nep::Model m = skeleton;
    initialise_parameters(m, 5);
    Dataset data = make_dataset(fr, "PbTe", m);
    NeighborCache cache(data, m, 100, true);
    BatchLoss loss(1);
    const Comm comm = Comm::local();
    fit_descriptor_scaler(m, data, cache, loss, comm, ScalerMode::Fresh, subset);
    const SetResult before = evaluate_set(m, data, cache, loss, comm, true, true, subset);
    Optimizer opt(trainable_parameters(m), optimizer_options(cfg));
    const LossWeights w{cfg.lambda_e, cfg.lambda_f, cfg.lambda_v};
    for (int e = 0; e < 2; ++e) train_epoch(m, data, cache, loss, opt, comm, cfg.batch, 9, e, w, nullptr, nullptr, subset);
    const SetResult after = evaluate_set(m, data, cache, loss, comm, true, true, subset);
    std::string out = nep::format_model(m);
    auto exact = [&out](double x) {  // every bit
      char b[40];
      std::snprintf(b, sizeof b, " %a", x);
      out += b;
    };
    for (const auto& p : before.pred) exact(p.energy);
    for (const auto& p : after.pred) {
      exact(p.energy);
      for (double f : p.force) exact(f);
    }
    return out;
  };
  const std::string via_subset = run(all, FrameSubset{&pick});
  EXPECT_EQ(via_subset, run(copied, FrameSubset{}));
  EXPECT_NE(via_subset, run(all, FrameSubset{}));  // the subset mattered
}

// member_reset R with committee M: member m is re-initialised on rounds offset_m + 1 + k R, offset_m =
// (m - 1) R / (M - 1) (round 1 is every model's fresh start, not a reset). The table is written out
// by hand for M = 4, R = 6: offsets 0, 2, 4.
TEST(OtfRound, MemberResetsAreStaggered) {
  const int expected[3][14] = {
      // round: 1  2  3  4  5  6  7  8  9 10 11 12 13 14
      {0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0},   // member 1
      {0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0},   // member 2
      {0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 2, 0, 0, 0}};  // member 3
  for (int m = 1; m <= 3; ++m)
    for (int r = 1; r <= 14; ++r)
      EXPECT_EQ(nep::member_reset_due(static_cast<uint64_t>(r), m, 4, 6), expected[m - 1][r - 1]) << "member " << m << " round " << r;
  for (int r = 1; r <= 14; ++r) {
    EXPECT_EQ(nep::member_reset_due(static_cast<uint64_t>(r), 1, 4, 0), 0);  // 0: never
    EXPECT_EQ(nep::member_reset_due(static_cast<uint64_t>(r), 0, 4, 6), 0);  // the driving model: never
  }
  EXPECT_EQ(nep::member_reset_due(2, 1, 2, 1), 1);  // R = 1: every round after the first
  EXPECT_EQ(nep::member_reset_due(3, 1, 2, 1), 2);
}

// A committee round trains its models side by side (min(threads, committee) workers): the driving
// model and every member, each in its place, are the same bytes at 1, 2 and 3 threads, warm-started
// members and a reset member alike, and the members differ from each other (a swap would show).
TEST(OtfRound, CommitteeModelsTrainSideBySideWithTheSameBytes) {
  nep::KokkosSession kokkos;
  nep::OtfRoundInput in;
  in.cfg = config();
  in.train = frames(0, 6);
  in.heldout = frames(6, 8);
  in.committee = 3;
  const nep::OtfRoundResult r1 = nep::train_otf_round(in, nullptr);
  ASSERT_EQ(r1.members.size(), 2u);
  in.has_start = true;
  in.start = r1.model;
  in.member_starts = r1.members;
  in.round = 3;
  in.epochs = 2;
  in.member_reset = 2;  // round 3: member 1 (offset 0) is re-initialised, member 2 (offset 1) is not
  auto round_bytes = [&](int threads) {
    in.threads = threads;
    const nep::OtfRoundResult r = nep::train_otf_round(in, nullptr);
    EXPECT_FALSE(r.stopped);
    EXPECT_EQ(r.members_reset, std::vector<int>{1});
    std::vector<std::string> bytes{nep::format_model(r.model)};
    for (const nep::Model& m : r.members) bytes.push_back(nep::format_model(m));
    return bytes;
  };
  const std::vector<std::string> one = round_bytes(1);
  ASSERT_EQ(one.size(), 3u);
  EXPECT_NE(one[0], one[1]);
  EXPECT_NE(one[0], one[2]);
  EXPECT_NE(one[1], one[2]);
  EXPECT_TRUE(round_bytes(2) == one) << "threads 2: another model or order than threads 1";
  EXPECT_TRUE(round_bytes(3) == one) << "threads 3: another model or order than threads 1";
}

// A member due for a reset starts from fresh values whatever start model it was given (the same
// bytes from two different starts); without the reset its start matters.
TEST(OtfRound, AResetMemberForgetsItsWarmStart) {
  nep::KokkosSession kokkos;
  nep::OtfRoundInput in;
  in.cfg = config();
  in.train = frames(0, 6);
  in.committee = 2;
  const nep::OtfRoundResult r1 = nep::train_otf_round(in, nullptr);
  ASSERT_EQ(r1.members.size(), 1u);
  in.has_start = true;
  in.start = r1.model;
  in.round = 2;
  in.epochs = 2;  // a reset member trains nep.in's 6 epochs
  auto member_from = [&](const nep::Model& start, int reset) {
    in.member_starts = {start};
    in.member_reset = reset;
    return nep::format_model(nep::train_otf_round(in, nullptr).members.at(0));
  };
  const std::string a = member_from(r1.members[0], 1), b = member_from(r1.model, 1);
  EXPECT_EQ(a, b);
  const std::string kept_a = member_from(r1.members[0], 0), kept_b = member_from(r1.model, 0);
  EXPECT_NE(kept_a, kept_b);
  EXPECT_NE(a, kept_a);
  in.round = 3;  // the next generation: other initial values
  EXPECT_NE(member_from(r1.model, 1), a);
}

// The grade reference of a committee round: each training frame's deviation of the new committee,
// recomputed here through the core Calculator (not the trainer's prediction) with sigma_i written
// out, max over the labelled atoms (a carved frame masks some) or RMS; the reference is their max.
TEST(OtfRound, CommitteeDeviationOnTrainingFramesIsTheGradeReference) {
  nep::KokkosSession kokkos;
  nep::OtfRoundInput in;
  in.cfg = config();
  in.train = frames(0, 5);
  in.train[2].force_weight.assign(static_cast<size_t>(in.train[2].natoms()), 1.0);
  for (int i = 0; i < in.train[2].natoms(); i += 2) in.train[2].force_weight[static_cast<size_t>(i)] = 0.0;
  in.committee = 3;
  EXPECT_LT(nep::train_otf_round(in, nullptr).reference_deviation, 0.0);    // only asked for
  in.grade_reference = true;
  for (bool rms : {false, true}) {
    in.deviation_rms = rms;
    const nep::OtfRoundResult r = nep::train_otf_round(in, nullptr);
    ASSERT_EQ(r.members.size(), 2u);
    ASSERT_EQ(r.train_deviations.size(), in.train.size());
    std::vector<const nep::Model*> models{&r.model, &r.members[0], &r.members[1]};
    double largest = 0.0;
    for (size_t f = 0; f < in.train.size(); ++f) {
      const nep::TrainingFrame& fr = in.train[f];
      std::vector<std::vector<double>> force;
      for (const nep::Model* m : models) {
        nep::Calculator calc(*m, nep::Precision::Double, nep::Backend::Host);
        nep::Structure st;
        st.x = fr.pos;
        std::copy(fr.cell, fr.cell + 9, st.cell.h);
        for (const std::string& e : fr.species) st.type.push_back(m->type_of(e));
        force.push_back(calc.compute(st, false).force);
      }
      double acc = 0.0;
      int n = 0;
      for (int i = 0; i < fr.natoms(); ++i) {
        if (fr.force_weight_of(i) == 0.0) continue;
        double s2 = 0.0;
        for (int d = 0; d < 3; ++d) {
          const double mean = (force[0][3 * i + d] + force[1][3 * i + d] + force[2][3 * i + d]) / 3.0;
          for (int m = 0; m < 3; ++m) s2 += (force[m][3 * i + d] - mean) * (force[m][3 * i + d] - mean) / 3.0;
        }
        acc = rms ? acc + s2 : std::max(acc, std::sqrt(s2));
        ++n;
      }
      const double expect = rms ? std::sqrt(acc / n) : acc;
      EXPECT_GT(expect, 0.0);
      EXPECT_NEAR(r.train_deviations[f], expect, 1e-9 * expect) << "frame " << f << (rms ? " rms" : " max");
      largest = std::max(largest, expect);
    }
    EXPECT_NEAR(r.reference_deviation, largest, 1e-9 * largest);
  }
  in.committee = 1;  // no committee: no reference
  EXPECT_LT(nep::train_otf_round(in, nullptr).reference_deviation, 0.0);
}

// LAMMPS finalises Kokkos on an ERROR (Error::all / Error::one) while a round may be training: the
// worker's Kokkos finalize hook stops and joins the round first. Without it the training thread goes
// on into Kokkos after the finalisation and aborts the process. (In a child process: Kokkos cannot
// be used after finalize.)
TEST(OtfWorkerDeathTest, KokkosFinalizeStopsARunningRound) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        nep::KokkosSession kokkos;    // (main's session already owns it)
        nep::OtfRoundInput in;
        in.cfg = config();
        in.train = frames(0, 6);
        in.epochs = 400;
        nep::OtfWorker w;
        w.start(in);
        Kokkos::finalize();
        const nep::OtfRoundResult r = w.join();
        std::exit(r.stopped && !Kokkos::is_initialized() ? 0 : 2);
      },
      ::testing::ExitedWithCode(0), "");
}

}  // namespace
