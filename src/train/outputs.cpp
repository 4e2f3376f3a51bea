#include "outputs.hpp"

#include <cstdio>
#include <fstream>
#include <sstream>

#include "nep/core/text_util.hpp"
#include "nep/error.hpp"
#include "nep/train/train_gradient.hpp"

namespace nep {
namespace train {

void reset_loss_file(const std::string& dir) {
  detail::write_text_file_atomic(dir + "/loss.out", "");
  detail::write_text_file_atomic(dir + "/lr.out", "");
}

namespace {
void append_line(const std::string& path, const char* line) {
  std::ofstream o(path, std::ios::app);
  if (!o) throw Error(path + ": cannot open for writing");
  o << line;
}
}  // namespace

void append_loss_line(const std::string& dir, const LossLine& l) {
  char b[400];
  std::snprintf(b, sizeof b, "%d %.8e %.8e %.8e %.8e %.8e %.8e %.8e %.8e %.8e\n", l.epoch, l.total, l.l1, l.l2, l.rmse[0],
                l.rmse[1], l.rmse[2], l.rmse[3], l.rmse[4], l.rmse[5]);
  append_line(dir + "/loss.out", b);
  std::snprintf(b, sizeof b, "%d %.8e\n", l.epoch, l.lr);
  append_line(dir + "/lr.out", b);
}

void write_prediction_files(const std::string& dir, const std::string& set, const Dataset& data,
                            const std::vector<FramePrediction>& pred) {
  std::string e, f, v;
  char b[400];
  for (int k = 0; k < data.size(); ++k) {
    const auto& fr = data.frames[k];
    const auto& p = pred[k];
    const double n = fr.natoms();
    if (fr.has_energy) {  // rows only where there are labels: a carved frame has no energy
      std::snprintf(b, sizeof b, "%.10g %.10g\n", p.energy / n, fr.energy / n);
      e += b;
    }
    for (int i = 0; i < fr.natoms(); ++i) {
      if (fr.force_weight_of(i) == 0.0) continue;  // masked (outside a carved frame's core)
      const double* r = fr.has_forces ? &fr.forces[3 * i] : nullptr;
      std::snprintf(b, sizeof b, "%.10g %.10g %.10g %.10g %.10g %.10g\n", p.force[3 * i], p.force[3 * i + 1],
                    p.force[3 * i + 2], r ? r[0] : 0.0, r ? r[1] : 0.0, r ? r[2] : 0.0);
      f += b;
    }
    if (fr.has_virial) {
      for (int c : kVirialComponents) {
        std::snprintf(b, sizeof b, "%.10g ", p.virial[c] / n);
        v += b;
      }
      for (int k2 = 0; k2 < 6; ++k2) {
        std::snprintf(b, sizeof b, k2 < 5 ? "%.10g " : "%.10g\n", fr.virial[kVirialComponents[k2]] / n);
        v += b;
      }
    }
  }
  detail::write_text_file_atomic(dir + "/energy_" + set + ".out", e);
  detail::write_text_file_atomic(dir + "/force_" + set + ".out", f);
  detail::write_text_file_atomic(dir + "/virial_" + set + ".out", v);
}

void write_checkpoint(const std::string& path, const TrainState& st, const Model& m, const std::string& optimizer,
                      const TrainConfig& cfg) {
  std::ostringstream o;
  char b[400];
  std::snprintf(b, sizeof b, "NEP-TRAIN-CHECKPOINT 1\nepoch %d stage %d bad %d since_best %d\nlr %a best %a best_any %a\n",
                st.epoch, st.stage, st.bad, st.since_best, st.lr, st.best, st.best_any);
  o << b << "seed " << cfg.seed << " params " << num_trainable_parameters(m) << "\n";
  const std::string model = format_model(m);
  o << "model_bytes " << model.size() << "\n" << model << "optimizer_bytes " << optimizer.size() << "\n" << optimizer;
  detail::write_text_file_atomic(path, o.str());
}

void read_checkpoint(const std::string& path, const std::string& text, TrainState& st, Model& m, std::string& optimizer,
                     const TrainConfig& cfg) {
  std::istringstream in(text);
  auto bad = [&](const std::string& what) { return Error(path + ": not a nep-train checkpoint (" + what + ")"); };
  std::string magic, version, key, lr, best, best_any;
  if (!(in >> magic >> version) || magic != "NEP-TRAIN-CHECKPOINT" || version != "1") throw bad("header");
  if (!(in >> key >> st.epoch >> key >> st.stage >> key >> st.bad >> key >> st.since_best)) throw bad("counters");
  if (!(in >> key >> lr >> key >> best >> key >> best_any)) throw bad("schedule");
  st.lr = std::strtod(lr.c_str(), nullptr);
  st.best = std::strtod(best.c_str(), nullptr);
  st.best_any = std::strtod(best_any.c_str(), nullptr);
  unsigned long long seed = 0;
  int P = 0;
  size_t nm = 0, no = 0;
  if (!(in >> key >> seed >> key >> P >> key >> nm)) throw bad("sizes");
  if (seed != cfg.seed) throw Error(path + ": checkpoint was written with seed " + std::to_string(seed) + ", this run uses " + std::to_string(cfg.seed));
  in.get();
  std::string model(nm, '\0');
  if (!in.read(&model[0], nm)) throw bad("truncated model");
  Model cm = parse_model(model, path);
  if (num_trainable_parameters(cm) != num_trainable_parameters(m) || cm.elements != m.elements)
    throw Error(path + ": checkpoint model does not match nep.in");
  if (!(in >> key >> no) || key != "optimizer_bytes") throw bad("optimizer size");
  in.get();
  optimizer.assign(no, '\0');
  if (!in.read(&optimizer[0], no)) throw bad("truncated optimizer state");
  m = cm;
  (void)P;
}

}  // namespace train
}  // namespace nep
