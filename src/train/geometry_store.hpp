// Frame geometries (neighbour list + pair basis) kept from one on-the-fly round to the next. A
// round's frames are mostly the previous round's: without the store every round (and every stage
// of an arrival-order final round) built each frame's list and basis again. An entry is found by
// the frame's exact content (positions, cell, periodicity, model types and force weights compared
// byte for byte), so a hit is the geometry a build would give. Thread-safe.
#pragma once
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "dataset.hpp"

namespace nep {
namespace train {

class GeometryStore {
 public:
  // What a frame's geometry depends on besides the frame: the model's cutoffs, basis sizes, l_max
  // and ZBL (NeighborCache computes it once for its model).
  static std::vector<double> signature(const Model& model);
  // The geometry of `frame` (types: its model types), or null; need_basis: only an entry with its
  // pair basis. A store asked under another signature drops everything it held.
  std::shared_ptr<const FrameGeometry> find(const std::vector<double>& signature, const TrainingFrame& frame,
                                            const std::vector<int>& types, bool need_basis);
  void put(const std::vector<double>& signature, const TrainingFrame& frame, const std::vector<int>& types,
           bool has_basis, std::shared_ptr<const FrameGeometry> geometry);
  void erase(const TrainingFrame& frame, const std::vector<int>& types);
  // Drops every entry whose frame is not among `frames` (a round's training and held-out frames),
  // judged by the key (positions and cell): an entry whose key collides with a kept frame's stays.
  void retain(const std::vector<const TrainingFrame*>& frames);
  size_t entries() const;
  long hits() const;

 private:
  struct Entry {
    std::vector<double> pos, force_weight;
    double cell[9];
    bool pbc[3];
    std::vector<int> types;
    bool has_basis;
    std::shared_ptr<const FrameGeometry> geometry;
  };
  static uint64_t key(const TrainingFrame& frame);
  static bool same(const Entry& e, const TrainingFrame& frame, const std::vector<int>& types);
  void check_signature(const std::vector<double>& signature);  // under mutex_
  mutable std::mutex mutex_;
  std::vector<double> signature_;
  std::unordered_multimap<uint64_t, Entry> entries_;
  long hits_ = 0;
};

}  // namespace train
}  // namespace nep
