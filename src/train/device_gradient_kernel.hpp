// The training kernels of DeviceGradient (device_gradient.cpp): one functor, a tag per stage.
// Every body is the per-atom loop body of GradientKernel (train_gradient.cpp), same conventions:
//   descriptor q = [radial n < NR | angular (L-1)*NA + n | q_222 | q_1111], moments s[n*S + e];
//   theta = [ann without b1 | c]; one gradient row per atom =
//     [its network's w0 (H*D), b0 (H), w1 (H) | c_R (n*KR+k)*T + t | c_A (n*KA+k)*T + t]
//   for the c entries with first type = the atom's type (c index (n*K+k)*T*T + ti*T + t).
// Packed arrays hold all resident frames one after another; atoms and pairs carry global
// indices (int64 offsets), a batch refers to its atoms by position k and to its frames by b.
// Per-atom scratch (work) and gradient rows are AtomArrays: on a GPU entry j of consecutive atoms
// is adjacent (as GPUMD's [entry * N + atom] arrays), so a warp's accesses coalesce; on a CPU each
// atom's entries are one contiguous row (DeviceGradient::Layout).
#pragma once
#include <Kokkos_Core.hpp>
#include <cstdint>

#include "nep/angular_basis.hpp"
#include "nep/core/kokkos_compat.hpp"
#include "train_gradient_math.hpp"

namespace nep {
namespace device_train {

using ExecSpace = Kokkos::DefaultExecutionSpace;
using MemSpace = ExecSpace::memory_space;
#ifdef KOKKOS_ENABLE_CUDA
using PinnedSpace = Kokkos::CudaHostPinnedSpace;
#else
using PinnedSpace = Kokkos::HostSpace;
#endif
template <class T>
using DView = Kokkos::View<T*, MemSpace>;
template <class T>
using PView = Kokkos::View<T*, PinnedSpace>;

// The entries of one atom, addressed like a pointer (row[j], row + offset).
struct AtomRow {
  double* p;
  int64_t stride;
  KOKKOS_INLINE_FUNCTION double& operator[](int j) const { return p[j * stride]; }
  KOKKOS_INLINE_FUNCTION AtomRow operator+(int offset) const { return {p + offset * stride, stride}; }
};
// entries x atoms in one buffer: entry j of atom k at k * atom_step + j * entry_step
struct AtomArray {
  DView<double> data;
  int64_t atom_step = 0, entry_step = 0;
  KOKKOS_INLINE_FUNCTION AtomRow row(int k) const { return {&data(k * atom_step), entry_step}; }
  KOKKOS_INLINE_FUNCTION double& operator()(int k, int j) const { return data(k * atom_step + j * entry_step); }
};

// angular channels of one n: L = 1..l_max, q_222, q_1111
constexpr int kMaxAngularChannels = kMaxL + 2;

struct TagForward {};
struct TagGather {};
struct TagBackward {};
struct TagBlockSum {};
struct TagParamSum {};

using detail::Dual;

// Everything a kernel reads, by value (views are reference-counted handles).
struct TrainKernel : ModelSizes {
  // architecture beyond the model's sizes
  int P, Pa, A, b1, Wsz, NCH;  // NCH: angular channels per n
  int KRp;                     // row stride of r_fp (PairBasis)
  double c4b[5], c5b[3];
  // packed frames
  DView<int> type;
  DView<double> B;
  DView<int64_t> r_begin, a_begin, ri_begin, ai_begin, ri_pair, ai_pair;
  DView<int> r_owner, r_type, a_owner, a_type;
  DView<double> r_geom, r_fp, a_geom, a_f, a_fp, a_Y, a_dY, zbl_f;
  DView<double> r_force, a_force;  // per pair force of the last forward (3 per pair)
  // parameters
  DView<double> ann, c, qsc, cA_pair, c3b;
  // batch
  DView<int64_t> batch_atom, frame_shift;  // owner's batch position = owner - frame_shift(b)
  DView<int> batch_frame, block_begin;
  DView<double> e_atom, w_atom, force;
  AtomArray work;  // per-atom scratch (Wsz entries)
  // gradient
  DView<double> wE, delta, Delta, partial, grad;
  AtomArray rows;  // per-atom gradient rows (Pa entries)
  DView<int> p_req, p_row;  // per parameter: atom type it needs (-1: any) and its row entry
  int n_blocks = 0;

  KOKKOS_INLINE_FUNCTION double cR(int n, int k, int ti, int t) const { return c((n * KR + k) * T * T + ti * T + t); }

  // ---- forward of atom k: energy, per-atom virial, per-pair forces (GradientKernel::forward)
  KOKKOS_INLINE_FUNCTION void operator()(TagForward, const int k) const {
    const int64_t i = batch_atom(k);
    const int ti = type(i);
    e_atom(k) = 0.0;
    for (int cc = 0; cc < 9; ++cc) w_atom(9 * k + cc) = 0.0;
    if (ti < 0) return;
    const AtomRow s = work.row(k);  // NA*S
    const AtomRow G = s + NA * S;         // NA*S
    const AtomRow q = G + NA * S;         // D
    const AtomRow dU = q + D;             // D
    const AtomRow z = dU + D;             // H
    const AtomRow cF = z + H;             // T*KR
    const double* Bv = &B(i * T * KR);
    for (int n = 0; n < NR; ++n) {
      double acc = 0.0;
      for (int kk = 0; kk < KR; ++kk)
        for (int t = 0; t < T; ++t) acc += cR(n, kk, ti, t) * Bv[t * KR + kk];
      q[n] = acc;
    }
    const int64_t a0 = a_begin(i), a1 = a_begin(i + 1);
    for (int e = 0; e < NA * S; ++e) s[e] = 0.0;
    for (int64_t p = a0; p < a1; ++p) {
      const double* Y = &a_Y(p * S);
      const double* f = &a_f(p * KA);
      const double* cp = &cA_pair((ti * T + a_type(p)) * NA * KA);
      for (int n = 0; n < NA; ++n) {
        const double g = detail::radial_sum(cp + n * KA, f, KA);
        const AtomRow sn = s + n * S;
        for (int e = 0; e < S; ++e) sn[e] += g * Y[e];
      }
    }
    for (int n = 0; n < NA; ++n) {
      double sn[kNumAngularEntries], qn[kMaxAngularChannels];
      for (int e = 0; e < S; ++e) sn[e] = s[n * S + e];
      detail::angular_invariants(L3, &c3b(0), c4b, c5b, q222, q1111, sn, qn, 1);
      for (int ch = 0; ch < NCH; ++ch) q[NR + ch * NA + n] = qn[ch];
    }
    const int off = ann_stride * ti;
    const double* w0 = &ann(off);
    const double* b0 = w0 + H * D;
    const double* w1 = b0 + H;
    double U = 0.0;
    for (int h = 0; h < H; ++h) {
      double zh = -b0[h];
      for (int d = 0; d < D; ++d) zh += w0[h * D + d] * (q[d] * qsc(d));
      const double t = kmath::tanh(zh);
      U += w1[h] * t;
      z[h] = w1[h] * (1.0 - t * t);
    }
    for (int d = 0; d < D; ++d) dU[d] = 0.0;
    for (int h = 0; h < H; ++h)
      for (int d = 0; d < D; ++d) dU[d] += z[h] * w0[h * D + d];
    for (int d = 0; d < D; ++d) dU[d] *= qsc(d);
    e_atom(k) = U - ann(b1);
    // radial pair forces f_ij = (sum_k f_k'(d) cF_{tj,k}) r_hat, cF_tk = sum_n c_nk(ti,t) dU/dq_n
    for (int t = 0; t < T; ++t)
      for (int kk = 0; kk < KR; ++kk) {
        double acc = 0.0;
        for (int n = 0; n < NR; ++n) acc += cR(n, kk, ti, t) * dU[n];
        cF[t * KR + kk] = acc;
      }
    double wv[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int64_t p = r_begin(i); p < r_begin(i + 1); ++p) {
      const double* g = &r_geom(4 * p);
      const double* fp = &r_fp(p * KRp);
      const AtomRow cc = cF + r_type(p) * KR;
      double fr = 0.0;
      for (int kk = 0; kk < KR; ++kk) fr += fp[kk] * cc[kk];
      fr *= g[3];
      for (int x = 0; x < 3; ++x) {
        const double fx = fr * g[x];
        r_force(3 * p + x) = fx;
        for (int a = 0; a < 3; ++a) wv[3 * a + x] -= g[a] * fx;
      }
    }
    // angular: G_ne = dU/ds_ne; d/dr [g_n Y_e] = g_n' Y_e r_hat + g_n (grad Y_e)_perp / d
    for (int n = 0; n < NA; ++n) {
      double sn[kNumAngularEntries], fpn[kMaxAngularChannels], Gn[kNumAngularEntries];
      for (int e = 0; e < S; ++e) sn[e] = s[n * S + e];
      for (int ch = 0; ch < NCH; ++ch) fpn[ch] = dU[NR + ch * NA + n];
      detail::angular_invariant_grad(L3, &c3b(0), c4b, c5b, q222, q1111, sn, fpn, 1, S, Gn);
      for (int e = 0; e < S; ++e) G[n * S + e] = Gn[e];
    }
    for (int64_t p = a0; p < a1; ++p) {
      const double* g = &a_geom(4 * p);
      const auto [Y, dY, f, fp] = angular_pair(p);
      const double* cp = &cA_pair((ti * T + a_type(p)) * NA * KA);
      double a = 0.0, b[3] = {0, 0, 0};
      for (int n = 0; n < NA; ++n) {
        const double gn = detail::radial_sum(cp + n * KA, f, KA), gp = detail::radial_sum(cp + n * KA, fp, KA);
        const AtomRow Gn = G + n * S;
        for (int e = 0; e < S; ++e) {
          a += Gn[e] * gp * Y[e];
          const double hn = Gn[e] * gn;
          b[0] += hn * dY[3 * e];
          b[1] += hn * dY[3 * e + 1];
          b[2] += hn * dY[3 * e + 2];
        }
      }
      const double dinv = g[3];
      const double uh[3] = {g[0] * dinv, g[1] * dinv, g[2] * dinv};
      const double bu = b[0] * uh[0] + b[1] * uh[1] + b[2] * uh[2];
      for (int x = 0; x < 3; ++x) {
        const double fx = a * uh[x] + (b[x] - bu * uh[x]) * dinv;
        a_force(3 * p + x) = fx;
        for (int aa = 0; aa < 3; ++aa) wv[3 * aa + x] -= g[aa] * fx;
      }
    }
    for (int cc = 0; cc < 9; ++cc) w_atom(9 * k + cc) = wv[cc];
  }

  // ---- force on atom k: its pairs' forces minus those of the pairs it is the neighbour in
  KOKKOS_INLINE_FUNCTION void operator()(TagGather, const int k) const {
    const int64_t i = batch_atom(k);
    double f[3] = {0, 0, 0};
    for (int64_t p = r_begin(i); p < r_begin(i + 1); ++p)
      for (int x = 0; x < 3; ++x) f[x] += r_force(3 * p + x);
    for (int64_t p = a_begin(i); p < a_begin(i + 1); ++p)
      for (int x = 0; x < 3; ++x) f[x] += a_force(3 * p + x);
    for (int64_t m = ri_begin(i); m < ri_begin(i + 1); ++m)
      for (int x = 0; x < 3; ++x) f[x] -= r_force(3 * ri_pair(m) + x);
    for (int64_t m = ai_begin(i); m < ai_begin(i + 1); ++m)
      for (int x = 0; x < 3; ++x) f[x] -= a_force(3 * ai_pair(m) + x);
    for (int x = 0; x < 3; ++x) force(3 * k + x) = f[x] + (zbl ? zbl_f(3 * i + x) : 0.0);
  }

  // ---- gradient row of atom k (GradientKernel::accumulate for one atom)
  // long-function: one Kokkos work item per atom holds the atom's Dual descriptor, network state and
  // tangents in local arrays through every phase (descriptor, network backward, radial and angular
  // chain rules); device functions for the phases would pass them all by reference and risk spills.
  KOKKOS_INLINE_FUNCTION void operator()(TagBackward, const int k) const {
    const AtomRow row = rows.row(k);
    for (int x = 0; x < Pa; ++x) row[x] = 0.0;
    const int64_t i = batch_atom(k);
    const int ti = type(i);
    if (ti < 0) return;
    const int b = batch_frame(k);
    const int64_t shift = frame_shift(b);
    const double wEb = wE(b);
    const double* Dl = &Delta(9 * b);
    const double* di = &delta(3 * static_cast<int64_t>(k));
    // scratch: value (v) and tangent (d) parts of the dual quantities
    const AtomRow Bd = work.row(k);  // T*KR
    const AtomRow sv = Bd + T * KR;        // NA*S each
    const AtomRow sd = sv + NA * S;
    const AtomRow Gv = sd + NA * S;
    const AtomRow Gd = Gv + NA * S;
    const AtomRow qsv = Gd + NA * S;  // D each: scaled descriptor
    const AtomRow qsd = qsv + D;
    const AtomRow Fpv = qsd + D;      // D each: dU/dq
    const AtomRow Fpd = Fpv + D;
    auto coef = [wEb](Dual x) { return wEb * x.v - x.d; };
    // tangent of r_ij: u = delta_j - delta_i + Delta^T r_ij
    auto tangent = [&](int owner, const double* r, double* u) {
      const double* dj = &delta(3 * (owner - shift));
      for (int x = 0; x < 3; ++x) u[x] = dj[x] - di[x] + Dl[x] * r[0] + Dl[3 + x] * r[1] + Dl[6 + x] * r[2];
    };
    // radial: B (cached) and its tangent Bd_tk = sum_j f_k'(d_ij) (r_hat_ij . u_ij)
    const double* Bv = &B(i * T * KR);
    for (int x = 0; x < T * KR; ++x) Bd[x] = 0.0;
    for (int64_t p = r_begin(i); p < r_begin(i + 1); ++p) {
      const double* g = &r_geom(4 * p);
      double u[3];
      tangent(r_owner(p), g, u);
      const double dd = (g[0] * u[0] + g[1] * u[1] + g[2] * u[2]) * g[3];
      const double* fp = &r_fp(p * KRp);
      const AtomRow bd = Bd + r_type(p) * KR;
      for (int kk = 0; kk < KR; ++kk) bd[kk] += fp[kk] * dd;
    }
    // angular moments and their tangents
    const int64_t a0 = a_begin(i), a1 = a_begin(i + 1);
    for (int e = 0; e < NA * S; ++e) sv[e] = sd[e] = 0.0;
    for (int64_t p = a0; p < a1; ++p) {
      double ud[3], dd;
      pair_tangent(p, tangent, ud, dd);
      const auto [Y, dY, f, fp] = angular_pair(p);
      const double* cp = &cA_pair((ti * T + a_type(p)) * NA * KA);
      for (int n = 0; n < NA; ++n) {
        const double gv = detail::radial_sum(cp + n * KA, f, KA), gd = detail::radial_sum(cp + n * KA, fp, KA) * dd;
        const AtomRow snv = sv + n * S;
        const AtomRow snd = sd + n * S;
        for (int e = 0; e < S; ++e) {
          const double Yd = dY[3 * e] * ud[0] + dY[3 * e + 1] * ud[1] + dY[3 * e + 2] * ud[2];
          snv[e] += gv * Y[e];
          snd[e] += gd * Y[e] + gv * Yd;
        }
      }
    }
    // descriptor, scaled
    for (int n = 0; n < NR; ++n) {
      Dual acc;
      for (int kk = 0; kk < KR; ++kk)
        for (int t = 0; t < T; ++t) {
          const double cc = cR(n, kk, ti, t);
          acc.v += cc * Bv[t * KR + kk];
          acc.d += cc * Bd[t * KR + kk];
        }
      qsv[n] = qsc(n) * acc.v;
      qsd[n] = qsc(n) * acc.d;
    }
    for (int n = 0; n < NA; ++n) {
      Dual sn[kNumAngularEntries], qn[kMaxAngularChannels];
      for (int e = 0; e < S; ++e) sn[e] = {sv[n * S + e], sd[n * S + e]};
      detail::angular_invariants(L3, &c3b(0), c4b, c5b, q222, q1111, sn, qn, 1);
      for (int ch = 0; ch < NCH; ++ch) {
        const int d = NR + ch * NA + n;
        qsv[d] = qsc(d) * qn[ch].v;
        qsd[d] = qsc(d) * qn[ch].d;
      }
    }
    // network and its parameter gradient (row[0, A))
    const int off = ann_stride * ti;
    const double* w0 = &ann(off);
    const double* b0 = w0 + H * D;
    const double* w1 = b0 + H;
    const AtomRow gw0 = row;
    const AtomRow gb0 = gw0 + H * D;
    const AtomRow gw1 = gb0 + H;
    for (int d = 0; d < D; ++d) Fpv[d] = Fpd[d] = 0.0;
    for (int h = 0; h < H; ++h) {
      const double* wr = w0 + h * D;
      double zv = -b0[h], zd = 0.0;
      for (int d = 0; d < D; ++d) {
        zv += wr[d] * qsv[d];
        zd += wr[d] * qsd[d];
      }
      const double t = kmath::tanh(zv);
      const Dual th{t, (1.0 - t * t) * zd};
      const Dual gh{w1[h] * (1.0 - t * t), -2.0 * w1[h] * t * th.d};  // dU/dz_h
      gw1[h] += coef(th);
      gb0[h] -= coef(gh);
      const double a = wEb * gh.v - gh.d, bb = -gh.v;
      const AtomRow gw = gw0 + h * D;
      for (int d = 0; d < D; ++d) {
        gw[d] += a * qsv[d] + bb * qsd[d];
        Fpv[d] += gh.v * wr[d];
        Fpd[d] += gh.d * wr[d];
      }
    }
    for (int d = 0; d < D; ++d) {
      Fpv[d] = qsc(d) * Fpv[d];
      Fpd[d] = qsc(d) * Fpd[d];
    }
    // radial c: dU/dc_nk(ti,t) = Fp_n B_tk
    const AtomRow gcR = row + A;
    for (int n = 0; n < NR; ++n) {
      const Dual fpn{Fpv[n], Fpd[n]};
      for (int kk = 0; kk < KR; ++kk)
        for (int t = 0; t < T; ++t) {
          const Dual bt{Bv[t * KR + kk], Bd[t * KR + kk]};
          gcR[(n * KR + kk) * T + t] += coef(fpn * bt);
        }
    }
    // angular c: per pair P_n = sum_e G_ne Y_e, dU/dc_nk(ti,tj) += P_n f_k(d_ij)
    for (int n = 0; n < NA; ++n) {
      Dual sn[kNumAngularEntries], fpn[kMaxAngularChannels], Gn[kNumAngularEntries];
      for (int e = 0; e < S; ++e) sn[e] = {sv[n * S + e], sd[n * S + e]};
      for (int ch = 0; ch < NCH; ++ch) fpn[ch] = {Fpv[NR + ch * NA + n], Fpd[NR + ch * NA + n]};
      detail::angular_invariant_grad(L3, &c3b(0), c4b, c5b, q222, q1111, sn, fpn, 1, S, Gn);
      for (int e = 0; e < S; ++e) {
        Gv[n * S + e] = Gn[e].v;
        Gd[n * S + e] = Gn[e].d;
      }
    }
    const AtomRow gcA = gcR + NR * KR * T;
    for (int64_t p = a0; p < a1; ++p) {
      double ud[3], dd;
      pair_tangent(p, tangent, ud, dd);
      const auto [Y, dY, f, fp] = angular_pair(p);
      const int tj = a_type(p);
      for (int n = 0; n < NA; ++n) {
        const AtomRow gv = Gv + n * S;
        const AtomRow gd = Gd + n * S;
        double pv = 0.0, pd = 0.0;
        for (int e = 0; e < S; ++e) {
          const double Yd = dY[3 * e] * ud[0] + dY[3 * e + 1] * ud[1] + dY[3 * e + 2] * ud[2];
          pv += gv[e] * Y[e];
          pd += gd[e] * Y[e] + gv[e] * Yd;
        }
        const double a = wEb * pv - pd, bb = pv * dd;  // coef(P f) = wE pv f - (pd f + pv f' dd)
        for (int kk = 0; kk < KA; ++kk) gcA[(n * KA + kk) * T + tj] += a * f[kk] - bb * fp[kk];
      }
    }
  }

  // the cached basis of angular pair p
  struct AngularPair {
    const double *Y, *dY, *f, *fp;
  };
  KOKKOS_INLINE_FUNCTION AngularPair angular_pair(int64_t p) const {
    return {&a_Y(p * S), &a_dY(p * 3 * S), &a_f(p * KA), &a_fp(p * KA)};
  }

  // the tangent of r_hat (u - r_hat (r_hat.u)) / d and r_hat.u of angular pair p
  template <class Tangent>
  KOKKOS_INLINE_FUNCTION void pair_tangent(int64_t p, const Tangent& tangent, double* ud, double& dd) const {
    const double* g = &a_geom(4 * p);
    const double dinv = g[3];
    double u[3], uh[3];
    tangent(a_owner(p), g, u);
    for (int x = 0; x < 3; ++x) uh[x] = g[x] * dinv;
    dd = uh[0] * u[0] + uh[1] * u[1] + uh[2] * u[2];
    for (int x = 0; x < 3; ++x) ud[x] = (u[x] - uh[x] * dd) * dinv;
  }

  // ---- block sums of the rows, then blocks in order: fixed summation order
  KOKKOS_INLINE_FUNCTION void operator()(TagBlockSum, const int64_t x) const {
    const int blk = static_cast<int>(x / P), p = static_cast<int>(x % P);
    const int req = p_req(p);
    const int col = p_row(p);
    double acc = 0.0;
    for (int k = block_begin(blk); k < block_begin(blk + 1); ++k) {
      const int t = type(batch_atom(k));
      if (t >= 0 && (req < 0 || t == req)) acc += rows(k, col);
    }
    partial(x) = acc;
  }
  KOKKOS_INLINE_FUNCTION void operator()(TagParamSum, const int p) const {
    double g = 0.0;
    for (int blk = 0; blk < n_blocks; ++blk) g += partial(static_cast<int64_t>(blk) * P + p);
    grad(p) = g;
  }
};

}  // namespace device_train
}  // namespace nep
