// nep.in reader for nep-train (see include/nep/train/config.hpp and docs/nep_train.md).
#include <array>
#include <cmath>
#include <set>

#include "nep/core/text_util.hpp"
#include "nep/keyword_table.hpp"
#include "nep/elements.hpp"
#include "nep/error.hpp"
#include "nep/train/config.hpp"

namespace nep {

namespace {

constexpr int kUnbounded = 1 << 20;

// GPUMD keywords that only steer SNES or features this trainer does not have: warned, ignored
const std::set<std::string> kIgnored = {"population", "generation", "initial_para", "sigma0", "force_delta",
                                        "type_weight", "lambda_shear", "save_potential", "output_descriptor",
                                        "prediction_interval"};

int int_of(const KeywordValues& v, size_t k, long long lo, long long hi) { return static_cast<int>(v.integer(k, lo, hi)); }

// lambda_e .. stage2_lambda_v: GPUMD's "-1 = automatic" regularisation reads as off
Keyword loss_weight(const char* name, double TrainConfig::*field, const char* help, double lo, TrainConfig& c) {
  return {name, "X", 1, 1, help, [&c, field, lo](const KeywordValues& v) {
            const double x = v.real(0, lo, 1e6);
            c.*field = x < 0 ? 0.0 : x;
          }};
}

Keyword whole(const char* name, int TrainConfig::*field, const char* help, int lo, TrainConfig& c) {
  return {name, "N", 1, 1, help, [&c, field, lo](const KeywordValues& v) { c.*field = int_of(v, 0, lo, 1 << 24); }};
}

Keyword real(const char* name, double TrainConfig::*field, const char* help, double lo, double hi, TrainConfig& c) {
  return {name, "X", 1, 1, help, [&c, field, lo, hi](const KeywordValues& v) { c.*field = v.real(0, lo, hi); }};
}

// defaults that depend on other keywords, and the checks across keywords
void finish_train_config(TrainConfig& c, std::vector<double>& cutoff_values, const std::string& name, int cutoff_line) {
  if (c.elements.empty()) throw file_error(name, 0, "missing the required 'type' keyword");
  const size_t T = c.elements.size();
  if (cutoff_values.empty()) cutoff_values = {8.0, 4.0};  // GPUMD default
  if (cutoff_values.size() == 2) {
    c.rc_radial.assign(T, cutoff_values[0]);
    c.rc_angular.assign(T, cutoff_values[1]);
  } else if (cutoff_values.size() == 2 * T) {
    c.per_type_cutoff = true;
    for (size_t t = 0; t < T; ++t) {
      c.rc_radial.push_back(cutoff_values[2 * t]);
      c.rc_angular.push_back(cutoff_values[2 * t + 1]);
    }
  } else {
    throw file_error(name, cutoff_line, "'cutoff' takes 2 values or 2 per type (" + std::to_string(2 * T) + ")");
  }
  for (size_t t = 0; t < T; ++t)
    if (!(c.rc_angular[t] >= 2.5 && c.rc_angular[t] <= c.rc_radial[t]))
      throw file_error(name, cutoff_line, "cutoffs must satisfy 2.5 <= rc_angular <= rc_radial");
  if (c.zbl_typewise_factor > 0 && c.zbl_rc_outer == 0.0)
    throw file_error(name, 0, "'use_typewise_cutoff_zbl' needs 'zbl'");
  if (c.start_stage2 < 0) c.start_stage2 = c.epoch / 2;
  if (c.stage2_scheduler_patience < 0) c.stage2_scheduler_patience = c.scheduler_patience;
  if (c.stage2_scheduler_factor < 0) c.stage2_scheduler_factor = c.scheduler_factor;
}

}  // namespace

KeywordTable train_config_keywords(TrainConfig& c, std::vector<double>& cutoff_values) {
  std::vector<Keyword> k = {
      {"type", "N El1 .. ElN", 0, kUnbounded, "required: elements, in model type order (GPUMD)",
       [&c](const KeywordValues& v) {
         if (v.size() < 2) throw Error("'type' needs the number of types and that many element symbols");
         const long long n = v.integer(0, 1, limits::kMaxTypes);
         if (v.size() != static_cast<size_t>(n) + 1)
           throw Error("'type " + v.word(0) + "' needs " + v.word(0) + " element symbols, got " +
                       std::to_string(v.size() - 1));
         for (size_t t = 1; t < v.size(); ++t) {
           if (atomic_number(v.word(t)) == 0) throw Error("unknown element '" + v.word(t) + "'");
           for (const auto& e : c.elements)
             if (e == v.word(t)) throw Error("element '" + e + "' listed twice");
           c.elements.push_back(v.word(t));
         }
       }},
      {"version", "V", 1, 1, "3 or 4 (default 4; GPUMD; NEP5 training is refused, as GPUMD now does)",
       [&c](const KeywordValues& v) {
         c.version = int_of(v, 0, 3, 5);
         if (c.version == 5) throw Error("NEP5 training is not supported (GPUMD has disabled it too); use version 4");
       }},
      {"cutoff", "rR rA | rR1 rA1 rR2 rA2 ..", 0, kUnbounded,
       "radial/angular cutoffs, global or per type; a pair uses the mean (default 8 4; GPUMD)",
       [&cutoff_values](const KeywordValues& v) {
         if (v.size() < 2) throw Error("'cutoff' takes rc_radial rc_angular (or one pair per type)");
         for (size_t t = 0; t < v.size(); ++t) cutoff_values.push_back(v.real(t, 0.0, 100.0));
       }},
      {"n_max", "nR nA", 2, 2, "radial and angular descriptor counts (default 4 4; GPUMD)",
       [&c](const KeywordValues& v) {
         c.n_max_radial = int_of(v, 0, 0, limits::kMaxNMax);
         c.n_max_angular = int_of(v, 1, 0, limits::kMaxNMax);
       }},
      {"basis_size", "kR kA", 2, 2, "radial and angular Chebyshev basis sizes (default 8 8; GPUMD)",
       [&c](const KeywordValues& v) {
         c.basis_size_radial = int_of(v, 0, 0, limits::kMaxBasisSize);
         c.basis_size_angular = int_of(v, 1, 0, limits::kMaxBasisSize);
       }},
      {"l_max", "L3 [q222 [q1111]]", 1, 3,
       "3-body L, then the 4- and 5-body switches; GPUMD's `4 2 0` means q222 on (default 4 0 0)",
       [&c](const KeywordValues& v) {
         c.l_max = int_of(v, 0, 0, 8);
         c.flags = {};
         if (v.size() > 1) c.flags[kQ222] = v.integer(1, 0, 2) > 0;  // GPUMD writes 2 for q_222
         if (v.size() > 2) c.flags[kQ1111] = v.integer(2, 0, 1) > 0;
         if ((c.flags[kQ222] && c.l_max < 2) || (c.flags[kQ1111] && c.l_max < 1))
           throw Error("4-body terms need l_max >= 2 and 5-body terms l_max >= 1");
       }},
      {"neuron", "H", 1, 1, "hidden neurons (default 30; GPUMD)",
       [&c](const KeywordValues& v) { c.num_neurons = int_of(v, 0, 1, limits::kMaxNeurons); }},
      real("zbl", &TrainConfig::zbl_rc_outer, "universal ZBL, outer cutoff X (1..3 Å), inner X/2 (default off; GPUMD)",
           1.0, 3.0, c),
      real("use_typewise_cutoff_zbl", &TrainConfig::zbl_typewise_factor,
           "per-pair outer cutoff min(X (r_i + r_j), R) (default off; GPUMD)", 0.5, 10.0, c),
      {"fine_tune", "nep.txt", 1, 1, "start from this model (same architecture) and keep its q_scaler",
       [&c](const KeywordValues& v) { c.fine_tune = v.word(0); }},
      {"model_type", "0", 1, 1, "only potentials (0, the default) can be trained",
       [](const KeywordValues& v) {
         if (v.integer(0, 0, 2) != 0) throw Error("only potential models (model_type 0) can be trained");
       }},
      loss_weight("lambda_e", &TrainConfig::lambda_e, "energy loss weight (default 0.01; GPUMD name, TorchNEP's default)",
                  0.0, c),
      loss_weight("lambda_f", &TrainConfig::lambda_f, "force loss weight (default 1)", 0.0, c),
      loss_weight("lambda_v", &TrainConfig::lambda_v, "virial loss weight (default 0.01)", 0.0, c),
      loss_weight("lambda_1", &TrainConfig::lambda_1,
                  "L1 term lambda_1 mean|θ| (default 0 = off; GPUMD's -1 = automatic reads as off)", -1.0, c),
      loss_weight("lambda_2", &TrainConfig::lambda_2,
                  "L2 term lambda_2 sqrt(mean θ²) (default 0 = off; GPUMD's -1 = automatic reads as off)", -1.0, c),
      {"batch", "N", 1, 1, "frames per step (default 32; GPUMD's 1000 is an SNES batch)",
       [&c](const KeywordValues& v) { c.batch = int_of(v, 0, 1, 1 << 24); }},
      whole("epoch", &TrainConfig::epoch, "epochs (default 600; TorchNEP)", 0, c),
      real("lr", &TrainConfig::lr, "initial learning rate (default 0.01; TorchNEP)", 0.0, 10.0, c),
      real("stop_lr", &TrainConfig::stop_lr, "lowest learning rate (default 1e-6; TorchNEP)", 0.0, 10.0, c),
      real("weight_decay", &TrainConfig::weight_decay,
           "AdamW decoupled decay, 0 = Adam; both amsgrad (default 1e-4; TorchNEP)", 0.0, 1.0, c),
      real("max_grad_norm", &TrainConfig::max_grad_norm, "gradient-norm clipping, 0 = off (default 10; TorchNEP)", 0.0,
           1e12, c),
      {"lr_scheduler", "plateau|step", 1, 1,
       "plateau (on the epoch's training loss) or step (default plateau; TorchNEP)",
       [&c](const KeywordValues& v) {
         if (v.word(0) != "plateau" && v.word(0) != "step") throw Error("lr_scheduler must be plateau or step");
         c.lr_scheduler = v.word(0);
       }},
      whole("scheduler_patience", &TrainConfig::scheduler_patience, "plateau patience in epochs (default 15; TorchNEP)",
            0, c),
      real("scheduler_factor", &TrainConfig::scheduler_factor, "learning-rate factor (default 0.7; TorchNEP)", 1e-6, 1.0,
           c),
      whole("early_stop", &TrainConfig::early_stop, "stop after N epochs without improvement (default 0 = off; TorchNEP)",
            0, c),
      {"stage2", "0|1", 1, 1, "a second stage with its own lr and loss weights (default 0; TorchNEP)",
       [&c](const KeywordValues& v) { c.stage2 = v.integer(0, 0, 1) == 1; }},
      whole("start_stage2", &TrainConfig::start_stage2, "epoch stage 2 starts at (default epoch/2; TorchNEP)", 0, c),
      real("stage2_lr", &TrainConfig::stage2_lr, "stage 2 learning rate (default 1e-3; TorchNEP)", 0.0, 10.0, c),
      loss_weight("stage2_lambda_e", &TrainConfig::stage2_lambda_e, "stage 2 energy weight (default 1; TorchNEP)", 0.0,
                  c),
      loss_weight("stage2_lambda_f", &TrainConfig::stage2_lambda_f, "stage 2 force weight (default 0.05; TorchNEP)",
                  0.0, c),
      loss_weight("stage2_lambda_v", &TrainConfig::stage2_lambda_v, "stage 2 virial weight (default 0.1; TorchNEP)",
                  0.0, c),
      whole("stage2_scheduler_patience", &TrainConfig::stage2_scheduler_patience,
            "stage 2 plateau patience (default: scheduler_patience; TorchNEP)", 0, c),
      real("stage2_scheduler_factor", &TrainConfig::stage2_scheduler_factor,
           "stage 2 learning-rate factor (default: scheduler_factor; TorchNEP)", 1e-6, 1.0, c),
      {"seed", "S", 1, 1, "the one global seed (default 1; --seed overrides)",
       [&c](const KeywordValues& v) { c.seed = static_cast<uint64_t>(v.integer(0, 0, (1LL << 62))); }},
      whole("print_interval", &TrainConfig::print_interval,
            "epochs between loss.out lines, nep.txt/checkpoint writes (default 10)", 1, c),
      {"cache_mb", "X|auto", 1, 1,
       "budget (MiB) of the per-frame cache (neighbour list + pair basis); frames beyond it are rebuilt when used "
       "(default auto: a quarter of the memory the process may use, at least 1024)",
       [&c](const KeywordValues& v) { c.cache_mb = v.word(0) == "auto" ? -1.0 : v.real(0, 0.0, 1e9); }},
  };
  return KeywordTable("nep.in", std::move(k));
}

TrainConfig parse_train_config(const std::string& text, const std::string& name) {
  TrainConfig c;
  std::vector<double> cutoff_values;
  const KeywordTable table = train_config_keywords(c, cutoff_values);
  std::set<std::string> seen;
  int cutoff_line = 0;
  std::istringstream in(text);
  std::string raw;
  int number = 0;
  while (std::getline(in, raw)) {
    ++number;
    const auto hash = raw.find('#');
    if (hash != std::string::npos) raw.erase(hash);
    const std::vector<std::string> tok = detail::split_whitespace(raw);
    if (tok.empty()) continue;
    const std::string& k = tok[0];
    if (!seen.insert(k).second) throw file_error(name, number, "'" + k + "' given twice");
    if (kIgnored.count(k)) {
      c.warnings.push_back(name + ":" + std::to_string(number) + ": '" + k + "' steers GPUMD's SNES trainer; ignored");
      continue;
    }
    if (k == "cutoff") cutoff_line = number;
    try {
      table.parse_one(k, std::vector<std::string>(tok.begin() + 1, tok.end()));
    } catch (const Error& e) {
      throw file_error(name, number, e.what());
    }
  }
  finish_train_config(c, cutoff_values, name, cutoff_line);
  return c;
}

TrainConfig read_train_config(const std::string& path) { return parse_train_config(detail::read_text_file(path), path); }

Model make_model_skeleton(const TrainConfig& c) {
  Model m;
  m.version = c.version;
  m.elements = c.elements;
  for (const auto& e : c.elements) m.atomic_numbers.push_back(atomic_number(e));
  if (c.zbl_rc_outer > 0.0) {
    m.zbl = c.zbl_typewise_factor > 0 ? ZblMode::Typewise : ZblMode::Universal;
    m.zbl_rc_outer = c.zbl_rc_outer;
    m.zbl_rc_inner = c.zbl_rc_outer / 2;  // GPUMD writes rin = rout / 2
    m.zbl_typewise_factor = c.zbl_typewise_factor;
  }
  m.per_type_cutoff = c.per_type_cutoff;
  m.rc_radial = c.rc_radial;
  m.rc_angular = c.rc_angular;
  m.n_max_radial = c.n_max_radial;
  m.n_max_angular = c.n_max_angular;
  m.basis_size_radial = c.basis_size_radial;
  m.basis_size_angular = c.basis_size_angular;
  m.l_max = c.l_max;
  m.flags = c.flags;
  m.num_neurons = c.num_neurons;
  m.ann.assign(m.num_ann_parameters(), 0.0);
  m.c.assign(m.num_c_radial() + m.num_c_angular(), 0.0);
  m.q_scaler.assign(m.dim(), 1.0);
  return m;
}

}  // namespace nep
