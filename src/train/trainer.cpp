// The nep-train loop: data, initialisation, epochs of prefetched batches, scheduler, outputs,
// checkpoints. Every random choice comes from train/rng.hpp streams of the one seed.
#include "nep/train/trainer.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ostream>
#include <sstream>

#include "batch_loss.hpp"
#include "comm.hpp"
#include "dataset.hpp"
#include "nep/core/text_util.hpp"
#include "nep/data/frame_store.hpp"
#include "nep/error.hpp"
#include "nep/timing.hpp"
#include "nep/train/config.hpp"
#include "nep/train/device_gradient.hpp"
#include "nep/train/train_gradient.hpp"
#include "optimizer.hpp"
#include "outputs.hpp"
#include "session.hpp"

namespace nep {

namespace {

bool file_exists(const std::string& p) {
  struct stat st;
  return ::stat(p.c_str(), &st) == 0;
}

// Rank 0 runs read() and broadcasts its text (or its error) to every rank.
template <class Read>
std::string root_text(const train::Comm& comm, Read read) {
  std::string text;
  if (comm.root()) {
    try {
      text = std::string(1, '\0') + read();
    } catch (const std::exception& e) {
      text = std::string(1, '\1') + e.what();
    }
  }
  comm.bcast(text);
  if (text.empty() || text[0] == '\1') throw Error(text.empty() ? "broadcast failed" : text.substr(1));
  return text.substr(1);
}

// DIR/<stem>.xyz (its bytes travel, so every rank parses the same text with the same line numbers)
// or DIR/<stem>.h5 (converted to exact extended XYZ on rank 0); empty name if neither exists.
std::vector<TrainingFrame> load_frames(const train::Comm& comm, const std::string& dir, const std::string& stem,
                                       std::string& name) {
  ScopedStage stage("train:read");
  const std::string xyz = dir + "/" + stem + ".xyz", h5 = dir + "/" + stem + ".h5";
  const std::string which = root_text(comm, [&] { return file_exists(xyz) ? xyz : file_exists(h5) ? h5 : std::string(); });
  name = which;
  if (which.empty()) return {};
  const bool is_xyz = which == xyz;
  const std::string text = root_text(comm, [&] {
    return is_xyz ? detail::read_text_file(which) : format_training_xyz(read_frame_store(which));
  });
  return parse_training_xyz(text, which);
}

// --device cpu: the host kernel (OpenMP); kokkos: DeviceGradient on this build's Kokkos default
// execution space; cuda: the same, and that space must be CUDA. Returns that space's name.
std::string checked_device(const std::string& device) {
  const std::string space = device_execution_space();
  if (device != "cpu" && device != "kokkos" && device != "cuda")
    throw Error("--device " + device + ": expected cpu, cuda or kokkos");
  if (device == "cuda" && space != "Cuda")
    throw Error("--device cuda: this build's Kokkos runs on " + space +
                " (build with tools/cuda_build.sh for CUDA; --device kokkos runs the device kernels here)");
  return space;
}

// The model training starts from: nep.in's fine_tune model (same architecture), else the
// architecture with seeded initial parameters
Model start_model(const TrainConfig& cfg, const std::string& dir, const train::Comm& comm) {
  Model model = make_model_skeleton(cfg);
  if (cfg.fine_tune.empty()) {
    train::initialise_parameters(model, cfg.seed);
    return model;
  }
  const std::string path = cfg.fine_tune[0] == '/' ? cfg.fine_tune : dir + "/" + cfg.fine_tune;
  Model start = parse_model(root_text(comm, [&] { return detail::read_text_file(path); }), path);
  if (!start.is_potential())
    throw Error(path + ": fine_tune model is a " + kind_name(start.kind) + " model (" + start.tag() +
                "): nep-train trains potentials only");
  if (start.elements != model.elements || start.dim() != model.dim() || start.num_neurons != model.num_neurons ||
      start.version != model.version || start.c.size() != model.c.size())
    throw Error(path + ": fine_tune model does not have the architecture nep.in describes");
  return start;
}

// loss.out's line for this epoch: GPUMD's columns (loss, L1 and L2 terms, train and test RMSEs)
train::LossLine loss_line(const train::TrainState& st, double epoch_loss, const train::Optimizer& opt,
                          const train::SetResult& tr, const train::SetResult& te) {
  train::LossLine ll;
  ll.epoch = st.epoch;
  ll.total = epoch_loss;
  ll.l1 = opt.l1_term();
  ll.l2 = opt.l2_term();
  const train::ErrorSums* sums[2] = {&tr.err, &te.err};
  for (int k = 0; k < 2; ++k) {
    ll.rmse[3 * k] = train::rmse(sums[k]->se_e, sums[k]->n_e);
    ll.rmse[3 * k + 1] = train::rmse(sums[k]->se_f, sums[k]->n_f);
    ll.rmse[3 * k + 2] = train::rmse(sums[k]->se_v, sums[k]->n_v);
  }
  ll.lr = st.lr;
  return ll;
}

}  // namespace

void run_training(const TrainOptions& o, std::ostream& log) {
  using namespace train;
  const Comm comm;
  std::ostringstream quiet;
  std::ostream& out = comm.root() ? log : quiet;  // one rank talks and writes files
  const auto t_start = std::chrono::steady_clock::now();
  const std::string space = checked_device(o.device);
  const bool on_device = o.device != "cpu";
  const std::string nep_in = o.dir + "/nep.in";
  TrainConfig cfg = parse_train_config(root_text(comm, [&] { return detail::read_text_file(nep_in); }), nep_in);
  if (o.seed_given) cfg.seed = o.seed;
  for (const auto& w : cfg.warnings) out << "warning: " << w << "\n";

  Model model = start_model(cfg, o.dir, comm);
  const bool fresh_scaler = cfg.fine_tune.empty();

  std::string train_name, test_name;
  auto train_frames = load_frames(comm, o.dir, "train", train_name);
  if (train_name.empty()) throw Error(o.dir + ": no train.xyz or train.h5");
  Dataset train = make_dataset(std::move(train_frames), train_name, model);
  if (train.size() == 0) throw Error(train_name + ": no frames");
  Dataset test = make_dataset(load_frames(comm, o.dir, "test", test_name), test_name, model);
  out << "nep-train: " << train.size() << " training frames (" << train.atoms() << " atoms) from " << train_name;
  if (test.size()) out << ", " << test.size() << " test frames from " << test_name;
  out << "\n";

  NeighborCache train_cache(train, model, cfg.cache_mb, true), test_cache(test, model, cfg.cache_mb, false);
  BatchLoss batch_loss(o.threads, on_device);
  if (on_device) out << "nep-train: training forward and gradient on Kokkos " << space << "\n";

  fit_descriptor_scaler(model, train, train_cache, batch_loss, comm, fresh_scaler ? ScalerMode::Fresh : ScalerMode::Keep);

  auto evaluate = [&](Dataset& data, NeighborCache& cache, bool solve_b1, bool keep) {
    return evaluate_set(model, data, cache, batch_loss, comm, solve_b1, keep);
  };
  if (fresh_scaler) evaluate(train, train_cache, true, false);  // initial b1

  // ---- optimiser, schedule, checkpoint state
  std::vector<double> theta = trainable_parameters(model);
  Optimizer opt(theta, optimizer_options(cfg));
  TrainState st;
  st.lr = cfg.lr;
  const std::string ckpt = o.dir + "/checkpoint.bin";
  if (o.resume) {
    std::string opt_state;
    read_checkpoint(ckpt, root_text(comm, [&] { return detail::read_text_file(ckpt); }), st, model, opt_state, cfg);
    get_trainable_parameters(model, theta.data());
    opt.load_state(opt_state, theta);
    out << "nep-train: resumed from " << ckpt << " at epoch " << st.epoch << "\n";
  } else if (comm.root()) {
    reset_loss_file(o.dir);
  }
  opt.set_lr(st.lr);

  const auto t_loop = std::chrono::steady_clock::now();
  const int first_epoch = st.epoch;
  while (st.epoch < cfg.epoch) {
    if (enter_stage2(cfg, st)) {
      opt.set_lr(st.lr);
      out << "nep-train: stage 2 from epoch " << st.epoch + 1 << "\n";
    }
    const EpochResult er = train_epoch(model, train, train_cache, batch_loss, opt, comm, cfg.batch, cfg.seed,
                                       static_cast<uint64_t>(st.epoch), stage_weights(cfg, st));
    const double epoch_loss = er.loss;
    ++st.epoch;
    update_schedule(cfg, st, epoch_loss);
    opt.set_lr(st.lr);
    const bool early = cfg.early_stop > 0 && st.since_best >= cfg.early_stop;
    const bool last = st.epoch == cfg.epoch || early;
    const bool interrupted = o.stop_after >= 0 && st.epoch >= o.stop_after;

    if (st.epoch % cfg.print_interval == 0 || last || interrupted) {
      SetResult tr = evaluate(train, train_cache, true, last);
      SetResult te = evaluate(test, test_cache, false, last);
      const LossLine ll = loss_line(st, epoch_loss, opt, tr, te);
      if (comm.root()) append_loss_line(o.dir, ll);
      const double el = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_loop).count();
      const double per_epoch = el / std::max(1, st.epoch - first_epoch);
      char line[400];
      std::snprintf(line, sizeof line,
                    "epoch %6d/%d  loss %.4e  train E %.2f meV/atom F %.1f meV/A V %.2f meV/atom  test E %.2f F %.1f V %.2f  "
                    "lr %.2e  %.3f s/epoch  ETA %.0f s\n",
                    st.epoch, cfg.epoch, epoch_loss, 1e3 * ll.rmse[0], 1e3 * ll.rmse[1], 1e3 * ll.rmse[2], 1e3 * ll.rmse[3],
                    1e3 * ll.rmse[4], 1e3 * ll.rmse[5], st.lr, per_epoch, per_epoch * (cfg.epoch - st.epoch));
      out << line << std::flush;
      const std::string opt_state = opt.save_state();
      if (comm.root()) {
        detail::write_text_file_atomic(o.dir + "/nep.txt", format_model(model));
        write_checkpoint(ckpt, st, model, opt_state, cfg);
      }
      if (last && comm.root()) {
        write_prediction_files(o.dir, "train", train, tr.pred);
        if (test.size()) write_prediction_files(o.dir, "test", test, te.pred);
      }
    }
    if (early) out << "nep-train: early stop: no improvement for " << cfg.early_stop << " epochs\n";
    if (last) break;
    if (interrupted) {
      out << "nep-train: stopped after epoch " << st.epoch << " (--stop-after); continue with --resume\n";
      return;
    }
  }
  const double total = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  out << "nep-train: wrote " << o.dir << "/nep.txt; " << total << " s in total; frame cache "
      << (train_cache.bytes() + test_cache.bytes()) / 1048576.0 << " MB of " << train_cache.budget_mb() << " MB ("
      << train_cache.builds() + test_cache.builds() << " builds)";
  if (on_device) out << "; device " << batch_loss.device_bytes() / 1048576.0 << " MB";
  out << "\n";
}

}  // namespace nep
