// Fuzz target: the nep.in reader of nep-train and fix nep/train. Properties: bad input is rejected
// only by nep::Error naming the file; an accepted configuration has the invariants the trainer
// relies on (positive sizes, ordered cutoffs, one cutoff pair per type, finite weights).
#include <cmath>
#include <cstdint>
#include <string>

#include "fuzz_check.hpp"
#include "nep/model.hpp"
#include "nep/train/config.hpp"

using nep_fuzz::require;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string text(reinterpret_cast<const char*>(data), size);
  nep::TrainConfig c;
  if (!nep_fuzz::accepts("fuzz_nep.in", [&] { c = nep::parse_train_config(text, "fuzz_nep.in"); })) return 0;
  const int T = int(c.elements.size());
  require(T >= 1, "no types");
  require(int(c.rc_radial.size()) == T && int(c.rc_angular.size()) == T, "one cutoff pair per type");
  for (int t = 0; t < T; ++t)
    require(std::isfinite(c.rc_radial[t]) && c.rc_angular[t] > 0 && c.rc_angular[t] <= c.rc_radial[t], "cutoff order");
  require(c.n_max_radial >= 0 && c.n_max_angular >= 0 && c.basis_size_radial >= 0 && c.basis_size_angular >= 0,
          "negative sizes");
  require(c.num_neurons >= 1 && c.batch >= 1 && c.epoch >= 0, "sizes");
  for (double v : {c.lambda_e, c.lambda_f, c.lambda_v, c.lambda_1, c.lambda_2, c.lr, c.stop_lr, c.weight_decay})
    require(std::isfinite(v) && v >= 0, "loss weight or rate negative or non-finite");
  // the skeleton model the trainer starts from is a valid nep.txt
  const nep::Model m = nep::make_model_skeleton(c);
  const std::string text_model = nep::format_model(m);
  require(nep_fuzz::accepts("skeleton", [&] { (void)nep::parse_model(text_model, "skeleton"); }),
          "the skeleton of an accepted nep.in is not a readable nep.txt");
  return 0;
}
