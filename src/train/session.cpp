#include "session.hpp"

#include <algorithm>
#include <cmath>

#include "nep/timing.hpp"
#include "nep/train/train_gradient.hpp"
#include "prefetch.hpp"
#include "rng.hpp"

namespace nep {
namespace train {

void initialise_parameters(Model& m, uint64_t seed) {
  Rng rng(seed, Stream::Init, 0);
  const int D = m.dim(), H = m.num_neurons, T = m.version == 3 ? 1 : m.num_types();
  for (int t = 0; t < T; ++t) {
    double* w = &m.ann[m.ann_offset(t)];
    for (int k = 0; k < H * D; ++k) w[k] = rng.normal() / std::sqrt(double(D + H));
    for (int k = 0; k < H; ++k) w[H * D + k] = 0.0;
    for (int k = 0; k < H; ++k) w[H * D + H + k] = rng.normal() / std::sqrt(double(H + 1));
  }
  m.ann.back() = 0.0;
  for (double& c : m.c) c = 0.1 * rng.normal();
}

void fit_descriptor_scaler(Model& model, const Dataset& train, NeighborCache& cache, BatchLoss& loss, const Comm& comm,
                           ScalerMode mode, FrameSubset subset) {
  const bool fresh_scaler = mode != ScalerMode::Keep;  // descriptors are needed
  ScopedStage stage("train:descriptor_init");
  const int D = model.dim();
  std::vector<double> qmin(D, INFINITY), qmax(D, -INFINITY), q;
  int mn_r = 0, mn_a = 0;
  // min, max and neighbour counts depend on which frames are in the set, not on repeats
  std::vector<int> frames;
  for (int p = 0; p < subset.size(train); ++p) frames.push_back(subset.at(p));
  std::sort(frames.begin(), frames.end());
  frames.erase(std::unique(frames.begin(), frames.end()), frames.end());
  for (size_t k = static_cast<size_t>(comm.rank()); k < frames.size(); k += static_cast<size_t>(comm.size())) {
    auto geom = cache.get(frames[k], false);
    const NeighborList* nl = &geom->nl;
    if (fresh_scaler) {
      loss.descriptors(model, *nl, q);
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
        const double rr = model.rc_radial_pair(ti, tj), ra = model.rc_angular_pair(ti, tj);
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
  if (mode == ScalerMode::Fresh)
    for (int d = 0; d < D; ++d) model.q_scaler[d] = qmax[d] > qmin[d] ? 1.0 / (qmax[d] - qmin[d]) : 1.0;
  if (mode == ScalerMode::Expand) {
    const int H = model.num_neurons, T = model.version == 3 ? 1 : model.num_types();
    for (int d = 0; d < D; ++d) {
      const double old = model.q_scaler[d];
      const double s = qmax[d] > qmin[d] ? std::min(old, 1.0 / (qmax[d] - qmin[d])) : old;
      if (!(s < old)) continue;
      for (int t = 0; t < T; ++t)  // network input w0 . (q s): keep w0[h][d] * s fixed
        for (int h = 0; h < H; ++h) model.ann[model.ann_offset(t) + h * D + d] *= old / s;
      model.q_scaler[d] = s;
    }
  }
  model.max_neighbors_radial = std::max(model.max_neighbors_radial, static_cast<int>(mn[0]));
  model.max_neighbors_angular = std::max(model.max_neighbors_angular, static_cast<int>(mn[1]));
}

namespace {
void reduce_errors(const Comm& comm, ErrorSums& e) {
  if (comm.size() == 1) return;
  double v[7] = {e.se_e, e.se_f, e.se_v, e.residual_e, double(e.n_e), double(e.n_f), double(e.n_v)};
  comm.sum(v, 7);
  e = ErrorSums{v[0], v[1], v[2], v[3], long(v[4]), long(v[5]), long(v[6])};
}
}  // namespace

SetResult evaluate_set(Model& model, const Dataset& data, NeighborCache& cache, BatchLoss& loss, const Comm& comm,
                       bool solve_b1, bool keep, FrameSubset subset) {
  ScopedStage stage("train:validation");
  SetResult r;
  const int n = subset.size(data);
  if (keep) r.pred.resize(n);
  FramePrediction p;
  std::vector<double> packed;
  for (int pos = comm.rank(); pos < n; pos += comm.size()) {
    const int f = subset.at(pos);
    auto geom = cache.get(f, false);
    FramePrediction& q = keep ? r.pred[pos] : p;
    loss.predict(model, data, f, geom->nl, q, r.err);
    if (keep && comm.size() > 1) {
      packed.push_back(q.energy);
      packed.insert(packed.end(), q.virial, q.virial + 9);
      packed.insert(packed.end(), q.force.begin(), q.force.end());
    }
  }
  reduce_errors(comm, r.err);
  if (keep && comm.size() > 1) {  // rank 0 unpacks rank by rank, frames f = rank, rank + size, ...
    const std::vector<double> all = comm.gather(packed);
    size_t k = 0;
    for (int rk = 0; rk < comm.size() && comm.root(); ++rk)
      for (int pos = rk; pos < n; pos += comm.size()) {
        FramePrediction& q = r.pred[pos];
        const int natoms = data.frames[subset.at(pos)].natoms();
        q.energy = all[k++];
        for (int c = 0; c < 9; ++c) q.virial[c] = all[k++];
        q.force.assign(all.begin() + k, all.begin() + k + 3 * natoms);
        k += 3 * natoms;
      }
  }
  if (solve_b1 && r.err.n_e > 0) {
    const double mean = r.err.residual_e / r.err.n_e;  // E/N shifts by -delta b1
    model.ann[model.ann_b1_offset()] += mean;
    r.err.se_e = std::max(0.0, r.err.se_e - r.err.n_e * mean * mean);
    r.err.residual_e = 0.0;
    if (keep)
      for (int pos = 0; pos < n; ++pos) r.pred[pos].energy -= mean * data.frames[subset.at(pos)].natoms();
  }
  return r;
}

EpochResult train_epoch(Model& model, const Dataset& train, NeighborCache& cache, BatchLoss& loss, Optimizer& opt,
                        const Comm& comm, int batch_size, uint64_t seed, uint64_t shuffle_index, const LossWeights& w,
                        const std::atomic<bool>* stop, bool* stopped, FrameSubset subset) {
  const int n = subset.size(train);
  const int n_batches = (n + batch_size - 1) / batch_size;
  const int P = opt.size();
  const std::vector<int> order = permutation(n, seed, Stream::Shuffle, shuffle_index);
  std::vector<std::vector<int>> plan(n_batches);
  for (int k = 0; k < n; ++k) plan[k / batch_size].push_back(subset.at(order[k]));
  EpochResult er;
  if (stopped) *stopped = false;
  BatchPrefetcher prefetch(cache, plan, comm.rank(), comm.size());
  for (int b = 0; b < n_batches; ++b) {
    if (stop && stop->load()) {
      if (stopped) *stopped = true;
      return er;
    }
    Batch batch = prefetch.next();
    BatchResult br;
    const double l = opt.step([&](const double* th, double* g) {
      set_trainable_parameters(model, th);
      br = loss.evaluate(model, train, batch.frames, batch.lists, w, g, comm.rank(), comm.size());
      if (comm.size() > 1) {  // all-reduce loss and gradient: every rank takes the same step
        comm.sum(g, P);
        comm.sum(&br.loss, 1);
        reduce_errors(comm, br.errors);
      }
      return br.loss;
    });
    set_trainable_parameters(model, opt.theta());
    er.loss += l / n_batches;
    er.err.add(br.errors);
  }
  // b1: the epoch's mean energy residual (exact solve at every evaluation)
  if (er.err.n_e > 0) model.ann[model.ann_b1_offset()] += er.err.residual_e / er.err.n_e;
  return er;
}

OptimizerOptions optimizer_options(const TrainConfig& cfg) {
  OptimizerOptions oo;
  oo.lr = cfg.lr;
  oo.weight_decay = cfg.weight_decay;
  oo.max_grad_norm = cfg.max_grad_norm;
  oo.lambda_1 = cfg.lambda_1;
  oo.lambda_2 = cfg.lambda_2;
  return oo;
}

std::vector<double> trainable_parameters(const Model& m) {
  std::vector<double> theta(num_trainable_parameters(m));
  get_trainable_parameters(m, theta.data());
  return theta;
}

LossWeights stage_weights(const TrainConfig& cfg, const TrainState& st) {
  if (st.stage == 2) return {cfg.stage2_lambda_e, cfg.stage2_lambda_f, cfg.stage2_lambda_v};
  return {cfg.lambda_e, cfg.lambda_f, cfg.lambda_v};
}

bool enter_stage2(const TrainConfig& cfg, TrainState& st) {
  if (!(cfg.stage2 && st.epoch >= cfg.start_stage2 && st.stage == 1)) return false;
  st.stage = 2;  // new lr and weights, fresh plateau tracking
  st.lr = cfg.stage2_lr;
  st.best = INFINITY;
  st.bad = 0;
  return true;
}

void update_schedule(const TrainConfig& cfg, TrainState& st, double epoch_loss) {
  const int patience = st.stage == 2 ? cfg.stage2_scheduler_patience : cfg.scheduler_patience;
  const double factor = st.stage == 2 ? cfg.stage2_scheduler_factor : cfg.scheduler_factor;
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
  if (epoch_loss < st.best_any) {
    st.best_any = epoch_loss;
    st.since_best = 0;
  } else {
    ++st.since_best;
  }
}

}  // namespace train
}  // namespace nep
