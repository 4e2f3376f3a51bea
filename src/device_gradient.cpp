// Kokkos port of the training kernels (include/nep/device_gradient.hpp). Every kernel body is the
// per-atom loop body of GradientKernel (train_gradient.cpp), with the same index conventions:
//   descriptor q = [radial n < NR | angular (L-1)*NA + n | q_222 | q_1111], moments s[n*S + e];
//   theta = [ann without b1 | c]; one gradient row per atom =
//     [its network's w0 (H*D), b0 (H), w1 (H) | c_R (n*KR+k)*T + t | c_A (n*KA+k)*T + t]
//   for the c entries with first type = the atom's type (c index (n*K+k)*T*T + ti*T + t).
// Packed arrays hold all resident frames one after another; atoms and pairs carry global
// indices (int64 offsets), a batch refers to its atoms by position k and to its frames by b.
#include "nep/device_gradient.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstring>

#include "evaluator_basis.hpp"
#include "nep/angular_basis.hpp"
#include "nep/error.hpp"
#include "nep/timing.hpp"
#include "nep/train_gradient.hpp"
#include "train_gradient_math.hpp"

namespace nep {

namespace {

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

constexpr int kBlock = 64;  // atoms per gradient block (as the host path's tasks)

struct TagForward {};
struct TagGather {};
struct TagBackward {};
struct TagBlockSum {};
struct TagParamSum {};

using detail::Dual;

// Everything a kernel reads, by value (views are reference-counted handles).
struct TrainKernel {
  // architecture
  int T, D, H, NR, NA, KR, KA, L3, S, P, Pa, A, ann_stride, b1, Wsz;
  bool q222, q1111, zbl;
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
  DView<double> e_atom, w_atom, force, work;
  // gradient
  DView<double> wE, delta, Delta, rows, partial, grad;
  DView<int> p_req, p_row;  // per parameter: atom type it needs (-1: any) and its row entry
  int n_blocks = 0;

  KOKKOS_INLINE_FUNCTION double* work_row(int k) const { return &work(static_cast<int64_t>(k) * Wsz); }
  KOKKOS_INLINE_FUNCTION double cR(int n, int k, int ti, int t) const { return c((n * KR + k) * T * T + ti * T + t); }

  // ---- forward of atom k: energy, per-atom virial, per-pair forces (GradientKernel::forward)
  KOKKOS_INLINE_FUNCTION void operator()(TagForward, const int k) const {
    const int64_t i = batch_atom(k);
    const int ti = type(i);
    e_atom(k) = 0.0;
    for (int cc = 0; cc < 9; ++cc) w_atom(9 * k + cc) = 0.0;
    if (ti < 0) return;
    double* w = work_row(k);
    double* s = w;                // NA*S
    double* G = s + NA * S;       // NA*S
    double* q = G + NA * S;       // D
    double* dU = q + D;           // D
    double* z = dU + D;           // H
    double* cF = z + H;           // T*KR
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
        double g = 0.0;
        for (int kk = 0; kk < KA; ++kk) g += cp[n * KA + kk] * f[kk];
        double* sn = s + n * S;
        for (int e = 0; e < S; ++e) sn[e] += g * Y[e];
      }
    }
    for (int n = 0; n < NA; ++n) detail::angular_invariants(L3, &c3b(0), c4b, c5b, q222, q1111, s + n * S, &q[NR + n], NA);
    const int off = ann_stride * ti;
    const double* w0 = &ann(off);
    const double* b0 = w0 + H * D;
    const double* w1 = b0 + H;
    double U = 0.0;
    for (int h = 0; h < H; ++h) {
      double zh = -b0[h];
      for (int d = 0; d < D; ++d) zh += w0[h * D + d] * (q[d] * qsc(d));
      const double t = Kokkos::Experimental::tanh(zh);
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
      const double* fp = &r_fp(p * KR);
      const double* cc = cF + r_type(p) * KR;
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
    for (int n = 0; n < NA; ++n)
      detail::angular_invariant_grad(L3, &c3b(0), c4b, c5b, q222, q1111, s + n * S, &dU[NR + n], NA, S, G + n * S);
    for (int64_t p = a0; p < a1; ++p) {
      const double* g = &a_geom(4 * p);
      const double* Y = &a_Y(p * S);
      const double* dY = &a_dY(p * 3 * S);
      const double* f = &a_f(p * KA);
      const double* fp = &a_fp(p * KA);
      const double* cp = &cA_pair((ti * T + a_type(p)) * NA * KA);
      double a = 0.0, b[3] = {0, 0, 0};
      for (int n = 0; n < NA; ++n) {
        double gn = 0.0, gp = 0.0;
        for (int kk = 0; kk < KA; ++kk) {
          gn += cp[n * KA + kk] * f[kk];
          gp += cp[n * KA + kk] * fp[kk];
        }
        const double* Gn = G + n * S;
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
  KOKKOS_INLINE_FUNCTION void operator()(TagBackward, const int k) const {
    double* row = &rows(static_cast<int64_t>(k) * Pa);
    for (int x = 0; x < Pa; ++x) row[x] = 0.0;
    const int64_t i = batch_atom(k);
    const int ti = type(i);
    if (ti < 0) return;
    const int b = batch_frame(k);
    const int64_t shift = frame_shift(b);
    const double wEb = wE(b);
    const double* Dl = &Delta(9 * b);
    const double* di = &delta(3 * static_cast<int64_t>(k));
    double* w = work_row(k);
    double* Bd = w;                  // T*KR
    double* sv = Bd + T * KR;        // NA*S each
    double* sd = sv + NA * S;
    double* Gv = sd + NA * S;
    double* Gd = Gv + NA * S;
    Dual* q = reinterpret_cast<Dual*>(Gd + NA * S);  // D
    Dual* Fp = q + D;                                // D
    double* qsv = reinterpret_cast<double*>(Fp + D);  // D each
    double* qsd = qsv + D;
    double* Fpv = qsd + D;
    double* Fpd = Fpv + D;
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
      const double* fp = &r_fp(p * KR);
      double* bd = Bd + r_type(p) * KR;
      for (int kk = 0; kk < KR; ++kk) bd[kk] += fp[kk] * dd;
    }
    // angular moments and their tangents
    const int64_t a0 = a_begin(i), a1 = a_begin(i + 1);
    for (int e = 0; e < NA * S; ++e) sv[e] = sd[e] = 0.0;
    for (int64_t p = a0; p < a1; ++p) {
      double uh[3], ud[3], dd;
      pair_tangent(p, tangent, uh, ud, dd);
      const double* Y = &a_Y(p * S);
      const double* dY = &a_dY(p * 3 * S);
      const double* f = &a_f(p * KA);
      const double* fp = &a_fp(p * KA);
      const double* cp = &cA_pair((ti * T + a_type(p)) * NA * KA);
      for (int n = 0; n < NA; ++n) {
        double gv = 0.0, gd = 0.0;
        for (int kk = 0; kk < KA; ++kk) {
          gv += cp[n * KA + kk] * f[kk];
          gd += cp[n * KA + kk] * fp[kk];
        }
        gd *= dd;
        double* snv = sv + n * S;
        double* snd = sd + n * S;
        for (int e = 0; e < S; ++e) {
          const double Yd = dY[3 * e] * ud[0] + dY[3 * e + 1] * ud[1] + dY[3 * e + 2] * ud[2];
          snv[e] += gv * Y[e];
          snd[e] += gd * Y[e] + gv * Yd;
        }
      }
    }
    // descriptor
    for (int n = 0; n < NR; ++n) {
      Dual acc;
      for (int kk = 0; kk < KR; ++kk)
        for (int t = 0; t < T; ++t) {
          const double cc = cR(n, kk, ti, t);
          acc.v += cc * Bv[t * KR + kk];
          acc.d += cc * Bd[t * KR + kk];
        }
      q[n] = acc;
    }
    for (int n = 0; n < NA; ++n) {
      Dual sn[kNumAngularEntries];
      for (int e = 0; e < S; ++e) sn[e] = {sv[n * S + e], sd[n * S + e]};
      detail::angular_invariants(L3, &c3b(0), c4b, c5b, q222, q1111, sn, &q[NR + n], NA);
    }
    // network and its parameter gradient (row[0, A))
    const int off = ann_stride * ti;
    const double* w0 = &ann(off);
    const double* b0 = w0 + H * D;
    const double* w1 = b0 + H;
    double* gw0 = row;
    double* gb0 = gw0 + H * D;
    double* gw1 = gb0 + H;
    for (int d = 0; d < D; ++d) {
      qsv[d] = qsc(d) * q[d].v;
      qsd[d] = qsc(d) * q[d].d;
      Fpv[d] = Fpd[d] = 0.0;
    }
    for (int h = 0; h < H; ++h) {
      const double* wr = w0 + h * D;
      double zv = -b0[h], zd = 0.0;
      for (int d = 0; d < D; ++d) {
        zv += wr[d] * qsv[d];
        zd += wr[d] * qsd[d];
      }
      const double t = Kokkos::Experimental::tanh(zv);
      const Dual th{t, (1.0 - t * t) * zd};
      const Dual gh{w1[h] * (1.0 - t * t), -2.0 * w1[h] * t * th.d};  // dU/dz_h
      gw1[h] += coef(th);
      gb0[h] -= coef(gh);
      const double a = wEb * gh.v - gh.d, bb = -gh.v;
      double* gw = gw0 + h * D;
      for (int d = 0; d < D; ++d) {
        gw[d] += a * qsv[d] + bb * qsd[d];
        Fpv[d] += gh.v * wr[d];
        Fpd[d] += gh.d * wr[d];
      }
    }
    for (int d = 0; d < D; ++d) Fp[d] = {qsc(d) * Fpv[d], qsc(d) * Fpd[d]};
    // radial c: dU/dc_nk(ti,t) = Fp_n B_tk
    double* gcR = row + A;
    for (int n = 0; n < NR; ++n)
      for (int kk = 0; kk < KR; ++kk)
        for (int t = 0; t < T; ++t) {
          const Dual bt{Bv[t * KR + kk], Bd[t * KR + kk]};
          gcR[(n * KR + kk) * T + t] += coef(Fp[n] * bt);
        }
    // angular c: per pair P_n = sum_e G_ne Y_e, dU/dc_nk(ti,tj) += P_n f_k(d_ij)
    for (int n = 0; n < NA; ++n) {
      Dual sn[kNumAngularEntries], Gn[kNumAngularEntries];
      for (int e = 0; e < S; ++e) sn[e] = {sv[n * S + e], sd[n * S + e]};
      detail::angular_invariant_grad(L3, &c3b(0), c4b, c5b, q222, q1111, sn, &Fp[NR + n], NA, S, Gn);
      for (int e = 0; e < S; ++e) {
        Gv[n * S + e] = Gn[e].v;
        Gd[n * S + e] = Gn[e].d;
      }
    }
    double* gcA = gcR + NR * KR * T;
    for (int64_t p = a0; p < a1; ++p) {
      double uh[3], ud[3], dd;
      pair_tangent(p, tangent, uh, ud, dd);
      const double* Y = &a_Y(p * S);
      const double* dY = &a_dY(p * 3 * S);
      const double* f = &a_f(p * KA);
      const double* fp = &a_fp(p * KA);
      const int tj = a_type(p);
      for (int n = 0; n < NA; ++n) {
        const double* gv = Gv + n * S;
        const double* gd = Gd + n * S;
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

  // r_hat, the tangent of r_hat (u - r_hat (r_hat.u)) / d and r_hat.u of angular pair p
  template <class Tangent>
  KOKKOS_INLINE_FUNCTION void pair_tangent(int64_t p, const Tangent& tangent, double* uh, double* ud, double& dd) const {
    const double* g = &a_geom(4 * p);
    const double dinv = g[3];
    double u[3];
    tangent(a_owner(p), g, u);
    for (int x = 0; x < 3; ++x) uh[x] = g[x] * dinv;
    dd = uh[0] * u[0] + uh[1] * u[1] + uh[2] * u[2];
    for (int x = 0; x < 3; ++x) ud[x] = (u[x] - uh[x] * dd) * dinv;
  }

  // ---- block sums of the rows, then blocks in order: fixed summation order
  KOKKOS_INLINE_FUNCTION void operator()(TagBlockSum, const int64_t x) const {
    const int blk = static_cast<int>(x / P), p = static_cast<int>(x % P);
    const int req = p_req(p);
    const int64_t col = p_row(p);
    double acc = 0.0;
    for (int k = block_begin(blk); k < block_begin(blk + 1); ++k) {
      const int t = type(batch_atom(k));
      if (t >= 0 && (req < 0 || t == req)) acc += rows(static_cast<int64_t>(k) * Pa + col);
    }
    partial(x) = acc;
  }
  KOKKOS_INLINE_FUNCTION void operator()(TagParamSum, const int p) const {
    double g = 0.0;
    for (int blk = 0; blk < n_blocks; ++blk) g += partial(static_cast<int64_t>(blk) * P + p);
    grad(p) = g;
  }
};

// Host side of a packed array: the queued values, appended to the device view on flush.
template <class T>
struct Packed {
  DView<T> d;
  int64_t used = 0;       // entries on the device
  std::vector<T> queued;  // appended next flush
  PView<T> stage;         // pinned staging (kept until the copy has completed)
  bool begin_array = false;  // CSR begins: the first queued entry overwrites the old sentinel

  void flush(const ExecSpace& exec, const char* label) {
    if (queued.empty()) return;
    const int64_t at = begin_array && used > 0 ? used - 1 : used;
    const int64_t need = at + static_cast<int64_t>(queued.size());
    if (!d.data()) {
      d = DView<T>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), std::max<int64_t>(need, 1));
    } else if (need > static_cast<int64_t>(d.extent(0))) {
      Kokkos::resize(d, std::max<int64_t>(need, 2 * static_cast<int64_t>(d.extent(0))));
    }
    if (stage.extent(0) < queued.size())
      stage = PView<T>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label) + ":stage"), queued.size());
    std::memcpy(stage.data(), queued.data(), queued.size() * sizeof(T));
    const std::pair<int64_t, int64_t> dst(at, need), src(0, static_cast<int64_t>(queued.size()));
    Kokkos::deep_copy(exec, Kokkos::subview(d, dst), Kokkos::subview(stage, src));
    used = need;
    queued.clear();
  }
  size_t bytes() const { return d.extent(0) * sizeof(T); }
};

template <class T>
void ensure_size(DView<T>& v, int64_t n, const char* label) {
  if (static_cast<int64_t>(v.extent(0)) < n) v = DView<T>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n);
}

template <class T>
void to_device(const ExecSpace& exec, DView<T>& d, PView<T>& stage, const T* src, int64_t n, const char* label) {
  ensure_size(d, n, label);
  if (static_cast<int64_t>(stage.extent(0)) < n) stage = PView<T>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n);
  std::memcpy(stage.data(), src, n * sizeof(T));
  Kokkos::deep_copy(exec, Kokkos::subview(d, std::pair<int64_t, int64_t>(0, n)),
                    Kokkos::subview(stage, std::pair<int64_t, int64_t>(0, n)));
}

}  // namespace

std::string device_execution_space() { return ExecSpace::name(); }

struct DeviceGradient::Impl {
  TrainKernel k{};
  ExecSpace exec;
  // packed frames
  Packed<int> type, r_owner, r_type, a_owner, a_type;
  Packed<double> B, r_geom, r_fp, a_geom, a_f, a_fp, a_Y, a_dY, zbl_f;
  Packed<int64_t> r_begin, a_begin, ri_begin, ai_begin, ri_pair, ai_pair;
  int64_t n_atoms = 0, n_rpairs = 0, n_apairs = 0;  // including the queued frames
  struct Frame {
    int64_t atom0;
    int nlocal;
    double zbl_energy, zbl_virial[9];
  };
  std::vector<Frame> frames;
  std::vector<int> slot;  // frame id -> index into frames (-1: not uploaded)
  // per-batch staging
  PView<int64_t> s_atom, s_shift;
  PView<int> s_frame, s_block;
  PView<double> s_params, s_wE, s_delta, s_Delta, out;
  std::vector<int> batch;
  int64_t batch_atoms = 0;
  bool have_forward = false;

  void flush() {
    type.flush(exec, "nep::train::type");
    B.flush(exec, "nep::train::B");
    r_begin.flush(exec, "nep::train::r_begin");
    a_begin.flush(exec, "nep::train::a_begin");
    ri_begin.flush(exec, "nep::train::ri_begin");
    ai_begin.flush(exec, "nep::train::ai_begin");
    ri_pair.flush(exec, "nep::train::ri_pair");
    ai_pair.flush(exec, "nep::train::ai_pair");
    r_owner.flush(exec, "nep::train::r_owner");
    r_type.flush(exec, "nep::train::r_type");
    a_owner.flush(exec, "nep::train::a_owner");
    a_type.flush(exec, "nep::train::a_type");
    r_geom.flush(exec, "nep::train::r_geom");
    r_fp.flush(exec, "nep::train::r_fp");
    a_geom.flush(exec, "nep::train::a_geom");
    a_f.flush(exec, "nep::train::a_f");
    a_fp.flush(exec, "nep::train::a_fp");
    a_Y.flush(exec, "nep::train::a_Y");
    a_dY.flush(exec, "nep::train::a_dY");
    zbl_f.flush(exec, "nep::train::zbl_f");
    ensure_size(k.r_force, 3 * std::max<int64_t>(n_rpairs, 1), "nep::train::r_force");
    ensure_size(k.a_force, 3 * std::max<int64_t>(n_apairs, 1), "nep::train::a_force");
    k.type = type.d;
    k.B = B.d;
    k.r_begin = r_begin.d;
    k.a_begin = a_begin.d;
    k.ri_begin = ri_begin.d;
    k.ai_begin = ai_begin.d;
    k.ri_pair = ri_pair.d;
    k.ai_pair = ai_pair.d;
    k.r_owner = r_owner.d;
    k.r_type = r_type.d;
    k.a_owner = a_owner.d;
    k.a_type = a_type.d;
    k.r_geom = r_geom.d;
    k.r_fp = r_fp.d;
    k.a_geom = a_geom.d;
    k.a_f = a_f.d;
    k.a_fp = a_fp.d;
    k.a_Y = a_Y.d;
    k.a_dY = a_dY.d;
    k.zbl_f = zbl_f.d;
  }
};

DeviceGradient::DeviceGradient(const Model& m) : impl_(new Impl) {
  const GradientKernel host(m);  // validates the model (NEP3/NEP4, supported channels)
  TrainKernel& k = impl_->k;
  k.T = m.num_types();
  k.D = m.dim();
  k.H = m.num_neurons;
  k.NR = m.n_max_radial + 1;
  k.NA = m.n_max_angular + 1;
  k.KR = m.basis_size_radial + 1;
  k.KA = m.basis_size_angular + 1;
  k.L3 = m.l_max;
  k.S = (k.L3 + 1) * (k.L3 + 1) - 1;
  k.q222 = m.flags[kQ222];
  k.q1111 = m.flags[kQ1111];
  k.zbl = m.zbl != ZblMode::None;
  k.A = (k.D + 2) * k.H;
  k.ann_stride = m.version == 3 ? 0 : k.A;
  k.b1 = m.ann_b1_offset();
  k.P = host.num_parameters();
  k.Pa = k.A + k.NR * k.KR * k.T + k.NA * k.KA * k.T;
  const int Wf = 2 * k.NA * k.S + 2 * k.D + k.H + k.T * k.KR;
  const int Wb = k.T * k.KR + 4 * k.NA * k.S + 8 * k.D;
  k.Wsz = std::max(Wf, Wb);
  for (int x = 0; x < 5; ++x) k.c4b[x] = kC4B[x];
  for (int x = 0; x < 3; ++x) k.c5b[x] = kC5B[x];
  // per parameter: which atoms contribute (type) and which entry of their row
  const int n_ann = m.num_ann_parameters() - 1, n_cR = m.num_c_radial(), TT = k.T * k.T;
  std::vector<int> req(k.P), col(k.P);
  for (int p = 0; p < k.P; ++p) {
    if (p < n_ann) {
      const int net = m.version == 3 ? 0 : p / k.A;
      req[p] = m.version == 3 ? -1 : net;
      col[p] = p - net * k.A;
    } else {
      const bool radial = p < n_ann + n_cR;
      const int idx = p - n_ann - (radial ? 0 : n_cR);
      const int nk = idx / TT, ti = (idx % TT) / k.T, t = idx % k.T;
      req[p] = ti;
      col[p] = k.A + (radial ? 0 : k.NR * k.KR * k.T) + nk * k.T + t;
    }
  }
  k.p_req = DView<int>("nep::train::p_req", k.P);
  k.p_row = DView<int>("nep::train::p_row", k.P);
  auto h_req = Kokkos::create_mirror_view(k.p_req);
  auto h_row = Kokkos::create_mirror_view(k.p_row);
  for (int p = 0; p < k.P; ++p) {
    h_req(p) = req[p];
    h_row(p) = col[p];
  }
  Kokkos::deep_copy(k.p_req, h_req);
  Kokkos::deep_copy(k.p_row, h_row);
  const AngularTables& tab = angular_tables();
  k.c3b = DView<double>("nep::train::c3b", kNumAngularEntries);
  auto h_c3b = Kokkos::create_mirror_view(k.c3b);
  for (int e = 0; e < kNumAngularEntries; ++e) h_c3b(e) = tab.c3b[e];
  Kokkos::deep_copy(k.c3b, h_c3b);
  for (auto* p : {&impl_->r_begin, &impl_->a_begin, &impl_->ri_begin, &impl_->ai_begin}) p->begin_array = true;
}

DeviceGradient::~DeviceGradient() = default;

bool DeviceGradient::resident(int frame) const {
  return frame >= 0 && frame < static_cast<int>(impl_->slot.size()) && impl_->slot[frame] >= 0;
}

void DeviceGradient::upload(int frame, const PairBasis& pb) {
  Impl& im = *impl_;
  const TrainKernel& k = im.k;
  if (resident(frame)) return;
  if (pb.T != k.T || pb.KR != k.KR || pb.KA != k.KA || pb.S != k.S)
    throw Error("DeviceGradient::upload: the pair basis does not match the model's sizes");
  const int n = pb.nlocal;
  const int64_t atom0 = im.n_atoms, r0 = im.n_rpairs, a0 = im.n_apairs;
  const int64_t nr = static_cast<int64_t>(pb.r_owner.size()), na = static_cast<int64_t>(pb.a_owner.size());
  auto append = [](auto& packed, const auto& src) { packed.queued.insert(packed.queued.end(), src.begin(), src.end()); };
  append(im.type, pb.type);
  append(im.B, pb.B);
  append(im.r_type, pb.r_type);
  append(im.a_type, pb.a_type);
  append(im.r_geom, pb.r_geom);
  append(im.r_fp, pb.r_fp);
  append(im.a_geom, pb.a_geom);
  append(im.a_f, pb.a_f);
  append(im.a_fp, pb.a_fp);
  append(im.a_Y, pb.a_Y);
  append(im.a_dY, pb.a_dY);
  if (k.zbl) {
    if (!pb.has_zbl || static_cast<int>(pb.zbl_force.size()) != 3 * n)
      throw Error("DeviceGradient::upload: ZBL model but the pair basis has no ZBL part");
    append(im.zbl_f, pb.zbl_force);
  }
  for (int64_t p = 0; p < nr; ++p) im.r_owner.queued.push_back(static_cast<int>(atom0 + pb.r_owner[p]));
  for (int64_t p = 0; p < na; ++p) im.a_owner.queued.push_back(static_cast<int>(atom0 + pb.a_owner[p]));
  // CSR begins (global), then the incoming pairs of each atom in pair order (counting sort)
  auto csr = [&](Packed<int64_t>& begin, Packed<int64_t>& in_begin, Packed<int64_t>& in_pair, const std::vector<int>& local_begin,
                 const std::vector<int>& owner, int64_t pair0) {
    if (!begin.queued.empty()) begin.queued.pop_back();  // the previous queued frame's sentinel
    for (int i = 0; i <= n; ++i) begin.queued.push_back(pair0 + local_begin[i]);
    std::vector<int64_t> count(n + 1, 0);
    for (int o : owner) ++count[o + 1];
    for (int i = 0; i < n; ++i) count[i + 1] += count[i];
    if (!in_begin.queued.empty()) in_begin.queued.pop_back();
    for (int i = 0; i <= n; ++i) in_begin.queued.push_back(pair0 + count[i]);
    std::vector<int64_t> list(owner.size());
    for (size_t p = 0; p < owner.size(); ++p) list[count[owner[p]]++] = pair0 + static_cast<int64_t>(p);
    in_pair.queued.insert(in_pair.queued.end(), list.begin(), list.end());
  };
  csr(im.r_begin, im.ri_begin, im.ri_pair, pb.r_begin, pb.r_owner, r0);
  csr(im.a_begin, im.ai_begin, im.ai_pair, pb.a_begin, pb.a_owner, a0);
  Impl::Frame fr{atom0, n, pb.zbl_energy, {}};
  for (int c = 0; c < 9; ++c) fr.zbl_virial[c] = pb.has_zbl ? pb.zbl_virial[c] : 0.0;
  if (!pb.has_zbl) fr.zbl_energy = 0.0;
  if (frame >= static_cast<int>(im.slot.size())) im.slot.resize(frame + 1, -1);
  im.slot[frame] = static_cast<int>(im.frames.size());
  im.frames.push_back(fr);
  im.n_atoms += n;
  im.n_rpairs += nr;
  im.n_apairs += na;
}

size_t DeviceGradient::device_bytes() const {
  const Impl& im = *impl_;
  size_t b = 0;
  for (auto* p : {&im.type, &im.r_owner, &im.r_type, &im.a_owner, &im.a_type}) b += p->bytes();
  for (auto* p : {&im.B, &im.r_geom, &im.r_fp, &im.a_geom, &im.a_f, &im.a_fp, &im.a_Y, &im.a_dY, &im.zbl_f}) b += p->bytes();
  for (auto* p : {&im.r_begin, &im.a_begin, &im.ri_begin, &im.ai_begin, &im.ri_pair, &im.ai_pair}) b += p->bytes();
  const TrainKernel& k = im.k;
  for (auto* v : {&k.r_force, &k.a_force, &k.e_atom, &k.w_atom, &k.force, &k.work, &k.rows, &k.partial, &k.delta})
    b += v->extent(0) * sizeof(double);
  return b;
}

void DeviceGradient::forward(const Model& m, const std::vector<int>& frames, double* energy, double* virial,
                             std::vector<double>& force) {
  Impl& im = *impl_;
  TrainKernel& k = im.k;
  im.exec.fence();  // the previous copies out of the pinned staging buffers are complete
  {
    ScopedStage stage("train:device_upload");
    im.flush();
  }
  ScopedStage stage("train:device_forward");
  const int nb = static_cast<int>(frames.size());
  // batch index: atoms of the frames in batch order, and fixed 64-atom blocks of each frame
  int64_t na = 0;
  for (int f : frames) {
    if (!resident(f)) throw Error("DeviceGradient::forward: frame " + std::to_string(f) + " was not uploaded");
    na += im.frames[im.slot[f]].nlocal;
  }
  std::vector<int64_t> atom(na), shift(nb);
  std::vector<int> bframe(na), block{0};
  int64_t pos = 0;
  for (int b = 0; b < nb; ++b) {
    const Impl::Frame& fr = im.frames[im.slot[frames[b]]];
    shift[b] = fr.atom0 - pos;
    for (int i = 0; i < fr.nlocal; ++i) {
      atom[pos + i] = fr.atom0 + i;
      bframe[pos + i] = b;
    }
    for (int i0 = 0; i0 < fr.nlocal; i0 += kBlock) block.push_back(static_cast<int>(pos + std::min(i0 + kBlock, fr.nlocal)));
    pos += fr.nlocal;
  }
  im.batch = frames;
  im.batch_atoms = na;
  k.n_blocks = static_cast<int>(block.size()) - 1;
  to_device(im.exec, k.batch_atom, im.s_atom, atom.data(), std::max<int64_t>(na, 1), "nep::train::batch_atom");
  to_device(im.exec, k.frame_shift, im.s_shift, shift.data(), std::max(nb, 1), "nep::train::frame_shift");
  to_device(im.exec, k.batch_frame, im.s_frame, bframe.data(), std::max<int64_t>(na, 1), "nep::train::batch_frame");
  to_device(im.exec, k.block_begin, im.s_block, block.data(), static_cast<int64_t>(block.size()), "nep::train::block_begin");
  // parameters: ann | c | q_scaler | angular c repacked per type pair [ti*T + tj][n*KA + k]
  const int T = k.T, NA = k.NA, KA = k.KA, n_cR = m.num_c_radial();
  std::vector<double> cA(static_cast<size_t>(T) * T * NA * KA);
  for (int n = 0; n < NA; ++n)
    for (int kk = 0; kk < KA; ++kk)
      for (int pr = 0; pr < T * T; ++pr) cA[pr * NA * KA + n * KA + kk] = m.c[n_cR + (n * KA + kk) * T * T + pr];
  to_device(im.exec, k.ann, im.s_params, m.ann.data(), static_cast<int64_t>(m.ann.size()), "nep::train::ann");
  im.exec.fence();  // one staging buffer for the four parameter arrays
  to_device(im.exec, k.c, im.s_params, m.c.data(), static_cast<int64_t>(m.c.size()), "nep::train::c");
  im.exec.fence();
  to_device(im.exec, k.qsc, im.s_params, m.q_scaler.data(), static_cast<int64_t>(m.q_scaler.size()), "nep::train::q_scaler");
  im.exec.fence();
  to_device(im.exec, k.cA_pair, im.s_params, cA.data(), static_cast<int64_t>(cA.size()), "nep::train::cA_pair");
  ensure_size(k.e_atom, std::max<int64_t>(na, 1), "nep::train::e_atom");
  ensure_size(k.w_atom, 9 * std::max<int64_t>(na, 1), "nep::train::w_atom");
  ensure_size(k.force, 3 * std::max<int64_t>(na, 1), "nep::train::force");
  ensure_size(k.work, std::max<int64_t>(na, 1) * k.Wsz, "nep::train::work");
  if (na > 0) {
    Kokkos::parallel_for("nep::train::forward", Kokkos::RangePolicy<ExecSpace, TagForward>(im.exec, 0, na), k);
    Kokkos::parallel_for("nep::train::gather", Kokkos::RangePolicy<ExecSpace, TagGather>(im.exec, 0, na), k);
  }
  // back: per-atom energies (na), virials (9 na), forces (3 na)
  const int64_t nout = 13 * na;
  if (static_cast<int64_t>(im.out.extent(0)) < nout) im.out = PView<double>("nep::train::out", nout);
  auto part = [&](int64_t a, int64_t b) { return Kokkos::subview(im.out, std::make_pair(a, b)); };
  auto dev = [](const DView<double>& v, int64_t n) { return Kokkos::subview(v, std::pair<int64_t, int64_t>(0, n)); };
  Kokkos::deep_copy(im.exec, part(0, na), dev(k.e_atom, na));
  Kokkos::deep_copy(im.exec, part(na, 10 * na), dev(k.w_atom, 9 * na));
  Kokkos::deep_copy(im.exec, part(10 * na, 13 * na), dev(k.force, 3 * na));
  im.exec.fence();
  force.assign(im.out.data() + 10 * na, im.out.data() + 13 * na);
  pos = 0;
  for (int b = 0; b < nb; ++b) {
    const Impl::Frame& fr = im.frames[im.slot[frames[b]]];
    double e = 0.0, w[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 0; i < fr.nlocal; ++i) {
      e += im.out(pos + i);
      for (int c = 0; c < 9; ++c) w[c] += im.out(na + 9 * (pos + i) + c);
    }
    energy[b] = e + fr.zbl_energy;
    for (int c = 0; c < 9; ++c) virial[9 * b + c] = w[c] + fr.zbl_virial[c];
    pos += fr.nlocal;
  }
  im.have_forward = true;
}

void DeviceGradient::gradient(const double* wE, const double* delta, const double* Delta, double* grad) {
  Impl& im = *impl_;
  TrainKernel& k = im.k;
  if (!im.have_forward) throw Error("DeviceGradient::gradient: no forward() on this batch");
  ScopedStage stage("train:device_backward");
  const int nb = static_cast<int>(im.batch.size());
  const int64_t na = im.batch_atoms;
  im.exec.fence();
  to_device(im.exec, k.wE, im.s_wE, wE, std::max(nb, 1), "nep::train::wE");
  to_device(im.exec, k.Delta, im.s_Delta, Delta, std::max(9 * nb, 1), "nep::train::Delta");
  to_device(im.exec, k.delta, im.s_delta, delta, std::max<int64_t>(3 * na, 1), "nep::train::delta");
  ensure_size(k.rows, std::max<int64_t>(na, 1) * k.Pa, "nep::train::rows");
  ensure_size(k.partial, std::max<int64_t>(k.n_blocks, 1) * k.P, "nep::train::partial");
  ensure_size(k.grad, k.P, "nep::train::grad");
  if (na > 0) Kokkos::parallel_for("nep::train::backward", Kokkos::RangePolicy<ExecSpace, TagBackward>(im.exec, 0, na), k);
  Kokkos::parallel_for("nep::train::block_sum",
                       Kokkos::RangePolicy<ExecSpace, TagBlockSum, Kokkos::IndexType<int64_t>>(im.exec, 0, static_cast<int64_t>(k.n_blocks) * k.P), k);
  Kokkos::parallel_for("nep::train::param_sum", Kokkos::RangePolicy<ExecSpace, TagParamSum>(im.exec, 0, k.P), k);
  if (static_cast<int64_t>(im.out.extent(0)) < k.P) im.out = PView<double>("nep::train::out", k.P);
  Kokkos::deep_copy(im.exec, Kokkos::subview(im.out, std::make_pair(0, k.P)), Kokkos::subview(k.grad, std::make_pair(0, k.P)));
  im.exec.fence();
  std::memcpy(grad, im.out.data(), k.P * sizeof(double));
}

}  // namespace nep
