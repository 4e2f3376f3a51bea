#include "nep/train/otf_buffer.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <cmath>

#include "nep/error.hpp"
#include "rng.hpp"

namespace nep {

namespace {
constexpr int64_t kHeldoutStream = int64_t(1) << 62;
bool exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}
}  // namespace

bool OtfBuffer::is_heldout(uint64_t seed, double fraction, int64_t k) {
  if (fraction <= 0.0) return false;
  return train::Rng(seed, train::Stream::Split, static_cast<uint64_t>(k)).uniform() < fraction;
}

int64_t OtfBuffer::reservoir_slot(uint64_t seed, int64_t capacity, int64_t n, bool heldout) {
  if (n < capacity) return n;
  train::Rng rng(seed, train::Stream::Reservoir, static_cast<uint64_t>(n + (heldout ? kHeldoutStream : 0)));
  const int64_t j = static_cast<int64_t>(rng.below(static_cast<uint64_t>(n) + 1));
  return j < capacity ? j : -1;
}

int64_t OtfBuffer::heldout_capacity() const {
  return std::max<int64_t>(1, static_cast<int64_t>(std::ceil(opt_.capacity * opt_.heldout)));
}

OtfBuffer::OtfBuffer(const OtfBufferOptions& o, int64_t keep_frames) : opt_(o) {
  if (opt_.capacity < 1) throw Error(opt_.path + ": buffer capacity must be at least 1");
  if (!(opt_.heldout >= 0.0 && opt_.heldout < 1.0)) throw Error(opt_.path + ": held-out fraction must be in [0, 1)");
  if (!exists(opt_.path)) {
    store_ = std::make_unique<FrameStore>(FrameStore::create(opt_.path));
    return;
  }
  if (keep_frames >= 0) {
    int64_t have = 0;
    {
      FrameStore probe = FrameStore::open_append(opt_.path);
      have = probe.size();
    }
    if (keep_frames > have)
      throw Error(opt_.path + ": the restart expects " + std::to_string(keep_frames) + " frames but the buffer holds only " +
                  std::to_string(have) + " (wrong or replaced buffer file?)");
    if (keep_frames < have) {
      truncate_frame_store(opt_.path, keep_frames);
      dropped_ = have - keep_frames;
    }
  }
  store_ = std::make_unique<FrameStore>(FrameStore::open_append(opt_.path));
  // replay the placement of the stored frames, then read only the ones the reservoirs hold
  std::vector<int64_t> train_idx, held_idx;  // slot -> frame index
  for (int64_t k = 0; k < store_->size(); ++k) {
    bool held = false;
    const int64_t slot = place(nullptr, k, held);
    if (slot < 0) continue;
    auto& idx = held ? held_idx : train_idx;
    if (static_cast<int64_t>(idx.size()) <= slot) idx.resize(slot + 1, -1);
    idx[slot] = k;
  }
  std::vector<int64_t> which(train_idx);
  which.insert(which.end(), held_idx.begin(), held_idx.end());
  std::vector<TrainingFrame> read = read_frame_store(opt_.path, which);
  for (size_t i = 0; i < train_idx.size(); ++i) train_[i] = std::move(read[i]);
  for (size_t i = 0; i < held_idx.size(); ++i) heldout_[i] = std::move(read[train_idx.size() + i]);
}

OtfBuffer::~OtfBuffer() = default;

int64_t OtfBuffer::frames() const { return store_->size(); }

// Decide where frame k goes (and store f there when given); returns the slot, -1 if not kept.
int64_t OtfBuffer::place(const TrainingFrame* f, int64_t k, bool& held) {
  held = is_heldout(opt_.seed, opt_.heldout, k);
  const int64_t n = held ? n_heldout_++ : n_train_++;
  const int64_t slot = reservoir_slot(opt_.seed, held ? heldout_capacity() : opt_.capacity, n, held);
  if (slot < 0) return -1;
  auto& set = held ? heldout_ : train_;
  if (static_cast<int64_t>(set.size()) <= slot) set.resize(slot + 1);
  if (f) set[slot] = *f;
  if (!held) {
    if (static_cast<int64_t>(train_index_.size()) <= slot) train_index_.resize(slot + 1, -1);
    train_index_[slot] = k;
  }
  return slot;
}

std::vector<TrainingFrame> OtfBuffer::train_in_arrival_order() const {
  std::vector<size_t> slots(train_.size());
  for (size_t i = 0; i < slots.size(); ++i) slots[i] = i;
  std::sort(slots.begin(), slots.end(), [&](size_t a, size_t b) { return train_index_[a] < train_index_[b]; });
  std::vector<TrainingFrame> out;
  out.reserve(slots.size());
  for (size_t i : slots) out.push_back(train_[i]);
  return out;
}

bool OtfBuffer::add(const TrainingFrame& f) {
  const int64_t k = store_->size();
  store_->append(f);
  bool held = false;
  place(&f, k, held);
  return held;
}

}  // namespace nep
