// HDF5 C API implementation of the frame store's reader (read_frame_store) and truncation.
#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "frame_store_layout.hpp"
#include "nep/data/frame_store.hpp"
#include "nep/elements.hpp"
#include "nep/error.hpp"

namespace nep {
using namespace store;

namespace {
// Frames `which` (ascending, complete ones only) of an open store.
std::vector<TrainingFrame> read_frames(hid_t file, const std::string& path, const std::vector<int64_t>* which) {
  const int version = check_layout(file, path);
  const int atom_cols = atom_columns(version);
  const hsize_t F = extent(file, "frames/natoms");
  hsize_t rows = F;  // frames whose every column has been written
  for (const auto& c : columns().frame) rows = std::min(rows, extent(file, c.name));
  hsize_t natoms_avail = extent(file, "atoms/z");
  for (int c = 0; c < atom_cols; ++c) natoms_avail = std::min(natoms_avail, extent(file, columns().atom[c].name));
  std::vector<int64_t> all;
  if (!which) {
    all.resize(rows);
    for (hsize_t k = 0; k < rows; ++k) all[k] = static_cast<int64_t>(k);
    which = &all;
  }
  // per-frame columns: one bulk read of the rows the selection spans (small: ~30 numbers a frame)
  hsize_t lo = rows, hi = 0;
  for (int64_t k : *which) {
    if (k < 0 || hsize_t(k) >= rows)
      throw Error(path + ": frame " + std::to_string(k) + " requested but the store holds " + std::to_string(rows));
    lo = std::min(lo, hsize_t(k));
    hi = std::max(hi, hsize_t(k) + 1);
  }
  const hsize_t span = hi > lo ? hi - lo : 0;
  std::vector<int64_t> offsets(span), counts(span);
  std::vector<double> cells(9 * span), energies(span), virials(9 * span), weights(span);
  std::vector<uint8_t> pbcs(3 * span), flag_rows(span);
  read_rows(file, columns().frame[0], lo, span, offsets.data(), path);
  read_rows(file, columns().frame[1], lo, span, cells.data(), path);
  read_rows(file, columns().frame[2], lo, span, pbcs.data(), path);
  read_rows(file, columns().frame[3], lo, span, energies.data(), path);
  read_rows(file, columns().frame[4], lo, span, virials.data(), path);
  read_rows(file, columns().frame[5], lo, span, flag_rows.data(), path);
  read_rows(file, columns().frame[6], lo, span, weights.data(), path);
  read_rows(file, columns().frame[7], lo, span, counts.data(), path);
  std::vector<TrainingFrame> out;
  out.reserve(which->size());
  for (int64_t k : *which) {
    const hsize_t j = hsize_t(k) - lo;
    const int64_t offset = offsets[j], natoms = counts[j];
    const double* cell = &cells[9 * j];
    const double* virial = &virials[9 * j];
    const uint8_t* pbc = &pbcs[3 * j];
    const uint8_t flags = flag_rows[j];
    const double energy = energies[j], weight = weights[j];
    if (natoms < 0 || offset < 0 || hsize_t(natoms) > natoms_avail || hsize_t(offset) > natoms_avail - hsize_t(natoms))
      throw Error(path + ": frame " + std::to_string(k) + " points outside the atom arrays (corrupt store)");
    TrainingFrame f;
    const int n = static_cast<int>(natoms);
    std::vector<int32_t> z(n);
    f.pos.resize(3 * size_t(n));
    std::vector<double> force(3 * size_t(n));
    // a version-1 store has no weights (flag 8 meant nothing there)
    const bool has_force_weight = atom_cols > 3 && (flags & kHasForceWeight);
    if (has_force_weight) f.force_weight.resize(size_t(n));
    if (n > 0) {
      read_rows(file, columns().atom[0], offset, n, z.data(), path);
      read_rows(file, columns().atom[1], offset, n, f.pos.data(), path);
      read_rows(file, columns().atom[2], offset, n, force.data(), path);
      if (has_force_weight) read_rows(file, columns().atom[3], offset, n, f.force_weight.data(), path);
    }
    for (int i = 0; i < n; ++i) {
      if (z[i] < 1 || z[i] > kNumElements)
        throw Error(path + ": frame " + std::to_string(k) + " atom " + std::to_string(i) + " has atomic number " +
                    std::to_string(z[i]) + " (corrupt store)");
      f.species.emplace_back(element_symbol(z[i]));
    }
    std::copy(cell, cell + 9, f.cell);
    for (int d = 0; d < 3; ++d) f.pbc[d] = pbc[d] != 0;
    f.has_energy = flags & kHasEnergy;
    f.has_forces = flags & kHasForces;
    f.has_virial = flags & kHasVirial;
    f.energy = f.has_energy ? energy : 0.0;
    if (f.has_virial) std::copy(virial, virial + 9, f.virial);
    if (f.has_forces) f.forces = std::move(force);
    f.weight = weight;
    // a frame store holds what the writers checked: finite numbers, positive weights
    bool finite = std::isfinite(f.energy) && std::isfinite(f.weight) && f.weight > 0;
    for (double v : f.cell) finite = finite && std::isfinite(v);
    for (double v : f.virial) finite = finite && std::isfinite(v);
    for (double v : f.pos) finite = finite && std::isfinite(v);
    for (double v : f.forces) finite = finite && std::isfinite(v);
    for (double v : f.force_weight) finite = finite && std::isfinite(v) && v >= 0;
    if (!finite)
      throw Error(path + ": frame " + std::to_string(k) +
                  " holds a non-finite number, a weight <= 0 or a force weight < 0 (corrupt store)");
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<TrainingFrame> read_store(const std::string& path, const std::vector<int64_t>* which) {
  QuietHdf5 quiet;
  hid_t fapl = fapl_latest(false);
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDONLY | H5F_ACC_SWMR_READ, fapl);
  H5Pclose(fapl);
  if (file < 0) throw Error(path + ": cannot open the frame store (missing, not HDF5, or truncated)");
  std::vector<TrainingFrame> out;
  try {
    out = read_frames(file, path, which);
  } catch (...) {
    H5Fclose(file);
    throw;
  }
  H5Fclose(file);
  return out;
}
}  // namespace

std::vector<TrainingFrame> read_frame_store(const std::string& path) { return read_store(path, nullptr); }

std::vector<TrainingFrame> read_frame_store(const std::string& path, const std::vector<int64_t>& which) {
  return read_store(path, &which);
}

void truncate_frame_store(const std::string& path, int64_t frames) {
  QuietHdf5 quiet;
  hid_t fapl = fapl_latest(true);
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl);
  H5Pclose(fapl);
  if (file < 0) throw Error(path + ": cannot open the frame store to drop frames (missing, not HDF5, or in use)");
  try {
    check_layout(file, path);
    const hsize_t have = extent(file, "frames/natoms");
    if (frames < 0 || hsize_t(frames) > have)
      throw Error(path + ": cannot keep " + std::to_string(frames) + " frames: the store holds " + std::to_string(have));
    // shrinking frames/natoms uncommits the frames after `frames`; their rows (and atoms) are
    // overwritten by the next appends
    hid_t d = H5Dopen2(file, "frames/natoms", H5P_DEFAULT);
    hsize_t dims[2] = {hsize_t(frames), 1};
    const herr_t st = H5Dset_extent(d, dims);
    H5Dclose(d);
    check(st, path, "dropping frames");
    check(H5Fflush(file, H5F_SCOPE_GLOBAL), path, "flushing the frame count");
  } catch (...) {
    H5Fclose(file);
    throw;
  }
  H5Fclose(file);
}

}  // namespace nep
