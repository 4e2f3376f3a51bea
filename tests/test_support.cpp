#include "test_support.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <cmath>
#include <filesystem>
#include <sstream>

#include <unistd.h>

#include "nep/predict.hpp"

namespace nep_test {

// NEP_TEST_DATA_DIR in the environment overrides the source-tree path compiled in (for running a
// build on another machine, e.g. the GPU device)
std::string data_path(const std::string& rel) {
  const char* env = std::getenv("NEP_TEST_DATA_DIR");
  return std::string(env && *env ? env : NEP_TEST_DATA_DIR) + "/" + rel;
}

std::string scratch_dir(const std::string& prefix) {
  namespace fs = std::filesystem;
  // the folders made by this process, removed at its exit (after every test has run); not by a
  // forked child that exits (tests fork writers and read their files afterwards)
  static struct Folders {
    std::vector<fs::path> paths;
    pid_t owner = getpid();
    ~Folders() {
      std::error_code ec;
      if (getpid() == owner)
        for (const auto& p : paths) fs::remove_all(p, ec);
    }
  } folders;
  const fs::path dir = fs::temp_directory_path() / (prefix + std::to_string(getpid()));
  if (fs::create_directories(dir)) folders.paths.push_back(dir);
  return dir.string();
}

Reference load_reference(const std::string& stem) {
  Reference r;
  const std::string model_stem = stem.substr(0, stem.find("__"));
  r.model = nep::read_model(data_path("potentials/" + model_stem + ".txt"));
  const std::string file = data_path("reference/" + stem + ".xyz");
  auto frames = nep::read_xyz(file);
  EXPECT_EQ(frames.size(), 1u);
  const auto& fr = frames.at(0);
  r.structure = nep::structure_from_frame(fr, r.model, file);
  r.energy = std::stod(fr.info.at("energy"));
  std::istringstream vs(fr.info.at("virial"));
  for (double& v : r.virial) vs >> v;
  r.eatom = fr.column("energies")->values;
  r.force = fr.column("forces")->values;
  r.vatom = fr.column("virials")->values;
  return r;
}

CrCoNiZblSet load_crconi_zbl_set() {
  CrCoNiZblSet set;
  set.model = nep::read_model(data_path("potentials/nep_CrCoNi.txt"));
  set.file = data_path("train/CrCoNi_torchnep_5frames_nep_CrCoNi-NEP_CPU-double-labels_EFV_train.xyz");
  set.frames = nep::read_xyz(set.file);
  return set;
}

double max_rel_dev(const std::vector<double>& x, const std::vector<double>& ref) {
  EXPECT_EQ(x.size(), ref.size());
  double scale = 0.0, dev = 0.0;
  for (double v : ref) scale = std::max(scale, std::fabs(v));
  for (size_t i = 0; i < std::min(x.size(), ref.size()); ++i)
    dev = std::max(dev, std::fabs(x[i] - ref[i]) / std::max(std::fabs(ref[i]), scale));
  return dev;
}

double rel_rms(const std::vector<double>& x, const std::vector<double>& ref) {
  double num = 0.0, den = 0.0;
  for (size_t i = 0; i < std::min(x.size(), ref.size()); ++i) {
    num += (x[i] - ref[i]) * (x[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return std::sqrt(num / std::max(den, 1e-300));
}

}  // namespace nep_test
