#include "optimizer.hpp"

#include <torch/torch.h>

#ifdef _OPENMP
#include <omp.h>
#endif
#include <sstream>

#include "nep/error.hpp"
#include "nep/timing.hpp"

namespace nep {
namespace train {

namespace {

// LibTorch's tensor ops on one thread while this object lives, on the calling thread only: the
// parameter vector is small, and intra-op OpenMP workers that spin would starve MD. LibTorch's
// CPU build parallelises through OpenMP (at::get_parallel_info), whose thread count is a
// per-thread setting; torch::set_num_threads would instead change every LibTorch user in the
// process (it also sets the count new threads start with), so it is not used.
class OneTorchThread {
 public:
  OneTorchThread() {
#ifdef _OPENMP
    prev_ = omp_get_max_threads();
    omp_set_num_threads(1);
#endif
  }
  ~OneTorchThread() {
#ifdef _OPENMP
    omp_set_num_threads(prev_);
#endif
  }
  OneTorchThread(const OneTorchThread&) = delete;
  OneTorchThread& operator=(const OneTorchThread&) = delete;

 private:
  int prev_ = 1;
};

// L(theta) through the NEP core; backward hands torch the exact gradient computed in forward.
struct NepLoss : public torch::autograd::Function<NepLoss> {
  static torch::Tensor forward(torch::autograd::AutogradContext* ctx, torch::Tensor theta, const Optimizer::LossFn* fn) {
    auto grad = torch::empty_like(theta);
    const double loss = (*fn)(theta.data_ptr<double>(), grad.data_ptr<double>());
    ctx->save_for_backward({grad});
    return torch::tensor(loss, torch::kFloat64);
  }
  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_out) {
    auto grad = ctx->get_saved_variables()[0];
    return {grad * grad_out[0], torch::Tensor()};
  }
};

}  // namespace

struct Optimizer::Impl {
  OptimizerOptions o;
  torch::Tensor theta;
  std::unique_ptr<torch::optim::Optimizer> opt;
  int P = 0;

  void make() {
    if (o.weight_decay > 0)
      opt = std::make_unique<torch::optim::AdamW>(std::vector<torch::Tensor>{theta},
                                                  torch::optim::AdamWOptions(o.lr).weight_decay(o.weight_decay).amsgrad(true));
    else
      opt = std::make_unique<torch::optim::Adam>(std::vector<torch::Tensor>{theta}, torch::optim::AdamOptions(o.lr).amsgrad(true));
  }
  torch::Tensor regularisation() const {
    torch::Tensor r = torch::zeros({}, torch::kFloat64);
    if (o.lambda_1 > 0) r = r + o.lambda_1 * theta.abs().mean();
    if (o.lambda_2 > 0) r = r + o.lambda_2 * theta.pow(2).mean().sqrt();
    return r;
  }
};

Optimizer::Optimizer(const std::vector<double>& theta0, const OptimizerOptions& o) : impl_(new Impl) {
  OneTorchThread one;
  impl_->o = o;
  impl_->P = static_cast<int>(theta0.size());
  impl_->theta = torch::from_blob(const_cast<double*>(theta0.data()), {impl_->P}, torch::kFloat64).clone().requires_grad_(true);
  impl_->make();
}

double Optimizer::step(const LossFn& loss_fn) {
  OneTorchThread one;  // (the loss function's own OpenMP regions name their thread count)
  Impl& im = *impl_;
  im.opt->zero_grad();
  torch::Tensor loss = NepLoss::apply(im.theta, &loss_fn);
  loss = loss + im.regularisation();
  {
    ScopedStage stage("train:optimizer");
    loss.backward();
    if (im.o.max_grad_norm > 0) torch::nn::utils::clip_grad_norm_(std::vector<torch::Tensor>{im.theta}, im.o.max_grad_norm);
    im.opt->step();
  }
  return loss.item<double>();
}

const double* Optimizer::theta() const { return impl_->theta.data_ptr<double>(); }
int Optimizer::size() const { return impl_->P; }

Optimizer::~Optimizer() = default;

void Optimizer::set_lr(double lr) {
  for (auto& g : impl_->opt->param_groups()) g.options().set_lr(lr);
}

double Optimizer::lr() const { return impl_->opt->param_groups().at(0).options().get_lr(); }

double Optimizer::l1_term() const {
  OneTorchThread one;
  torch::NoGradGuard ng;
  return impl_->o.lambda_1 > 0 ? impl_->o.lambda_1 * impl_->theta.abs().mean().item<double>() : 0.0;
}

double Optimizer::l2_term() const {
  OneTorchThread one;
  torch::NoGradGuard ng;
  return impl_->o.lambda_2 > 0 ? impl_->o.lambda_2 * impl_->theta.pow(2).mean().sqrt().item<double>() : 0.0;
}

std::string Optimizer::save_state() const {
  OneTorchThread one;
  torch::serialize::OutputArchive ar;
  impl_->opt->save(ar);
  std::ostringstream os;
  ar.save_to(os);
  return os.str();
}

void Optimizer::load_state(const std::string& bytes, const std::vector<double>& theta) {
  if (static_cast<int>(theta.size()) != impl_->P) throw Error("checkpoint has a different number of parameters");
  OneTorchThread one;
  {
    torch::NoGradGuard ng;
    impl_->theta.copy_(torch::from_blob(const_cast<double*>(theta.data()), {impl_->P}, torch::kFloat64));
  }
  torch::serialize::InputArchive ar;
  std::istringstream is(bytes);
  ar.load_from(is);
  impl_->opt->load(ar);
}

}  // namespace train
}  // namespace nep
