// Active learning helpers of fix nep/train (mode active), free of LAMMPS, Kokkos and LibTorch:
// the committee's force deviation, the seeded audit draw, and the calibration of the deviation
// against the true error of the teacher calls.
#pragma once
#include <cstdint>
#include <vector>

namespace nep {

// Per-atom force deviation of a committee of M models (DP-GEN / GPUMD definition):
//   sigma_i = sqrt( (1/M) sum_m |F_i^m - <F_i>|^2 ),  <F_i> = (1/M) sum_m F_i^m
// forces[m] points at 3n values (atom-major xyz) of member m; sigma receives n values.
void force_deviation(const std::vector<const double*>& forces, int n, double* sigma);

// A frame's committee deviation as a check step reduces it: the max over atoms of sigma_i, or with
// rms the root mean square over atoms. weight (n values, may be null) masks atoms of weight 0 (a
// carved frame's unlabelled atoms); 0 when no atom counts.
double frame_deviation(const std::vector<const double*>& forces, int n, const double* weight, bool rms);

// The reference deviation of `threshold LO HI grade`: the largest frame deviation of the committee
// over its own training frames (an extrapolation grade of 1 is the edge of the training data, as in
// MTP's grade); -1 for no frames.
double reference_deviation(const std::vector<double>& frame_deviations);

// Whether step `step` is audited (teacher called although the committee trusts the student):
// uniform draw of the stream (seed, Audit, step) below `probability`. A function of (seed, step)
// alone, so the audit steps never depend on ranks, threads or timing (docs/fix_nep_train.rst).
bool audit_draw(uint64_t seed, int64_t step, double probability);

// Pairs (predicted deviation, true error) from teacher calls: the max over atoms of the committee
// deviation, and the max over atoms of |F_student - F_teacher|. The calibration factor is the
// median of true / predicted (robust to a few outliers); 1 until `min_pairs` pairs exist.
class Calibration {
 public:
  explicit Calibration(int min_pairs = 5) : min_pairs_(min_pairs) {}
  void add(double predicted, double true_error);
  double factor() const;
  // Pearson correlation of log(predicted) and log(true error) over the pairs (0 if < 3 pairs)
  double log_correlation() const;
  int size() const { return static_cast<int>(pred_.size()); }
  const std::vector<double>& predicted() const { return pred_; }
  const std::vector<double>& true_errors() const { return true_; }
  void assign(const std::vector<double>& predicted, const std::vector<double>& true_errors);

 private:
  int min_pairs_;
  std::vector<double> pred_, true_;
};

}  // namespace nep
