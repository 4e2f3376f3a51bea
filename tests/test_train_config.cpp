// nep.in reader: GPUMD defaults, keyword meanings, and errors naming file and line.
#include <gtest/gtest.h>

#include "nep/error.hpp"
#include "nep/train/config.hpp"
#include "train/dataset.hpp"

#include <fstream>
#include <sstream>

namespace {

std::string error_of(const std::string& text) {
  try {
    nep::parse_train_config(text, "nep.in");
  } catch (const nep::Error& e) {
    return e.what();
  }
  return "";
}

TEST(TrainConfig, DefaultsAndKeywords) {
  const auto c = nep::parse_train_config("type 2 Te Pb   # comment\n\nneuron 20\nl_max 4 2 1\nbatch 4\nlr 2e-3\n", "nep.in");
  EXPECT_EQ(c.elements, (std::vector<std::string>{"Te", "Pb"}));
  EXPECT_EQ(c.rc_radial, (std::vector<double>{8.0, 8.0}));  // GPUMD cutoff default 8 4
  EXPECT_EQ(c.rc_angular, (std::vector<double>{4.0, 4.0}));
  EXPECT_EQ(c.n_max_radial, 4);
  EXPECT_EQ(c.basis_size_angular, 8);
  EXPECT_EQ(c.num_neurons, 20);
  EXPECT_TRUE(c.flags[nep::kQ222]);
  EXPECT_TRUE(c.flags[nep::kQ1111]);
  EXPECT_EQ(c.batch, 4);
  EXPECT_DOUBLE_EQ(c.lr, 2e-3);
  EXPECT_EQ(c.start_stage2, c.epoch / 2);
  const nep::Model m = nep::make_model_skeleton(c);
  EXPECT_EQ(m.dim(), 5 + 5 * 6);
  EXPECT_EQ(static_cast<int>(m.ann.size()), m.num_ann_parameters());
}

TEST(TrainConfig, PerTypeCutoffAndZbl) {
  const auto c = nep::parse_train_config("type 2 Te Pb\ncutoff 7 4 6 3.5\nzbl 2\nuse_typewise_cutoff_zbl 0.7\n", "x");
  EXPECT_TRUE(c.per_type_cutoff);
  EXPECT_EQ(c.rc_radial, (std::vector<double>{7.0, 6.0}));
  const nep::Model m = nep::make_model_skeleton(c);
  EXPECT_EQ(m.zbl, nep::ZblMode::Typewise);
  EXPECT_DOUBLE_EQ(m.zbl_rc_outer, 2.0);
}

TEST(TrainConfig, SnesKeywordsWarned) {
  const auto c = nep::parse_train_config("type 1 Si\npopulation 50\ngeneration 1000\n", "nep.in");
  ASSERT_EQ(c.warnings.size(), 2u);
  EXPECT_EQ(c.warnings[0], "nep.in:2: 'population' steers GPUMD's SNES trainer; ignored");
}

TEST(TrainConfig, ErrorsNameFileAndLine) {
  EXPECT_EQ(error_of("type 1 Si\nneurons 30\n"), "nep.in:2: unknown keyword 'neurons'");
  EXPECT_EQ(error_of("type 2 Si\n"), "nep.in:1: 'type 2' needs 2 element symbols, got 1");
  EXPECT_EQ(error_of("type 1 Xx\n"), "nep.in:1: unknown element 'Xx'");
  EXPECT_EQ(error_of("type 1 Si\nn_max 4\n"), "nep.in:2: 'n_max' takes 2 value(s), got 1");
  EXPECT_EQ(error_of("type 1 Si\nbatch four\n"), "nep.in:2: 'batch': 'four' is not an integer");
  EXPECT_EQ(error_of("type 1 Si\nlr 0.1x\n"), "nep.in:2: 'lr': '0.1x' is not a number");
  EXPECT_EQ(error_of("type 1 Si\nbatch 4\nbatch 8\n"), "nep.in:3: 'batch' given twice");
  EXPECT_EQ(error_of("type 1 Si\ncutoff 4 5\n"), "nep.in:2: cutoffs must satisfy 2.5 <= rc_angular <= rc_radial");
  EXPECT_EQ(error_of("type 2 Si C\ncutoff 6 4 5\n"), "nep.in:2: 'cutoff' takes 2 values or 2 per type (4)");
  EXPECT_EQ(error_of("version 5\ntype 1 Si\n"), "nep.in:1: NEP5 training is not supported (GPUMD has disabled it too); use version 4");
  EXPECT_EQ(error_of("neuron 30\n"), "nep.in: missing the required 'type' keyword");
  EXPECT_EQ(error_of("type 1 Si\nmodel_type 1\n"), "nep.in:2: only potential models (model_type 0) can be trained");
  EXPECT_EQ(error_of("type 1 Si\nzbl 5\n"), "nep.in:2: 'zbl': 5 is out of range [1, 3]");
}

// cache_mb: a number, or auto (the default): a quarter of the memory the process may use, at least
// 1024 MiB. Checked against /proc/meminfo's MemTotal and the cgroup v2 limit, read here.
TEST(TrainConfig, CacheBudgetDefaultsToAQuarterOfMemory) {
  EXPECT_LT(nep::parse_train_config("type 1 Si\n", "nep.in").cache_mb, 0.0);
  EXPECT_LT(nep::parse_train_config("type 1 Si\ncache_mb auto\n", "nep.in").cache_mb, 0.0);
  EXPECT_DOUBLE_EQ(nep::parse_train_config("type 1 Si\ncache_mb 100\n", "nep.in").cache_mb, 100.0);
  EXPECT_NE(error_of("type 1 Si\ncache_mb -1\n").find("nep.in"), std::string::npos);
  EXPECT_NE(error_of("type 1 Si\ncache_mb lots\n").find("cache_mb"), std::string::npos);
  double mem_mb = 0.0;
  std::ifstream meminfo("/proc/meminfo");
  for (std::string key; meminfo >> key;)
    if (key == "MemTotal:") {
      meminfo >> mem_mb;
      mem_mb /= 1024.0;  // kB
      break;
    }
  std::ifstream cg("/sys/fs/cgroup/memory.max");
  double limit = 0.0;
  if (cg >> limit && limit > 0.0) mem_mb = std::min(mem_mb, limit / 1048576.0);
  ASSERT_GT(mem_mb, 0.0);
  const nep::TrainConfig c = nep::parse_train_config("type 1 Si\n", "nep.in");
  const nep::Model m = nep::make_model_skeleton(c);
  const nep::train::Dataset empty = nep::train::make_dataset({}, "none", m);
  const double expected = std::max(1024.0, mem_mb / 4.0);
  EXPECT_NEAR(nep::train::NeighborCache(empty, m, c.cache_mb, true).budget_mb(), expected, 1e-3 * expected);
  EXPECT_NEAR(nep::train::NeighborCache(empty, m, 100.0, true).budget_mb(), 100.0, 1e-6);
  EXPECT_NEAR(nep::train::NeighborCache(empty, m, 0.0, true).budget_mb(), 0.0, 1e-12);
}

}  // namespace
