// Library state that belongs to the whole process stays as the caller left it (issue #16 item 4):
// the frame store silences HDF5's error printing only inside its own calls and never switches off
// HDF5's exit handler; the optimiser keeps LibTorch on one thread without torch::set_num_threads
// (which would change every LibTorch user in the process and the threads it starts later).
#include <ATen/Parallel.h>
#include <gtest/gtest.h>
#include <hdf5.h>
#include <omp.h>

#include <cstdio>
#include <fstream>
#include <thread>
#include <vector>

#include "nep/error.hpp"
#include "nep/data/frame_store.hpp"
#include "train/optimizer.hpp"

namespace {

int g_printed = 0;  // how often HDF5 called the test's error handler
herr_t count_errors(hid_t, void*) {
  ++g_printed;
  return 0;
}

std::string tmp_path(const std::string& name) { return ::testing::TempDir() + "process_state_" + name; }

nep::TrainingFrame small_frame() {
  nep::TrainingFrame f;
  f.species = {"Si", "Si"};
  f.pos = {0, 0, 0, 1.2, 1.3, 1.4};
  f.forces = {0.1, 0.2, 0.3, -0.1, -0.2, -0.3};
  f.has_forces = f.has_energy = true;
  f.energy = -1.5;
  const double cell[9] = {5, 0, 0, 0, 5, 0, 0, 0, 5};
  std::copy(cell, cell + 9, f.cell);
  return f;
}

}  // namespace

TEST(ProcessState, Hdf5ErrorHandlerIsTheCallers) {
  ASSERT_GE(H5Eset_auto2(H5E_DEFAULT, count_errors, nullptr), 0);
  const std::string store = tmp_path("store.h5"), text = tmp_path("not_hdf5.h5");
  std::ofstream(text) << "not an HDF5 file\n";
  {
    auto s = nep::FrameStore::create(store);
    s.append(small_frame());
  }
  EXPECT_EQ(nep::read_frame_store(store).size(), 1u);
  // failing calls inside the store (HDF5 itself reports errors there): nothing printed
  EXPECT_THROW(nep::FrameStore::open_append(text), nep::Error);
  EXPECT_THROW(nep::read_frame_store(tmp_path("missing.h5")), nep::Error);
  EXPECT_EQ(g_printed, 0);
  // and the caller's handler is still the one installed
  H5E_auto2_t func = nullptr;
  void* data = nullptr;
  ASSERT_GE(H5Eget_auto2(H5E_DEFAULT, &func, &data), 0);
  EXPECT_EQ(func, &count_errors);
  // the caller's own failing HDF5 call reaches it
  const hid_t bad = H5Fopen(tmp_path("missing.h5").c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  EXPECT_LT(bad, 0);
  EXPECT_GT(g_printed, 0);
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  std::remove(store.c_str());
  std::remove(text.c_str());
}

// HDF5's exit handler (it closes files left open, so their data reach the disk) stays on: a child
// that used the frame store writes a plain HDF5 file, leaves it open and exits; the file must then
// be complete. (With the handler off, as H5dont_atexit() at load made it, the file is unreadable.)
TEST(ProcessState, Hdf5ExitHandlerIsLeftOn) {
  const std::string store = tmp_path("exit_store.h5"), plain = tmp_path("exit_plain.h5");
  EXPECT_EXIT(
      {
        {
          auto s = nep::FrameStore::create(store);
          s.append(small_frame());
        }
        const hid_t f = H5Fcreate(plain.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
        hsize_t n[1] = {1000};
        const hid_t sp = H5Screate_simple(1, n, nullptr);
        const hid_t d = H5Dcreate2(f, "x", H5T_NATIVE_DOUBLE, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        std::vector<double> v(1000, 2.5);
        H5Dwrite(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data());
        std::exit(0);  // f and d left open
      },
      ::testing::ExitedWithCode(0), "");
  H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  const hid_t f = H5Fopen(plain.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT);
  ASSERT_GE(f, 0) << "the file left open at exit is unreadable: HDF5's exit handler did not run";
  const hid_t d = H5Dopen2(f, "x", H5P_DEFAULT);
  std::vector<double> v(1000, 0.0);
  EXPECT_GE(H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()), 0);
  EXPECT_EQ(v[999], 2.5);
  H5Dclose(d);
  H5Fclose(f);
  std::remove(store.c_str());
  std::remove(plain.c_str());
}

// The thread count LibTorch's OpenMP regions use is a per-thread setting; the optimiser may lower
// it for its own calls but must give it back, and must not change what other threads start with.
TEST(ProcessState, TorchThreadCountIsTheCallers) {
  ASSERT_NE(at::get_parallel_info().find("OpenMP"), std::string::npos) << at::get_parallel_info();
  omp_set_num_threads(3);
  ASSERT_EQ(at::get_num_threads(), 3);
  nep::train::OptimizerOptions o;
  o.lambda_1 = 0.01;
  std::vector<double> theta(40000, 0.5);  // above LibTorch's grain size: an op that could fan out
  {
    nep::train::Optimizer opt(theta, o);
    for (int k = 0; k < 2; ++k)
      opt.step([](const double* t, double* g) {
        for (int i = 0; i < 40000; ++i) g[i] = t[i];
        return 1.0;
      });
    EXPECT_GT(opt.l1_term(), 0.0);
    EXPECT_EQ(at::get_num_threads(), 3);  // the calling thread's setting is back
  }
  EXPECT_EQ(omp_get_max_threads(), 3);
  // a thread started afterwards sees the process default (OMP_NUM_THREADS=4 in ctest), not 1
  int seen = -1;
  std::thread([&] { seen = at::get_num_threads(); }).join();
  EXPECT_EQ(seen, 4);
}
