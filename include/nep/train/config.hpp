// nep.in for gradient training: GPUMD's architecture and loss keywords with GPUMD's meaning,
// TorchNEP's names for the gradient-training keywords (docs/nep_train.md lists every keyword,
// its default and where it comes from). One keyword per line, '#' starts a comment; an unknown
// keyword, a bad value or a repeated keyword is an error naming file and line. SNES-only GPUMD
// keywords (population, generation, ...) are accepted with a warning and ignored.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "nep/keyword_table.hpp"
#include "nep/model.hpp"

namespace nep {

struct TrainConfig {
  // ---- architecture (GPUMD) ----
  int version = 4;
  std::vector<std::string> elements;                 // `type N El1 .. ElN` (required)
  std::vector<double> rc_radial, rc_angular;         // per type; `cutoff rR rA` or per-type pairs
  bool per_type_cutoff = false;
  int n_max_radial = 4, n_max_angular = 4;
  int basis_size_radial = 8, basis_size_angular = 8;
  int l_max = 4;
  std::array<bool, kNumAngularFlags> flags{};        // from `l_max L3 [q222 [q1111]]`
  int num_neurons = 30;
  double zbl_rc_outer = 0.0;                         // `zbl R` (0: off)
  double zbl_typewise_factor = 0.0;                  // `use_typewise_cutoff_zbl F`
  std::string fine_tune;                             // `fine_tune nep.txt`: start from this model
  // ---- loss (GPUMD names; mean-squared errors, see docs) ----
  double lambda_e = 0.01, lambda_f = 1.0, lambda_v = 0.01;
  double lambda_1 = 0.0, lambda_2 = 0.0;             // L1 / L2 regularisation (0 = off)
  // ---- gradient training (TorchNEP names) ----
  int batch = 32;
  int epoch = 600;
  double lr = 0.01, stop_lr = 1e-6;
  double weight_decay = 1e-4;                        // AdamW decoupled decay; 0 = Adam
  double max_grad_norm = 10.0;                       // gradient-norm clipping (<= 0: off)
  std::string lr_scheduler = "plateau";              // plateau | step
  int scheduler_patience = 15;
  double scheduler_factor = 0.7;
  int early_stop = 0;
  bool stage2 = false;
  int start_stage2 = -1;                             // -1: epoch / 2
  double stage2_lr = 1e-3, stage2_lambda_e = 1.0, stage2_lambda_f = 0.05, stage2_lambda_v = 0.1;
  int stage2_scheduler_patience = -1;                // -1: scheduler_patience
  double stage2_scheduler_factor = -1.0;             // < 0: scheduler_factor
  // ---- run control (lammps-nep) ----
  uint64_t seed = 1;                                 // `seed S`, overridden by --seed
  int print_interval = 10;                           // epochs between loss.out lines / checkpoints
  double cache_mb = -1.0;                            // per-frame cache budget (MiB): lists + pair basis; < 0: auto

  std::vector<std::string> warnings;                 // "nep.in:LINE: ..." for ignored keywords
};

TrainConfig parse_train_config(const std::string& text, const std::string& name);
// The keyword table parse_train_config reads by, writing into `c` (the cutoff values go to
// `cutoff_values`, resolved per type afterwards); docs/nep_train.md's keyword table is tested
// equal to it
KeywordTable train_config_keywords(TrainConfig& c, std::vector<double>& cutoff_values);
TrainConfig read_train_config(const std::string& path);

// A model with the configured architecture and all parameters zero (q_scaler = 1).
Model make_model_skeleton(const TrainConfig& c);

}  // namespace nep
