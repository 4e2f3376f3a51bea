// One batch of the training loss and its exact parameter gradient.
//
// Forward: GradientKernel::forward on each frame's cached pair basis (equal to the core to
// 1e-10, ctest), one frame per task, so sums never depend on the thread count. Validation,
// outputs and descriptors (predict, descriptors) run the core itself (nep::Evaluator).
// Loss, mean-squared as in TorchNEP (docs/nep_train.md):
//   L = lambda_e/N_E sum_f w_f (e_f - e_f^ref)^2                     e = E / N_atoms (eV/atom)
//     + lambda_f/(3 N_F) sum_atoms w_f w_i |F_i - F_i^ref|^2         (eV/A)
//     + lambda_v/(6 N_V) sum_f w_f sum_{6 comps} (v_f - v_f^ref)^2   v = W / N_atoms (eV/atom)
// N_E, N_F, N_V: frames with energy, labelled atoms (per-atom weight w_i > 0; 1 when the frame
// has none), frames with virial. A carved frame has forces of its core atoms only.
// Gradient: GradientKernel over fixed 64-atom blocks, each into its own buffer, summed in block
// order: the same bytes for any number of threads. With `device`, DeviceGradient computes the
// same forward and gradient (same block order) on the Kokkos default execution space, on its
// device-resident copy of the frames' bases; the loss and its residuals stay on the host.
#pragma once
#include <memory>
#include <vector>

#include "dataset.hpp"
#include "nep/model.hpp"

namespace nep {
namespace train {

struct LossWeights {
  double e = 0.01, f = 1.0, v = 0.01;
};

// Predictions of the core for one frame (forces folded onto the frame's atoms).
struct FramePrediction {
  double energy = 0.0;
  double virial[9] = {0};
  std::vector<double> force;
};

// Sums of squared errors (unweighted) and counts, for RMSEs.
struct ErrorSums {
  double se_e = 0, se_f = 0, se_v = 0, residual_e = 0;  // residual_e: sum of (e - e_ref)
  long n_e = 0, n_f = 0, n_v = 0;
  void add(const ErrorSums& o);
};

struct BatchResult {
  double loss = 0.0;           // L of the batch (without regularisation)
  ErrorSums errors;
};

class BatchLoss {
 public:
  // device: training forward and gradient on the default Kokkos execution space
  // (nep/train/device_gradient.hpp) instead of the host kernel; validation and outputs stay on the core.
  explicit BatchLoss(int threads, bool device = false);
  ~BatchLoss();
  // model: current parameters (incl. b1, q_scaler). grad (size num_trainable_parameters) is
  // overwritten. With MPI, this rank handles the batch positions b with b % size == rank (the
  // others' lists may be null) and returns its partial sums; normalisations are the whole batch's.
  BatchResult evaluate(const Model& model, const Dataset& data, const std::vector<int>& frames,
                       const std::vector<std::shared_ptr<const FrameGeometry>>& lists, const LossWeights& w,
                       double* grad, int rank = 0, int size = 1);
  // Forward only (validation/outputs); also fills `errors`.
  void predict(const Model& model, const Dataset& data, int frame, const NeighborList& nl, FramePrediction& out,
               ErrorSums& errors);
  // Bytes the device path holds on its device (0 without it).
  size_t device_bytes() const;
  // Raw descriptors of a frame's atoms (natoms x dim), for q_scaler.
  void descriptors(const Model& model, const NeighborList& nl, std::vector<double>& q);

 private:
  BatchResult evaluate_device(const Model& model, const Dataset& data, const std::vector<int>& frames,
                              const std::vector<std::shared_ptr<const FrameGeometry>>& lists, const LossWeights& w,
                              double* grad, const std::vector<int>& mine, double cE, double cF, double cV);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// The 6 virial components GPUMD fits, as indices into the row-major 3x3: xx yy zz xy yz zx
constexpr int kVirialComponents[6] = {0, 4, 8, 1, 5, 6};

}  // namespace train
}  // namespace nep
