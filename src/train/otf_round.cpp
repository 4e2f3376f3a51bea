#include "nep/train/otf_round.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <system_error>
#include <thread>

#include "nep/error.hpp"
#include "nep/train/otf_active.hpp"
#include "nep/train/train_gradient.hpp"
#include "otf_round_internal.hpp"
#include "rng.hpp"
#include "session.hpp"

namespace nep {

namespace {
// The round's frames with their neighbour lists and pair bases (which depend on the frames and the
// architecture, not on the parameters): built once, shared by the driving model and every member.
struct RoundData {
  train::Dataset train, held;
  train::NeighborCache train_cache, held_cache;
  RoundData(const OtfRoundInput& in, const Model& skeleton)
      : train(train::make_dataset(in.train, "on-the-fly buffer (training frames)", skeleton)),
        held(train::make_dataset(in.heldout, "on-the-fly buffer (held-out frames)", skeleton)),
        train_cache(train, skeleton, in.cfg.cache_mb, true, in.geometry.get()),
        held_cache(held, skeleton, in.cfg.cache_mb, false, in.geometry.get()) {}
};

struct ModelInput {  // what differs between the driving model and a member
  TrainConfig cfg;
  bool has_start = false;
  const Model* start = nullptr;
  std::vector<int> frames;  // the training frames it sees (a member: a bootstrap resample); empty: all
  int epochs = 0;           // epochs of the round for this model (0: the round's)
};

// threads: this model's gradient threads (its bytes do not depend on them)
OtfRoundResult train_one(const OtfRoundInput& in, const ModelInput& mi, RoundData& data, const std::atomic<bool>* stop,
                         int threads);

// The new committee (res.model and res.members) on every training frame: each frame's deviation as
// a check step reduces it, and their largest, the grade reference. Frame by frame over the round's
// cached neighbour lists (memory: one frame's forces per model).
void committee_train_deviations(const OtfRoundInput& in, RoundData& data, OtfRoundResult& res) {
  using namespace train;
  const auto t0 = std::chrono::steady_clock::now();
  BatchLoss loss(in.threads);
  std::vector<const Model*> models{&res.model};
  for (const Model& m : res.members) models.push_back(&m);
  std::vector<FramePrediction> pred(models.size());
  std::vector<const double*> forces(models.size());
  ErrorSums unused;
  res.train_deviations.resize(in.train.size());
  for (size_t f = 0; f < in.train.size(); ++f) {
    const auto geom = data.train_cache.get(static_cast<int>(f), false);
    for (size_t m = 0; m < models.size(); ++m) {
      loss.predict(*models[m], data.train, static_cast<int>(f), geom->nl, pred[m], unused);
      forces[m] = pred[m].force.data();
    }
    const TrainingFrame& fr = in.train[f];
    res.train_deviations[f] =
        frame_deviation(forces, fr.natoms(), fr.force_weight.empty() ? nullptr : fr.force_weight.data(), in.deviation_rms);
  }
  res.reference_deviation = reference_deviation(res.train_deviations);
  res.deviation_seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

// member m: a bootstrap resample of the training frames (n draws with replacement), its own seed
// (of its generation) and warm start, or fresh values when its reset is due
ModelInput member_input(const OtfRoundInput& in, int m) {
  using namespace train;
  ModelInput mi;
  mi.cfg = in.cfg;
  const int generation = member_reset_due(in.round, m, in.committee, in.member_reset);
  mi.cfg.seed = Rng(in.cfg.seed, Stream::Member, static_cast<uint64_t>(m) + (static_cast<uint64_t>(generation) << 16)).next();
  Rng pick(in.cfg.seed, Stream::Bootstrap, (in.round << 8) + static_cast<uint64_t>(m));
  const uint64_t n = in.train.size();
  mi.frames.reserve(n);
  for (uint64_t k = 0; k < n; ++k) mi.frames.push_back(static_cast<int>(pick.below(n)));
  if (generation > 0) {
    mi.epochs = std::max(in.epochs > 0 ? in.epochs : in.cfg.epoch, in.cfg.epoch);
  } else if (!in.member_starts.empty()) {
    mi.has_start = true;
    mi.start = &in.member_starts.at(static_cast<size_t>(m - 1));
  }
  return mi;
}
}  // namespace

int member_reset_due(uint64_t round, int m, int committee, int reset) {
  if (reset <= 0 || committee < 2 || m < 1 || m >= committee || round < 2) return 0;
  const uint64_t offset = static_cast<uint64_t>(m - 1) * static_cast<uint64_t>(reset) / static_cast<uint64_t>(committee - 1);
  const uint64_t r = round - 1;  // rounds before this one
  if (r < offset || (r - offset) % static_cast<uint64_t>(reset) != 0) return 0;
  const uint64_t k = (r - offset) / static_cast<uint64_t>(reset);  // resets of this member so far, this one included
  return static_cast<int>(offset == 0 ? k : k + 1);
}

OtfRoundResult train_otf_round(const OtfRoundInput& in, const std::atomic<bool>* stop) {
  if (in.committee < 1) throw Error("on-the-fly round: committee size must be at least 1");
  if (!in.member_starts.empty() && static_cast<int>(in.member_starts.size()) != in.committee - 1)
    throw Error("on-the-fly round: " + std::to_string(in.member_starts.size()) + " committee start models for " +
                std::to_string(in.committee - 1) + " members");
  if (in.train.empty()) throw Error("on-the-fly round: no training frames");
  if (in.arrival_stages > 0) return train_arrival_order(in, stop);
  // every model of the round has the architecture of cfg (a warm start too: the fix checks it)
  RoundData data(in, in.has_start ? in.start : make_model_skeleton(in.cfg));
  ModelInput driver;
  driver.cfg = in.cfg;
  driver.has_start = in.has_start;
  driver.start = &in.start;
  // The committee's models are independent (each its own seed, frames and warm start) and a model's
  // bytes do not depend on its thread count, so they train side by side: in.workers workers (default
  // min(threads, committee)) take the models in order, threads / workers gradient threads each: a
  // model's per-frame tasks gain 1.64x of 2x on two threads, two one-thread models side by side
  // nearly 2x (Ni rounds 24 % shorter on two cores: docs/benchmarks_log.md section 30).
  const int workers = std::max(1, std::min(in.workers > 0 ? in.workers : in.threads, in.committee));
  const int per_model = std::max(1, in.threads / workers);
  std::vector<OtfRoundResult> out(static_cast<size_t>(in.committee));
  std::vector<std::exception_ptr> errors(static_cast<size_t>(in.committee));
  std::vector<char> trained(static_cast<size_t>(in.committee), 0);
  std::atomic<int> next{0};
  std::atomic<bool> halt{false};  // a model stopped or failed: no further model starts
  const auto t0 = std::chrono::steady_clock::now();
  auto work = [&]() {
    for (int m = next.fetch_add(1); m < in.committee && !halt; m = next.fetch_add(1)) {
      try {
        out[m] = train_one(in, m == 0 ? driver : member_input(in, m), data, stop, per_model);
        trained[m] = 1;
        if (out[m].stopped) halt = true;
      } catch (...) {
        errors[m] = std::current_exception();
        halt = true;
      }
    }
  };
  {
    std::vector<std::thread> pool;
    for (int k = 1; k < workers; ++k) {
      try {
        pool.emplace_back(work);
      } catch (const std::system_error&) {  // no thread to be had: fewer workers, the same models
        break;
      }
    }
    work();
    for (std::thread& t : pool) t.join();
  }
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
  OtfRoundResult res = std::move(out[0]);
  for (int m = 1; m < in.committee; ++m) {
    if (!trained[m]) {  // not started: another model was stopped
      res.stopped = true;
      continue;
    }
    OtfRoundResult& r = out[m];
    res.stopped = res.stopped || r.stopped;
    res.members.push_back(std::move(r.model));
    if (member_reset_due(in.round, m, in.committee, in.member_reset) > 0) res.members_reset.push_back(m);
  }
  // the members' share of the round's wall time (with workers side by side: the round's training
  // wall time less the driving model's)
  res.members_seconds =
      std::max(0.0, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count() - res.seconds);
  if (in.grade_reference && in.committee >= 2 && !res.stopped) committee_train_deviations(in, data, res);
  return res;
}

namespace {
OtfRoundResult train_one(const OtfRoundInput& in, const ModelInput& mi, RoundData& data, const std::atomic<bool>* stop,
                         int threads) {
  using namespace train;
  const auto t0 = std::chrono::steady_clock::now();
  const TrainConfig& cfg = mi.cfg;
  const Comm comm = Comm::local();  // not MPI's main thread: never call MPI
  Model model = mi.has_start ? *mi.start : make_model_skeleton(cfg);
  if (!mi.has_start) initialise_parameters(model, cfg.seed);

  const Dataset& train = data.train;
  NeighborCache& train_cache = data.train_cache;
  const FrameSubset frames{mi.frames.empty() ? nullptr : &mi.frames};
  OtfRoundResult res;
  res.n_train = frames.size(train);
  res.n_heldout = data.held.size();
  BatchLoss loss(threads);
  fit_descriptor_scaler(model, train, train_cache, loss, comm, mi.has_start ? ScalerMode::Expand : ScalerMode::Fresh,
                        frames);
  const SetResult before = evaluate_set(model, train, train_cache, loss, comm, true, false, frames);  // b1 for the current data
  // the round's objective on its training frames (unregularised), to guard against a diverged round
  auto objective = [&](const ErrorSums& e) {
    return cfg.lambda_e * rmse(e.se_e, e.n_e) * rmse(e.se_e, e.n_e) + cfg.lambda_f * rmse(e.se_f, e.n_f) * rmse(e.se_f, e.n_f) +
           cfg.lambda_v * rmse(e.se_v, e.n_v) * rmse(e.se_v, e.n_v);
  };

  Optimizer opt(trainable_parameters(model), optimizer_options(cfg));
  // learning rate: geometric decay over the round, lr -> lr/10 (not below stop_lr), so every
  // round ends with small steps near its minimum
  const int base_epochs = mi.epochs > 0 ? mi.epochs : in.epochs > 0 ? in.epochs : cfg.epoch;
  const int64_t batches = (static_cast<int64_t>(res.n_train) + cfg.batch - 1) / cfg.batch;  // per epoch
  const int epochs = in.min_updates > 0
                         ? static_cast<int>(std::max<int64_t>(base_epochs, (in.min_updates + batches - 1) / batches))
                         : base_epochs;
  auto lr_at = [&](int e) {
    const double x = epochs > 1 ? double(e) / (epochs - 1) : 1.0;
    return std::max(cfg.lr * std::pow(0.1, x), std::min(cfg.lr, cfg.stop_lr));
  };
  const LossWeights w{cfg.lambda_e, cfg.lambda_f, cfg.lambda_v};
  // keep the best of the start and of checkpoints every epochs/4 epochs (objective on the
  // round's training frames, b1 solved exactly at each): a round never returns a worse model.
  // A round of fewer than 8 epochs checks at its end only: each check is a pass over the frames
  // (about half an epoch), which on the short warm-started rounds of a long run was a third of it.
  const int check_every = epochs >= 8 ? epochs / 4 : epochs;
  Model best = model;
  SetResult best_eval = before;
  double best_obj = objective(before.err);
  bool improved = !mi.has_start;  // a fresh start is no model to keep
  if (!mi.has_start) best_obj = INFINITY;
  int epoch = 0;
  while (epoch < epochs) {
    opt.set_lr(lr_at(epoch));
    bool stopped = false;
    const EpochResult er = train_epoch(model, train, train_cache, loss, opt, comm, cfg.batch, cfg.seed,
                                       (in.round << 32) + static_cast<uint64_t>(epoch), w, stop, &stopped, frames);
    if (stopped) {
      res.stopped = true;
      break;
    }
    ++epoch;
    res.loss = er.loss;
    if (epoch % check_every == 0 || epoch == epochs) {
      SetResult ev = evaluate_set(model, train, train_cache, loss, comm, true, false, frames);
      const double o = objective(ev.err);
      if (o < best_obj) {
        best_obj = o;
        best = model;
        best_eval = ev;
        improved = true;
      }
    }
  }
  res.epochs = epoch;
  res.reverted = !improved;
  model = best;
  const SetResult& tr = best_eval;
  const SetResult he = evaluate_set(model, data.held, data.held_cache, loss, comm, false, false);
  res.train_rmse_e = rmse(tr.err.se_e, tr.err.n_e);
  res.train_rmse_f = rmse(tr.err.se_f, tr.err.n_f);
  res.train_rmse_v = rmse(tr.err.se_v, tr.err.n_v);
  res.heldout_rmse_e = rmse(he.err.se_e, he.err.n_e);
  res.heldout_rmse_f = rmse(he.err.se_f, he.err.n_f);
  res.model = std::move(model);
  res.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return res;
}
}  // namespace

}  // namespace nep
