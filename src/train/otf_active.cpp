#include "nep/train/otf_active.hpp"

#include <algorithm>
#include <cmath>

#include "nep/error.hpp"
#include "rng.hpp"

namespace nep {

void force_deviation(const std::vector<const double*>& forces, int n, double* sigma) {
  const size_t M = forces.size();
  if (M < 2) throw Error("force deviation needs a committee of at least 2 models");
  for (int i = 0; i < n; ++i) {
    double mean[3] = {0, 0, 0};
    for (size_t m = 0; m < M; ++m)
      for (int d = 0; d < 3; ++d) mean[d] += forces[m][3 * i + d];
    for (double& v : mean) v /= static_cast<double>(M);
    double var = 0.0;
    for (size_t m = 0; m < M; ++m)
      for (int d = 0; d < 3; ++d) {
        const double e = forces[m][3 * i + d] - mean[d];
        var += e * e;
      }
    sigma[i] = std::sqrt(var / static_cast<double>(M));
  }
}

double frame_deviation(const std::vector<const double*>& forces, int n, const double* weight, bool rms) {
  std::vector<double> sigma(static_cast<size_t>(std::max(n, 0)));
  force_deviation(forces, n, sigma.data());
  double acc = 0.0;
  int counted = 0;
  for (int i = 0; i < n; ++i) {
    if (weight && !(weight[i] > 0.0)) continue;
    acc = rms ? acc + sigma[i] * sigma[i] : std::max(acc, sigma[i]);
    ++counted;
  }
  if (counted == 0) return 0.0;
  return rms ? std::sqrt(acc / counted) : acc;
}

double reference_deviation(const std::vector<double>& frame_deviations) {
  if (frame_deviations.empty()) return -1.0;
  return *std::max_element(frame_deviations.begin(), frame_deviations.end());
}

bool audit_draw(uint64_t seed, int64_t step, double probability) {
  if (probability <= 0.0) return false;
  return train::Rng(seed, train::Stream::Audit, static_cast<uint64_t>(step)).uniform() < probability;
}

void Calibration::add(double predicted, double true_error) {
  if (!(predicted > 0.0) || !std::isfinite(predicted) || !std::isfinite(true_error)) return;
  pred_.push_back(predicted);
  true_.push_back(true_error);
}

void Calibration::assign(const std::vector<double>& predicted, const std::vector<double>& true_errors) {
  pred_ = predicted;
  true_ = true_errors;
}

double Calibration::factor() const {
  if (size() < min_pairs_) return 1.0;
  std::vector<double> r(pred_.size());
  for (size_t k = 0; k < r.size(); ++k) r[k] = true_[k] / pred_[k];
  std::sort(r.begin(), r.end());
  const size_t h = r.size() / 2;
  return r.size() % 2 ? r[h] : 0.5 * (r[h - 1] + r[h]);
}

double Calibration::log_correlation() const {
  const size_t n = pred_.size();
  if (n < 3) return 0.0;
  double sx = 0, sy = 0, sxx = 0, syy = 0, sxy = 0;
  size_t used = 0;
  for (size_t k = 0; k < n; ++k) {
    if (!(true_[k] > 0.0)) continue;
    const double x = std::log(pred_[k]), y = std::log(true_[k]);
    sx += x;
    sy += y;
    sxx += x * x;
    syy += y * y;
    sxy += x * y;
    ++used;
  }
  if (used < 3) return 0.0;
  const double u = static_cast<double>(used);
  const double cov = sxy - sx * sy / u, vx = sxx - sx * sx / u, vy = syy - sy * sy / u;
  return vx > 0 && vy > 0 ? cov / std::sqrt(vx * vy) : 0.0;
}

}  // namespace nep
