// Parameter update through LibTorch (kept out of every other header: opaque implementation).
// The loss enters torch as a custom autograd function whose forward is the NEP core plus the
// exact gradient of train_gradient.hpp, and whose backward returns that gradient; L1/L2
// regularisation are torch ops on the same parameter tensor; then gradient-norm clipping and
// Adam/AdamW (amsgrad) from torch::optim. torch runs on one thread: the update is elementwise
// on a few thousand numbers, and a fixed thread count keeps it bit-reproducible.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

namespace nep {
namespace train {

struct OptimizerOptions {
  double lr = 0.01, weight_decay = 1e-4, max_grad_norm = 10.0, lambda_1 = 0.0, lambda_2 = 0.0;
};

class Optimizer {
 public:
  // theta0: initial trainable parameters
  Optimizer(const std::vector<double>& theta0, const OptimizerOptions& o);
  ~Optimizer();
  // loss_fn(theta, grad) -> loss: evaluates the data loss and writes dL/dtheta.
  // One optimisation step; returns the total loss (data + regularisation) at the old theta.
  using LossFn = std::function<double(const double* theta, double* grad)>;
  double step(const LossFn& loss_fn);
  const double* theta() const;
  int size() const;
  void set_lr(double lr);
  double lr() const;
  double l1_term() const;  // lambda_1 mean|theta| at the current theta
  double l2_term() const;  // lambda_2 sqrt(mean theta^2)
  // optimizer state (moments, step counts) as bytes, for checkpoints
  std::string save_state() const;
  void load_state(const std::string& bytes, const std::vector<double>& theta);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace train
}  // namespace nep
