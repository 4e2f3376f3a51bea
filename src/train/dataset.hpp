// Training frames mapped to model types, and the memory-bounded cache of their neighbour lists.
// Neighbour lists (with periodic images) depend only on the geometry and the cutoff, never on
// the parameters, so each frame's list is built once and kept while the cache has room; frames
// beyond the budget are rebuilt when used (the recompute fallback). Thread-safe.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nep/model.hpp"
#include "nep/neighbor.hpp"
#include "nep/training_frame.hpp"

namespace nep {
namespace train {

struct Dataset {
  std::string name;                      // file it came from
  std::vector<TrainingFrame> frames;
  std::vector<std::vector<int>> types;   // model type per atom
  int size() const { return static_cast<int>(frames.size()); }
  long atoms() const;
};

// Maps species to the model's elements; an unknown element is an error naming file and line.
Dataset make_dataset(std::vector<TrainingFrame> frames, const std::string& name, const Model& m);

class NeighborCache {
 public:
  NeighborCache(const Dataset& data, double cutoff, double budget_mb);
  std::shared_ptr<const NeighborList> get(int frame);
  size_t bytes() const { return bytes_; }
  long builds() const { return builds_; }

 private:
  const Dataset& data_;
  double cutoff_;
  size_t budget_, bytes_ = 0;
  long builds_ = 0;
  std::mutex mutex_;
  std::vector<std::shared_ptr<const NeighborList>> slots_;
};

}  // namespace train
}  // namespace nep
