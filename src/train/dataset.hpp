// Training frames mapped to model types, and the memory-bounded cache of what each frame needs
// that never depends on the parameters: its neighbour list (with periodic images) and, for the
// training set, its pair basis (nep/pair_basis.hpp). Each frame's entry is built once and kept
// while the cache has room; frames beyond the budget are rebuilt when used (the recompute
// fallback, done by the prefetch thread). Thread-safe.
#pragma once
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "nep/model.hpp"
#include "nep/neighbor.hpp"
#include "nep/pair_basis.hpp"
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

struct FrameGeometry {
  NeighborList nl;
  PairBasis basis;  // empty unless the cache was made with_basis; its sites: force_sites
};

// The sites a frame's loss depends on. A frame with an energy or a virial label needs every site.
// One with forces only (a region carved by fix nep/train: labelled core, masked rest) needs the
// sites whose environment holds a labelled atom: the labelled atoms and every atom with a
// labelled atom among its neighbours (the force on atom i is a sum over the sites within the
// cutoff of i: F_i = sum_j (f_ij - f_ji), f_ij = dU_i/dr_ij). Empty when every atom is needed;
// else nlocal 0/1 entries.
std::vector<char> force_sites(const TrainingFrame& frame, const NeighborList& nl);

class NeighborCache {
 public:
  // with_basis: also build each frame's pair basis for `model`'s cutoffs and basis sizes
  NeighborCache(const Dataset& data, const Model& model, double budget_mb, bool with_basis);
  // need_basis = false: when the cache is full, a frame not in it is returned without its basis
  std::shared_ptr<const FrameGeometry> get(int frame, bool need_basis = true);
  size_t bytes() const { return bytes_; }
  long builds() const { return builds_; }

 private:
  const Dataset& data_;
  const Model model_;  // a copy; only its cutoffs, basis sizes, l_max and ZBL are used
  double cutoff_;
  bool with_basis_;
  size_t budget_, bytes_ = 0;
  long builds_ = 0;
  std::mutex mutex_;
  std::vector<std::shared_ptr<const FrameGeometry>> slots_;
};

}  // namespace train
}  // namespace nep
