// Per-atom maths of NEP shared by the core's kernels (host and device) and the trainer's (on
// duals): the angular invariants (NEP Eqs. 7-9 and the 4/5-body q_222, q_1111) with their
// gradients, and the per-type network with its gradient. Public (nep/core/) so that the trainer's
// kernels instantiate these very forms, not copies of them (test_train_gradient holds the two equal).
// Index conventions as in the core (evaluator_impl.hpp): moment entries e < S per n; channel
// ch = L-1 for L = 1..L3, then q_222, then q_1111, each at q[ch * stride]. X is the value type
// (float, double or a dual number), C the type of the constants, passed in (c3b:
// kNumAngularEntries, c4b: 5, c5b: 3) so device code never reads host globals.
#pragma once
#include <Kokkos_Macros.hpp>

// NEP_SIMD: `#pragma omp simd` in host code (vectorise this loop; needs -fopenmp or
// -fopenmp-simd), nothing in device code.
#if defined(__CUDA_ARCH__)
#define NEP_SIMD
#else
#define NEP_SIMD _Pragma("omp simd")
#endif

namespace nep {
namespace detail {

// 4-body q_222 from the L = 2 entries a[0..4] and its gradient
template <class X, class C>
KOKKOS_INLINE_FUNCTION X q222_value(const C* c, const X* a) {
  return c[0] * (a[0] * a[0] * a[0]) + c[1] * (a[0] * (a[1] * a[1] + a[2] * a[2])) +
         c[2] * (a[0] * (a[3] * a[3] + a[4] * a[4])) + c[3] * (a[3] * (a[2] * a[2] - a[1] * a[1])) +
         c[4] * (a[1] * a[2] * a[4]);
}
template <class X, class C>
KOKKOS_INLINE_FUNCTION void q222_grad(const C* c, const X* a, X fp, X* g) {
  g[0] += fp * (C(3) * c[0] * (a[0] * a[0]) + c[1] * (a[1] * a[1] + a[2] * a[2]) + c[2] * (a[3] * a[3] + a[4] * a[4]));
  g[1] += fp * (C(2) * c[1] * (a[0] * a[1]) - C(2) * c[3] * (a[3] * a[1]) + c[4] * (a[2] * a[4]));
  g[2] += fp * (C(2) * c[1] * (a[0] * a[2]) + C(2) * c[3] * (a[3] * a[2]) + c[4] * (a[1] * a[4]));
  g[3] += fp * (C(2) * c[2] * (a[0] * a[3]) + c[3] * (a[2] * a[2] - a[1] * a[1]));
  g[4] += fp * (C(2) * c[2] * (a[0] * a[4]) + c[4] * (a[1] * a[2]));
}

// Angular invariants of one n from its moment entries sn[e], into q[ch * stride].
template <class X, class C>
KOKKOS_INLINE_FUNCTION void angular_invariants(int L3, const C* c3b, const C* c4b, const C* c5b, bool q222, bool q1111,
                                               const X* sn, X* q, int stride) {
  for (int L = 1; L <= L3; ++L) {
    const int base = L * L - 1;
    X acc{};
    for (int k = 1; k <= 2 * L; ++k) acc += c3b[base + k] * (sn[base + k] * sn[base + k]);
    q[(L - 1) * stride] = c3b[base] * (sn[base] * sn[base]) + C(2) * acc;
  }
  int ch = L3;
  if (q222) q[(ch++) * stride] = q222_value(c4b, sn + 3);
  if (q1111) {
    const X b0sq = sn[0] * sn[0], b12 = sn[1] * sn[1] + sn[2] * sn[2];
    q[ch * stride] = c5b[0] * (b0sq * b0sq) + c5b[1] * (b0sq * b12) + c5b[2] * (b12 * b12);
  }
}

// G_e = dU/ds_e through the invariants, given fp[ch * stride] = dU/dq of each channel.
template <class X, class C>
KOKKOS_INLINE_FUNCTION void angular_invariant_grad(int L3, const C* c3b, const C* c4b, const C* c5b, bool q222,
                                                   bool q1111, const X* sn, const X* fp, int stride, int S, X* G) {
  for (int e = 0; e < S; ++e) G[e] = X{};
  for (int L = 1; L <= L3; ++L) {
    const int base = L * L - 1;
    const X fpL = fp[(L - 1) * stride];
    G[base] = (C(2) * c3b[base]) * (sn[base] * fpL);
    for (int k = 1; k <= 2 * L; ++k) G[base + k] = (C(4) * c3b[base + k]) * (sn[base + k] * fpL);
  }
  int ch = L3;
  if (q222) q222_grad(c4b, sn + 3, fp[(ch++) * stride], G + 3);
  if (q1111) {
    const X fp5 = fp[ch * stride];
    const X b0sq = sn[0] * sn[0], b12 = sn[1] * sn[1] + sn[2] * sn[2];
    G[0] += fp5 * ((C(4) * c5b[0]) * (b0sq * sn[0]) + (C(2) * c5b[1]) * (sn[0] * b12));
    const X c = (C(2) * c5b[1]) * b0sq + (C(4) * c5b[2]) * b12;
    G[1] += fp5 * (c * sn[1]);
    G[2] += fp5 * (c * sn[2]);
  }
}

// The hidden layer's input z_h = sum_d w0_hd qs_d - b0_h (w0t: [d][h]), four inputs per pass over z.
template <class Real>
KOKKOS_INLINE_FUNCTION void hidden_layer_input(int D, int H, const Real* w0t, const Real* b0, const Real* qs, Real* z) {
  for (int h = 0; h < H; ++h) z[h] = -b0[h];
  int d = 0;
  for (; d + 4 <= D; d += 4) {  // four inputs per pass over z
    const Real q0 = qs[d], q1 = qs[d + 1], q2 = qs[d + 2], q3 = qs[d + 3];
    const Real *w0r = w0t + d * H, *w1r = w0r + H, *w2r = w1r + H, *w3r = w2r + H;
    NEP_SIMD
    for (int h = 0; h < H; ++h) z[h] += (w0r[h] * q0 + w1r[h] * q1) + (w2r[h] * q2 + w3r[h] * q3);
  }
  for (; d < D; ++d) {
    const Real qd = qs[d];
    const Real* w = w0t + d * H;
    NEP_SIMD
    for (int h = 0; h < H; ++h) z[h] += w[h] * qd;
  }
}

// One atom's network (NEP Eq. 1) without the shared bias b1: U = sum_h w1_h tanh(z_h),
// z_h = sum_d w0_hd qs_d - b0_h for the scaled descriptor qs; writes dU/dqs_d into dU.
// w0: [h][d] (H x D), w0t: the same weights transposed [d][h]; z: H of scratch. tanh_rows(n, z)
// replaces z[0..n) by tanh(z) (per element on a device, vectorised on the host).
template <class Real, class TanhRows>
KOKKOS_INLINE_FUNCTION Real network_energy(int D, int H, const Real* w0, const Real* w0t, const Real* b0,
                                           const Real* w1, const Real* qs, Real* z, Real* dU,
                                           const TanhRows& tanh_rows) {
  hidden_layer_input(D, H, w0t, b0, qs, z);
  tanh_rows(H, z);
  Real U = Real(0);
  for (int h = 0; h < H; ++h) {
    const Real t = z[h];
    U += w1[h] * t;
    z[h] = w1[h] * (Real(1) - t * t);  // now dU/dz_h
  }
  for (int k = 0; k < D; ++k) dU[k] = Real(0);
  int h = 0;
  for (; h + 4 <= H; h += 4) {  // four neurons per pass over dU
    const Real g0 = z[h], g1 = z[h + 1], g2 = z[h + 2], g3 = z[h + 3];
    const Real *w0r = w0 + h * D, *w1r = w0r + D, *w2r = w1r + D, *w3r = w2r + D;
    NEP_SIMD
    for (int k = 0; k < D; ++k) dU[k] += (g0 * w0r[k] + g1 * w1r[k]) + (g2 * w2r[k] + g3 * w3r[k]);
  }
  for (; h < H; ++h) {
    const Real g = z[h];
    const Real* w = w0 + h * D;
    NEP_SIMD
    for (int k = 0; k < D; ++k) dU[k] += g * w[k];
  }
  return U;
}

// The qNEP network (NEP4 charge models): the hidden layer of network_energy shared by two
// outputs, the energy U = sum_h w1_h tanh(z_h) (b1 subtracted by the caller) and the raw charge
// Q = sum_h wq_h tanh(z_h) (no bias); writes dU/dqs into dU and dQ/dqs into dQ. z and y: H of scratch.
template <class Real, class TanhRows>
KOKKOS_INLINE_FUNCTION Real network_energy_charge(int D, int H, const Real* w0, const Real* w0t, const Real* b0,
                                                  const Real* w1, const Real* wq, const Real* qs, Real* z, Real* y,
                                                  Real* dU, Real* dQ, Real& Q, const TanhRows& tanh_rows) {
  hidden_layer_input(D, H, w0t, b0, qs, z);
  tanh_rows(H, z);
  Real U = Real(0);
  Q = Real(0);
  for (int h = 0; h < H; ++h) {
    const Real t = z[h], slope = Real(1) - t * t;
    U += w1[h] * t;
    Q += wq[h] * t;
    z[h] = w1[h] * slope;  // dU/dz_h
    y[h] = wq[h] * slope;  // dQ/dz_h
  }
  for (int k = 0; k < D; ++k) dU[k] = dQ[k] = Real(0);
  for (int h = 0; h < H; ++h) {
    const Real gu = z[h], gq = y[h];
    const Real* w = w0 + h * D;
    NEP_SIMD
    for (int k = 0; k < D; ++k) {
      dU[k] += gu * w[k];
      dQ[k] += gq * w[k];
    }
  }
  return U;
}

}  // namespace detail
}  // namespace nep
