// HDF5 frame store: exact round trip, append after reopen, reading while another process appends,
// and kill -9 of a writer at random moments (every flushed frame survives, appending resumes).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "nep/error.hpp"
#include "nep/data/frame_store.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

std::string tmp_path(const std::string& name) {
  const fs::path dir = nep_test::scratch_dir("nep_store_test_");
  return (dir / name).string();
}

std::vector<nep::TrainingFrame> sample_frames() {
  auto a = nep::read_training_xyz(nep_test::data_path("train/mixed_WH-Cu-C_gpumd-outcar2xyz-multiframe-example_7frames_EFV_train.xyz"));
  const auto b = nep::read_training_xyz(nep_test::data_path("train/C_graphene-graphite_NEP_CPU-test_dftd3_13frames_EFV_train.xyz"));
  const auto c = nep::read_training_xyz(nep_test::data_path("train/CrCoNi_torchnep_5frames_structures-only.xyz"));
  a.insert(a.end(), b.begin(), b.end());
  a.insert(a.end(), c.begin(), c.end());
  return a;
}

void expect_same(const nep::TrainingFrame& x, const nep::TrainingFrame& y) {
  EXPECT_EQ(x.species, y.species);
  EXPECT_EQ(x.pos, y.pos);
  EXPECT_EQ(x.has_energy, y.has_energy);
  EXPECT_EQ(x.has_forces, y.has_forces);
  EXPECT_EQ(x.has_virial, y.has_virial);
  if (x.has_energy) EXPECT_EQ(x.energy, y.energy);
  if (x.has_forces) EXPECT_EQ(x.forces, y.forces);
  for (int k = 0; k < 9; ++k) {
    EXPECT_EQ(x.cell[k], y.cell[k]);
    if (x.has_virial) EXPECT_EQ(x.virial[k], y.virial[k]);
  }
  EXPECT_EQ(x.weight, y.weight);
  EXPECT_EQ(x.force_weight, y.force_weight);
}

TEST(FrameStore, RoundTripIsExact) {
  const auto frames = sample_frames();
  const std::string path = tmp_path("roundtrip.h5");
  {
    auto store = nep::FrameStore::create(path);
    for (const auto& f : frames) store.append(f);
    EXPECT_EQ(store.size(), static_cast<int64_t>(frames.size()));
  }
  const auto back = nep::read_frame_store(path);
  ASSERT_EQ(back.size(), frames.size());
  for (size_t k = 0; k < frames.size(); ++k) expect_same(back[k], frames[k]);
}

TEST(FrameStore, ReopenAppends) {
  const auto frames = sample_frames();
  const std::string path = tmp_path("reopen.h5");
  {
    auto store = nep::FrameStore::create(path);
    for (int k = 0; k < 3; ++k) store.append(frames[k]);
  }
  {
    auto store = nep::FrameStore::open_append(path);
    EXPECT_EQ(store.size(), 3);
    for (int k = 3; k < 6; ++k) store.append(frames[k]);
  }
  const auto back = nep::read_frame_store(path);
  ASSERT_EQ(back.size(), 6u);
  for (int k = 0; k < 6; ++k) expect_same(back[k], frames[k]);
}

// child process: create the store and append frames[k % n] forever (or `limit` frames); writes
// one byte to ready_fd once the file is open (SWMR: the writer opens before any reader)
[[noreturn]] void writer_child(const std::string& path, const std::vector<nep::TrainingFrame>& frames, int limit,
                               bool append_to_existing, int ready_fd = -1) {
  try {
    auto store = append_to_existing ? nep::FrameStore::open_append(path) : nep::FrameStore::create(path);
    if (ready_fd >= 0 && write(ready_fd, "r", 1) != 1) _exit(4);
    for (int k = static_cast<int>(store.size()); limit < 0 || k < limit; ++k) store.append(frames[k % frames.size()]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "writer: %s\n", e.what());
    _exit(3);
  }
  _exit(0);
}

TEST(FrameStore, ReadableWhileAnotherProcessAppends) {
  const auto frames = sample_frames();
  const std::string path = tmp_path("concurrent.h5");
  { auto s = nep::FrameStore::create(path); }
  int ready[2];
  ASSERT_EQ(pipe(ready), 0);
  const pid_t pid = fork();
  if (pid == 0) writer_child(path, frames, 400, true, ready[1]);
  char byte = 0;
  ASSERT_EQ(read(ready[0], &byte, 1), 1) << "writer did not open the store";
  size_t last = 0;
  int reads = 0, status = 0;
  for (; waitpid(pid, &status, WNOHANG) == 0; ++reads) {
    const auto got = nep::read_frame_store(path);
    EXPECT_GE(got.size(), last);
    for (size_t k = 0; k < got.size(); k += 37) expect_same(got[k], frames[k % frames.size()]);
    last = got.size();
  }
  ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "writer failed, status " << status;
  EXPECT_GT(reads, 0);
  EXPECT_EQ(nep::read_frame_store(path).size(), 400u);
}

TEST(FrameStore, KilledWriterLosesNoFlushedFrameAndAppendingResumes) {
  const auto frames = sample_frames();
  std::mt19937 rng(2024);
  int nonempty_late = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const std::string path = tmp_path("killed_" + std::to_string(trial) + ".h5");
    // even trials: killed at a random early moment (possibly while the store is being created);
    // odd trials: once the first frame is readable, then at a random moment of the stream, so the
    // kills land mid-stream however slow the machine (sanitizers, load). Those read only after the
    // writer says the store is open: a reader holding the new file while the writer opens it for
    // appending would make the writer fail (HDF5's file lock), not test a kill.
    int ready[2] = {-1, -1};
    if (trial % 2 == 1) ASSERT_EQ(pipe(ready), 0);
    const pid_t pid = fork();
    if (pid == 0) writer_child(path, frames, -1, false, ready[1]);
    if (trial % 2 == 1) {
      char byte = 0;
      ASSERT_EQ(read(ready[0], &byte, 1), 1) << "trial " << trial << ": the writer did not open the store";
      close(ready[0]);
      close(ready[1]);
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
      size_t seen = 0;
      while (seen == 0 && std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
        if (access(path.c_str(), F_OK) != 0) continue;
        try {
          seen = nep::read_frame_store(path).size();
        } catch (const std::exception&) {
        }
      }
      ASSERT_GT(seen, 0u) << "trial " << trial << ": no frame written within 120 s";
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 200));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited by itself, status " << status;
    std::vector<nep::TrainingFrame> got;
    if (access(path.c_str(), F_OK) != 0) {
      // killed while creating: the empty store is built under a temporary name and renamed into
      // place, so there is no half-made file at `path`; a new store starts from scratch
      nep::FrameStore::create(path);
    }
    ASSERT_NO_THROW(got = nep::read_frame_store(path)) << "trial " << trial;
    for (size_t k = 0; k < got.size(); ++k) expect_same(got[k], frames[k % frames.size()]);
    if (trial % 2 == 1) nonempty_late += !got.empty();
    // resume: the next append goes right after the last complete frame
    {
      auto store = nep::FrameStore::open_append(path);
      EXPECT_EQ(store.size(), static_cast<int64_t>(got.size()));
      store.append(frames[got.size() % frames.size()]);
    }
    const auto again = nep::read_frame_store(path);
    ASSERT_EQ(again.size(), got.size() + 1);
    expect_same(again.back(), frames[got.size() % frames.size()]);
    std::remove(path.c_str());
  }
  EXPECT_EQ(nonempty_late, 10);  // a kill after the first frame never loses it
}

// Disk full while appending (simulated with RLIMIT_FSIZE in a child process, SIGXFSZ ignored so
// write() fails with EFBIG): the failing append throws nep::Error, and every frame committed
// before it stays readable; reopening (with room again) appends after them.
TEST(FrameStore, FullDiskLosesNoCommittedFrame) {
  const auto frames = sample_frames();
  for (const long limit : {1200000L, 2500000L, 5000000L}) {
    const std::string path = tmp_path("full_" + std::to_string(limit) + ".h5");
    const std::string count_path = path + ".count";
    std::fflush(nullptr);  // the child exits through exit(): nothing of ours may sit in its buffers
    const pid_t pid = fork();
    if (pid == 0) {
      signal(SIGXFSZ, SIG_IGN);
      struct rlimit rl = {rlim_t(limit), rlim_t(limit)};
      setrlimit(RLIMIT_FSIZE, &rl);
      int appended = 0;
      std::string what;
      try {
        auto store = nep::FrameStore::create(path);
        for (int k = 0; k < 100000; ++k) {
          store.append(frames[k % frames.size()]);
          ++appended;
        }
      } catch (const nep::Error& e) {
        what = e.what();
      }
      FILE* fp = std::fopen(count_path.c_str(), "w");  // tiny: under the limit
      std::fprintf(fp, "%d\n%s\n", appended, what.c_str());
      std::fclose(fp);
      exit(what.empty() ? 3 : 0);  // exit, not _exit: HDF5 must not crash at exit either
    }
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "status " << status << " at limit " << limit;
    std::ifstream in(count_path);
    int appended = 0;
    std::string what;
    in >> appended;
    std::getline(in >> std::ws, what);
    EXPECT_NE(what.find(path), std::string::npos) << what;
    EXPECT_NE(what.find("File too large); the frames written before this one are intact"), std::string::npos) << what;
    EXPECT_GT(appended, 0) << what;
    std::vector<nep::TrainingFrame> got;
    ASSERT_NO_THROW(got = nep::read_frame_store(path)) << "limit " << limit << " after: " << what;
    ASSERT_EQ(got.size(), size_t(appended)) << what;
    for (size_t k = 0; k < got.size(); ++k) expect_same(got[k], frames[k % frames.size()]);
    {
      auto store = nep::FrameStore::open_append(path);
      EXPECT_EQ(store.size(), appended);
      store.append(frames[0]);
    }
    EXPECT_EQ(nep::read_frame_store(path).size(), size_t(appended) + 1);
  }
}

TEST(FrameStoreErrors, MissingNotHdf5WrongVersionTruncated) {
  EXPECT_THROW(nep::read_frame_store(tmp_path("does_not_exist.h5")), nep::Error);
  EXPECT_THROW(nep::FrameStore::create("/nonexistent_dir/x.h5"), nep::Error);
  const std::string text = tmp_path("text.h5");
  std::ofstream(text) << "not hdf5\n";
  EXPECT_THROW(nep::read_frame_store(text), nep::Error);
  EXPECT_THROW(nep::FrameStore::open_append(text), nep::Error);

  const std::string path = tmp_path("version.h5");
  {
    auto store = nep::FrameStore::create(path);
    store.append(sample_frames()[0]);
  }
  {  // an incompatible layout version
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    hid_t a = H5Aopen(f, "version", H5P_DEFAULT);
    const int v = 99;
    H5Awrite(a, H5T_NATIVE_INT, &v);
    H5Aclose(a);
    H5Fclose(f);
  }
  try {
    nep::read_frame_store(path);
    FAIL();
  } catch (const nep::Error& e) {
    EXPECT_NE(std::string(e.what()).find("layout version 99 is not supported"), std::string::npos) << e.what();
  }
  const std::string trunc = tmp_path("truncated.h5");
  {
    auto store = nep::FrameStore::create(trunc);
    for (const auto& f : sample_frames()) store.append(f);
  }
  fs::resize_file(trunc, fs::file_size(trunc) / 2);
  EXPECT_THROW(nep::read_frame_store(trunc), nep::Error);
}

// Stores damaged in ways the fuzzer (tests/fuzz/fuzz_frame_store) found or probed: each is rejected
// with a message naming the store, never converted or read as wrong numbers.
void expect_store_error(const std::string& path, const std::string& what) {
  try {
    nep::read_frame_store(path);
    FAIL() << "no error for " << what;
  } catch (const nep::Error& e) {
    EXPECT_NE(std::string(e.what()).find(path), std::string::npos) << e.what();
    EXPECT_NE(std::string(e.what()).find(what), std::string::npos) << e.what();
  }
}

template <class T>
void overwrite(const std::string& path, const char* dataset, hsize_t row, hsize_t col, hid_t type, T value) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hid_t d = H5Dopen2(f, dataset, H5P_DEFAULT);
  hid_t sp = H5Dget_space(d);
  hsize_t start[2] = {row, col}, count[2] = {1, 1};
  H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, nullptr, count, nullptr);
  hid_t mem = H5Screate_simple(2, count, nullptr);
  EXPECT_GE(H5Dwrite(d, type, mem, sp, H5P_DEFAULT, &value), 0);
  H5Sclose(mem);
  H5Sclose(sp);
  H5Dclose(d);
  H5Fclose(f);
}

TEST(FrameStoreErrors, DamagedColumnsAreRejectedNotConverted) {
  const auto frames = sample_frames();
  auto fresh = [&](const std::string& name) {
    const std::string path = tmp_path(name);
    auto store = nep::FrameStore::create(path);
    store.append(frames[0]);
    store.append(frames[1]);
    return path;
  };
  {  // a float32 position column (HDF5 would convert it silently, losing digits)
    const std::string path = fresh("float_positions.h5");
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    ASSERT_GE(f, 0);
    H5Ldelete(f, "atoms/position", H5P_DEFAULT);
    hsize_t dims[2] = {hsize_t(frames[0].natoms() + frames[1].natoms()), 3};
    hid_t sp = H5Screate_simple(2, dims, nullptr);
    H5Dclose(H5Dcreate2(f, "atoms/position", H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Sclose(sp);
    H5Fclose(f);
    expect_store_error(path, "dataset atoms/position has the wrong element type");
    EXPECT_THROW(nep::FrameStore::open_append(path), nep::Error);
  }
  {
    const std::string path = fresh("bad_z.h5");
    overwrite<int32_t>(path, "atoms/z", 1, 0, H5T_NATIVE_INT32, 200);
    expect_store_error(path, "frame 0 atom 1 has atomic number 200");
  }
  {
    const std::string path = fresh("nan_position.h5");
    overwrite<double>(path, "atoms/position", hsize_t(frames[0].natoms()), 2, H5T_NATIVE_DOUBLE, std::nan(""));
    expect_store_error(path, "frame 1 holds a non-finite number");
  }
  {  // the last frame's offset points past the atoms: reading and appending both refuse
    const std::string path = fresh("bad_offset.h5");
    overwrite<int64_t>(path, "frames/atom_offset", 1, 0, H5T_NATIVE_INT64, int64_t(1) << 62);
    expect_store_error(path, "frame 1 points outside the atom arrays");
    try {
      nep::FrameStore::open_append(path);
      FAIL();
    } catch (const nep::Error& e) {
      EXPECT_NE(std::string(e.what()).find("the last frame points outside the atom arrays"), std::string::npos) << e.what();
    }
  }
  {  // metadata bytes overwritten: an error (HDF5's SWMR re-reads are capped, so it comes at once)
    const std::string path = fresh("bad_bytes.h5");
    std::fstream io(path, std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(200);
    io.write("\xff\xff\xff\xff\xff\xff\xff\xff", 8);
    io.close();
    EXPECT_THROW(nep::read_frame_store(path), nep::Error);
  }
}

// frames with and without per-atom force weights, mixed (0 masks an atom's force label)
std::vector<nep::TrainingFrame> weighted_frames() {
  auto frames = sample_frames();
  for (size_t k = 0; k < frames.size(); ++k) {
    auto& f = frames[k];
    if (k % 3 == 2 || !f.has_forces) continue;
    f.force_weight.resize(size_t(f.natoms()));
    for (int i = 0; i < f.natoms(); ++i) f.force_weight[i] = i % 4 == 0 ? 0.0 : 1.0 / (1 + i + k);
  }
  return frames;
}

void set_version(const std::string& path, int version) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  hid_t a = H5Aopen(f, "version", H5P_DEFAULT);
  EXPECT_GE(H5Awrite(a, H5T_NATIVE_INT, &version), 0);
  H5Aclose(a);
  H5Fclose(f);
}

int version_of(const std::string& path) {
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  hid_t a = H5Aopen(f, "version", H5P_DEFAULT);
  int v = -1;
  H5Aread(a, H5T_NATIVE_INT, &v);
  H5Aclose(a);
  H5Fclose(f);
  return v;
}

// A layout-version-1 store (as builds before force weights wrote it): no atoms/force_weight.
void make_v1(const std::string& path, const std::vector<nep::TrainingFrame>& frames) {
  {
    auto store = nep::FrameStore::create(path);
    for (const auto& f : frames) store.append(f);
  }
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  EXPECT_GE(H5Ldelete(f, "atoms/force_weight", H5P_DEFAULT), 0);
  H5Fclose(f);
  set_version(path, 1);
}

TEST(FrameStore, ForceWeightsRoundTripMixedWithFramesWithout) {
  const auto frames = weighted_frames();
  const std::string path = tmp_path("weights.h5");
  {
    auto store = nep::FrameStore::create(path);
    for (const auto& f : frames) store.append(f);
  }
  EXPECT_EQ(version_of(path), nep::FrameStore::kLayoutVersion);
  const auto back = nep::read_frame_store(path);
  ASSERT_EQ(back.size(), frames.size());
  for (size_t k = 0; k < frames.size(); ++k) expect_same(back[k], frames[k]);
  EXPECT_TRUE(back[2].force_weight.empty());
  EXPECT_FALSE(back[1].force_weight.empty());
  const auto some = nep::read_frame_store(path, {4, 2, 0});
  ASSERT_EQ(some.size(), 3u);
  expect_same(some[0], frames[4]);
  expect_same(some[1], frames[2]);
  expect_same(some[2], frames[0]);
  // bad weights are refused before anything is written
  auto store = nep::FrameStore::open_append(path);
  auto bad = frames[0];
  bad.force_weight.assign(size_t(bad.natoms()), -1.0);
  EXPECT_THROW(store.append(bad), nep::Error);
  bad.force_weight.assign(size_t(bad.natoms()) + 1, 1.0);
  EXPECT_THROW(store.append(bad), nep::Error);
  EXPECT_EQ(store.size(), int64_t(frames.size()));
}

TEST(FrameStore, Version1StoreIsReadAndUpgradedOnAppend) {
  const auto frames = weighted_frames();
  std::vector<nep::TrainingFrame> plain = sample_frames();
  plain.resize(5);
  const std::string path = tmp_path("v1.h5");
  make_v1(path, plain);
  ASSERT_EQ(version_of(path), 1);
  auto back = nep::read_frame_store(path);
  ASSERT_EQ(back.size(), plain.size());
  for (size_t k = 0; k < plain.size(); ++k) expect_same(back[k], plain[k]);
  {
    auto store = nep::FrameStore::open_append(path);  // upgrades to version 2
    EXPECT_EQ(store.size(), 5);
    store.append(frames[0]);
    store.append(frames[2]);
  }
  EXPECT_EQ(version_of(path), 2);
  back = nep::read_frame_store(path);
  ASSERT_EQ(back.size(), 7u);
  for (size_t k = 0; k < plain.size(); ++k) expect_same(back[k], plain[k]);
  expect_same(back[5], frames[0]);
  expect_same(back[6], frames[2]);
  ASSERT_FALSE(back[5].force_weight.empty());
  {  // the old atoms read weight 1.0 in the new column
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
    hid_t d = H5Dopen2(f, "atoms/force_weight", H5P_DEFAULT);
    double w[3] = {0, 0, 0};
    hsize_t start[2] = {0, 0}, count[2] = {3, 1};
    hid_t sp = H5Dget_space(d), mem = H5Screate_simple(2, count, nullptr);
    H5Sselect_hyperslab(sp, H5S_SELECT_SET, start, nullptr, count, nullptr);
    EXPECT_GE(H5Dread(d, H5T_NATIVE_DOUBLE, mem, sp, H5P_DEFAULT, w), 0);
    H5Sclose(mem);
    H5Sclose(sp);
    H5Dclose(d);
    H5Fclose(f);
    EXPECT_EQ(w[0], 1.0);
    EXPECT_EQ(w[2], 1.0);
  }
}

// An upgrade killed after making the column but before setting the version: still a version-1
// store (the column is ignored), and the next open_append redoes the upgrade.
TEST(FrameStore, InterruptedUpgradeIsRedone) {
  std::vector<nep::TrainingFrame> plain = sample_frames();
  plain.resize(3);
  const std::string path = tmp_path("half_upgraded.h5");
  make_v1(path, plain);
  {  // a half-made column: too short, the wrong element type
    hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
    hsize_t dims[2] = {2, 1};
    hid_t sp = H5Screate_simple(2, dims, nullptr);
    H5Dclose(H5Dcreate2(f, "atoms/force_weight", H5T_NATIVE_FLOAT, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT));
    H5Sclose(sp);
    H5Fclose(f);
  }
  auto back = nep::read_frame_store(path);
  ASSERT_EQ(back.size(), 3u);
  for (size_t k = 0; k < 3; ++k) expect_same(back[k], plain[k]);
  const auto weighted = weighted_frames();
  {
    auto store = nep::FrameStore::open_append(path);
    store.append(weighted[1]);
  }
  EXPECT_EQ(version_of(path), 2);
  back = nep::read_frame_store(path);
  ASSERT_EQ(back.size(), 4u);
  for (size_t k = 0; k < 3; ++k) expect_same(back[k], plain[k]);
  expect_same(back[3], weighted[1]);
}

TEST(FrameStoreErrors, DamagedForceWeightsAreRejected) {
  const auto frames = weighted_frames();
  const std::string path = tmp_path("bad_weight.h5");
  {
    auto store = nep::FrameStore::create(path);
    store.append(frames[0]);
    store.append(frames[1]);
  }
  overwrite<double>(path, "atoms/force_weight", hsize_t(frames[0].natoms()) + 1, 0, H5T_NATIVE_DOUBLE, -2.0);
  expect_store_error(path, "frame 1 holds a non-finite number, a weight <= 0 or a force weight < 0");
  overwrite<double>(path, "atoms/force_weight", hsize_t(frames[0].natoms()) + 1, 0, H5T_NATIVE_DOUBLE, std::nan(""));
  expect_store_error(path, "frame 1 holds a non-finite number");
  // a version-2 store without the column is damaged (only version 1 may lack it)
  hid_t f = H5Fopen(path.c_str(), H5F_ACC_RDWR, H5P_DEFAULT);
  ASSERT_GE(f, 0);
  H5Ldelete(f, "atoms/force_weight", H5P_DEFAULT);
  H5Fclose(f);
  expect_store_error(path, "dataset atoms/force_weight missing");
  EXPECT_THROW(nep::FrameStore::open_append(path), nep::Error);
}

}  // namespace
