// The nep-train loop: data, initialisation, epochs of prefetched batches, scheduler, outputs,
// checkpoints. Every random choice comes from train/rng.hpp streams of the one seed.
#include "nep/trainer.hpp"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <ostream>
#include <sstream>

#include "../text_util.hpp"
#include "batch_loss.hpp"
#include "comm.hpp"
#include "dataset.hpp"
#include "nep/error.hpp"
#include "nep/frame_store.hpp"
#include "nep/timing.hpp"
#include "nep/train_config.hpp"
#include "nep/train_gradient.hpp"
#include "optimizer.hpp"
#include "outputs.hpp"
#include "prefetch.hpp"
#include "rng.hpp"

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

// GPUMD-like initial values: network weights ~ N(0, 1/sqrt(fan_in + fan_out)), biases 0,
// descriptor coefficients ~ N(0, 0.1); drawn in parameter order from the Init stream.
void initialise_parameters(Model& m, uint64_t seed) {
  train::Rng rng(seed, train::Stream::Init, 0);
  const int D = m.dim(), H = m.num_neurons, T = m.version == 3 ? 1 : m.num_types();
  const int stride = (D + 2) * H;
  for (int t = 0; t < T; ++t) {
    double* w = &m.ann[t * stride];
    for (int k = 0; k < H * D; ++k) w[k] = rng.normal() / std::sqrt(double(D + H));
    for (int k = 0; k < H; ++k) w[H * D + k] = 0.0;
    for (int k = 0; k < H; ++k) w[H * D + H + k] = rng.normal() / std::sqrt(double(H + 1));
  }
  m.ann.back() = 0.0;
  for (double& c : m.c) c = 0.1 * rng.normal();
}

struct SetResult {
  train::ErrorSums err;
  std::vector<train::FramePrediction> pred;
};

double rmse(double se, long n) { return n > 0 ? std::sqrt(se / n) : 0.0; }

}  // namespace

void run_training(const TrainOptions& o, std::ostream& log) {
  using namespace train;
  const Comm comm;
  std::ostringstream quiet;
  std::ostream& out = comm.root() ? log : quiet;  // one rank talks and writes files
  const auto t_start = std::chrono::steady_clock::now();
  if (o.device != "cpu")
    throw Error("--device " + o.device + ": this build trains on the CPU only (see docs/nep_train.md)");
  const std::string nep_in = o.dir + "/nep.in";
  TrainConfig cfg = parse_train_config(root_text(comm, [&] { return detail::read_text_file(nep_in); }), nep_in);
  if (o.seed_given) cfg.seed = o.seed;
  for (const auto& w : cfg.warnings) out << "warning: " << w << "\n";

  Model model = make_model_skeleton(cfg);
  if (!cfg.fine_tune.empty()) {
    const std::string path = cfg.fine_tune[0] == '/' ? cfg.fine_tune : o.dir + "/" + cfg.fine_tune;
    Model start = parse_model(root_text(comm, [&] { return detail::read_text_file(path); }), path);
    if (start.elements != model.elements || start.dim() != model.dim() || start.num_neurons != model.num_neurons ||
        start.version != model.version || start.c.size() != model.c.size())
      throw Error(path + ": fine_tune model does not have the architecture nep.in describes");
    model = start;
  } else {
    initialise_parameters(model, cfg.seed);
  }
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

  const double cutoff = model.cutoff_max();
  NeighborCache train_cache(train, cutoff, cfg.cache_mb), test_cache(test, cutoff, cfg.cache_mb);
  BatchLoss batch_loss(o.threads);

  // ---- q_scaler (GPUMD: 1/(max - min) of each descriptor component over the training set,
  //      with the initial parameters) and the neighbour counts the nep.txt header records
  {
    ScopedStage stage("train:descriptor_init");
    const int D = model.dim();
    std::vector<double> qmin(D, INFINITY), qmax(D, -INFINITY), q;
    int mn_r = 0, mn_a = 0;
    for (int f = comm.rank(); f < train.size(); f += comm.size()) {
      auto nl = train_cache.get(f);
      if (fresh_scaler) {
        batch_loss.descriptors(model, *nl, q);
        for (int i = 0; i < nl->nlocal; ++i)
          for (int d = 0; d < D; ++d) {
            qmin[d] = std::min(qmin[d], q[static_cast<size_t>(i) * D + d]);
            qmax[d] = std::max(qmax[d], q[static_cast<size_t>(i) * D + d]);
          }
      }
      for (int i = 0; i < nl->nlocal; ++i) {
        int nr = 0, na = 0;
        for (int k = 0; k < nl->num_neighbors[i]; ++k) {
          const int j = nl->neighbors[static_cast<size_t>(i) * nl->max_neighbors + k];
          double d2 = 0;
          for (int c = 0; c < 3; ++c) d2 += std::pow(nl->x[3 * j + c] - nl->x[3 * i + c], 2);
          const int ti = nl->type[i], tj = nl->type[j];
          const double rr = 0.5 * (model.rc_radial[ti] + model.rc_radial[tj]), ra = 0.5 * (model.rc_angular[ti] + model.rc_angular[tj]);
          nr += d2 < rr * rr;
          na += d2 < ra * ra;
        }
        mn_r = std::max(mn_r, nr);
        mn_a = std::max(mn_a, na);
      }
    }
    comm.min(qmin.data(), D);
    comm.max(qmax.data(), D);
    double mn[2] = {double(mn_r), double(mn_a)};
    comm.max(mn, 2);
    mn_r = static_cast<int>(mn[0]);
    mn_a = static_cast<int>(mn[1]);
    if (fresh_scaler)
      for (int d = 0; d < D; ++d) model.q_scaler[d] = qmax[d] > qmin[d] ? 1.0 / (qmax[d] - qmin[d]) : 1.0;
    model.max_neighbors_radial = std::max(model.max_neighbors_radial, mn_r);
    model.max_neighbors_angular = std::max(model.max_neighbors_angular, mn_a);
  }

  const int b1 = model.ann_b1_offset();
  // evaluate a set (frames split over ranks); on the training set also solve b1 exactly (zero
  // mean energy residual). With `keep`, rank 0 ends up with every frame's prediction.
  auto reduce_errors = [&](ErrorSums& e) {
    double v[7] = {e.se_e, e.se_f, e.se_v, e.residual_e, double(e.n_e), double(e.n_f), double(e.n_v)};
    comm.sum(v, 7);
    e = ErrorSums{v[0], v[1], v[2], v[3], long(v[4]), long(v[5]), long(v[6])};
  };
  auto evaluate = [&](Dataset& data, NeighborCache& cache, bool solve_b1, bool keep) {
    ScopedStage stage("train:validation");
    SetResult r;
    if (keep) r.pred.resize(data.size());
    FramePrediction p;
    std::vector<double> packed;
    for (int f = comm.rank(); f < data.size(); f += comm.size()) {
      auto nl = cache.get(f);
      FramePrediction& q = keep ? r.pred[f] : p;
      batch_loss.predict(model, data, f, *nl, q, r.err);
      if (keep && comm.size() > 1) {
        packed.push_back(q.energy);
        packed.insert(packed.end(), q.virial, q.virial + 9);
        packed.insert(packed.end(), q.force.begin(), q.force.end());
      }
    }
    reduce_errors(r.err);
    if (keep && comm.size() > 1) {  // rank 0 unpacks rank by rank, frames f = rank, rank + size, ...
      const std::vector<double> all = comm.gather(packed);
      size_t k = 0;
      for (int rk = 0; rk < comm.size() && comm.root(); ++rk)
        for (int f = rk; f < data.size(); f += comm.size()) {
          FramePrediction& q = r.pred[f];
          q.energy = all[k++];
          for (int c = 0; c < 9; ++c) q.virial[c] = all[k++];
          q.force.assign(all.begin() + k, all.begin() + k + 3 * data.frames[f].natoms());
          k += 3 * data.frames[f].natoms();
        }
    }
    if (solve_b1 && r.err.n_e > 0) {
      const double mean = r.err.residual_e / r.err.n_e;  // E/N shifts by -delta b1
      model.ann[b1] += mean;
      r.err.se_e = std::max(0.0, r.err.se_e - r.err.n_e * mean * mean);
      r.err.residual_e = 0.0;
      if (keep)
        for (int f = 0; f < data.size(); ++f) r.pred[f].energy -= mean * data.frames[f].natoms();
    }
    return r;
  };
  if (fresh_scaler) evaluate(train, train_cache, true, false);  // initial b1

  // ---- optimiser, schedule, checkpoint state
  const int P = num_trainable_parameters(model);
  std::vector<double> theta(P);
  get_trainable_parameters(model, theta.data());
  OptimizerOptions oo;
  oo.lr = cfg.lr;
  oo.weight_decay = cfg.weight_decay;
  oo.max_grad_norm = cfg.max_grad_norm;
  oo.lambda_1 = cfg.lambda_1;
  oo.lambda_2 = cfg.lambda_2;
  Optimizer opt(theta, oo);
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

  const int n_batches = (train.size() + cfg.batch - 1) / cfg.batch;
  std::vector<double> grad(P);
  const auto t_loop = std::chrono::steady_clock::now();
  const int first_epoch = st.epoch;
  while (st.epoch < cfg.epoch) {
    const bool in_stage2 = cfg.stage2 && st.epoch >= cfg.start_stage2;
    if (in_stage2 && st.stage == 1) {  // enter stage 2: new lr and weights, fresh plateau tracking
      st.stage = 2;
      st.lr = cfg.stage2_lr;
      st.best = INFINITY;
      st.bad = 0;
      opt.set_lr(st.lr);
      out << "nep-train: stage 2 from epoch " << st.epoch + 1 << "\n";
    }
    LossWeights w{cfg.lambda_e, cfg.lambda_f, cfg.lambda_v};
    if (st.stage == 2) w = {cfg.stage2_lambda_e, cfg.stage2_lambda_f, cfg.stage2_lambda_v};
    const int patience = st.stage == 2 ? cfg.stage2_scheduler_patience : cfg.scheduler_patience;
    const double factor = st.stage == 2 ? cfg.stage2_scheduler_factor : cfg.scheduler_factor;

    // this epoch's batches: a permutation drawn from (seed, epoch) alone
    const std::vector<int> order = permutation(train.size(), cfg.seed, Stream::Shuffle, static_cast<uint64_t>(st.epoch));
    std::vector<std::vector<int>> plan(n_batches);
    for (int k = 0; k < train.size(); ++k) plan[k / cfg.batch].push_back(order[k]);
    double epoch_loss = 0.0;
    ErrorSums epoch_err;
    {
      BatchPrefetcher prefetch(train_cache, plan, comm.rank(), comm.size());
      for (int b = 0; b < n_batches; ++b) {
        Batch batch = prefetch.next();
        BatchResult br;
        const double loss = opt.step([&](const double* th, double* g) {
          set_trainable_parameters(model, th);
          br = batch_loss.evaluate(model, train, batch.frames, batch.lists, w, g, comm.rank(), comm.size());
          if (comm.size() > 1) {  // all-reduce loss and gradient: every rank takes the same step
            comm.sum(g, P);
            comm.sum(&br.loss, 1);
            reduce_errors(br.errors);
          }
          return br.loss;
        });
        set_trainable_parameters(model, opt.theta());
        epoch_loss += loss / n_batches;
        epoch_err.add(br.errors);
      }
    }
    // b1: the epoch's mean energy residual (exact solve at every print interval)
    if (epoch_err.n_e > 0) model.ann[b1] += epoch_err.residual_e / epoch_err.n_e;
    ++st.epoch;

    // learning-rate schedule on the training loss
    if (cfg.lr_scheduler == "plateau") {
      if (epoch_loss < st.best * (1.0 - 1e-4)) {
        st.best = epoch_loss;
        st.bad = 0;
      } else if (++st.bad > patience) {
        st.lr = std::max(st.lr * factor, cfg.stop_lr);
        st.bad = 0;
      }
    } else if (patience > 0 && st.epoch % patience == 0) {
      st.lr = std::max(st.lr * factor, cfg.stop_lr);
    }
    opt.set_lr(st.lr);
    if (epoch_loss < st.best_any) {
      st.best_any = epoch_loss;
      st.since_best = 0;
    } else {
      ++st.since_best;
    }
    const bool early = cfg.early_stop > 0 && st.since_best >= cfg.early_stop;
    const bool last = st.epoch == cfg.epoch || early;
    const bool interrupted = o.stop_after >= 0 && st.epoch >= o.stop_after;

    if (st.epoch % cfg.print_interval == 0 || last || interrupted) {
      SetResult tr = evaluate(train, train_cache, true, last);
      SetResult te = evaluate(test, test_cache, false, last);
      LossLine ll;
      ll.epoch = st.epoch;
      ll.total = epoch_loss;
      ll.l1 = opt.l1_term();  // GPUMD's loss.out columns 3 and 4
      ll.l2 = opt.l2_term();
      ll.rmse[0] = rmse(tr.err.se_e, tr.err.n_e);
      ll.rmse[1] = rmse(tr.err.se_f, tr.err.n_f);
      ll.rmse[2] = rmse(tr.err.se_v, tr.err.n_v);
      ll.rmse[3] = rmse(te.err.se_e, te.err.n_e);
      ll.rmse[4] = rmse(te.err.se_f, te.err.n_f);
      ll.rmse[5] = rmse(te.err.se_v, te.err.n_v);
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
  out << "nep-train: wrote " << o.dir << "/nep.txt; " << total << " s in total\n";
}

}  // namespace nep
