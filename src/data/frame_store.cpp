// HDF5 C API implementation of the frame store: the writer (FrameStore) and the version-1 upgrade;
// the reader is frame_store_read.cpp, the shared layout frame_store_layout.hpp.
#include "nep/data/frame_store.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "nep/elements.hpp"
#include "nep/error.hpp"
#include "frame_store_layout.hpp"

namespace nep {
using namespace store;
namespace {
constexpr const char* kFormat = "lammps-nep frames";
}  // namespace

namespace store {

void check(herr_t status, const std::string& path, const std::string& what) {
  if (status < 0) throw Error(path + ": HDF5 error while " + what);
}

hid_t fapl_latest(bool clear_crash_flags) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);  // needed for SWMR
  // SWMR opens re-read metadata whose checksum fails (a writer may be mid-write); HDF5's default
  // of 100 attempts with growing sleeps made a corrupt store take minutes to reject (found by
  // tests/fuzz/fuzz_frame_store). 8 attempts still cover a racing writer.
  H5Pset_metadata_read_attempts(fapl, 8);
  // A write that failed for lack of space (disk full, quota, file-size limit) leaves the
  // superblock's end-of-allocation past the end of the file, and HDF5 then refuses to open it
  // ("truncated file") although every committed frame lies below the end of the file. Skip that
  // check (as h5clear --increment does); reads past the end see zeros, which only uncommitted
  // rows can occupy. tests: test_frame_store FullDiskLosesNoCommittedFrame.
  hbool_t skip = 1;
  H5Pset(fapl, "skip_eof_check", &skip);
  if (clear_crash_flags) {
    // what h5clear does: accept a file whose SWMR writer died without closing it
    hbool_t clear = 1;
    H5Pset(fapl, "clear_status_flags", &clear);
  }
  return fapl;
}

hsize_t extent(hid_t file, const char* name) {
  hid_t d = H5Dopen2(file, name, H5P_DEFAULT);
  if (d < 0) return 0;
  H5Drefresh(d);
  hid_t sp = H5Dget_space(d);
  hsize_t dims[2] = {0, 0};
  H5Sget_simple_extent_dims(sp, dims, nullptr);
  H5Sclose(sp);
  H5Dclose(d);
  return dims[0];
}

void read_rows(hid_t file, const Column& c, hsize_t row, hsize_t n, void* data, const std::string& path) {
  if (n == 0) return;
  hid_t d = H5Dopen2(file, c.name, H5P_DEFAULT);
  if (d < 0) throw Error(path + ": dataset " + c.name + " missing (not a lammps-nep frame store?)");
  H5Drefresh(d);
  hid_t sp = H5Dget_space(d);
  hsize_t start[2] = {row, 0}, count[2] = {n, hsize_t(c.width)};
  const herr_t sel = H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t mem = H5Screate_simple(2, count, nullptr);
  const herr_t st = sel < 0 ? sel : H5Dread(d, c.type, mem, sp, H5P_DEFAULT, data);
  H5Sclose(mem);
  H5Sclose(sp);
  H5Dclose(d);
  check(st, path, std::string("reading ") + c.name);
}

int layout_version(hid_t file) {
  if (H5Aexists(file, "version") <= 0) return -1;
  hid_t a = H5Aopen(file, "version", H5P_DEFAULT);
  int version = -1;
  if (H5Aread(a, H5T_NATIVE_INT, &version) < 0) version = -1;
  H5Aclose(a);
  return version;
}

int check_layout(hid_t file, const std::string& path) {
  if (H5Aexists(file, "version") <= 0) throw Error(path + ": not a lammps-nep frame store (no 'version' attribute)");
  const int version = layout_version(file);
  if (version != 1 && version != FrameStore::kLayoutVersion)
    throw Error(path + ": frame store layout version " + std::to_string(version) +
                " is not supported (this build reads 1 and " + std::to_string(FrameStore::kLayoutVersion) + ")");
  // every column: present, 2-D, the layout's width and element type (HDF5 would otherwise convert
  // a float32 or int8 column silently, losing digits: found by tests/fuzz/fuzz_frame_store)
  auto check_column = [&](const Column& c) {
    hid_t d = H5Dopen2(file, c.name, H5P_DEFAULT);
    if (d < 0) throw Error(path + ": dataset " + c.name + " missing (not a lammps-nep frame store?)");
    hid_t sp = H5Dget_space(d), ty = H5Dget_type(d);
    hsize_t dims[2] = {0, 0};
    const int rank = H5Sget_simple_extent_ndims(sp);
    if (rank == 2) H5Sget_simple_extent_dims(sp, dims, nullptr);
    const bool type_ok = H5Tequal(ty, c.type) > 0;
    H5Tclose(ty);
    H5Sclose(sp);
    H5Dclose(d);
    if (rank != 2 || dims[1] != hsize_t(c.width))
      throw Error(path + ": dataset " + c.name + " is not " + std::to_string(c.width) +
                  " values a row (corrupt store or another layout)");
    if (!type_ok) throw Error(path + ": dataset " + c.name + " has the wrong element type (corrupt store or another layout)");
  };
  for (const auto& c : columns().frame) check_column(c);
  for (int c = 0; c < atom_columns(version); ++c) check_column(columns().atom[c]);
  return version;
}

}  // namespace store

namespace {
// An empty chunked column of `rows` rows. atoms/force_weight reads 1.0 where never written (its
// fill value): a version-1 store's atoms get it without a write, and so does any row an
// interrupted append left.
void create_column(hid_t file, const Column& c, hsize_t chunk_rows, hsize_t rows, const std::string& path) {
  hsize_t dims[2] = {rows, hsize_t(c.width)}, maxd[2] = {H5S_UNLIMITED, hsize_t(c.width)},
          chunk[2] = {chunk_rows, hsize_t(c.width)};
  hid_t sp = H5Screate_simple(2, dims, maxd);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 2, chunk);
  const double one = 1.0;
  if (std::strcmp(c.name, "atoms/force_weight") == 0)
    H5Pset_fill_value(dcpl, H5T_NATIVE_DOUBLE, &one);
  hid_t d = H5Dcreate2(file, c.name, c.type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  H5Pclose(dcpl);
  H5Sclose(sp);
  if (d < 0) throw Error(path + ": cannot create dataset " + c.name);
  H5Dclose(d);
}

}  // namespace

FrameStore::FrameStore(const std::string& path, long file) : path_(path), file_(file) {}

FrameStore::FrameStore(FrameStore&& o) noexcept : path_(o.path_), file_(o.file_), frames_(o.frames_), atoms_(o.atoms_) {
  for (int c = 0; c < kColumns; ++c) {
    dset_[c] = o.dset_[c];
    rows_[c] = o.rows_[c];
    o.dset_[c] = -1;
  }
  o.file_ = -1;
}

void FrameStore::close_columns() {
  for (long& d : dset_)
    if (d >= 0) {
      H5Dclose(d);
      d = -1;
    }
}

FrameStore::~FrameStore() {
  if (file_ < 0) return;
  QuietHdf5 quiet;
  close_columns();
  if (file_ >= 0) H5Fclose(file_);
}

// Write rows [row, row+n) of column c (0-7 frame columns, 8-11 atom columns) through a handle kept
// open. The commit column (7, frames/natoms) is extended exactly; the others in doubling steps
// (rows past the commit count are free space that later appends overwrite).
void FrameStore::write_column(int c, uint64_t row, uint64_t n, const void* data) {
  const Column& col = c < 8 ? columns().frame[c] : columns().atom[c - 8];
  if (dset_[c] < 0) {
    // Appends touch only the last chunk (or two) of a column: a raw-data chunk cache of 3 slots
    // keeps just those. HDF5's default (521 slots, 1 MB) kept hundreds of old frame-column chunks,
    // and every flush walked them all: appends slowed from 100 to 330 us between 10k and 100k
    // frames; with 3 slots they stay flat (docs/benchmarks.md, bench_frame_store).
    hid_t dapl = H5Pcreate(H5P_DATASET_ACCESS);
    H5Pset_chunk_cache(dapl, 3, 256 * 1024, 1.0);
    hid_t d = H5Dopen2(file_, col.name, dapl);
    H5Pclose(dapl);
    if (d < 0) throw Error(path_ + ": dataset " + col.name + " missing (not a lammps-nep frame store?)");
    hid_t sp = H5Dget_space(d);
    hsize_t dims[2] = {0, 0};
    H5Sget_simple_extent_dims(sp, dims, nullptr);
    H5Sclose(sp);
    dset_[c] = d;
    rows_[c] = dims[0];
  }
  const hid_t d = dset_[c];
  if (rows_[c] < row + n) {
    const hsize_t want = c == 7 ? row + n : std::max<hsize_t>(row + n, 2 * rows_[c]);
    hsize_t nd[2] = {want, hsize_t(col.width)};
    check(H5Dset_extent(d, nd), path_, std::string("extending ") + col.name);
    rows_[c] = want;
  }
  if (n == 0) return;
  hid_t sp = H5Dget_space(d);
  hsize_t start[2] = {row, 0}, count[2] = {n, hsize_t(col.width)};
  H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t mem = H5Screate_simple(2, count, nullptr);
  const herr_t st = H5Dwrite(d, col.type, mem, sp, H5P_DEFAULT, data);
  H5Sclose(mem);
  H5Sclose(sp);
  check(st, path_, std::string("writing ") + col.name);
}

FrameStore FrameStore::create(const std::string& path) {
  QuietHdf5 quiet;
  // The empty store is built under a temporary name and renamed into place, then opened for
  // appending: a writer killed while creating leaves no half-made file at `path` (found by
  // test_frame_store's kill trials under load: "cannot open the frame store").
  const std::string tmp = path + ".creating." + std::to_string(getpid());
  hid_t fapl = fapl_latest(false);
  hid_t file = H5Fcreate(tmp.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (file < 0) throw Error(path + ": cannot create the frame store (directory missing or not writable?)");
  try {
    FrameStore s(tmp, file);  // closes the file when it goes
    build_empty_layout(file, path);
  } catch (...) {
    std::remove(tmp.c_str());
    throw;
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw Error(path + ": cannot create the frame store (" + std::strerror(err) + ")");
  }
  return open_append(path);
}

void FrameStore::build_empty_layout(long file_id, const std::string& path) {
  const hid_t file = static_cast<hid_t>(file_id);
  {
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t str = H5Tcopy(H5T_C_S1);
    H5Tset_size(str, std::char_traits<char>::length(kFormat));
    hid_t a = H5Acreate2(file, "format", str, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, str, kFormat);
    H5Aclose(a);
    H5Tclose(str);
    int version = kLayoutVersion;
    a = H5Acreate2(file, "version", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT, &version);
    H5Aclose(a);
    H5Sclose(sp);
  }
  H5Gclose(H5Gcreate2(file, "frames", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Gclose(H5Gcreate2(file, "atoms", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  for (const auto& c : columns().frame) create_column(file, c, 256, 0, path);
  // 1024 atoms a chunk (24 KB of positions): every flush rewrites the partly filled last chunk of
  // each column, so smaller chunks write less (8192-atom chunks: 85 us an append, 1024: 65 us)
  for (const auto& c : columns().atom) create_column(file, c, 1024, 0, path);
}

// Version 1 -> 2: adds atoms/force_weight (1.0 for every atom row there is, by its fill value),
// then sets the version. Opened without SWMR (HDF5 1.10 cannot add datasets or change attributes
// under SWMR); the column is flushed before the version is written, so a writer killed half-way
// leaves a version-1 store (perhaps with the column), and the next open_append redoes it.
void FrameStore::upgrade_v1(const std::string& path) {
  hid_t fapl = fapl_latest(false);
  const hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR, fapl);
  H5Pclose(fapl);
  if (file < 0) throw Error(path + ": cannot open the version-1 frame store to upgrade it (in use?)");
  try {
    if (check_layout(file, path) == 1) {
      const Column& weight = columns().atom[3];
      hsize_t rows = 0;
      for (int c = 0; c < atom_columns(1); ++c) rows = std::max(rows, extent(file, columns().atom[c].name));
      if (H5Lexists(file, weight.name, H5P_DEFAULT) > 0)  // left by an interrupted upgrade
        check(H5Ldelete(file, weight.name, H5P_DEFAULT), path, "removing a half-made atoms/force_weight");
      create_column(file, weight, 1024, rows, path);
      check(H5Fflush(file, H5F_SCOPE_GLOBAL), path, "flushing atoms/force_weight");
      hid_t a = H5Aopen(file, "version", H5P_DEFAULT);
      const int version = 2;
      const herr_t st = a < 0 ? a : H5Awrite(a, H5T_NATIVE_INT, &version);
      if (a >= 0) H5Aclose(a);
      check(st, path, "writing layout version 2");
    }
  } catch (...) {
    H5Fclose(file);
    throw;
  }
  check(H5Fclose(file), path, "closing the upgraded frame store");
}

FrameStore FrameStore::open_append(const std::string& path) {
  QuietHdf5 quiet;
  // A writer that closed the file cleanly leaves no open-for-write flag: open as is.
  hid_t fapl = fapl_latest(false);
  hid_t file = H5Fopen(path.c_str(), H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE, fapl);
  H5Pclose(fapl);
  if (file < 0) {
    // The last writer died (kill -9, a failed write): clear its flag, as h5clear does. Its last
    // flush may have recorded new chunks or index blocks at or past the recorded end of allocation
    // without writing them (found by test_frame_store's kill trials: the next append failed
    // reading its half-filled chunk, "addr overflow"). Move the end of allocation past anything
    // one append allocates (h5clear --increment); those bytes read as zeros, and new space is
    // allocated after them. Costs 1 MiB of file per crash.
    fapl = fapl_latest(true);
    file = H5Fopen(path.c_str(), H5F_ACC_RDWR | H5F_ACC_SWMR_WRITE, fapl);
    H5Pclose(fapl);
    if (file >= 0 && H5Fincrement_filesize(file, hsize_t(1) << 20) < 0) {
      H5Fclose(file);
      throw Error(path + ": cannot repair the frame store left by a crashed writer");
    }
  }
  if (file < 0) throw Error(path + ": cannot open the frame store for appending (missing, not HDF5, or in use)");
  if (layout_version(file) == 1) {  // upgrade in place, then open as usual (version 2 then)
    H5Fclose(file);
    upgrade_v1(path);
    return open_append(path);
  }
  FrameStore s(path, file);
  check_layout(file, path);
  s.init_counts();
  return s;
}

void FrameStore::init_counts() {
  // complete frames = length of frames/natoms (written last); rows past a crashed append are
  // overwritten by the next append
  frames_ = static_cast<int64_t>(extent(file_, "frames/natoms"));
  atoms_ = 0;
  if (frames_ > 0) {
    int64_t off = 0, n = 0;
    read_rows(file_, columns().frame[0], frames_ - 1, 1, &off, path_);
    read_rows(file_, columns().frame[7], frames_ - 1, 1, &n, path_);
    hsize_t avail = extent(file_, "atoms/z");
    for (const auto& c : columns().atom) avail = std::min(avail, extent(file_, c.name));
    // appends go after the last frame's atoms: a corrupt last row must not make them overwrite others
    if (off < 0 || n < 0 || hsize_t(n) > avail || hsize_t(off) > avail - hsize_t(n))
      throw Error(path_ + ": the last frame points outside the atom arrays (corrupt store)");
    atoms_ = off + n;
  }
}

void FrameStore::append(const TrainingFrame& f) {
  if (file_ < 0) throw Error(path_ + ": the frame store was closed after a failed write; reopen it to append");
  QuietHdf5 quiet;
  const int n = f.natoms();
  if (f.pos.size() != 3 * size_t(n) || (f.has_forces && f.forces.size() != 3 * size_t(n)) ||
      (!f.force_weight.empty() && f.force_weight.size() != size_t(n)))
    throw Error(path_ + ": frame has inconsistent array sizes");
  for (double w : f.force_weight)
    if (!(std::isfinite(w) && w >= 0)) throw Error(path_ + ": frame has a force weight that is not finite and >= 0");
  std::vector<int32_t> z(n);
  for (int i = 0; i < n; ++i) {
    z[i] = atomic_number(f.species[i]);
    if (z[i] == 0) throw Error(path_ + ": unknown element '" + f.species[i] + "' in frame");
  }
  reserve_for_append(n);
  try {
    append_rows(f, z);
  } catch (const Error& e) {
    // a failed write (disk full, quota, file-size limit, I/O error): close the file now so that
    // nothing later (HDF5's exit handler included) writes to it again; committed frames stay
    // readable (see fapl_latest)
    const int err = errno;
    close_columns();
    H5Fclose(file_);
    file_ = -1;
    if (err == ENOSPC || err == EFBIG || err == EDQUOT || err == EIO)
      throw Error(std::string(e.what()) + " (" + std::strerror(err) + "); the frames written before this one are intact");
    throw;
  }
}

// HDF5 1.10 cannot recover from a write that fails half-way: the file can then be neither flushed
// nor closed, and HDF5's exit handler crashes the process (seen with a file-size limit). So the
// space an append may take (a new chunk of every column, and metadata) is claimed before HDF5
// writes any of it: a full disk, a quota or a file-size limit stops the append here, with the store
// intact, open and closable. Reserved blocks past the end of the file (fallocate KEEP_SIZE) are
// used by later appends.
void FrameStore::reserve_for_append(int natoms) {
  uint64_t need = 64 * 1024;  // chunk indexes, object headers, superblock
  for (const auto& c : columns().frame) need += 256ull * c.width * H5Tget_size(c.type);  // chunks of 256 frames
  for (const auto& c : columns().atom)  // chunks of 1024 atoms: a frame may start a chunk and span more
    need += (static_cast<uint64_t>(natoms) / 1024 + 2) * 1024ull * c.width * H5Tget_size(c.type);
  int* fd = nullptr;
  struct stat st;
  if (H5Fget_vfd_handle(file_, H5P_DEFAULT, reinterpret_cast<void**>(&fd)) < 0 || !fd || fstat(*fd, &st) != 0) return;
  auto no_room = [&](int err) {
    return Error(path_ + ": no room for the next frame (" + std::strerror(err) +
                 "); the frames written before this one are intact");
  };
  struct rlimit rl;
  if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY &&
      static_cast<uint64_t>(st.st_size) + need > static_cast<uint64_t>(rl.rlim_cur))
    throw no_room(EFBIG);
  if (fallocate(*fd, FALLOC_FL_KEEP_SIZE, st.st_size, static_cast<off_t>(need)) == 0) return;
  const int err = errno;
  if (err == ENOSPC || err == EDQUOT || err == EFBIG) throw no_room(err);
  // a file system that cannot reserve (EOPNOTSUPP): at least see that the space is there now
  struct statvfs vs;
  if (fstatvfs(*fd, &vs) == 0 && static_cast<uint64_t>(vs.f_bavail) * vs.f_frsize < need) throw no_room(ENOSPC);
}

void FrameStore::append_rows(const TrainingFrame& f, const std::vector<int32_t>& z) {
  errno = 0;
  const int n = f.natoms();
  std::vector<double> force = f.has_forces ? f.forces : std::vector<double>(3 * size_t(n), 0.0);
  write_column(8, atoms_, n, z.data());
  write_column(9, atoms_, n, f.pos.data());
  write_column(10, atoms_, n, force.data());
  const std::vector<double> ones(f.force_weight.empty() ? size_t(n) : 0, 1.0);
  write_column(11, atoms_, n, f.force_weight.empty() ? ones.data() : f.force_weight.data());
  const int64_t offset = atoms_, natoms = n;
  const uint8_t pbc[3] = {uint8_t(f.pbc[0]), uint8_t(f.pbc[1]), uint8_t(f.pbc[2])};
  const uint8_t flags = (f.has_energy ? kHasEnergy : 0) | (f.has_forces ? kHasForces : 0) |
                        (f.has_virial ? kHasVirial : 0) | (f.force_weight.empty() ? 0 : kHasForceWeight);
  const hsize_t r = frames_;
  write_column(0, r, 1, &offset);
  write_column(1, r, 1, f.cell);
  write_column(2, r, 1, pbc);
  write_column(3, r, 1, &f.energy);
  write_column(4, r, 1, f.virial);
  write_column(5, r, 1, &flags);
  write_column(6, r, 1, &f.weight);
  check(H5Fflush(file_, H5F_SCOPE_GLOBAL), path_, "flushing atoms and frame data");
  write_column(7, r, 1, &natoms);  // commits the frame
  check(H5Fflush(file_, H5F_SCOPE_GLOBAL), path_, "flushing the frame count");
  ++frames_;
  atoms_ += n;
}

}  // namespace nep
