// Internal to the frame store (src/data/frame_store*.cpp): the layout's columns and the HDF5
// helpers the writer (frame_store.cpp) and the reader (frame_store_read.cpp) share.
#pragma once
#include <hdf5.h>

#include <cstdint>
#include <string>

namespace nep {
namespace store {

// HDF5's automatic error printing is off inside the store's own calls only (we report our own
// errors) and restored as it was when they return: other HDF5 users in the process (LAMMPS's
// dump h5md, a user's library) keep theirs. HDF5's exit handler is left alone too: appends claim
// their space first (FrameStore::reserve_for_append), so a full disk never fails a write half-way.
class QuietHdf5 {
 public:
  QuietHdf5() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~QuietHdf5() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  QuietHdf5(const QuietHdf5&) = delete;
  QuietHdf5& operator=(const QuietHdf5&) = delete;

 private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

// Per-frame datasets ("natoms" is written last: the number of complete frames is its length).
// Built on first use: the H5T_NATIVE_* values open the library, which loading this code must not.
struct Column {
  const char* name;
  hid_t type;
  int width;
};
struct ColumnTables {
  Column frame[8], atom[4];
};
inline const ColumnTables& columns() {
  static const ColumnTables t = {
      {{"frames/atom_offset", H5T_NATIVE_INT64, 1}, {"frames/cell", H5T_NATIVE_DOUBLE, 9},
       {"frames/pbc", H5T_NATIVE_UINT8, 3}, {"frames/energy", H5T_NATIVE_DOUBLE, 1},
       {"frames/virial", H5T_NATIVE_DOUBLE, 9}, {"frames/flags", H5T_NATIVE_UINT8, 1},
       {"frames/weight", H5T_NATIVE_DOUBLE, 1}, {"frames/natoms", H5T_NATIVE_INT64, 1}},
      {{"atoms/z", H5T_NATIVE_INT32, 1}, {"atoms/position", H5T_NATIVE_DOUBLE, 3}, {"atoms/force", H5T_NATIVE_DOUBLE, 3},
       {"atoms/force_weight", H5T_NATIVE_DOUBLE, 1}}};
  return t;
}
// atom columns a store of that layout version has (version 1 lacks atoms/force_weight)
inline int atom_columns(int version) { return version >= 2 ? 4 : 3; }
enum Flags : uint8_t { kHasEnergy = 1, kHasForces = 2, kHasVirial = 4, kHasForceWeight = 8 };

void check(herr_t status, const std::string& path, const std::string& what);
hid_t fapl_latest(bool clear_crash_flags);
hsize_t extent(hid_t file, const char* name);  // rows of a dataset (0: missing)
void read_rows(hid_t file, const Column& c, hsize_t row, hsize_t n, void* data, const std::string& path);
int layout_version(hid_t file);  // -1: no version attribute
// The store's layout version (1 or 2), after checking every column it must have.
int check_layout(hid_t file, const std::string& path);

}  // namespace store
}  // namespace nep
