// The steps of gradient training shared by nep-train (trainer.cpp) and the on-the-fly rounds of
// fix nep/train (otf_round.cpp): one initialisation, one descriptor scaler, one epoch loop, one
// evaluation, one learning-rate schedule. Everything here runs on the calling thread; MPI only
// through `comm` (a single-rank Comm makes every call local).
#pragma once
#include <atomic>
#include <cmath>
#include <cstdint>
#include <vector>

#include "batch_loss.hpp"
#include "comm.hpp"
#include "dataset.hpp"
#include "nep/model.hpp"
#include "nep/train/config.hpp"
#include "optimizer.hpp"
#include "outputs.hpp"

namespace nep {
namespace train {

// GPUMD-like initial values drawn from the Init stream of `seed` (network weights
// ~ N(0, 1/sqrt(fan_in + fan_out)), biases 0, descriptor coefficients ~ N(0, 0.1)).
void initialise_parameters(Model& m, uint64_t seed);

// How fit_descriptor_scaler treats q_scaler.
enum class ScalerMode {
  Fresh,   // q_scaler = 1/(max - min) of each raw descriptor over the training set (GPUMD)
  Keep,    // leave it (fine-tuning, resumed runs)
  Expand,  // widen it to cover this data too: s = min(s_old, 1/(max - min)), and rescale the
           // first-layer weights w0[h][d] *= s_old[d] / s[d] so the model is the same function.
           // On-the-fly rounds use this: data grows past the range the first round saw.
};

// The frames a pass runs over: all of a Dataset (index == nullptr), or a list of its frame indices,
// repeats allowed (a committee member's bootstrap resample: it shares the round's Dataset and
// NeighborCache instead of copying frames and building their geometry again). Position p of the
// pass is frame at(p); everything a pass computes depends on that sequence alone.
struct FrameSubset {
  const std::vector<int>* index = nullptr;
  int size(const Dataset& d) const { return index ? static_cast<int>(index->size()) : d.size(); }
  int at(int p) const { return index ? (*index)[static_cast<size_t>(p)] : p; }
};

// Sets q_scaler as `mode` says; always raises the nep.txt header's neighbour counts to what the
// data holds.
void fit_descriptor_scaler(Model& model, const Dataset& train, NeighborCache& cache, BatchLoss& loss, const Comm& comm,
                           ScalerMode mode, FrameSubset subset = {});


struct SetResult {
  ErrorSums err;
  std::vector<FramePrediction> pred;  // per frame (rank 0), only when asked to keep them
};

// Core predictions on a set (frames split over ranks). solve_b1: shift b1 so the mean energy
// residual is zero (exact, closed form). keep: rank 0 ends with every frame's prediction.
// With a subset, predictions are per position of the subset.
SetResult evaluate_set(Model& model, const Dataset& data, NeighborCache& cache, BatchLoss& loss, const Comm& comm,
                       bool solve_b1, bool keep, FrameSubset subset = {});

struct EpochResult {
  double loss = 0.0;  // mean batch loss (data + regularisation)
  ErrorSums err;
};

// One epoch of prefetched, seeded mini-batches over the subset's positions: batch order is
// permutation(seed, Shuffle, shuffle_index); b1 follows the epoch's mean energy residual. `stop` (may be null) ends the epoch
// early between batches (result then flagged by *stopped).
EpochResult train_epoch(Model& model, const Dataset& train, NeighborCache& cache, BatchLoss& loss, Optimizer& opt,
                        const Comm& comm, int batch_size, uint64_t seed, uint64_t shuffle_index, const LossWeights& w,
                        const std::atomic<bool>* stop = nullptr, bool* stopped = nullptr, FrameSubset subset = {});

// Stage switch, plateau/step learning-rate schedule and early-stop counters after an epoch
// (TorchNEP's rules); returns the loss weights of the current stage. Sets st.stage/lr.
LossWeights stage_weights(const TrainConfig& cfg, const TrainState& st);
bool enter_stage2(const TrainConfig& cfg, TrainState& st);  // true when it switched now
void update_schedule(const TrainConfig& cfg, TrainState& st, double epoch_loss);

// nep.in's optimiser keywords, and a model's trainable parameters as a vector
OptimizerOptions optimizer_options(const TrainConfig& cfg);
std::vector<double> trainable_parameters(const Model& m);

inline double rmse(double se, long n) { return n > 0 ? std::sqrt(se / n) : 0.0; }

}  // namespace train
}  // namespace nep
