// tanh for the host kernels, written so that a loop over an array vectorises (libm's tanh is a
// call per element): tanh|z| = e / (e + 2) with e = expm1(2|z|); expm1 by the reduction
// x = k ln2 + r, |r| <= ln2/2 (ln2 split in two, Cody-Waite) and the Taylor series of expm1(r)
// to r^13 (the first omitted term is < 4e-18 of the result), then expm1(x) = 2^k expm1(r) + 2^k - 1.
// Within a few ulp of libm (tests/test_host_kernel.cpp holds it to 1e-15 relative). Public
// (nep/core/): the trainer's host kernel uses the same tanh as the core's.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "nep/core/descriptor_math.hpp"  // NEP_SIMD

namespace nep {
namespace detail {

inline double tanh_host(double z) {
  const double az = std::fabs(z);
  const double a = az > 20.0 ? 20.0 : az;  // tanh(20) = 1 - 8e-18, i.e. 1; NaN passes through
  const double x = 2.0 * a;
  const double kf = std::floor(x * 1.4426950408889634 + 0.5);  // nearest integer to x / ln2
  const double r = (x - kf * 6.93147180369123816490e-01) - kf * 1.90821492927058770002e-10;
  constexpr double inv_fact[14] = {1.0, 1.0, 1.0 / 2, 1.0 / 6, 1.0 / 24, 1.0 / 120, 1.0 / 720, 1.0 / 5040,
                                   1.0 / 40320, 1.0 / 362880, 1.0 / 3628800, 1.0 / 39916800,
                                   1.0 / 479001600, 1.0 / 6227020800.0};
  double p = inv_fact[13];
  for (int j = 12; j >= 1; --j) p = p * r + inv_fact[j];
  const double em = p * r;  // expm1(r)
  const std::int64_t bits = (static_cast<std::int64_t>(kf) + 1023) << 52;
  double two_k;
  std::memcpy(&two_k, &bits, sizeof two_k);
  const double e = two_k * em + (two_k - 1.0);
  return std::copysign(e / (e + 2.0), z);
}

// z[0..n) <- tanh(z), computed in double for either precision
struct TanhRowsHost {
  template <class Real>
  void operator()(int n, Real* z) const {
    NEP_SIMD
    for (int h = 0; h < n; ++h) z[h] = Real(tanh_host(double(z[h])));
  }
};

}  // namespace detail
}  // namespace nep
