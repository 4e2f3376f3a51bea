// The core's kernel for host execution spaces (Serial, OpenMP): one pass per atom.
//
// The device kernels (evaluator_impl.hpp) run two passes, descriptor then forces, and evaluate
// every pair's basis twice. Here one atom's pairs are gathered once into structure-of-arrays rows
// (sorted: angular pairs first, each class by neighbour type), the basis values and derivatives of
// all its pairs are computed once, vectorised across pairs, and kept for the force part, which
// follows the atom's network at once (f_ij needs only atom i's own dU/dq and dU/ds). Same maths,
// same conventions (evaluator.hpp); only the order of the sums differs.
// long-file: one atom's pass, its phases kept as member functions of one kernel (profilers see
// each); charge models' two stages reuse the same phases.
//
// Per pair p of atom i (rows of `cap` entries, lane-padded so loops run over whole vectors):
//   radial rows   f_k(d), f_k'(d)  (k < KR; zero where d >= rc_R)
//   angular rows  (p < Pa only) f_k, f_k' (k < KA), g_n, g_n' (n < NA), Y_e, dY_e (e < S)
//   forces        f_ij = fr u + ft  (fr: radial coefficient, ft: transverse part)
#pragma once
#include <Kokkos_Core.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <type_traits>

#include "evaluator_basis.hpp"
#include "host_lane_basis.hpp"
#include "nep/core/descriptor_math.hpp"
#include "nep/core/host_tanh.hpp"

namespace nep {
namespace detail {

struct TagNepFused {};

// Phases of the fused kernel, timed (NEP_TIMING=1) by the cycle counter around each part of an
// atom and reported as shares of the kernel's wall-clock time.
enum HostPhase { kPhGather, kPhRadial, kPhAngular, kPhNetwork, kPhForceRadial, kPhForceAngular, kPhScatter, kNumHostPhases };
inline const char* host_phase_stage(int ph) {
  static const char* const names[kNumHostPhases] = {
      "core:fused:gather",       "core:fused:radial descriptor", "core:fused:angular descriptor",
      "core:fused:network",      "core:fused:radial force",      "core:fused:angular force",
      "core:fused:scatter+zbl"};
  return names[ph];
}
inline std::uint64_t cycle_count() {
#if defined(__x86_64__)
  unsigned lo, hi;
  __asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
  return (std::uint64_t(hi) << 32) | lo;
#else
  return std::uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
#endif
}

// One thread's scratch, carved from one buffer (64-byte aligned arrays). Pair rows hold `cap`
// entries: the lane-padded neighbour count plus one vector, as loops over a type segment run in
// whole vectors from its start. The buffer is zeroed once, so lanes past the end hold finite values.
template <class Real>
struct HostScratch {
  // candidate pairs in neighbour-list order (maxn): j, (class * T + t_j) * 2 + in_r, r_ij
  int *cand_j = nullptr, *cand_code = nullptr;
  double* cand_r = nullptr;
  // ZBL pairs (maxn): j, type pair, r_ij
  int *zbl_j = nullptr, *zbl_pair = nullptr;
  double* zbl_r = nullptr;
  // per class and type: count, then cursor; segments of the sorted pairs (type, begin, end)
  int *count = nullptr, *seg_t = nullptr, *seg_b = nullptr, *seg_e = nullptr;
  // sorted pairs (cap)
  int* J = nullptr;
  double *rx = nullptr, *ry = nullptr, *rz = nullptr;
  Real *d = nullptr, *dinv = nullptr, *ux = nullptr, *uy = nullptr, *uz = nullptr;
  Real *rcinv_r = nullptr, *rcinv_a = nullptr, *mask_r = nullptr;
  Real *f_r = nullptr, *fp_r = nullptr;                      // [k][p]
  Real *f_a = nullptr, *fp_a = nullptr, *g = nullptr, *gp = nullptr;  // [k][p], [n][p]
  Real *Y = nullptr, *dY = nullptr;                          // [e][p], [xyz][e][p]
  Real* Yt = nullptr;                                        // [p][e], rows of round_up(S, lanes)
  Real *fr = nullptr, *ft = nullptr;                         // [p], [xyz][p]
  double* fij = nullptr;                                     // [xyz][p]
  // per atom
  Real *q = nullptr, *qs = nullptr, *dU = nullptr, *z = nullptr, *s = nullptr, *G = nullptr, *cF = nullptr;
  Real *zq = nullptr, *dQ = nullptr, *GQ = nullptr;  // charge models: the charge output's scratch
  std::uint64_t* ticks = nullptr;  // kNumHostPhases

  // Lays the arrays out from `base` (nullptr: only measure); returns the bytes used.
  size_t carve(char* base, const ModelSizes& m, int cap, int maxn) {
    size_t off = 0;
    auto take = [&](auto*& ptr, size_t n) {
      using T = std::remove_reference_t<decltype(*ptr)>;
      off = (off + 63) / 64 * 64;
      ptr = base ? reinterpret_cast<T*>(base + off) : nullptr;
      off += n * sizeof(T);
    };
    const size_t c = cap, mx = maxn > 0 ? maxn : 1;
    take(cand_j, mx);
    take(cand_code, mx);
    take(cand_r, 3 * mx);
    take(zbl_j, mx);
    take(zbl_pair, mx);
    take(zbl_r, 3 * mx);
    take(count, 2 * m.T);
    take(seg_t, 2 * m.T);
    take(seg_b, 2 * m.T);
    take(seg_e, 2 * m.T);
    take(J, c);
    take(rx, c);
    take(ry, c);
    take(rz, c);
    for (Real** r : {&d, &dinv, &ux, &uy, &uz, &rcinv_r, &rcinv_a, &mask_r, &fr}) take(*r, c);
    take(f_r, m.KR * c);
    take(fp_r, m.KR * c);
    take(f_a, m.KA * c);
    take(fp_a, m.KA * c);
    take(g, m.NA * c);
    take(gp, m.NA * c);
    take(Y, m.S * c);
    take(dY, 3 * m.S * c);
    take(Yt, size_t(round_up(m.S, kLanes<Real>)) * c);
    take(ft, 3 * c);
    take(fij, 3 * c);
    take(q, m.D);
    take(qs, m.D);
    take(dU, m.D);
    take(z, m.H);
    take(s, m.NA * m.S);
    take(G, m.NA * m.S);
    take(cF, m.KR);
    take(zq, m.H);
    take(dQ, m.D);
    take(GQ, m.NA * m.S);
    take(ticks, kNumHostPhases);
    return (off + 63) / 64 * 64;
  }
};


// One atom's pair bookkeeping, handed from phase to phase.
struct AtomPairs {
  int i, ii, ti;
  int np = 0, Pa = 0;        // pairs in range; angular pairs (the first Pa)
  int npad = 0, napad = 0;   // both rounded up to whole vectors
  int nseg = 0, nz = 0;      // type segments; ZBL pairs
};

// Phases are separate functions so that profilers attribute time to them.
#if defined(__GNUC__)
#define NEP_NOINLINE __attribute__((noinline))
#else
#define NEP_NOINLINE
#endif

// The fused kernel: NepKernel's data (evaluator_impl.hpp) plus the per-thread scratch.
template <class DeviceType, class Real, class Base>
struct HostNepKernel : Base {
  using execution_space = typename DeviceType::execution_space;
  using value_type = typename Base::value_type;
  static constexpr int W = kLanes<Real>;
  const HostScratch<Real>* scratch = nullptr;  // one per thread (token)
  int cap = 0;                                 // pair row length (HostScratch)
  bool timing = false;
  // 0: energy and forces in one pass; charge models (Evaluator::compute_charges / _forces):
  // 1: descriptor and network, the derivatives cached, energy, no forces; 2: the forces of the
  // cached derivatives combined with phi (the basis computed again), no energy
  int stage = 0;
  Kokkos::Experimental::UniqueToken<execution_space> token;

  explicit HostNepKernel(const Base& b) : Base(b) {}

  void operator()(TagNepFused, const int ii, value_type& ev) const {
    const int i = this->use_ilist ? this->ilist(ii) : ii;
    const int ti = this->type(i);
    if (ti < 0) {
      if (this->want_eatom) this->eatom(i) = 0.0;
      return;
    }
    const int tid = token.acquire();
    const HostScratch<Real>& sc = scratch[tid];
    AtomPairs a{i, ii, ti};
    std::uint64_t t_last = timing ? cycle_count() : 0;
    auto phase_end = [&](int ph) {
      if (!timing) return;
      const std::uint64_t t = cycle_count();
      sc.ticks[ph] += t - t_last;
      t_last = t;
    };
    gather(sc, a);
    phase_end(kPhGather);
    radial_descriptor(sc, a);
    phase_end(kPhRadial);
    angular_descriptor(sc, a);
    phase_end(kPhAngular);
    const Real U = stage == 2 ? combined_derivatives(sc, a) : network(sc, a);
    phase_end(kPhNetwork);
    if (stage == 1) {  // energy only: the charges' forces wait for phi
      const double ei = double(U) + zbl_energy(sc, a);
      if (this->want_eatom) this->eatom(i) = ei;
      ev.e += ei;
      token.release(tid);
      return;
    }
    radial_force(sc, a);
    phase_end(kPhForceRadial);
    angular_force(sc, a);
    phase_end(kPhForceAngular);
    scatter(sc, a, U, ev);
    phase_end(kPhScatter);
    token.release(tid);
  }

 private:
  // Pairs in range sorted into segments of equal (class, type), class 0 = angular (d < rc_A),
  // class 1 = radial only; geometry rows d, 1/d, u = r/d. ZBL pairs (d < r_out) listed apart.
  NEP_NOINLINE void gather(const HostScratch<Real>& sc, AtomPairs& a) const {
    const auto& x = this->x;
    const int T = this->p.T, ti = a.ti, i = a.i;
    const double xi0 = x(i, 0), xi1 = x(i, 1), xi2 = x(i, 2);
    for (int c = 0; c < 2 * T; ++c) sc.count[c] = 0;
    int nc = 0, nz = 0;
    const int nn = this->num_neighbors(i);
    for (int jj = 0; jj < nn; ++jj) {
      const int j = this->neighbors(i, jj) & kNeighMask;
      const int tj = this->type(j);
      if (tj < 0) continue;
      const double r0 = x(j, 0) - xi0, r1 = x(j, 1) - xi1, r2 = x(j, 2) - xi2;
      const Real rx = Real(r0), ry = Real(r1), rz = Real(r2);
      const Real d2 = rx * rx + ry * ry + rz * rz;
      const int pair = ti * T + tj;
      const Real rcR = this->cut(pair, 0), rcA = this->cut(pair, 2);
      const bool in_r = d2 < rcR * rcR, in_a = d2 < rcA * rcA;
      if (this->p.zbl) {
        const Real rout = this->zbl(pair, 1);
        if (d2 < rout * rout) {
          sc.zbl_j[nz] = j;
          sc.zbl_pair[nz] = pair;
          sc.zbl_r[3 * nz] = r0;
          sc.zbl_r[3 * nz + 1] = r1;
          sc.zbl_r[3 * nz + 2] = r2;
          ++nz;
        }
      }
      if (!in_r && !in_a) continue;
      const int cls = (in_a ? 0 : 1) * T + tj;
      sc.cand_j[nc] = j;
      sc.cand_code[nc] = 2 * cls + (in_r ? 1 : 0);
      sc.cand_r[3 * nc] = r0;
      sc.cand_r[3 * nc + 1] = r1;
      sc.cand_r[3 * nc + 2] = r2;
      ++sc.count[cls];
      ++nc;
    }
    // segments of equal (class, type); count becomes each one's cursor
    int nseg = 0, pos = 0;
    for (int c = 0; c < 2 * T; ++c) {
      if (c == T) a.Pa = pos;
      const int n = sc.count[c];
      sc.count[c] = pos;
      if (n == 0) continue;
      sc.seg_t[nseg] = c % T;
      sc.seg_b[nseg] = pos;
      sc.seg_e[nseg] = pos + n;
      ++nseg;
      pos += n;
    }
    for (int k = 0; k < nc; ++k) {
      const int code = sc.cand_code[k], cls = code >> 1;
      const int slot = sc.count[cls]++;
      const int pair = ti * T + cls % T;
      sc.J[slot] = sc.cand_j[k];
      sc.rx[slot] = sc.cand_r[3 * k];
      sc.ry[slot] = sc.cand_r[3 * k + 1];
      sc.rz[slot] = sc.cand_r[3 * k + 2];
      sc.mask_r[slot] = Real(code & 1);
      sc.rcinv_r[slot] = this->cut(pair, 1);
      sc.rcinv_a[slot] = this->cut(pair, 3);
    }
    a.np = nc;
    a.nz = nz;
    a.nseg = nseg;
    a.npad = round_up(nc, W);
    a.napad = round_up(a.Pa, W);
    for (int p = nc; p < a.npad; ++p) {  // padding lanes: a harmless unit distance, masked off
      sc.rx[p] = sc.ry[p] = 0.0;
      sc.rz[p] = 1.0;
      sc.mask_r[p] = Real(0);
      sc.rcinv_r[p] = sc.rcinv_a[p] = Real(0.5);
    }
    const int npad = a.npad;
    NEP_SIMD
    for (int p = 0; p < npad; ++p) {
      const Real rx = Real(sc.rx[p]), ry = Real(sc.ry[p]), rz = Real(sc.rz[p]);
      const Real dd = std::sqrt(rx * rx + ry * ry + rz * rz);
      const Real inv = Real(1) / dd;
      sc.d[p] = dd;
      sc.dinv[p] = inv;
      sc.ux[p] = rx * inv;
      sc.uy[p] = ry * inv;
      sc.uz[p] = rz * inv;
    }
  }

  // q_n = sum_t sum_k c_nk(t_i,t) B_tk, B_tk = sum over the type-t pairs of f_k (radial rows kept)
  NEP_NOINLINE void radial_descriptor(const HostScratch<Real>& sc, const AtomPairs& a) const {
    const int T = this->p.T, NR = this->p.NR, KR = this->p.KR, ld = cap;
    radial_basis_rows(KR, a.npad, sc.d, sc.rcinv_r, sc.mask_r, 0, sc.f_r, sc.fp_r, ld);
    Real* q = sc.q;
    for (int n = 0; n < NR; ++n) q[n] = Real(0);
    for (int g = 0; g < a.nseg; ++g) {
      const Real* c = &this->c_radial(a.ti * T + sc.seg_t[g], 0);  // [k][n]
      const int b = sc.seg_b[g], e = sc.seg_e[g];
      for (int k = 0; k < KR; ++k) {
        const Real* fk = sc.f_r + k * ld;
        Real B = Real(0);
#pragma omp simd reduction(+ : B)
        for (int p = b; p < e; ++p) B += fk[p];
        for (int n = 0; n < NR; ++n) q[n] += c[k * NR + n] * B;
      }
    }
  }

  // s_ne = sum_p g_n(d_p) Y_e(u_p) over the angular pairs, then the angular invariants into q;
  // keeps the rows g_n, g_n', Y, dY for the forces
  NEP_NOINLINE void angular_descriptor(const HostScratch<Real>& sc, const AtomPairs& a) const {
    const auto& P = this->p;
    const int T = P.T, NR = P.NR, NA = P.NA, KA = P.KA, S = P.S, ld = cap;
    const int Pa = a.Pa, napad = a.napad;
    Real* s = sc.s;
    if (Pa > 0) {
      radial_basis_rows(KA, napad, sc.d, sc.rcinv_a, static_cast<const Real*>(nullptr), Pa, sc.f_a, sc.fp_a, ld);
      // g_n = sum_k c_nk(t_i,t_j) f_k per type segment, whole vectors from the segment's start
      // (lanes past its end write into the next segment, which is computed after it)
      for (int g = 0; g < a.nseg && sc.seg_b[g] < Pa; ++g) {
        const Real* c = &this->c_angular(a.ti * T + sc.seg_t[g], 0);  // [k][n]
        for (int p0 = sc.seg_b[g]; p0 < sc.seg_e[g]; p0 += W)
          for (int n = 0; n < NA; ++n) {
            Real gv[W], gd[W];
            NEP_SIMD
            for (int l = 0; l < W; ++l) gv[l] = gd[l] = Real(0);
            for (int k = 0; k < KA; ++k) {
              const Real cnk = c[k * NA + n];
              const Real* fk = sc.f_a + k * ld + p0;
              const Real* fpk = sc.fp_a + k * ld + p0;
              NEP_SIMD
              for (int l = 0; l < W; ++l) {
                gv[l] += cnk * fk[l];
                gd[l] += cnk * fpk[l];
              }
            }
            Real* gn = sc.g + n * ld + p0;
            Real* gpn = sc.gp + n * ld + p0;
            NEP_SIMD
            for (int l = 0; l < W; ++l) {
              gn[l] = gv[l];
              gpn[l] = gd[l];
            }
          }
      }
      for (int n = 0; n < NA; ++n)
        for (int p = Pa; p < napad; ++p) sc.g[n * ld + p] = sc.gp[n * ld + p] = Real(0);
      const int ldt = round_up(S, W);
      angular_rows(P.L3, &this->poly(0), napad, sc.ux, sc.uy, sc.uz, sc.Y, sc.dY, ld, sc.Yt, ldt);
      moments(NA, Pa, S, sc.g, ld, sc.Yt, ldt, s);
    } else {
      for (int k = 0; k < NA * S; ++k) s[k] = Real(0);
    }
    Real c4b[5], c5b[3];
    constants(c4b, c5b);
    for (int n = 0; n < NA; ++n)
      angular_invariants(P.L3, &this->c3b(0), c4b, c5b, P.q222, P.q1111, s + n * S, sc.q + NR + n, NA);
    if (this->want_q)
      for (int k = 0; k < P.D; ++k) this->q_out(a.ii, k) = double(sc.q[k]);
  }

  void constants(Real* c4b, Real* c5b) const {
    for (int k = 0; k < 5; ++k) c4b[k] = Real(this->p.c4b[k]);
    for (int k = 0; k < 3; ++k) c5b[k] = Real(this->p.c5b[k]);
  }

  // U_i (without ZBL), dU/dq into sc.dU and G = dU/ds into sc.G
  NEP_NOINLINE Real network(const HostScratch<Real>& sc, const AtomPairs& a) const {
    const auto& P = this->p;
    const int D = P.D, H = P.H, NR = P.NR, NA = P.NA, S = P.S;
    const int off = P.ann_stride * a.ti;  // Model::ann_offset
    const Real* w0 = &this->ann(off);
    const Real* b0 = w0 + H * D;
    const Real* w1 = b0 + H;
    Real* dU = sc.dU;
    for (int k = 0; k < D; ++k) sc.qs[k] = sc.q[k] * this->q_scaler(k);
    Real U, Q = Real(0);
    if (P.wq_offset >= 0)  // a charge model: energy and charge from one hidden layer
      U = network_energy_charge(D, H, w0, &this->ann_w0t(a.ti, 0), b0, w1, &this->ann(off + P.wq_offset), sc.qs, sc.z,
                                sc.zq, dU, sc.dQ, Q, TanhRowsHost{});
    else
      U = network_energy(D, H, w0, &this->ann_w0t(a.ti, 0), b0, w1, sc.qs, sc.z, dU, TanhRowsHost{});
    U -= this->ann(P.b1_index);
    if (P.version == 5) U -= this->ann(off + (D + 2) * H);
    for (int k = 0; k < D; ++k) dU[k] *= this->q_scaler(k);  // now dU/dq (raw descriptor)
    Real c4b[5], c5b[3];
    constants(c4b, c5b);
    for (int n = 0; n < NA; ++n)
      angular_invariant_grad(P.L3, &this->c3b(0), c4b, c5b, P.q222, P.q1111, sc.s + n * S, dU + NR + n, NA, S,
                             sc.G + n * S);
    if (stage == 1) {  // the caches stage 2 and the Born charges read (as the two-pass kernels' stage 1)
      for (int k = 0; k < D; ++k) sc.dQ[k] *= this->q_scaler(k);
      for (int n = 0; n < NA; ++n)
        angular_invariant_grad(P.L3, &this->c3b(0), c4b, c5b, P.q222, P.q1111, sc.s + n * S, sc.dQ + NR + n, NA, S,
                               sc.GQ + n * S);
      this->charge_out(a.i) = double(Q);
      for (int n = 0; n < NR; ++n) {
        this->fp_radial(a.ii, n) = dU[n];
        this->fpq_radial(a.ii, n) = sc.dQ[n];
      }
      for (int k = 0; k < NA * S; ++k) {
        this->g_angular(a.ii, k) = sc.G[k];
        this->gq_angular(a.ii, k) = sc.GQ[k];
      }
    }
    return U;
  }

  // stage 2: dU/dq_n (radial) and G of U_i + phi_i Q_i from stage 1's caches; no energy (returns 0)
  Real combined_derivatives(const HostScratch<Real>& sc, const AtomPairs& a) const {
    const Real ph = Real(this->phi(a.i));
    for (int n = 0; n < this->p.NR; ++n) sc.dU[n] = this->fp_radial(a.ii, n) + ph * this->fpq_radial(a.ii, n);
    for (int k = 0; k < this->p.NA * this->p.S; ++k) sc.G[k] = this->g_angular(a.ii, k) + ph * this->gq_angular(a.ii, k);
    return Real(0);
  }

  // stage 1: U_i's half of its ZBL pairs' energy
  double zbl_energy(const HostScratch<Real>& sc, const AtomPairs& a) const {
    double e = 0.0;
    for (int k = 0; k < a.nz; ++k) {
      const double* r = sc.zbl_r + 3 * k;
      const Real rx = Real(r[0]), ry = Real(r[1]), rz = Real(r[2]);
      Real V, dV;
      zbl_pair<Real>(this->zbl, sc.zbl_pair[k], std::sqrt(rx * rx + ry * ry + rz * rz), V, dV);
      e += 0.5 * double(V);
    }
    return e;
  }

  // fr = dU_i/dd_ij = sum_k f_k'(d) cF_k, cF_k = sum_n c_nk(t_i,t_j) dU/dq_n
  NEP_NOINLINE void radial_force(const HostScratch<Real>& sc, const AtomPairs& a) const {
    const int T = this->p.T, NR = this->p.NR, KR = this->p.KR, ld = cap;
    const Real* dU = sc.dU;
    Real* fr = sc.fr;
    for (int g = 0; g < a.nseg; ++g) {
      const Real* c = &this->c_radial(a.ti * T + sc.seg_t[g], 0);
      for (int k = 0; k < KR; ++k) {
        Real acc = Real(0);
        for (int n = 0; n < NR; ++n) acc += c[k * NR + n] * dU[n];
        sc.cF[k] = acc;
      }
      for (int p0 = sc.seg_b[g]; p0 < sc.seg_e[g]; p0 += W) {  // whole vectors, as for g_n
        Real acc[W];
        NEP_SIMD
        for (int l = 0; l < W; ++l) acc[l] = Real(0);
        for (int k = 0; k < KR; ++k) {
          const Real cf = sc.cF[k];
          const Real* fpk = sc.fp_r + k * ld + p0;
          NEP_SIMD
          for (int l = 0; l < W; ++l) acc[l] += fpk[l] * cf;
        }
        NEP_SIMD
        for (int l = 0; l < W; ++l) fr[p0 + l] = acc[l];
      }
    }
  }

  // H_e = sum_n G_ne g_n, H'_e = sum_n G_ne g_n'; d/dr [g Y(u)] = g' Y u + g (grad_u Y - (u . grad_u Y) u) / d:
  // adds sum_e H'_e Y_e to fr and sets the transverse part ft
  NEP_NOINLINE void angular_force(const HostScratch<Real>& sc, const AtomPairs& a) const {
    const int NA = this->p.NA, S = this->p.S, ld = cap;
    Real* fr = sc.fr;
    Real *ftx = sc.ft, *fty = sc.ft + ld, *ftz = sc.ft + 2 * ld;
    const Real* G = sc.G;
    for (int p0 = 0; p0 < a.napad; p0 += W) {
      Real ar[W], bx[W], by[W], bz[W];
      NEP_SIMD
      for (int l = 0; l < W; ++l) ar[l] = bx[l] = by[l] = bz[l] = Real(0);
      // entries e .. e+E-1 (E <= 4) at a time: each g_n row is read once per E entries
      auto entries = [&](int e, auto E_) {
        constexpr int E = decltype(E_)::value;
        Real hn[E][W], hp[E][W];
        for (int j = 0; j < E; ++j) {
          NEP_SIMD
          for (int l = 0; l < W; ++l) hn[j][l] = hp[j][l] = Real(0);
        }
        for (int n = 0; n < NA; ++n) {
          const Real* Gn = G + n * S + e;
          const Real* gn = sc.g + n * ld + p0;
          const Real* gpn = sc.gp + n * ld + p0;
          for (int j = 0; j < E; ++j) {
            const Real Gne = Gn[j];
            NEP_SIMD
            for (int l = 0; l < W; ++l) {
              hn[j][l] += Gne * gn[l];
              hp[j][l] += Gne * gpn[l];
            }
          }
        }
        for (int j = 0; j < E; ++j) {
          const Real* ye = sc.Y + (e + j) * ld + p0;
          const Real* dx = sc.dY + (e + j) * ld + p0;
          const Real* dy = sc.dY + (S + e + j) * ld + p0;
          const Real* dz = sc.dY + (2 * S + e + j) * ld + p0;
          NEP_SIMD
          for (int l = 0; l < W; ++l) {
            ar[l] += hp[j][l] * ye[l];
            bx[l] += hn[j][l] * dx[l];
            by[l] += hn[j][l] * dy[l];
            bz[l] += hn[j][l] * dz[l];
          }
        }
      };
      int e = 0;
      for (; e + 4 <= S; e += 4) entries(e, std::integral_constant<int, 4>{});
      for (; e < S; ++e) entries(e, std::integral_constant<int, 1>{});
      NEP_SIMD
      for (int l = 0; l < W; ++l) {
        const int p = p0 + l;
        const Real bu = bx[l] * sc.ux[p] + by[l] * sc.uy[p] + bz[l] * sc.uz[p];
        fr[p] += ar[l];
        ftx[p] = (bx[l] - bu * sc.ux[p]) * sc.dinv[p];
        fty[p] = (by[l] - bu * sc.uy[p]) * sc.dinv[p];
        ftz[p] = (bz[l] - bu * sc.uz[p]) * sc.dinv[p];
      }
    }
    for (int p = a.napad; p < a.np; ++p) ftx[p] = fty[p] = ftz[p] = Real(0);
  }

  // f_ij = fr u + ft: F_i += f_ij, F_j -= f_ij, W_j -= r_ij (x) f_ij; the ZBL pairs; energy
  NEP_NOINLINE void scatter(const HostScratch<Real>& sc, const AtomPairs& a, Real U, value_type& ev) const {
    const int ld = cap, np = a.np, i = a.i;
    const Real* fr = sc.fr;
    const Real *ftx = sc.ft, *fty = sc.ft + ld, *ftz = sc.ft + 2 * ld;
    auto a_f = this->f.access();
    auto a_v = this->vatom.access();
    double* fx = sc.fij;
    double* fy = sc.fij + ld;
    double* fz = sc.fij + 2 * ld;
    double fi0 = 0, fi1 = 0, fi2 = 0;
    double w00 = 0, w01 = 0, w02 = 0, w10 = 0, w11 = 0, w12 = 0, w20 = 0, w21 = 0, w22 = 0;
#pragma omp simd reduction(+ : fi0, fi1, fi2, w00, w01, w02, w10, w11, w12, w20, w21, w22)
    for (int p = 0; p < np; ++p) {
      const double f0 = double(fr[p] * sc.ux[p] + ftx[p]);
      const double f1 = double(fr[p] * sc.uy[p] + fty[p]);
      const double f2 = double(fr[p] * sc.uz[p] + ftz[p]);
      fx[p] = f0;
      fy[p] = f1;
      fz[p] = f2;
      fi0 += f0;
      fi1 += f1;
      fi2 += f2;
      const double r0 = sc.rx[p], r1 = sc.ry[p], r2 = sc.rz[p];
      w00 -= r0 * f0;
      w01 -= r0 * f1;
      w02 -= r0 * f2;
      w10 -= r1 * f0;
      w11 -= r1 * f1;
      w12 -= r1 * f2;
      w20 -= r2 * f0;
      w21 -= r2 * f1;
      w22 -= r2 * f2;
    }
    for (int p = 0; p < np; ++p) {
      const int j = sc.J[p];
      a_f(j, 0) -= fx[p];
      a_f(j, 1) -= fy[p];
      a_f(j, 2) -= fz[p];
    }
    if (this->want_vatom)
      for (int p = 0; p < np; ++p) {
        const int j = sc.J[p];
        const double r[3] = {sc.rx[p], sc.ry[p], sc.rz[p]}, fv[3] = {fx[p], fy[p], fz[p]};
        for (int aa = 0; aa < 3; ++aa)
          for (int bb = 0; bb < 3; ++bb) a_v(j, 3 * aa + bb) += -r[aa] * fv[bb];
      }
    double wi[9] = {w00, w01, w02, w10, w11, w12, w20, w21, w22};
    // ZBL pairs: U_i gets half of each pair's energy
    double e_zbl = 0.0;
    for (int k = 0; k < a.nz; ++k) {
      const double* r = sc.zbl_r + 3 * k;
      const Real rx = Real(r[0]), ry = Real(r[1]), rz = Real(r[2]);
      const Real dd = std::sqrt(rx * rx + ry * ry + rz * rz);
      Real V, dV;
      zbl_pair<Real>(this->zbl, sc.zbl_pair[k], dd, V, dV);
      e_zbl += 0.5 * double(V);
      const Real c = Real(0.5) * dV / dd;
      const double fv[3] = {double(c * rx), double(c * ry), double(c * rz)};
      const int j = sc.zbl_j[k];
      fi0 += fv[0];
      fi1 += fv[1];
      fi2 += fv[2];
      for (int cc = 0; cc < 3; ++cc) a_f(j, cc) -= fv[cc];
      for (int aa = 0; aa < 3; ++aa)
        for (int bb = 0; bb < 3; ++bb) wi[3 * aa + bb] -= r[aa] * fv[bb];
      if (this->want_vatom)
        for (int aa = 0; aa < 3; ++aa)
          for (int bb = 0; bb < 3; ++bb) a_v(j, 3 * aa + bb) += -r[aa] * fv[bb];
    }
    a_f(i, 0) += fi0;
    a_f(i, 1) += fi1;
    a_f(i, 2) += fi2;
    for (int c = 0; c < 9; ++c) ev.v[c] += wi[c];
    if (stage == 2) return;  // the energy came with stage 1
    const double ei = double(U) + e_zbl;
    if (this->want_eatom) this->eatom(i) = ei;
    ev.e += ei;
  }
};

}  // namespace detail
}  // namespace nep
