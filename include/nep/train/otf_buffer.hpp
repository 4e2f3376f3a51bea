// The on-the-fly training buffer (fix nep/train): every sampled frame is appended to an HDF5
// frame store (durable on return), and a seeded split and reservoir decide what training sees.
//   frame k (its index in the store) is held out   iff  uniform(seed, Split, k) < heldout
//   the n-th training frame enters slot n while n < capacity, else slot j = below(n + 1) of
//   stream (seed, Reservoir, n) when j < capacity (Vitter's algorithm R); held-out frames
//   likewise in a reservoir of max(1, ceil(capacity * heldout)) slots (indices offset by 2^62).
// Every decision is a function of (seed, index) only, so reopening a store replays them exactly
// and reads back only the frames the reservoirs hold: memory stays bounded by `capacity`.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nep/data/frame_store.hpp"
#include "nep/training_frame.hpp"

namespace nep {

struct OtfBufferOptions {
  std::string path;
  uint64_t seed = 1;
  int64_t capacity = 1000;   // training frames held in memory
  double heldout = 0.0;      // fraction of frames held out for validation, [0, 1)
};

class OtfBuffer {
 public:
  // Creates the store, or appends to an existing one. keep_frames >= 0: first drop the frames
  // after that many (a restart from a point before they were written). Throws nep::Error.
  OtfBuffer(const OtfBufferOptions& o, int64_t keep_frames = -1);
  ~OtfBuffer();
  // Append (durable on return) and place it; returns true when the frame is held out.
  bool add(const TrainingFrame& f);
  int64_t frames() const;                         // frames in the store
  const std::vector<TrainingFrame>& train() const { return train_; }
  const std::vector<TrainingFrame>& heldout() const { return heldout_; }
  // the training frames held, in the order they were added (store index; train() is in slot order)
  std::vector<TrainingFrame> train_in_arrival_order() const;
  int64_t dropped() const { return dropped_; }    // frames removed by keep_frames
  const std::string& path() const { return opt_.path; }

  // the placement rules, exposed for tests: -1 = not kept, else the slot
  static bool is_heldout(uint64_t seed, double fraction, int64_t k);
  static int64_t reservoir_slot(uint64_t seed, int64_t capacity, int64_t n, bool heldout);
  int64_t heldout_capacity() const;

 private:
  int64_t place(const TrainingFrame* f, int64_t k, bool& held);
  OtfBufferOptions opt_;
  std::unique_ptr<FrameStore> store_;
  std::vector<TrainingFrame> train_, heldout_;
  std::vector<int64_t> train_index_;  // store index of the frame in each training slot
  int64_t n_train_ = 0, n_heldout_ = 0, dropped_ = 0;
};

}  // namespace nep
