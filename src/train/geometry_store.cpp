#include "geometry_store.hpp"

#include <cstring>
#include <unordered_set>

#include "rng.hpp"

namespace nep {
namespace train {

namespace {
template <class T>
bool same_bytes(const std::vector<T>& a, const std::vector<T>& b) {
  return a.size() == b.size() && (a.empty() || std::memcmp(a.data(), b.data(), a.size() * sizeof(T)) == 0);
}
// the doubles' bit patterns folded in with the SplitMix64 mixer (rng.hpp)
uint64_t fold(uint64_t h, const double* x, size_t n) {
  for (size_t k = 0; k < n; ++k) {
    uint64_t bits;
    std::memcpy(&bits, x + k, sizeof bits);
    h = mix64(h ^ bits);
  }
  return h;
}
}  // namespace

std::vector<double> GeometryStore::signature(const Model& m) {
  const ModelSizes z = m.sizes();
  std::vector<double> s{double(m.version), double(z.T), double(z.NR), double(z.NA), double(z.KR), double(z.KA),
                        double(z.L3), double(z.S), double(z.q222), double(z.q1111), double(z.zbl), double(m.zbl),
                        m.zbl_rc_inner, m.zbl_rc_outer, m.zbl_typewise_factor, m.cutoff_max()};
  for (int a = 0; a < z.T; ++a)
    for (int b = 0; b < z.T; ++b) {
      s.push_back(m.rc_radial_pair(a, b));
      s.push_back(m.rc_angular_pair(a, b));
    }
  s.insert(s.end(), m.zbl_flexible.begin(), m.zbl_flexible.end());
  return s;
}

uint64_t GeometryStore::key(const TrainingFrame& f) {
  return fold(fold(f.pos.size(), f.pos.data(), f.pos.size()), f.cell, 9);  // the rest is compared in same()
}

bool GeometryStore::same(const Entry& e, const TrainingFrame& f, const std::vector<int>& types) {
  return same_bytes(e.pos, f.pos) && same_bytes(e.force_weight, f.force_weight) && same_bytes(e.types, types) &&
         std::memcmp(e.cell, f.cell, sizeof f.cell) == 0 && std::memcmp(e.pbc, f.pbc, sizeof f.pbc) == 0;
}

void GeometryStore::check_signature(const std::vector<double>& signature) {
  if (same_bytes(signature, signature_)) return;
  entries_.clear();
  signature_ = signature;
}

std::shared_ptr<const FrameGeometry> GeometryStore::find(const std::vector<double>& signature, const TrainingFrame& frame,
                                                         const std::vector<int>& types, bool need_basis) {
  std::lock_guard<std::mutex> lock(mutex_);
  check_signature(signature);
  auto range = entries_.equal_range(key(frame));
  for (auto it = range.first; it != range.second; ++it)
    if ((it->second.has_basis || !need_basis) && same(it->second, frame, types)) {
      ++hits_;
      return it->second.geometry;
    }
  return nullptr;
}

void GeometryStore::put(const std::vector<double>& signature, const TrainingFrame& frame, const std::vector<int>& types,
                        bool has_basis, std::shared_ptr<const FrameGeometry> geometry) {
  std::lock_guard<std::mutex> lock(mutex_);
  check_signature(signature);
  const uint64_t k = key(frame);
  auto range = entries_.equal_range(k);
  for (auto it = range.first; it != range.second; ++it)
    if (same(it->second, frame, types)) {  // keep the one with a basis
      if (has_basis && !it->second.has_basis) {
        it->second.has_basis = true;
        it->second.geometry = std::move(geometry);
      }
      return;
    }
  Entry e;
  e.pos = frame.pos;
  e.force_weight = frame.force_weight;
  std::memcpy(e.cell, frame.cell, sizeof e.cell);
  std::memcpy(e.pbc, frame.pbc, sizeof e.pbc);
  e.types = types;
  e.has_basis = has_basis;
  e.geometry = std::move(geometry);
  entries_.emplace(k, std::move(e));
}

void GeometryStore::erase(const TrainingFrame& frame, const std::vector<int>& types) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto range = entries_.equal_range(key(frame));
  for (auto it = range.first; it != range.second; ++it)
    if (same(it->second, frame, types)) {
      entries_.erase(it);
      return;
    }
}

void GeometryStore::retain(const std::vector<const TrainingFrame*>& frames) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::unordered_set<uint64_t> keep;
  for (const TrainingFrame* f : frames) keep.insert(key(*f));
  for (auto it = entries_.begin(); it != entries_.end();) it = keep.count(it->first) ? std::next(it) : entries_.erase(it);
}

size_t GeometryStore::entries() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return entries_.size();
}

long GeometryStore::hits() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return hits_;
}

}  // namespace train
}  // namespace nep
