// nep-train's files: GPUMD-layout loss.out and *_train.out / *_test.out, lr.out, and checkpoint.bin.
#pragma once
#include <cmath>
#include <string>
#include <vector>

#include "batch_loss.hpp"
#include "dataset.hpp"
#include "nep/model.hpp"
#include "nep/train/config.hpp"

namespace nep {
namespace train {

// Everything besides parameters and optimiser moments that a resumed run needs.
struct TrainState {
  int epoch = 0;      // epochs completed
  int stage = 1;
  int bad = 0;        // plateau counter
  int since_best = 0; // early-stop counter
  double lr = 0.0;
  double best = INFINITY, best_any = INFINITY;
};

struct LossLine {
  int epoch = 0;
  double total = 0, l1 = 0, l2 = 0;
  double rmse[6] = {0};  // E F V train, E F V test (eV/atom, eV/A, eV/atom)
  double lr = 0;         // learning rate after the epoch (lr.out; not a GPUMD column)
};

// loss.out (GPUMD's 10 columns) and lr.out ("epoch lr", for nep-report's learning-rate curve):
// emptied at the start of a fresh run, one line each per print interval
void reset_loss_file(const std::string& dir);
void append_loss_line(const std::string& dir, const LossLine& l);
// energy_<set>.out (per frame: predicted, reference eV/atom), force_<set>.out (per atom:
// predicted fx fy fz, reference fx fy fz), virial_<set>.out (frames with a virial label:
// predicted xx yy zz xy yz zx, reference, eV/atom)
void write_prediction_files(const std::string& dir, const std::string& set, const Dataset& data,
                            const std::vector<FramePrediction>& pred);

// Written atomically; the model travels as exact nep.txt text (shortest round-trip numbers).
void write_checkpoint(const std::string& path, const TrainState& st, const Model& m, const std::string& optimizer,
                      const TrainConfig& cfg);
// `text`: the file's bytes (read once on rank 0 and broadcast); `path` names it in errors
void read_checkpoint(const std::string& path, const std::string& text, TrainState& st, Model& m, std::string& optimizer,
                     const TrainConfig& cfg);

}  // namespace train
}  // namespace nep
