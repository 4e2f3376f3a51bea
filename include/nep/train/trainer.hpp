// nep-train: GPUMD-compatible gradient training of NEP3/NEP4 models (docs/nep_train.md).
// Reads DIR/nep.in, DIR/train.xyz (or train.h5, a frame store) and optional DIR/test.xyz (or
// test.h5); writes DIR/nep.txt, loss.out, energy/force/virial_{train,test}.out and
// checkpoint.bin (resume with `resume = true`).
#pragma once
#include <cstdint>
#include <iosfwd>
#include <string>

namespace nep {

struct TrainOptions {
  std::string dir = ".";
  bool seed_given = false;
  uint64_t seed = 0;        // overrides nep.in's `seed` when seed_given
  int threads = 1;          // gradient threads (results do not depend on it)
  std::string device = "cpu";  // cpu | cuda | kokkos (see apps/nep_train.cpp)
  bool resume = false;      // continue from DIR/checkpoint.bin
  int stop_after = -1;      // stop (as if interrupted) after this many epochs; -1 = run to the end
};

// Runs the training; progress goes to `log`. Throws nep::Error on bad input.
void run_training(const TrainOptions& o, std::ostream& log);

}  // namespace nep
