// nep.in reader for nep-train (see include/nep/train/config.hpp and docs/nep_train.md).
#include <array>
#include <cmath>
#include <set>

#include "nep/core/text_util.hpp"
#include "nep/elements.hpp"
#include "nep/error.hpp"
#include "nep/train/config.hpp"

namespace nep {

namespace {

struct Line {
  const std::string& file;
  int number;
  std::vector<std::string> tok;
  Error error(const std::string& msg) const { return file_error(file, number, msg); }
  void count(size_t lo, size_t hi) const {
    const size_t n = tok.size() - 1;
    if (n < lo || n > hi) {
      const std::string want = lo == hi ? std::to_string(lo) : std::to_string(lo) + " to " + std::to_string(hi);
      throw error("'" + tok[0] + "' takes " + want + " value(s), got " + std::to_string(n));
    }
  }
  double real(size_t k, double lo, double hi) const {
    const std::string& s = tok.at(k);
    size_t pos = 0;
    double v;
    try {
      v = std::stod(s, &pos);
    } catch (...) {
      throw error("'" + tok[0] + "': '" + s + "' is not a number");
    }
    if (pos != s.size() || !std::isfinite(v)) throw error("'" + tok[0] + "': '" + s + "' is not a number");
    if (v < lo || v > hi) throw error("'" + tok[0] + "': " + s + " is out of range [" + fmt(lo) + ", " + fmt(hi) + "]");
    return v;
  }
  long integer(size_t k, long lo, long hi) const {
    const std::string& s = tok.at(k);
    size_t pos = 0;
    long v;
    try {
      v = std::stol(s, &pos);
    } catch (...) {
      throw error("'" + tok[0] + "': '" + s + "' is not an integer");
    }
    if (pos != s.size()) throw error("'" + tok[0] + "': '" + s + "' is not an integer");
    if (v < lo || v > hi) throw error("'" + tok[0] + "': " + s + " is out of range [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
    return v;
  }
  static std::string fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%g", v);
    return b;
  }
};

// GPUMD keywords that only steer SNES or features this trainer does not have: warned, ignored
const std::set<std::string> kIgnored = {"population", "generation", "initial_para", "sigma0", "force_delta",
                                        "type_weight", "lambda_shear", "save_potential", "output_descriptor",
                                        "prediction_interval"};

}  // namespace

TrainConfig parse_train_config(const std::string& text, const std::string& name) {
  TrainConfig c;
  std::set<std::string> seen;
  std::vector<double> cutoff_values;
  int cutoff_line = 0;
  std::istringstream in(text);
  std::string raw;
  int number = 0;
  while (std::getline(in, raw)) {
    ++number;
    const auto hash = raw.find('#');
    if (hash != std::string::npos) raw.erase(hash);
    Line l{name, number, detail::split_whitespace(raw)};
    if (l.tok.empty()) continue;
    const std::string& k = l.tok[0];
    if (!seen.insert(k).second) throw l.error("'" + k + "' given twice");
    if (kIgnored.count(k)) {
      c.warnings.push_back(name + ":" + std::to_string(number) + ": '" + k + "' steers GPUMD's SNES trainer; ignored");
      continue;
    }
    if (k == "version") {
      l.count(1, 1);
      c.version = static_cast<int>(l.integer(1, 3, 5));
      if (c.version == 5) throw l.error("NEP5 training is not supported (GPUMD has disabled it too); use version 4");
    } else if (k == "type") {
      if (l.tok.size() < 3) throw l.error("'type' needs the number of types and that many element symbols");
      const long n = l.integer(1, 1, limits::kMaxTypes);
      if (l.tok.size() != static_cast<size_t>(n) + 2)
        throw l.error("'type " + l.tok[1] + "' needs " + l.tok[1] + " element symbols, got " + std::to_string(l.tok.size() - 2));
      for (size_t t = 2; t < l.tok.size(); ++t) {
        if (atomic_number(l.tok[t]) == 0) throw l.error("unknown element '" + l.tok[t] + "'");
        for (const auto& e : c.elements)
          if (e == l.tok[t]) throw l.error("element '" + e + "' listed twice");
        c.elements.push_back(l.tok[t]);
      }
    } else if (k == "cutoff") {
      if (l.tok.size() < 3) throw l.error("'cutoff' takes rc_radial rc_angular (or one pair per type)");
      for (size_t t = 1; t < l.tok.size(); ++t) cutoff_values.push_back(l.real(t, 0.0, 100.0));
      cutoff_line = number;
    } else if (k == "n_max") {
      l.count(2, 2);
      c.n_max_radial = static_cast<int>(l.integer(1, 0, 19));
      c.n_max_angular = static_cast<int>(l.integer(2, 0, 19));
    } else if (k == "basis_size") {
      l.count(2, 2);
      c.basis_size_radial = static_cast<int>(l.integer(1, 0, 19));
      c.basis_size_angular = static_cast<int>(l.integer(2, 0, 19));
    } else if (k == "l_max") {
      l.count(1, 3);
      c.l_max = static_cast<int>(l.integer(1, 0, 8));
      c.flags = {};
      if (l.tok.size() > 2) c.flags[kQ222] = l.integer(2, 0, 2) > 0;  // GPUMD writes 2 for q_222
      if (l.tok.size() > 3) c.flags[kQ1111] = l.integer(3, 0, 1) > 0;
      if ((c.flags[kQ222] && c.l_max < 2) || (c.flags[kQ1111] && c.l_max < 1))
        throw l.error("4-body terms need l_max >= 2 and 5-body terms l_max >= 1");
    } else if (k == "neuron") {
      l.count(1, 1);
      c.num_neurons = static_cast<int>(l.integer(1, 1, 1000));
    } else if (k == "zbl") {
      l.count(1, 1);
      c.zbl_rc_outer = l.real(1, 1.0, 3.0);
    } else if (k == "use_typewise_cutoff_zbl") {
      l.count(1, 1);
      c.zbl_typewise_factor = l.real(1, 0.5, 10.0);
    } else if (k == "fine_tune") {
      l.count(1, 1);
      c.fine_tune = l.tok[1];
    } else if (k == "model_type") {
      l.count(1, 1);
      if (l.integer(1, 0, 2) != 0) throw l.error("only potential models (model_type 0) can be trained");
    } else if (k == "lambda_e" || k == "lambda_f" || k == "lambda_v" || k == "lambda_1" || k == "lambda_2" ||
               k == "stage2_lambda_e" || k == "stage2_lambda_f" || k == "stage2_lambda_v") {
      l.count(1, 1);
      const double v = l.real(1, k == "lambda_1" || k == "lambda_2" ? -1.0 : 0.0, 1e6);
      double* dst = k == "lambda_e" ? &c.lambda_e : k == "lambda_f" ? &c.lambda_f : k == "lambda_v" ? &c.lambda_v
                  : k == "lambda_1" ? &c.lambda_1 : k == "lambda_2" ? &c.lambda_2 : k == "stage2_lambda_e" ? &c.stage2_lambda_e
                  : k == "stage2_lambda_f" ? &c.stage2_lambda_f : &c.stage2_lambda_v;
      *dst = v < 0 ? 0.0 : v;  // GPUMD's "-1 = automatic" regularisation: off here
    } else if (k == "batch") {
      l.count(1, 1);
      c.batch = static_cast<int>(l.integer(1, 1, 1 << 24));
    } else if (k == "epoch") {
      l.count(1, 1);
      c.epoch = static_cast<int>(l.integer(1, 0, 1 << 24));
    } else if (k == "lr" || k == "stop_lr" || k == "stage2_lr") {
      l.count(1, 1);
      (k == "lr" ? c.lr : k == "stop_lr" ? c.stop_lr : c.stage2_lr) = l.real(1, 0.0, 10.0);
    } else if (k == "weight_decay") {
      l.count(1, 1);
      c.weight_decay = l.real(1, 0.0, 1.0);
    } else if (k == "max_grad_norm") {
      l.count(1, 1);
      c.max_grad_norm = l.real(1, 0.0, 1e12);
    } else if (k == "lr_scheduler") {
      l.count(1, 1);
      if (l.tok[1] != "plateau" && l.tok[1] != "step") throw l.error("lr_scheduler must be plateau or step");
      c.lr_scheduler = l.tok[1];
    } else if (k == "scheduler_patience" || k == "stage2_scheduler_patience" || k == "early_stop" ||
               k == "start_stage2" || k == "print_interval") {
      l.count(1, 1);
      const int v = static_cast<int>(l.integer(1, k == "print_interval" ? 1 : 0, 1 << 24));
      (k == "scheduler_patience" ? c.scheduler_patience : k == "stage2_scheduler_patience" ? c.stage2_scheduler_patience
       : k == "early_stop" ? c.early_stop : k == "start_stage2" ? c.start_stage2 : c.print_interval) = v;
    } else if (k == "scheduler_factor" || k == "stage2_scheduler_factor") {
      l.count(1, 1);
      (k == "scheduler_factor" ? c.scheduler_factor : c.stage2_scheduler_factor) = l.real(1, 1e-6, 1.0);
    } else if (k == "stage2") {
      l.count(1, 1);
      c.stage2 = l.integer(1, 0, 1) == 1;
    } else if (k == "seed") {
      l.count(1, 1);
      c.seed = static_cast<uint64_t>(l.integer(1, 0, (1L << 62)));
    } else if (k == "cache_mb") {
      l.count(1, 1);
      c.cache_mb = l.real(1, 0.0, 1e9);
    } else {
      throw l.error("unknown keyword '" + k + "'");
    }
  }
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
