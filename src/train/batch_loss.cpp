#include "batch_loss.hpp"

#include <omp.h>

#include <Kokkos_Core.hpp>
#include <cmath>

#include "nep/list_evaluate.hpp"
#include "nep/timing.hpp"
#include "nep/train/device_gradient.hpp"
#include "nep/train/train_gradient.hpp"

namespace nep {
namespace train {

void ErrorSums::add(const ErrorSums& o) {
  se_e += o.se_e;
  se_f += o.se_f;
  se_v += o.se_v;
  residual_e += o.residual_e;
  n_e += o.n_e;
  n_f += o.n_f;
  n_v += o.n_v;
}

namespace {
constexpr int kBlock = 64;  // atoms per gradient task (fixed: results do not depend on threads)
}  // namespace

struct BatchLoss::Impl {
  int threads = 1;
  bool device = false;
  std::unique_ptr<DeviceGradient> dev;  // created on the first batch (architecture of the model)
  std::unique_ptr<SerialEvaluator> ev;
  std::vector<double> ev_params;  // parameters ev was built with (rebuild when they change)
  std::vector<GradientKernel::Scratch> scratch;
  std::vector<double> task_grad;

  SerialEvaluator& evaluator(const Model& m) {
    std::vector<double> key(m.ann);
    key.insert(key.end(), m.c.begin(), m.c.end());
    key.insert(key.end(), m.q_scaler.begin(), m.q_scaler.end());
    if (!ev || key != ev_params) {
      ev = std::make_unique<SerialEvaluator>(m);
      ev_params.swap(key);
    }
    return *ev;
  }

  // Core forward on one frame: energy, virial, forces folded onto owners.
  void forward(const Model& m, const NeighborList& nl, FramePrediction& out, double* q = nullptr) {
    const EnergyVirial r = evaluate_list(evaluator(m), nl, out.force, q);
    out.energy = r.energy;
    for (int c = 0; c < 9; ++c) out.virial[c] = r.virial[c];
  }
};

BatchLoss::BatchLoss(int threads, bool device) : impl_(new Impl) {
  impl_->threads = threads > 0 ? threads : 1;
  impl_->device = device;
  impl_->scratch.resize(impl_->threads);
}
BatchLoss::~BatchLoss() = default;

namespace {
// Squared errors of one frame; fills the loss derivatives wE, delta (3N), Delta (9) if asked.
// (energy, virial: 9 row-major, force: 3 per atom) predicted for the frame
double frame_loss(const TrainingFrame& fr, double energy, const double* virial, const double* force, const LossWeights& w, double cE, double cF,
                  double cV, ErrorSums& s, double* wE, double* delta, double* Delta) {
  const int n = fr.natoms();
  const double inv_n = 1.0 / n, wf = fr.weight;
  double loss = 0.0;
  if (fr.has_energy) {  // a carved frame has none: its energy is not the system's
    const double re = (energy - fr.energy) * inv_n;
    s.se_e += re * re;
    s.residual_e += re;
    s.n_e += 1;
    loss += w.e * cE * wf * re * re;
    if (wE) *wE = 2.0 * w.e * cE * wf * re * inv_n;
  } else if (wE) {
    *wE = 0.0;
  }
  if (fr.has_forces) {
    // per-atom label weights w_i (0: masked): se and loss weight |F_i - F_i^ref|^2 by w_i, the
    // count is of labelled atoms (a 0/1 mask gives the RMSE over the labelled atoms)
    for (int i = 0; i < n; ++i) {
      const double wi = fr.force_weight_of(i);
      for (int d = 0; d < 3; ++d) {
        const int k = 3 * i + d;
        const double r = force[k] - fr.forces[k];
        s.se_f += wi * r * r;
        loss += w.f * cF * wf * wi * r * r;
        if (delta) delta[k] = 2.0 * w.f * cF * wf * wi * r;
      }
    }
    s.n_f += 3 * fr.force_labelled_atoms();
  } else if (delta) {
    for (int k = 0; k < 3 * n; ++k) delta[k] = 0.0;
  }
  if (Delta)
    for (int c = 0; c < 9; ++c) Delta[c] = 0.0;
  if (fr.has_virial) {
    for (int c : kVirialComponents) {
      const double r = (virial[c] - fr.virial[c]) * inv_n;
      s.se_v += r * r;
      loss += w.v * cV * wf * r * r;
      if (Delta) Delta[c] = 2.0 * w.v * cV * wf * r * inv_n;
    }
    s.n_v += 6;
  }
  return loss;
}
}  // namespace

BatchResult BatchLoss::evaluate(const Model& model, const Dataset& data, const std::vector<int>& frames,
                                const std::vector<std::shared_ptr<const FrameGeometry>>& lists, const LossWeights& w,
                                double* grad, int rank, int size) {
  Impl& im = *impl_;
  const int nb = static_cast<int>(frames.size());
  // normalisations: per batch, over what the batch holds
  long n_e = 0, n_f = 0, n_v = 0;
  for (int f : frames) {
    const auto& fr = data.frames[f];
    if (fr.has_energy) n_e += 1;
    n_f += 3 * fr.force_labelled_atoms();
    if (fr.has_virial) n_v += 6;
  }
  const double cE = n_e ? 1.0 / n_e : 0.0, cF = n_f ? 1.0 / n_f : 0.0, cV = n_v ? 1.0 / n_v : 0.0;

  std::vector<int> mine;
  for (int b = rank; b < nb; b += size) mine.push_back(b);
  if (im.device) return evaluate_device(model, data, frames, lists, w, grad, mine, cE, cF, cV);

  BatchResult res;
  std::vector<FramePrediction> pred(nb);
  std::vector<double> wE(nb), Delta(9 * nb);
  std::vector<std::vector<double>> delta(nb);
  const GradientKernel kernel(model);
  {
    ScopedStage stage("train:forward");
    const int nm = static_cast<int>(mine.size());
#pragma omp parallel for schedule(dynamic, 1) num_threads(im.threads)
    for (int k = 0; k < nm; ++k) {
      const int b = mine[k];
      const PairBasis& pb = lists[b]->basis;
      pred[b].force.resize(3 * static_cast<size_t>(pb.nlocal));
      kernel.forward(pb, pred[b].energy, pred[b].virial, pred[b].force.data(), im.scratch[omp_get_thread_num()]);
    }
    for (int b : mine) {  // in batch order: the sums do not depend on the threads
      const auto& fr = data.frames[frames[b]];
      delta[b].resize(3 * static_cast<size_t>(fr.natoms()));
      res.loss += frame_loss(fr, pred[b].energy, pred[b].virial, pred[b].force.data(), w, cE, cF, cV, res.errors, &wE[b], delta[b].data(), &Delta[9 * b]);
    }
  }
  ScopedStage stage("train:backward");
  const int P = kernel.num_parameters();
  struct Task {
    int b, i0, i1;
  };
  std::vector<Task> tasks;
  for (int b : mine)
    for (int i0 = 0; i0 < lists[b]->basis.nlocal; i0 += kBlock) tasks.push_back({b, i0, std::min(i0 + kBlock, lists[b]->basis.nlocal)});
  const int nt = static_cast<int>(tasks.size());
  im.task_grad.assign(static_cast<size_t>(nt) * P, 0.0);
#pragma omp parallel for schedule(dynamic, 1) num_threads(im.threads)
  for (int t = 0; t < nt; ++t) {
    const Task& k = tasks[t];
    const double* Dl = data.frames[frames[k.b]].has_virial ? &Delta[9 * k.b] : nullptr;
    kernel.accumulate(lists[k.b]->basis, k.i0, k.i1, wE[k.b], delta[k.b].data(), Dl, &im.task_grad[static_cast<size_t>(t) * P],
                      im.scratch[omp_get_thread_num()]);
  }
  for (int p = 0; p < P; ++p) grad[p] = 0.0;
  for (int t = 0; t < nt; ++t) {
    const double* g = &im.task_grad[static_cast<size_t>(t) * P];
    for (int p = 0; p < P; ++p) grad[p] += g[p];
  }
  return res;
}

BatchResult BatchLoss::evaluate_device(const Model& model, const Dataset& data, const std::vector<int>& frames,
                                       const std::vector<std::shared_ptr<const FrameGeometry>>& lists, const LossWeights& w,
                                       double* grad, const std::vector<int>& mine, double cE, double cF, double cV) {
  Impl& im = *impl_;
  if (!im.dev) im.dev = std::make_unique<DeviceGradient>(model);
  const int nm = static_cast<int>(mine.size());
  std::vector<int> ids(nm);
  for (int k = 0; k < nm; ++k) {
    const int b = mine[k];
    ids[k] = frames[b];
    if (!im.dev->resident(ids[k])) im.dev->upload(ids[k], lists[b]->basis);
  }
  BatchResult res;
  std::vector<double> energy(nm), virial(9 * nm), force, wE(nm), Delta(9 * nm), delta;
  {
    ScopedStage stage("train:forward");
    im.dev->forward(model, ids, energy.data(), virial.data(), force);
    delta.resize(force.size());
    size_t at = 0;
    for (int k = 0; k < nm; ++k) {  // in batch order: the sums do not depend on the device
      const auto& fr = data.frames[ids[k]];
      res.loss += frame_loss(fr, energy[k], &virial[9 * k], &force[at], w, cE, cF, cV, res.errors, &wE[k], &delta[at], &Delta[9 * k]);
      at += 3 * static_cast<size_t>(fr.natoms());
    }
  }
  ScopedStage stage("train:backward");
  im.dev->gradient(wE.data(), delta.data(), Delta.data(), grad);
  return res;
}

size_t BatchLoss::device_bytes() const { return impl_->dev ? impl_->dev->device_bytes() : 0; }

void BatchLoss::predict(const Model& model, const Dataset& data, int frame, const NeighborList& nl,
                        FramePrediction& out, ErrorSums& errors) {
  impl_->forward(model, nl, out);
  frame_loss(data.frames[frame], out.energy, out.virial, out.force.data(), LossWeights{}, 0, 0, 0, errors, nullptr, nullptr, nullptr);
}

void BatchLoss::descriptors(const Model& model, const NeighborList& nl, std::vector<double>& q) {
  FramePrediction p;
  q.assign(static_cast<size_t>(nl.nlocal) * model.dim(), 0.0);
  impl_->forward(model, nl, p, q.data());
}

}  // namespace train
}  // namespace nep
