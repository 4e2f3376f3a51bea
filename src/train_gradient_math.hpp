// Per-atom math shared by the host training kernel (train_gradient.cpp) and its Kokkos port
// (device_gradient.cpp): dual numbers (value, derivative along a seeded direction) and the
// angular invariants of NEP (Eqs. 7-9 and the 4/5-body q_222, q_1111) with their gradients.
// Index conventions as in the core (evaluator_impl.hpp): moment entries e < S per n; channel
// ch = L-1 for L = 1..L3, then q_222, then q_1111, each at q[ch * stride]. The constants are
// passed in (c3b: kNumAngularEntries, c4b: 5, c5b: 3) so device code never reads host globals.
#pragma once
#include <Kokkos_Macros.hpp>

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

// 4-body q_222 from the L = 2 entries a[0..4] and its gradient; X = double or Dual
template <class X>
KOKKOS_INLINE_FUNCTION X q222_value(const double* c, const X* a) {
  return c[0] * (a[0] * a[0] * a[0]) + c[1] * (a[0] * (a[1] * a[1] + a[2] * a[2])) +
         c[2] * (a[0] * (a[3] * a[3] + a[4] * a[4])) + c[3] * (a[3] * (a[2] * a[2] - a[1] * a[1])) +
         c[4] * (a[1] * a[2] * a[4]);
}
template <class X>
KOKKOS_INLINE_FUNCTION void q222_grad(const double* c, const X* a, X fp, X* g) {
  g[0] += fp * (3 * c[0] * (a[0] * a[0]) + c[1] * (a[1] * a[1] + a[2] * a[2]) + c[2] * (a[3] * a[3] + a[4] * a[4]));
  g[1] += fp * (2 * c[1] * (a[0] * a[1]) - 2 * c[3] * (a[3] * a[1]) + c[4] * (a[2] * a[4]));
  g[2] += fp * (2 * c[1] * (a[0] * a[2]) + 2 * c[3] * (a[3] * a[2]) + c[4] * (a[1] * a[4]));
  g[3] += fp * (2 * c[2] * (a[0] * a[3]) + c[3] * (a[2] * a[2] - a[1] * a[1]));
  g[4] += fp * (2 * c[2] * (a[0] * a[4]) + c[4] * (a[1] * a[2]));
}

// Angular invariants of one n from its moment entries sn[e], into q[ch * stride].
template <class X>
KOKKOS_INLINE_FUNCTION void angular_invariants(int L3, const double* c3b, const double* c4b, const double* c5b,
                                               bool q222, bool q1111, const X* sn, X* q, int stride) {
  for (int L = 1; L <= L3; ++L) {
    const int base = L * L - 1;
    X acc{};
    for (int k = 1; k <= 2 * L; ++k) acc += c3b[base + k] * (sn[base + k] * sn[base + k]);
    q[(L - 1) * stride] = c3b[base] * (sn[base] * sn[base]) + 2.0 * acc;
  }
  int ch = L3;
  if (q222) q[(ch++) * stride] = q222_value(c4b, sn + 3);
  if (q1111) {
    const X b0sq = sn[0] * sn[0], b12 = sn[1] * sn[1] + sn[2] * sn[2];
    q[ch * stride] = c5b[0] * (b0sq * b0sq) + c5b[1] * (b0sq * b12) + c5b[2] * (b12 * b12);
  }
}

// G_e = dU/ds_e through the invariants, given fp[ch * stride] = dU/dq of each channel.
template <class X>
KOKKOS_INLINE_FUNCTION void angular_invariant_grad(int L3, const double* c3b, const double* c4b, const double* c5b,
                                                   bool q222, bool q1111, const X* sn, const X* fp, int stride, int S,
                                                   X* G) {
  for (int e = 0; e < S; ++e) G[e] = X{};
  for (int L = 1; L <= L3; ++L) {
    const int base = L * L - 1;
    const X fpL = fp[(L - 1) * stride];
    G[base] = (2.0 * c3b[base]) * (sn[base] * fpL);
    for (int k = 1; k <= 2 * L; ++k) G[base + k] = (4.0 * c3b[base + k]) * (sn[base + k] * fpL);
  }
  int ch = L3;
  if (q222) q222_grad(c4b, sn + 3, fp[(ch++) * stride], G + 3);
  if (q1111) {
    const X fp5 = fp[ch * stride];
    const X b0sq = sn[0] * sn[0], b12 = sn[1] * sn[1] + sn[2] * sn[2];
    G[0] += fp5 * ((4 * c5b[0]) * (b0sq * sn[0]) + (2 * c5b[1]) * (sn[0] * b12));
    const X c = (2 * c5b[1]) * b0sq + (4 * c5b[2]) * b12;
    G[1] += fp5 * (c * sn[1]);
    G[2] += fp5 * (c * sn[2]);
  }
}

}  // namespace detail
}  // namespace nep
