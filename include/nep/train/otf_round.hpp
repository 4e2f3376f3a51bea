// One on-the-fly training round (fix nep/train): the trainer library's pipeline (same nep.in
// keywords, core, seeded sampler, prefetch, optimiser) on frames held in memory, on the calling
// thread and without MPI, so a LAMMPS fix can run it beside MD. No LibTorch or Kokkos here.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "nep/model.hpp"
#include "nep/train/config.hpp"
#include "nep/training_frame.hpp"

namespace nep {

namespace train {
class GeometryStore;  // src/train/geometry_store.hpp
}

// A round: the stage-1 loss weights of nep.in; the learning rate decays geometrically from `lr`
// to lr/10 over the round's epochs (fresh Adam moments each round). Warm-started rounds widen
// q_scaler to cover their data (first-layer weights rescaled so the start model is the same
// function) and return the best of the start and of checkpoints every epochs/4 epochs, judged by
// the loss on the round's training frames: a round never makes the model worse on its data.
struct OtfRoundInput {
  TrainConfig cfg;                      // nep.in (seed, architecture, loss, optimiser)
  std::vector<TrainingFrame> train;     // what the buffer held for training when the round began
  std::vector<TrainingFrame> heldout;   // held-out frames (never trained on)
  bool has_start = false;               // warm start from `start` (else fresh initialisation)
  Model start;
  uint64_t round = 1;                   // seeds this round's batch order: stream index (round << 32) + epoch
  int epochs = 0;                       // epochs in this round (0: cfg.epoch)
  // at least this many optimiser updates (batches) in the round: a small buffer gets more epochs,
  // epochs = max(epochs, ceil(min_updates / batches per epoch)); 0: off
  int min_updates = 0;
  int threads = 1;                      // gradient threads (results do not depend on it)
  // the committee's models trained side by side by this many workers, threads / workers gradient
  // threads each (results do not depend on it); 0: min(threads, committee); 1: one after another
  int workers = 0;
  // Committee (active learning, fix nep/train mode active): members 1..committee-1 are trained
  // beside or after the main model (member 0), each on a bootstrap resample of `train` (n draws with
  // replacement from stream (seed, Bootstrap, round * 256 + m)) with its own seed (stream
  // (seed, Member, m)) for initial values and batch order, warm-started from member_starts[m-1]
  // when given. Their spread on a configuration is the uncertainty of the main model there.
  int committee = 1;
  std::vector<Model> member_starts;     // empty, or committee - 1 models
  // Members are re-initialised every member_reset rounds, staggered (member_reset_due): a reset
  // member starts from fresh values of its own generation's seed (stream (seed, Member,
  // m + generation * 2^16)) and trains max(epochs, nep.in's epoch) epochs, so members do not stay
  // warm-started neighbours of their first solution forever. 0: never.
  int member_reset = 0;
  // grade_reference (threshold ... grade): after the committee is trained, its deviation on each
  // training frame, reduced as the fix's check steps reduce it (max over atoms, or RMS with
  // deviation_rms; a carved frame's labelled atoms only): OtfRoundResult::train_deviations and the
  // grade reference (reference_deviation()). One forward pass per model: not made otherwise.
  bool grade_reference = false;
  bool deviation_rms = false;
  // Arrival-order retraining (a run's final round, fix nep/train final_round E stages S): `train`
  // in the order the frames arrived; the model is trained again from fresh values as a run whose
  // teacher gave every frame in that order would have: S stages of nep.in's epoch count on the
  // first ceil(k N / S) frames, k = 1..S, each warm-started from the one before, then `epochs` on
  // all N; has_start and the committee are ignored. 0: an ordinary round.
  int arrival_stages = 0;
  // Frame geometries kept from earlier rounds (src/train/geometry_store.hpp): a frame found there
  // is not built again. OtfWorker passes its own store to every round; null: none.
  std::shared_ptr<train::GeometryStore> geometry;
};

struct OtfRoundResult {
  Model model;                          // b1 solved exactly on the training frames
  int epochs = 0;                       // epochs completed
  bool stopped = false;                 // ended early by the stop flag
  bool reverted = false;                // no checkpoint beat the warm start on the round's frames:
                                        // `model` is the start model (b1 re-solved)
  double seconds = 0.0, loss = 0.0;     // wall time; last epoch's loss
  int n_train = 0, n_heldout = 0;
  // RMSEs of the returned model: energy eV/atom, force eV/A, virial eV/atom (0 when no labels)
  double train_rmse_e = 0, train_rmse_f = 0, train_rmse_v = 0;
  double heldout_rmse_e = 0, heldout_rmse_f = 0;
  std::vector<Model> members;           // committee members 1..committee-1
  std::vector<int> members_reset;       // the members (1..committee-1) re-initialised in this round
  double members_seconds = 0.0;         // wall time of the members' training
  // committee rounds with grade_reference: the new committee's deviation on each training frame
  // (eV/A) and their largest, the reference of `threshold LO HI grade` (-1: not computed)
  std::vector<double> train_deviations;
  double reference_deviation = -1.0;
  double deviation_seconds = 0.0;       // wall time of that pass
};

// Member m (1..committee-1) of round `round` (1-based) is re-initialised when this returns a
// generation > 0: rounds offset_m + 1 + k * reset (k >= 1 for offset 0), offset_m =
// (m - 1) * reset / (committee - 1), so the resets of different members fall on different rounds.
int member_reset_due(uint64_t round, int m, int committee, int reset);

// Throws nep::Error (e.g. an element not in nep.in's `type` list). `stop` may be null.
OtfRoundResult train_otf_round(const OtfRoundInput& in, const std::atomic<bool>* stop);

// The training-frame counts of an arrival-order round (in.arrival_stages = S): ceil(k N / S) for
// k = 1..S (a count equal to the one before it dropped), then N for the round itself.
std::vector<int> arrival_stage_frames(int n_train, int stages);

// Runs one round at a time on a background thread. The owner polls finished() and calls join()
// on its own (main) thread; the worker never touches MPI or the caller's data.
class OtfWorker {
 public:
  OtfWorker();
  ~OtfWorker();  // asks a running round to stop and joins it
  OtfWorker(const OtfWorker&) = delete;
  OtfWorker& operator=(const OtfWorker&) = delete;
  // nice > 0 lowers the training thread's scheduling priority (Linux), so MD wins a shared core
  void start(OtfRoundInput in, int nice = 0);
  bool busy() const { return running_; }          // started and not joined yet
  bool finished() const { return done_.load(); }  // its result is ready
  void request_stop() { stop_ = true; }
  // Waits for the round; throws nep::Error with the round's message if it failed.
  OtfRoundResult join();
  // Asks a running round to stop and waits for its thread (the destructor, and the process's exit
  // while a round runs: src/train/otf_worker.cpp); a later join() still returns its result.
  void stop_and_wait();

 private:
  std::thread thread_;
  std::atomic<bool> stop_{false}, done_{false};
  bool running_ = false;
  OtfRoundResult result_;
  std::string error_;
  std::shared_ptr<train::GeometryStore> geometry_;  // from round to round: only the current frames'
};

}  // namespace nep
