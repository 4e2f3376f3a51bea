// Frames and a small nep.in for the on-the-fly round tests (test_otf_round, test_geometry_store):
// PbTe frames of the GPUMD example set with NEP_CPU double labels, a 2-type NEP4 of 8 neurons.
#pragma once
#include <string>
#include <vector>

#include "nep/train/config.hpp"
#include "nep/xyz.hpp"
#include "test_support.hpp"

namespace nep_test {

// frames [a, b) of tests/data/train/PbTe_gpumd-example_25frames_..._EFV_train.xyz
inline std::vector<nep::TrainingFrame> pbte_frames(int a, int b) {
  auto all = nep::read_training_xyz(data_path("train/PbTe_gpumd-example_25frames_PbTe_NEP4-NEP_CPU-double-labels_EFV_train.xyz"));
  return std::vector<nep::TrainingFrame>(all.begin() + a, all.begin() + b);
}

inline nep::TrainConfig small_round_config(const std::string& extra = "") {
  return nep::parse_train_config("type 2 Te Pb\ncutoff 5 4\nn_max 4 4\nbasis_size 4 4\nl_max 4 2 0\nneuron 8\n"
                                 "batch 2\nepoch 6\n" + extra, "nep.in");
}

}  // namespace nep_test
