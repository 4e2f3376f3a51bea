#include "dataset.hpp"

#include "geometry_store.hpp"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "nep/error.hpp"
#include "nep/timing.hpp"

namespace nep {
namespace train {

long Dataset::atoms() const {
  long n = 0;
  for (const auto& f : frames) n += f.natoms();
  return n;
}

Dataset make_dataset(std::vector<TrainingFrame> frames, const std::string& name, const Model& m) {
  Dataset d;
  d.name = name;
  d.types.reserve(frames.size());
  for (const auto& f : frames) {
    std::vector<int> t(f.natoms());
    for (int i = 0; i < f.natoms(); ++i) {
      const int k = m.type_of(f.species[i]);
      if (k < 0)
        throw file_error(name, f.source_line + 2 + i, "element '" + f.species[i] + "' is not in the model's 'type' list");
      t[i] = k;
    }
    // a frame carved out of a larger system (fix nep/train carve) has forces only
    if (!f.has_energy && !f.has_forces) throw file_error(name, f.source_line + 1, "frame has no energy and no force label");
    d.types.push_back(std::move(t));
  }
  d.frames = std::move(frames);
  return d;
}

std::vector<char> force_sites(const TrainingFrame& frame, const NeighborList& nl) {
  if (frame.has_energy || frame.has_virial || !frame.has_forces || frame.force_weight.empty()) return {};
  std::vector<char> site(static_cast<size_t>(nl.nlocal), 0);
  bool all = true;
  for (int i = 0; i < nl.nlocal; ++i) {
    bool need = frame.force_weight_of(i) > 0.0;
    const int* row = nl.neighbors.data() + static_cast<size_t>(i) * nl.max_neighbors;
    for (int k = 0; k < nl.num_neighbors[i] && !need; ++k) need = frame.force_weight_of(nl.owner[row[k]]) > 0.0;
    site[static_cast<size_t>(i)] = need;
    all = all && need;
  }
  if (all) return {};
  return site;
}

namespace {
// the first number in a cgroup limit file ("max" or no file: no limit)
double cgroup_limit_bytes(const char* path) {
  std::ifstream in(path);
  double v = 0.0;
  if (in >> v && v > 0.0) return v;
  return INFINITY;
}
}  // namespace

double default_cache_budget_mb() {
  const double pages = static_cast<double>(sysconf(_SC_PHYS_PAGES)), page = static_cast<double>(sysconf(_SC_PAGESIZE));
  double bytes = pages > 0 && page > 0 ? pages * page : 0.0;
  const double limit = std::min(cgroup_limit_bytes("/sys/fs/cgroup/memory.max"),               // cgroup v2
                                cgroup_limit_bytes("/sys/fs/cgroup/memory/memory.limit_in_bytes"));  // v1
  if (limit < bytes) bytes = limit;
  return std::max(1024.0, bytes / 4.0 / 1048576.0);
}

NeighborCache::NeighborCache(const Dataset& data, const Model& model, double budget_mb, bool with_basis,
                             GeometryStore* store)
    : data_(data),
      model_(model),
      cutoff_(model.cutoff_max()),
      with_basis_(with_basis),
      budget_(static_cast<size_t>((budget_mb < 0.0 ? default_cache_budget_mb() : budget_mb) * 1048576.0)),
      store_(store),
      signature_(store ? GeometryStore::signature(model) : std::vector<double>()),
      slots_(data.size()) {}

size_t NeighborCache::geometry_bytes(const FrameGeometry& g) {
  const NeighborList& nl = g.nl;
  return nl.x.size() * 8 + (nl.type.size() + nl.owner.size() + nl.num_neighbors.size() + nl.neighbors.size()) * 4 +
         g.basis.bytes();
}

std::shared_ptr<const FrameGeometry> NeighborCache::get(int frame, bool need_basis) {
  bool room;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (slots_[frame]) return slots_[frame];
    room = bytes_ < budget_;
  }
  const TrainingFrame& f = data_.frames[frame];
  if (store_) {  // kept from an earlier round: the same bytes a build gives
    if (auto g = store_->find(signature_, f, data_.types[frame], with_basis_)) {
      const size_t b = geometry_bytes(*g);
      std::lock_guard<std::mutex> lock(mutex_);
      ++reused_;
      if (!slots_[frame] && bytes_ + b <= budget_) {
        slots_[frame] = g;
        bytes_ += b;
      } else if (!slots_[frame]) {
        store_->erase(f, data_.types[frame]);  // the store holds only what a cache keeps
      }
      return slots_[frame] ? slots_[frame] : g;
    }
  }
  auto g = std::make_shared<FrameGeometry>();
  {
    ScopedStage stage("train:neighbor");
    Cell cell;
    for (int k = 0; k < 9; ++k) cell.h[k] = f.cell[k];
    for (int k = 0; k < 3; ++k) cell.pbc[k] = f.pbc[k];
    g->nl = build_neighbor_list(f.pos, data_.types[frame], cell, cutoff_);
  }
  // without room the frame will not be kept: skip the basis nobody asked for
  const bool partial = with_basis_ && !need_basis && !room;
  if (with_basis_ && !partial) {
    ScopedStage stage("train:basis");
    const std::vector<char> sites = force_sites(f, g->nl);
    g->basis = build_pair_basis(model_, g->nl, sites.empty() ? nullptr : &sites);
  }
  const size_t b = geometry_bytes(*g);
  bool kept = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    ++builds_;
    if (!partial && !slots_[frame] && bytes_ + b <= budget_) {
      slots_[frame] = g;
      bytes_ += b;
      kept = true;
    }
  }
  if (kept && store_) store_->put(signature_, f, data_.types[frame], with_basis_, g);
  return g;
}

}  // namespace train
}  // namespace nep
