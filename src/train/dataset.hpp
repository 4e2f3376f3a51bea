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

// The cache budget when nep.in names none (cache_mb auto): a quarter of the memory this process may
// use (the machine's physical memory, or its cgroup's limit when that is lower), at least 1024 MiB.
// A budget changes only how often frames are rebuilt, never a result.
double default_cache_budget_mb();

class GeometryStore;

class NeighborCache {
 public:
  // with_basis: also build each frame's pair basis for `model`'s cutoffs and basis sizes;
  // budget_mb < 0: default_cache_budget_mb(). store (may be null): geometries kept from earlier
  // rounds are taken from it, and the ones this cache keeps are put in it (geometry_store.hpp)
  NeighborCache(const Dataset& data, const Model& model, double budget_mb, bool with_basis,
                GeometryStore* store = nullptr);
  // need_basis = false: when the cache is full, a frame not in it is returned without its basis
  std::shared_ptr<const FrameGeometry> get(int frame, bool need_basis = true);
  size_t bytes() const { return bytes_; }
  double budget_mb() const { return budget_ / 1048576.0; }
  long builds() const { return builds_; }
  long reused() const { return reused_; }  // geometries taken from the store

 private:
  static size_t geometry_bytes(const FrameGeometry& g);
  const Dataset& data_;
  const Model model_;  // a copy; only its cutoffs, basis sizes, l_max and ZBL are used
  double cutoff_;
  bool with_basis_;
  size_t budget_, bytes_ = 0;
  long builds_ = 0, reused_ = 0;
  GeometryStore* store_;
  std::vector<double> signature_;  // GeometryStore::signature(model_), with a store only
  std::mutex mutex_;
  std::vector<std::shared_ptr<const FrameGeometry>> slots_;
};

}  // namespace train
}  // namespace nep
