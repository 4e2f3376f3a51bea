// HDF5 frame store: labelled structures of any size in one appendable file (layout in
// docs/frame_store.md). Written in HDF5's single-writer/multiple-reader (SWMR) mode and flushed
// after every frame, so a reader can open it while frames are appended and a killed writer
// leaves every flushed frame readable; reopening appends after the last complete frame.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nep/training_frame.hpp"

namespace nep {

class FrameStore {
 public:
  static constexpr int kLayoutVersion = 2;  // 1 (no atoms/force_weight): read, upgraded on open_append

  // create (truncating) or open an existing store for appending; errors name the path
  static FrameStore create(const std::string& path);
  static FrameStore open_append(const std::string& path);
  FrameStore(FrameStore&& o) noexcept;
  FrameStore& operator=(FrameStore&&) = delete;
  FrameStore(const FrameStore&) = delete;
  ~FrameStore();

  // durable when it returns (flushed). No room for the frame (full disk, quota, file-size limit):
  // throws before writing anything, the store stays open and intact. Another write error: throws,
  // the store is closed; every frame appended before is intact either way.
  void append(const TrainingFrame& frame);
  int64_t size() const { return frames_; }
  const std::string& path() const { return path_; }

 private:
  FrameStore(const std::string& path, long file);
  void init_counts();
  static void build_empty_layout(long file, const std::string& path);  // attributes, groups, empty columns
  static void upgrade_v1(const std::string& path);  // a version-1 store to version 2, in place
  std::string path_;
  long file_ = -1;  // hid_t
  int64_t frames_ = 0, atoms_ = 0;
  // open dataset handles and their current row extents (frame columns 0-7, atom columns 8-11);
  // every column but the commit column frames/natoms grows in doubling steps, so an append costs
  // the same however large the store is
  static constexpr int kColumns = 12;
  long dset_[kColumns] = {-1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1, -1};
  uint64_t rows_[kColumns] = {0};
  void write_column(int c, uint64_t row, uint64_t n, const void* data);
  void append_rows(const TrainingFrame& frame, const std::vector<int32_t>& z);
  void reserve_for_append(int natoms);
  void close_columns();
};

// Every complete frame of a store (safe on a store being appended or left by a killed writer).
std::vector<TrainingFrame> read_frame_store(const std::string& path);
// Only frames `which` (indices into the complete frames), in that order.
std::vector<TrainingFrame> read_frame_store(const std::string& path, const std::vector<int64_t>& which);
// Keep the first `frames` frames (drop the rest; later appends reuse their space). Not while a
// writer has the store open.
void truncate_frame_store(const std::string& path, int64_t frames);

}  // namespace nep
