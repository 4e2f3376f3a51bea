// Fuzz target: the HDF5 frame-store reader (nep-train's .h5 input, fix nep/train's buffer on
// reopen and restart). Two modes, chosen by the first input byte:
//  - structured: a store is written through the raw HDF5 API from the input (columns of any
//    length, width, rank and element type; counts, offsets, atomic numbers and labels mostly
//    coherent, then perturbed), so the reader's own consistency checks are what gets explored;
//  - bytes: a valid store's file image with input bytes written over it (HDF5's own parsing).
// The structured stores are of layout version 1 (no atoms/force_weight): appending upgrades them.
// Properties: bad stores are rejected only by nep::Error naming the path; accepted frames have
// consistent sizes, known elements and finite numbers; on a coherent store reading gives back
// exactly what was written; appending to and truncating an accepted store keep it readable.
#include <fuzzer/FuzzedDataProvider.h>
#include <hdf5.h>
#include <unistd.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "fuzz_check.hpp"
#include "nep/elements.hpp"
#include "nep/data/frame_store.hpp"

using nep_fuzz::require;

namespace {

const std::string& store_path() {
  static const std::string p = "/dev/shm/nep_fuzz_store_" + std::to_string(getpid()) + ".h5";
  return p;
}

struct ColumnSpec {
  const char* name;
  int width;
  bool integer;
};
const ColumnSpec kColumns[] = {{"frames/atom_offset", 1, true}, {"frames/cell", 9, false},   {"frames/pbc", 3, true},
                               {"frames/energy", 1, false},     {"frames/virial", 9, false}, {"frames/flags", 1, true},
                               {"frames/weight", 1, false},     {"frames/natoms", 1, true},  {"atoms/z", 1, true},
                               {"atoms/position", 3, false},    {"atoms/force", 3, false}};
constexpr int kNumColumns = 11;
const hid_t kTypes[] = {H5T_NATIVE_INT64, H5T_NATIVE_DOUBLE, H5T_NATIVE_UINT8, H5T_NATIVE_DOUBLE,
                        H5T_NATIVE_DOUBLE, H5T_NATIVE_UINT8, H5T_NATIVE_DOUBLE, H5T_NATIVE_INT64,
                        H5T_NATIVE_INT32, H5T_NATIVE_DOUBLE, H5T_NATIVE_DOUBLE};

double special_double(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 5)) {
    case 0: return std::numeric_limits<double>::quiet_NaN();
    case 1: return std::numeric_limits<double>::infinity();
    case 2: return -1.0;
    case 3: return 1e300;
    case 4: return 0.0;
    default: return in.ConsumeFloatingPoint<double>();
  }
}
int64_t special_int(FuzzedDataProvider& in) {
  switch (in.ConsumeIntegralInRange(0, 5)) {
    case 0: return -1;
    case 1: return std::numeric_limits<int64_t>::max();
    case 2: return std::numeric_limits<int64_t>::min();
    case 3: return int64_t(1) << 31;
    case 4: return 0;
    default: return in.ConsumeIntegral<int64_t>();
  }
}

// Frames as written (before perturbation), to compare a coherent store with what is read back.
struct Written {
  std::vector<int64_t> natoms, offset;
  std::vector<double> cols[kNumColumns];  // every column as doubles (row-major, width values a row)
};

void write_dataset(hid_t file, int c, const std::vector<double>& values, hsize_t rows, int width, int rank,
                   hid_t type) {
  hsize_t dims[2] = {rows, hsize_t(width)}, maxd[2] = {H5S_UNLIMITED, hsize_t(width)}, chunk[2] = {16, hsize_t(width)};
  hid_t sp = H5Screate_simple(rank, dims, maxd);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, rank, chunk);
  hid_t d = H5Dcreate2(file, kColumns[c].name, type, sp, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (d >= 0 && rows > 0) {
    std::vector<double> buf(values);
    buf.resize(rows * width, 0.0);
    // written from doubles; HDF5 converts to the column's element type (integers saturate)
    H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf.data());
  }
  if (d >= 0) H5Dclose(d);
  H5Pclose(dcpl);
  H5Sclose(sp);
}

// Returns true when the store was left coherent (no perturbation applied).
bool write_structured(FuzzedDataProvider& in, Written& w) {
  const int frames = in.ConsumeIntegralInRange(0, 6);
  int64_t atoms = 0;
  for (int k = 0; k < frames; ++k) {
    const int n = in.ConsumeIntegralInRange(0, 5);
    w.offset.push_back(atoms);
    w.natoms.push_back(n);
    atoms += n;
  }
  for (int k = 0; k < frames; ++k) {
    w.cols[0].push_back(double(w.offset[k]));
    for (int i = 0; i < 9; ++i) w.cols[1].push_back(i % 4 == 0 ? 5.0 + in.ConsumeIntegralInRange(0, 9) : 0.0);
    for (int i = 0; i < 3; ++i) w.cols[2].push_back(in.ConsumeBool() ? 1 : 0);
    w.cols[3].push_back(-3.5 * (k + 1));
    for (int i = 0; i < 9; ++i) w.cols[4].push_back(0.25 * i);
    w.cols[5].push_back(in.ConsumeIntegralInRange(0, 7));
    w.cols[6].push_back(1.0);
    w.cols[7].push_back(double(w.natoms[k]));
  }
  for (int64_t i = 0; i < atoms; ++i) {
    w.cols[8].push_back(in.ConsumeIntegralInRange(1, nep::kNumElements));
    for (int d = 0; d < 3; ++d) w.cols[9].push_back(0.5 * d + 0.125 * double(i));
    for (int d = 0; d < 3; ++d) w.cols[10].push_back(-0.01 * double(i + d));
  }
  std::vector<double> cols[kNumColumns];
  for (int c = 0; c < kNumColumns; ++c) cols[c] = w.cols[c];
  hsize_t rows[kNumColumns];
  int widths[kNumColumns], ranks[kNumColumns];
  hid_t types[kNumColumns];
  bool present[kNumColumns];
  for (int c = 0; c < kNumColumns; ++c) {
    rows[c] = cols[c].size() / kColumns[c].width;
    widths[c] = kColumns[c].width;
    ranks[c] = 2;
    types[c] = kTypes[c];
    present[c] = true;
  }
  bool coherent = true;
  int version = 1;
  bool has_version = true;
  const int edits = in.ConsumeIntegralInRange(0, 4);
  const bool verbose = std::getenv("NEP_FUZZ_VERBOSE") != nullptr;  // replaying a finding
  if (verbose) std::fprintf(stderr, "%d frames, %lld atoms, %d edits\n", frames, (long long)atoms, edits);
  for (int e = 0; e < edits; ++e) {
    coherent = false;
    const int c = in.ConsumeIntegralInRange(0, kNumColumns - 1);
    const int kind = in.ConsumeIntegralInRange(0, 7);
    if (verbose) std::fprintf(stderr, "edit %d of column %s\n", kind, kColumns[c].name);
    switch (kind) {
      case 0: {  // one value changed
        if (cols[c].empty()) break;
        const size_t at = in.ConsumeIntegralInRange<size_t>(0, cols[c].size() - 1);
        cols[c][at] = kColumns[c].integer ? double(special_int(in)) : special_double(in);
        break;
      }
      case 1: rows[c] = in.ConsumeIntegralInRange<hsize_t>(0, rows[c] + 3); break;  // shorter/longer column
      case 2: widths[c] = in.ConsumeIntegralInRange(1, 10); break;
      case 3: ranks[c] = 1; break;
      case 4: {
        const hid_t other[] = {H5T_NATIVE_INT8, H5T_NATIVE_INT32, H5T_NATIVE_INT64, H5T_NATIVE_FLOAT, H5T_NATIVE_DOUBLE};
        types[c] = other[in.ConsumeIntegralInRange(0, 4)];
        break;
      }
      case 5: present[c] = false; break;
      case 6: version = in.ConsumeIntegral<int>(); break;
      default: has_version = false; break;
    }
  }
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  H5Pset_libver_bounds(fapl, H5F_LIBVER_LATEST, H5F_LIBVER_LATEST);
  hid_t file = H5Fcreate(store_path().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  H5Pclose(fapl);
  if (file < 0) nep_fuzz::fail("cannot create " + store_path());
  if (has_version) {
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(file, "version", H5T_NATIVE_INT, sp, H5P_DEFAULT, H5P_DEFAULT);
    H5Awrite(a, H5T_NATIVE_INT, &version);
    H5Aclose(a);
    H5Sclose(sp);
  }
  H5Gclose(H5Gcreate2(file, "frames", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  H5Gclose(H5Gcreate2(file, "atoms", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
  for (int c = 0; c < kNumColumns; ++c)
    if (present[c]) write_dataset(file, c, cols[c], rows[c], widths[c], ranks[c], types[c]);
  H5Fclose(file);
  return coherent;
}

std::vector<uint8_t> valid_image() {
  static std::vector<uint8_t> image;
  if (!image.empty()) return image;
  const std::string p = store_path();
  {
    nep::FrameStore s = nep::FrameStore::create(p);
    for (int k = 0; k < 3; ++k) {
      nep::TrainingFrame f;
      f.species = {"Si", "Si", "C"};
      f.pos = {0, 0, 0, 1.5, 1.5, 0.1 * k, 3, 0, 1};
      f.cell[0] = f.cell[4] = f.cell[8] = 6.0;
      f.has_energy = f.has_forces = f.has_virial = true;
      f.energy = -12.5 + k;
      f.forces.assign(9, 0.01 * k);
      s.append(f);
    }
  }
  FILE* fp = std::fopen(p.c_str(), "rb");
  int ch;
  while ((ch = std::fgetc(fp)) != EOF) image.push_back(uint8_t(ch));
  std::fclose(fp);
  return image;
}

void check_frames(const std::vector<nep::TrainingFrame>& frames) {
  for (const auto& f : frames) {
    const size_t n = f.species.size();
    require(f.pos.size() == 3 * n && (!f.has_forces || f.forces.size() == 3 * n), "array sizes");
    require(f.force_weight.empty() || f.force_weight.size() == n, "force_weight size");
    for (double v : f.force_weight) require(std::isfinite(v) && v >= 0, "bad force weight accepted");
    for (const auto& s : f.species) require(nep::atomic_number(s) > 0, "unknown element '" + s + "' accepted");
    for (double v : f.pos) require(std::isfinite(v), "non-finite position accepted");
    for (double v : f.cell) require(std::isfinite(v), "non-finite cell accepted");
    for (double v : f.forces) require(std::isfinite(v), "non-finite force accepted");
    for (double v : f.virial) require(std::isfinite(v), "non-finite virial accepted");
    require(std::isfinite(f.energy) && std::isfinite(f.weight) && f.weight > 0, "bad energy or weight accepted");
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  const std::string& path = store_path();
  Written w;
  bool coherent = false;
  if (in.ConsumeBool()) {
    coherent = write_structured(in, w);
  } else {
    std::vector<uint8_t> image = valid_image();
    const int edits = in.ConsumeIntegralInRange(1, 8);
    for (int e = 0; e < edits && in.remaining_bytes() > 0; ++e) {
      const size_t at = in.ConsumeIntegralInRange<size_t>(0, image.size() - 1);
      image[at] = in.ConsumeIntegral<uint8_t>();
    }
    if (in.ConsumeBool()) image.resize(in.ConsumeIntegralInRange<size_t>(0, image.size()));
    FILE* fp = std::fopen(path.c_str(), "wb");
    std::fwrite(image.data(), 1, image.size(), fp);
    std::fclose(fp);
  }

  std::vector<nep::TrainingFrame> frames;
  const bool ok = nep_fuzz::accepts(path, [&] { frames = nep::read_frame_store(path); });
  if (coherent) {
    require(ok, "a coherent store was rejected");
    require(frames.size() == w.natoms.size(), "frame count");
    for (size_t k = 0; k < frames.size(); ++k) {
      const auto& f = frames[k];
      require(int64_t(f.species.size()) == w.natoms[k], "atom count");
      require(f.energy == ((w.cols[5][k] >= 0 && (int(w.cols[5][k]) & 1)) ? w.cols[3][k] : 0.0), "energy");
      for (int64_t i = 0; i < w.natoms[k]; ++i) {
        const int64_t a = w.offset[k] + i;
        require(nep::atomic_number(f.species[i]) == int(w.cols[8][a]), "atomic number");
        for (int d = 0; d < 3; ++d) require(f.pos[3 * i + d] == w.cols[9][3 * a + d], "position");
      }
    }
  }
  if (!ok) return 0;
  check_frames(frames);
  if (!frames.empty()) {
    std::vector<int64_t> which;
    const int nsel = in.ConsumeIntegralInRange(0, 4);
    for (int s = 0; s < nsel; ++s) which.push_back(in.ConsumeIntegralInRange<int64_t>(-1, int64_t(frames.size())));
    std::vector<nep::TrainingFrame> some;
    if (nep_fuzz::accepts(path, [&] { some = nep::read_frame_store(path, which); })) {
      require(some.size() == which.size(), "selection size");
      for (size_t s = 0; s < which.size(); ++s)
        require(some[s].pos == frames[which[s]].pos && some[s].species == frames[which[s]].species, "selection content");
    }
  }
  // appending to an accepted store keeps every frame and adds one
  bool appended = false;
  nep::TrainingFrame extra;
  extra.species = {"O", "H"};
  extra.pos = {0, 0, 0, 0.9, 0.1, 0.2};
  extra.cell[0] = extra.cell[4] = extra.cell[8] = 4.0;
  nep_fuzz::accepts(path, [&] {
    nep::FrameStore s = nep::FrameStore::open_append(path);
    s.append(extra);
    appended = true;
  });
  if (appended) {
    std::vector<nep::TrainingFrame> after;
    if (nep_fuzz::accepts(path, [&] { after = nep::read_frame_store(path); })) {
      check_frames(after);
      require(!after.empty() && after.back().pos == extra.pos && after.back().species == extra.species,
              "the appended frame is not the last one read");
    }
    if (coherent) {
      require(after.size() == frames.size() + 1, "append to a coherent store lost or added frames");
      nep_fuzz::accepts(path, [&] { nep::truncate_frame_store(path, int64_t(frames.size())); });
      std::vector<nep::TrainingFrame> cut;
      require(nep_fuzz::accepts(path, [&] { cut = nep::read_frame_store(path); }) && cut.size() == frames.size(),
              "truncating the appended frame");
    }
  }
  return 0;
}
