// Per-atom math shared by the host training kernel (train_gradient.cpp) and its Kokkos port
// (device_gradient.cpp): dual numbers (value, derivative along a seeded direction) and the
// radial sum g_n of a pair; the angular invariants come from descriptor_math.hpp (shared with
// the core), instantiated on Dual.
#pragma once
#include <Kokkos_Macros.hpp>

#include "nep/core/descriptor_math.hpp"

namespace nep {
namespace detail {

struct Dual {
  double v = 0.0, d = 0.0;
};
KOKKOS_INLINE_FUNCTION Dual operator+(Dual a, Dual b) { return {a.v + b.v, a.d + b.d}; }
KOKKOS_INLINE_FUNCTION Dual operator-(Dual a, Dual b) { return {a.v - b.v, a.d - b.d}; }
KOKKOS_INLINE_FUNCTION Dual operator*(Dual a, Dual b) { return {a.v * b.v, a.v * b.d + a.d * b.v}; }
KOKKOS_INLINE_FUNCTION Dual operator*(double c, Dual a) { return {c * a.v, c * a.d}; }
KOKKOS_INLINE_FUNCTION Dual operator*(Dual a, double c) { return {c * a.v, c * a.d}; }
KOKKOS_INLINE_FUNCTION Dual& operator+=(Dual& a, Dual b) {
  a.v += b.v;
  a.d += b.d;
  return a;
}

// Radial function of one pair and channel n: g_n(d) = sum_k c_nk f_k(d) (c: row n of the pair's
// coefficients, f: its basis values; with the basis derivatives f_k'(d), g_n'(d)).
KOKKOS_INLINE_FUNCTION double radial_sum(const double* c, const double* f, int K) {
  double g = 0.0;
  for (int k = 0; k < K; ++k) g += c[k] * f[k];
  return g;
}

}  // namespace detail
}  // namespace nep
