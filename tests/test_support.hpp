// Shared helpers for the test suite: data paths, fixture loading, tolerance checks.
#pragma once
#include <string>
#include <vector>

#include "nep/calculator.hpp"
#include "nep/model.hpp"
#include "nep/xyz.hpp"

namespace nep_test {

std::string data_path(const std::string& rel);  // tests/data/<rel>

// <system temp folder>/<prefix><pid>, created; removed with its contents when the test program ends
std::string scratch_dir(const std::string& prefix);

// A NEP_CPU reference fixture (tests/data/reference/<stem>.xyz) and its model.
struct Reference {
  nep::Model model;
  nep::Structure structure;
  double energy = 0.0;
  double virial[9] = {0};
  std::vector<double> eatom, force, vatom;
};
Reference load_reference(const std::string& stem);

// The typewise-ZBL set: potentials/nep_CrCoNi.txt (nep4_zbl) and five CrCoNi frames labelled by
// NEP_CPU in double (energy, forces, virial); `file` names the frames' file for error messages.
struct CrCoNiZblSet {
  nep::Model model;
  std::string file;
  std::vector<nep::XyzFrame> frames;
};
CrCoNiZblSet load_crconi_zbl_set();

// max_i |x_i - ref_i| / max(|ref_i|, max_j |ref_j|) : the fixtures README's 1e-10 rule
double max_rel_dev(const std::vector<double>& x, const std::vector<double>& ref);
double rel_rms(const std::vector<double>& x, const std::vector<double>& ref);

}  // namespace nep_test
