// HDF5 frame store: exact round trip, append after reopen, reading while another process appends,
// and kill -9 of a writer at random moments (every flushed frame survives, appending resumes).
#include <gtest/gtest.h>
#include <hdf5.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <thread>

#include "nep/error.hpp"
#include "nep/frame_store.hpp"
#include "test_support.hpp"

namespace {

namespace fs = std::filesystem;

std::string tmp_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("nep_store_test_" + std::to_string(getpid()));
  fs::create_directories(dir);
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
  int nonempty = 0;
  for (int trial = 0; trial < 20; ++trial) {
    const std::string path = tmp_path("killed_" + std::to_string(trial) + ".h5");
    const pid_t pid = fork();
    if (pid == 0) writer_child(path, frames, -1, false);
    std::this_thread::sleep_for(std::chrono::milliseconds(20 + rng() % 200));
    kill(pid, SIGKILL);
    int status = 0;
    waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFSIGNALED(status)) << "writer exited by itself, status " << status;
    std::vector<nep::TrainingFrame> got;
    ASSERT_NO_THROW(got = nep::read_frame_store(path)) << "trial " << trial;
    for (size_t k = 0; k < got.size(); ++k) expect_same(got[k], frames[k % frames.size()]);
    nonempty += !got.empty();
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
  EXPECT_GT(nonempty, 10);  // the kills landed mid-stream, not before the first frame
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

}  // namespace
