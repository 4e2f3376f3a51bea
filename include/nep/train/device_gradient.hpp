// The trainer's forward and parameter gradient (train_gradient.hpp) on the default Kokkos
// execution space: CUDA in a CUDA build, OpenMP on the host otherwise. Same mathematics as
// GradientKernel, on a device-resident copy of the training frames' pair bases.
//
// Data path: upload() queues a frame's PairBasis (the prefetch thread builds bases while the
// device computes); the next forward() packs the queued frames into pinned host buffers and
// copies them asynchronously, on the same stream as the kernels, onto the end of the packed
// device arrays (all frames concatenated: per-atom CSR ranges of radial and angular pairs, and for
// each atom its incoming pairs, so forces are gathered, not scattered). A frame is uploaded once
// and stays resident; each batch then moves only its atom index, the parameters and the loss
// residuals to the device, and energies, forces, virials and the gradient back.
//
// Determinism: forces are gathered per atom in pair order; the gradient is written as one row per
// atom and reduced over fixed 64-atom blocks of each frame, blocks summed in batch order (as the
// host path): the same bytes on every run and any thread count of a given build and device.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "nep/model.hpp"
#include "nep/pair_basis.hpp"

namespace nep {

// Name of the Kokkos default execution space ("Cuda", "OpenMP", "Serial", ...); Kokkos initialised.
std::string device_execution_space();

class DeviceGradient {
 public:
  // Layout of the per-atom scratch and gradient rows: AtomFastest puts entry j of consecutive
  // atoms side by side (coalesced on a GPU), AtomMajor one contiguous row per atom (cache-friendly
  // on a CPU); Auto picks AtomFastest where the execution space cannot read host memory (a GPU).
  // Either is deterministic; the two agree to round-off.
  enum class Layout { Auto, AtomFastest, AtomMajor };
  // Architecture (types, sizes, l_max, 4/5-body flags) from m; parameters come with each forward().
  explicit DeviceGradient(const Model& m, Layout layout = Layout::Auto);
  ~DeviceGradient();
  DeviceGradient(const DeviceGradient&) = delete;
  DeviceGradient& operator=(const DeviceGradient&) = delete;

  bool resident(int frame) const;
  void upload(int frame, const PairBasis& pb);  // queues the frame (copied on the next forward)
  size_t device_bytes() const;                  // packed frames and work arrays on the device

  // Frames (ids given to upload, in batch order) with parameters from m: energy (nb),
  // virial (9 nb, row-major) and forces (3 * atoms, frames concatenated in batch order), ZBL
  // included, as GradientKernel::forward.
  void forward(const Model& m, const std::vector<int>& frames, double* energy, double* virial,
               std::vector<double>& force);
  // After forward() on the same frames and parameters: grad (num_trainable_parameters,
  // overwritten) = sum over the frames of wE dE/dtheta - dPhi/dtheta (train_gradient.hpp) with
  // wE (nb), delta (3 * atoms, as the forces) and Delta (9 nb; zeros for a frame without virial).
  void gradient(const double* wE, const double* delta, const double* Delta, double* grad);

  struct Impl;

 private:
  std::unique_ptr<Impl> impl_;
};

}  // namespace nep
