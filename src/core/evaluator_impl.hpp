// Kernel bodies of nep::Evaluator; included by the per-backend instantiation files only.
#pragma once
#include <Kokkos_ScatterView.hpp>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "evaluator_basis.hpp"
#include "evaluator_stages.hpp"
#include "evaluator_host_kernel.hpp"
#include "nep/core/descriptor_math.hpp"
#include "nep/elements.hpp"
#include "nep/error.hpp"
#include "nep/evaluator.hpp"
#include "nep/timing.hpp"

namespace nep {
namespace detail {

struct TagNepDescriptor {};
struct TagNepChargeCombine {};
struct TagNepForce {};

template <class DeviceType, class Real>
struct NepKernel {
  using value_type = EnergyVirialSum;
  using Ev = Evaluator<DeviceType, Real>;
  using ScatterF = Kokkos::Experimental::ScatterView<double* [3], Kokkos::LayoutRight, DeviceType>;
  using ScatterV = Kokkos::Experimental::ScatterView<double* [9], Kokkos::LayoutRight, DeviceType>;

  typename Ev::Params p;
  typename Ev::t_x x;
  typename Ev::t_int type, num_neighbors, ilist;
  bool use_ilist = false;
  typename Ev::t_neighbors neighbors;
  typename Ev::t_eatom eatom;
  Kokkos::View<const Real*, DeviceType> ann, q_scaler;
  Kokkos::View<const Real**, Kokkos::LayoutRight, DeviceType> ann_w0t;
  Kokkos::View<const Real**, Kokkos::LayoutRight, DeviceType> c_radial, c_angular;
  Kokkos::View<const Real* [4], DeviceType> cut;
  Kokkos::View<const Real* [12], DeviceType> zbl;
  Kokkos::View<const Real*, DeviceType> poly, c3b;
  Kokkos::View<Real**, DeviceType> fp_radial, g_angular;
  Kokkos::View<Real**, DeviceType> fpq_radial, gq_angular;  // qNEP: the charge's derivatives
  Kokkos::View<double*, DeviceType> charge_out, phi;        // qNEP: Q_i (stage 1), dE/dQ_i (combine)
  // 0: forces; 1: dipole tensor, 2: virial-like tensor (compute_tensor: no forces, the per-atom
  // tensor through vatom, each pair's term on the neighbour j as the per-atom virial); 3: the pair
  // part of Born effective charges (f_ij = dQ_i/dr_ij: +r (x) f / 2 on i, -r (x) f / 2 on j)
  int tensor = 0;
  ScatterF f;
  ScatterV vatom;
  Kokkos::View<double**, Kokkos::LayoutRight, DeviceType> q_out;
  bool want_eatom = false, want_vatom = false, want_q = false;

  // Geometry of the pair (i, neighbour jj): r_ij = x_j - x_i formed in double, distance and
  // which interaction ranges it is in. Returns false for pairs that contribute nothing.
  struct PairGeom {
    int j, tj, pair;
    double r[3];
    Real rx, ry, rz, d;
    bool in_r, in_a;
  };
  KOKKOS_INLINE_FUNCTION bool pair_geometry(int i, int ti, int jj, PairGeom& g) const {
    g.j = neighbors(i, jj) & kNeighMask;
    g.tj = type(g.j);
    if (g.tj < 0) return false;
    for (int c = 0; c < 3; ++c) g.r[c] = x(g.j, c) - x(i, c);
    g.rx = Real(g.r[0]);
    g.ry = Real(g.r[1]);
    g.rz = Real(g.r[2]);
    const Real d2 = g.rx * g.rx + g.ry * g.ry + g.rz * g.rz;
    g.pair = ti * p.T + g.tj;
    const Real rcR = cut(g.pair, 0), rcA = cut(g.pair, 2);
    g.in_r = d2 < rcR * rcR;
    g.in_a = d2 < rcA * rcA;
    if (!g.in_r && !g.in_a && !p.zbl) return false;
    g.d = kmath::sqrt(d2);
    return true;
  }

  // ---- stage 1: descriptor, network, per-atom energy; caches dU/dq (radial) and dU/ds (angular)
  KOKKOS_INLINE_FUNCTION void operator()(TagNepDescriptor, const int ii, EnergyVirialSum& ev) const {
    const int i = use_ilist ? ilist(ii) : ii;
    const int ti = type(i);
    if (ti < 0) {
      if (want_eatom) eatom(i) = 0.0;
      return;
    }
    const int S = p.S, T = p.T, NR = p.NR, NA = p.NA, KR = p.KR, KA = p.KA;
    Real q[kMaxDim];
    Real s[kMaxBasis * kNumAngularEntries];
    // radial part: q_n = sum_j sum_k c_nk(t_i,t_j) f_k(d_ij) = sum_t sum_k c_nk(t_i,t) B_tk with
    // B_tk = sum_{j of type t} f_k(d_ij), so each pair costs only its basis evaluation
    Real B[kMaxTypes * kMaxBasis];
    for (int k = 0; k < T * KR; ++k) B[k] = Real(0);
    for (int k = 0; k < NA * S; ++k) s[k] = Real(0);
    Real fk[kMaxBasis], gn[kMaxBasis], Y[kNumAngularEntries];
    double e_zbl = 0.0;

    const int nn = num_neighbors(i);
    for (int jj = 0; jj < nn; ++jj) {
      PairGeom pg;
      if (!pair_geometry(i, ti, jj, pg)) continue;
      const int tj = pg.tj, pair = pg.pair;
      const bool in_r = pg.in_r, in_a = pg.in_a;
      const Real rx = pg.rx, ry = pg.ry, rz = pg.rz, d = pg.d;
      if (in_r) {
        radial_basis<Real>(KR, d, cut(pair, 1), fk, nullptr);
        Real* b = B + tj * KR;
        for (int k = 0; k < KR; ++k) b[k] += fk[k];
      }
      if (in_a) {  // angular moments s_{n,e} = sum_j g_n(d_ij) Y_e(r_hat_ij)
        radial_basis<Real>(KA, d, cut(pair, 3), fk, nullptr);
        const Real* c = &c_angular(pair, 0);  // [k][n]
        for (int n = 0; n < NA; ++n) gn[n] = Real(0);
        for (int k = 0; k < KA; ++k)
          for (int n = 0; n < NA; ++n) gn[n] += c[k * NA + n] * fk[k];
        const Real dinv = Real(1) / d;
        angular_entries<Real>(p.L3, poly, rx * dinv, ry * dinv, rz * dinv, Y, static_cast<Real*>(nullptr));
        for (int n = 0; n < NA; ++n) {
          const Real g = gn[n];
          Real* sn = s + n * S;
          for (int e = 0; e < S; ++e) sn[e] += g * Y[e];
        }
      }
      if (p.zbl) {
        Real V, dV;
        zbl_pair<Real>(zbl, pair, d, V, dV);
        e_zbl += 0.5 * double(V);
      }
    }

    for (int n = 0; n < NR; ++n) q[n] = Real(0);
    for (int t = 0; t < T; ++t) {
      const Real* c = &c_radial(ti * T + t, 0);  // [k][n]
      const Real* b = B + t * KR;
      for (int k = 0; k < KR; ++k)
        for (int n = 0; n < NR; ++n) q[n] += c[k * NR + n] * b[k];
    }
    // angular invariants
    const Real* c3bp = &c3b(0);
    const Real c4b[5] = {Real(p.c4b[0]), Real(p.c4b[1]), Real(p.c4b[2]), Real(p.c4b[3]), Real(p.c4b[4])};
    const Real c5b[3] = {Real(p.c5b[0]), Real(p.c5b[1]), Real(p.c5b[2])};
    for (int n = 0; n < NA; ++n) angular_invariants(p.L3, c3bp, c4b, c5b, p.q222, p.q1111, s + n * S, q + NR + n, NA);

    if (want_q)
      for (int d = 0; d < p.D; ++d) q_out(ii, d) = double(q[d]);

    // network: U = sum_h w1_h tanh(sum_d w0_hd q~_d - b0_h) - b1 [- bt]   (q~ = q * q_scaler)
    const int D = p.D, H = p.H;
    const int off = p.ann_stride * ti;  // Model::ann_offset
    const Real* w0 = &ann(off);             // [h][d]
    const Real* b0 = w0 + H * D;
    const Real* w1 = b0 + H;
    Real qs[kMaxDim], dU[kMaxDim], z[kMaxNeurons];
    for (int d = 0; d < D; ++d) qs[d] = q[d] * q_scaler(d);
    Real U;
    if (p.wq_offset >= 0) {  // qNEP: energy and charge from one hidden layer (B is free by now)
      static_assert(kMaxTypes * kMaxBasis >= kMaxNeurons + kMaxDim, "B holds the charge scratch");
      Real *y = B, *dQ = B + kMaxNeurons, Q;
      U = network_energy_charge(D, H, w0, &ann_w0t(ti, 0), b0, w1, &ann(off + p.wq_offset), qs, z, y, dU, dQ, Q,
                                TanhEach{});
      charge_out(i) = double(Q);
      for (int d = 0; d < D; ++d) dQ[d] *= q_scaler(d);
      for (int n = 0; n < NR; ++n) fpq_radial(ii, n) = dQ[n];
      for (int n = 0; n < NA; ++n) {
        Real G[kNumAngularEntries];
        angular_invariant_grad(p.L3, c3bp, c4b, c5b, p.q222, p.q1111, s + n * S, dQ + NR + n, NA, S, G);
        for (int e = 0; e < S; ++e) gq_angular(ii, n * S + e) = G[e];
      }
    } else {
      U = network_energy(D, H, w0, &ann_w0t(ti, 0), b0, w1, qs, z, dU, TanhEach{});
    }
    U -= ann(p.b1_index);
    if (p.version == 5) U -= ann(off + (D + 2) * H);
    for (int d = 0; d < D; ++d) dU[d] *= q_scaler(d);  // now dU/dq (raw descriptor)

    for (int n = 0; n < NR; ++n) fp_radial(ii, n) = dU[n];
    // dU/ds for every moment entry: chain rule through the invariants above
    for (int n = 0; n < NA; ++n) {
      Real G[kNumAngularEntries];
      angular_invariant_grad(p.L3, c3bp, c4b, c5b, p.q222, p.q1111, s + n * S, dU + NR + n, NA, S, G);
      for (int e = 0; e < S; ++e) g_angular(ii, n * S + e) = G[e];
    }

    const double ei = double(U) + e_zbl;
    if (want_eatom) eatom(i) = ei;
    ev.e += ei;
  }

  // ---- qNEP, between the stages: dU/dq += phi_i dQ/dq, so that stage 2 differentiates U_i + phi_i Q_i
  KOKKOS_INLINE_FUNCTION void operator()(TagNepChargeCombine, const int ii) const {
    const int i = use_ilist ? ilist(ii) : ii;
    if (type(i) < 0) return;
    const Real ph = Real(phi(i));
    for (int n = 0; n < p.NR; ++n) fp_radial(ii, n) += ph * fpq_radial(ii, n);
    for (int k = 0; k < p.NA * p.S; ++k) g_angular(ii, k) += ph * gq_angular(ii, k);
  }

  // ---- stage 2: pair forces f_ij = dU_i/dr_ij from the cached derivatives; scatter F and W
  // (tensor != 0: the pair terms summed into atom i's tensor instead, no forces)
  KOKKOS_INLINE_FUNCTION void operator()(TagNepForce, const int ii, EnergyVirialSum& ev) const {
    const int i = use_ilist ? ilist(ii) : ii;
    const int ti = type(i);
    if (ti < 0) return;
    auto a_f = f.access();
    auto a_v = vatom.access();
    const int S = p.S, T = p.T, NR = p.NR, NA = p.NA, KR = p.KR, KA = p.KA;
    Real fk[kMaxBasis], fkp[kMaxBasis], gn[kMaxBasis], gnp[kMaxBasis];
    Real Y[kNumAngularEntries], dY[3 * kNumAngularEntries], Hn[kNumAngularEntries], Hp[kNumAngularEntries];
    double fi[3] = {0, 0, 0};
    double wi[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};  // this atom's pairs' virial, added to ev once
    // radial: dU_i/dd = sum_n Fp_n g_n'(d) = sum_k f_k'(d) cF_tk with cF_tk = sum_n c_nk(t_i,t) Fp_n
    Real cF[kMaxTypes * kMaxBasis];
    for (int t = 0; t < T; ++t) {
      const Real* c = &c_radial(ti * T + t, 0);  // [k][n]
      for (int k = 0; k < KR; ++k) {
        Real acc = Real(0);
        for (int n = 0; n < NR; ++n) acc += c[k * NR + n] * fp_radial(ii, n);
        cF[t * KR + k] = acc;
      }
    }

    const int nn = num_neighbors(i);
    for (int jj = 0; jj < nn; ++jj) {
      PairGeom pg;
      if (!pair_geometry(i, ti, jj, pg)) continue;
      const int j = pg.j, tj = pg.tj, pair = pg.pair;
      const double* r = pg.r;
      const Real rx = pg.rx, ry = pg.ry, rz = pg.rz, d = pg.d;
      const Real dinv = Real(1) / d;
      const Real u[3] = {rx * dinv, ry * dinv, rz * dinv};
      Real fr = Real(0);      // coefficient of u (radial derivative terms)
      Real ft[3] = {0, 0, 0};  // transverse part
      if (pg.in_r) {
        radial_basis<Real>(KR, d, cut(pair, 1), fk, fkp);
        const Real* c = cF + tj * KR;
        for (int k = 0; k < KR; ++k) fr += fkp[k] * c[k];
      }
      if (pg.in_a) {
        radial_basis<Real>(KA, d, cut(pair, 3), fk, fkp);
        const Real* c = &c_angular(pair, 0);  // [k][n]
        for (int n = 0; n < NA; ++n) gn[n] = gnp[n] = Real(0);
        for (int k = 0; k < KA; ++k)
          for (int n = 0; n < NA; ++n) {
            gn[n] += c[k * NA + n] * fk[k];
            gnp[n] += c[k * NA + n] * fkp[k];
          }
        angular_entries<Real>(p.L3, poly, u[0], u[1], u[2], Y, dY);
        // H_e = sum_n G_ne g_n, H'_e = sum_n G_ne g_n'
        for (int e = 0; e < S; ++e) Hn[e] = Hp[e] = Real(0);
        for (int n = 0; n < NA; ++n) {
          const Real g = gn[n], gp = gnp[n];
          for (int e = 0; e < S; ++e) {
            const Real G = g_angular(ii, n * S + e);
            Hn[e] += G * g;
            Hp[e] += G * gp;
          }
        }
        // d/dr_ij [g(d) Y(u)] = g' Y u + g (grad_u Y - (u . grad_u Y) u) / d
        Real a = Real(0), b[3] = {0, 0, 0};
        for (int e = 0; e < S; ++e) {
          a += Hp[e] * Y[e];
          b[0] += Hn[e] * dY[3 * e];
          b[1] += Hn[e] * dY[3 * e + 1];
          b[2] += Hn[e] * dY[3 * e + 2];
        }
        const Real bu = b[0] * u[0] + b[1] * u[1] + b[2] * u[2];
        fr += a;
        for (int c = 0; c < 3; ++c) ft[c] += (b[c] - bu * u[c]) * dinv;
      }
      if (p.zbl && tensor != 3) {  // U_i gets half of each pair's ZBL energy
        Real V, dV;
        zbl_pair<Real>(zbl, pair, d, V, dV);
        fr += Real(0.5) * dV;
      }
      const double fij[3] = {double(fr * u[0] + ft[0]), double(fr * u[1] + ft[1]), double(fr * u[2] + ft[2])};
      if (tensor == 1) {  // dipole: -|r_ij|^2 f_ij (NEP_CPU's and GPUMD's dipole)
        const double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        for (int bb = 0; bb < 3; ++bb) {
          wi[bb] -= d2 * fij[bb];
          if (want_vatom) a_v(j, bb) += -d2 * fij[bb];
        }
        continue;
      }
      if (tensor == 3) {
        for (int aa = 0; aa < 3; ++aa)
          for (int bb = 0; bb < 3; ++bb) {
            const double t = 0.5 * r[aa] * fij[bb];
            a_v(i, 3 * aa + bb) += t;
            a_v(j, 3 * aa + bb) -= t;
          }
        continue;
      }
      fi[0] += fij[0];
      fi[1] += fij[1];
      fi[2] += fij[2];
      if (tensor == 0) {  // (tensor 2: the virial-like tensor alone)
        a_f(j, 0) -= fij[0];
        a_f(j, 1) -= fij[1];
        a_f(j, 2) -= fij[2];
      }
      for (int aa = 0; aa < 3; ++aa)
        for (int bb = 0; bb < 3; ++bb) wi[3 * aa + bb] -= r[aa] * fij[bb];
      if (want_vatom)
        for (int aa = 0; aa < 3; ++aa)
          for (int bb = 0; bb < 3; ++bb) a_v(j, 3 * aa + bb) += -r[aa] * fij[bb];
    }
    for (int c = 0; c < 9; ++c) ev.v[c] += wi[c];
    if (tensor != 0) return;
    a_f(i, 0) += fi[0];
    a_f(i, 1) += fi[1];
    a_f(i, 2) += fi[2];
  }
};

}  // namespace detail

template <class DeviceType, class Real>
Evaluator<DeviceType, Real>::Evaluator(const Model& m) {
  for (int f = kQ112; f < kNumAngularFlags; ++f)
    if (m.flags[f])
      throw Error("model uses the experimental 4-body channels q_112/q_123/q_233/q_134, which this evaluator does not implement yet");
  const int T = m.num_types();
  if (T > detail::kMaxTypes) throw Error("model has more than " + std::to_string(detail::kMaxTypes) + " types");
  if (m.num_neurons > detail::kMaxNeurons) throw Error("model has more than " + std::to_string(detail::kMaxNeurons) + " neurons");
  num_types_ = T;
  cutoff_ = m.cutoff_max();
  static_cast<ModelSizes&>(p_) = m.sizes();
  p_.version = m.version;
  p_.b1_index = m.ann_b1_offset();
  kind_ = m.kind;
  kind_name_ = kind_name(m.kind);
  is_potential_ = m.kind == ModelKind::Potential;
  is_charge_ = m.kind == ModelKind::Charge;
  p_.wq_offset = is_charge_ ? m.ann_charge_offset(0) - m.ann_offset(0) : -1;
  for (int k = 0; k < 5; ++k) p_.c4b[k] = kC4B[k];  // in the parameter struct: visible in device code
  for (int k = 0; k < 3; ++k) p_.c5b[k] = kC5B[k];

  auto upload = [](const std::vector<double>& src, const char* label) {
    Kokkos::View<Real*, DeviceType> d(std::string(label), src.size());
    auto h = Kokkos::create_mirror_view(d);
    for (size_t k = 0; k < src.size(); ++k) h(k) = Real(src[k]);
    Kokkos::deep_copy(d, h);
    return d;
  };
  d_ann_ = upload(m.ann, "nep:ann");
  d_q_scaler_ = upload(m.q_scaler, "nep:q_scaler");
  {  // first-layer weights transposed per type, [t][d*H + h], for the vectorisable forward pass
    d_ann_w0t_ = decltype(d_ann_w0t_)("nep:w0t", T, p_.D * p_.H);
    auto h = Kokkos::create_mirror_view(d_ann_w0t_);
    for (int t = 0; t < T; ++t)
      for (int hh = 0; hh < p_.H; ++hh)
        for (int d = 0; d < p_.D; ++d) h(t, d * p_.H + hh) = Real(m.ann[p_.ann_stride * t + hh * p_.D + d]);
    Kokkos::deep_copy(d_ann_w0t_, h);
  }

  // descriptor coefficients repacked type-pair-major: [t_i*T + t_j][k*N + n]
  auto repack = [&](int N, int K, int base, const char* label) {
    Kokkos::View<Real**, Kokkos::LayoutRight, DeviceType> d(std::string(label), T * T, N * K);
    auto h = Kokkos::create_mirror_view(d);
    for (int n = 0; n < N; ++n)
      for (int k = 0; k < K; ++k)
        for (int pr = 0; pr < T * T; ++pr) h(pr, k * N + n) = Real(m.c[base + (n * K + k) * T * T + pr]);
    Kokkos::deep_copy(d, h);
    return d;
  };
  d_c_radial_ = repack(p_.NR, p_.KR, 0, "nep:c_radial");
  d_c_angular_ = repack(p_.NA, p_.KA, m.num_c_radial(), "nep:c_angular");

  // pair cutoffs (Model::rc_radial_pair: GPUMD's per-type rule)
  d_cut_ = Kokkos::View<Real* [4], DeviceType>("nep:cut", T * T);
  d_zbl_ = Kokkos::View<Real* [12], DeviceType>("nep:zbl", T * T);
  auto h_cut = Kokkos::create_mirror_view(d_cut_);
  auto h_zbl = Kokkos::create_mirror_view(d_zbl_);
  const double universal[8] = {0.18175, 3.1998, 0.50986, 0.94229, 0.28022, 0.4029, 0.02817, 0.20162};
  for (int a = 0; a < T; ++a)
    for (int b = 0; b < T; ++b) {
      const int pr = a * T + b;
      const double rcR = m.rc_radial_pair(a, b), rcA = m.rc_angular_pair(a, b);
      h_cut(pr, 0) = Real(rcR);
      h_cut(pr, 1) = Real(1.0 / rcR);
      h_cut(pr, 2) = Real(rcA);
      h_cut(pr, 3) = Real(1.0 / rcA);
      if (!p_.zbl) continue;
      const double za = m.atomic_numbers[a], zb = m.atomic_numbers[b];
      double rin = m.zbl_rc_inner, rout = m.zbl_rc_outer;
      const double* coeff = universal;
      if (m.zbl == ZblMode::Typewise) {
        rin = 0.0;
        rout = std::min(m.zbl_typewise_factor * (covalent_radius(m.atomic_numbers[a]) + covalent_radius(m.atomic_numbers[b])), rout);
      } else if (m.zbl == ZblMode::Flexible) {
        const double* fl = &m.zbl_flexible[10 * zbl_pair_index(a, b, T)];
        rin = fl[0];
        rout = fl[1];
        coeff = fl + 2;
      }
      h_zbl(pr, 0) = Real(rin);
      h_zbl(pr, 1) = Real(rout);
      for (int k = 0; k < 8; ++k) h_zbl(pr, 2 + k) = Real(coeff[k]);
      h_zbl(pr, 10) = Real(14.399645 * za * zb);  // e^2/(4 pi eps0) in eV A
      h_zbl(pr, 11) = Real((std::pow(za, 0.23) + std::pow(zb, 0.23)) * 2.134563);  // 1/a (ZBL screening)
    }
  Kokkos::deep_copy(d_cut_, h_cut);
  Kokkos::deep_copy(d_zbl_, h_zbl);

  const AngularTables& tab = angular_tables();
  d_poly_ = decltype(d_poly_)("nep:poly");
  d_c3b_ = decltype(d_c3b_)("nep:c3b");
  auto h_poly = Kokkos::create_mirror_view(d_poly_);
  auto h_c3b = Kokkos::create_mirror_view(d_c3b_);
  for (int L = 0; L <= kMaxL; ++L)
    for (int mm = 0; mm <= kMaxL; ++mm)
      for (int k = 0; k <= kMaxL; ++k) h_poly((L * (kMaxL + 1) + mm) * (kMaxL + 1) + k) = Real(tab.poly[L][mm][k]);
  for (int e = 0; e < kNumAngularEntries; ++e) h_c3b(e) = Real(tab.c3b[e]);
  Kokkos::deep_copy(d_poly_, h_poly);
  Kokkos::deep_copy(d_c3b_, h_c3b);
}

// The kernel's inputs and outputs (f and vatom through scatter views); with_caches: the two-pass
// kernels' per-atom caches, grown for inum atoms.
template <class DeviceType, class Real>
template <class Kernel>
void Evaluator<DeviceType, Real>::fill_kernel(Kernel& k, int inum, t_int ilist, t_x x, t_int type, t_int num_neighbors,
                                              t_neighbors neighbors, t_f f, t_eatom eatom, t_vatom vatom,
                                              bool with_caches) {
  k.p = p_;
  k.x = x;
  k.type = type;
  k.ilist = ilist;
  k.use_ilist = ilist.extent(0) > 0;
  k.num_neighbors = num_neighbors;
  k.neighbors = neighbors;
  k.eatom = eatom;
  k.ann = d_ann_;
  k.ann_w0t = d_ann_w0t_;
  k.q_scaler = d_q_scaler_;
  k.c_radial = d_c_radial_;
  k.c_angular = d_c_angular_;
  k.cut = d_cut_;
  k.zbl = d_zbl_;
  k.poly = Kokkos::View<const Real*, DeviceType>(d_poly_.data(), kMaxAngularPolys);
  k.c3b = Kokkos::View<const Real*, DeviceType>(d_c3b_.data(), kNumAngularEntries);
  k.want_eatom = eatom.extent(0) > 0;
  k.q_out = d_q_out_;
  k.want_q = d_q_out_.extent(0) >= size_t(inum) && d_q_out_.extent(1) >= size_t(p_.D);
  k.want_vatom = vatom.extent(0) > 0;
  k.f = typename Kernel::ScatterF(f);
  k.vatom = typename Kernel::ScatterV(vatom);
  if (!with_caches) return;
  grow_caches(inum);
  k.fp_radial = d_fp_radial_;
  k.g_angular = d_g_angular_;
  k.fpq_radial = d_fpq_radial_;
  k.gq_angular = d_gq_angular_;
}

// the two-pass kernels' per-atom caches for inum atoms (the charge ones for qNEP)
template <class DeviceType, class Real>
void Evaluator<DeviceType, Real>::grow_caches(int inum) {
  auto make = [](const char* label, int n, int m) {
    return Kokkos::View<Real**, DeviceType>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n,
                                            std::max(1, m));
  };
  if (d_fp_radial_.extent(0) < size_t(inum)) {
    d_fp_radial_ = make("nep:fp_radial", inum, p_.NR);
    d_g_angular_ = make("nep:g_angular", inum, p_.NA * p_.S);
  }
  if (is_charge_ && d_fpq_radial_.extent(0) < size_t(inum)) {
    d_fpq_radial_ = make("nep:fpq_radial", inum, p_.NR);
    d_gq_angular_ = make("nep:gq_angular", inum, p_.NA * p_.S);
  }
}

// The fused host kernel (evaluator_host_kernel.hpp) over atoms 0..nlocal-1 of kernel k: stage 0
// energies and forces, 1 and 2 the two stages of a charge model (network with caches; forces from
// the combined derivatives). Host spaces only.
template <class DeviceType, class Real>
template <class Kernel>
detail::EnergyVirialSum Evaluator<DeviceType, Real>::run_fused(const Kernel& k, int nlocal, int stage, t_f f,
                                                                t_vatom vatom) {
  detail::EnergyVirialSum e;
  if constexpr (Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename DeviceType::memory_space>::accessible) {
    using Fused = detail::HostNepKernel<DeviceType, Real, detail::NepKernel<DeviceType, Real>>;
    Fused hk(k);
    hk.stage = stage;
    hk.cap = detail::round_up(std::max<int>(1, int(k.neighbors.extent(1))), detail::kLanes<Real>) + detail::kLanes<Real>;
    const int threads = hk.token.size();
    detail::HostScratch<Real> layout;
    const size_t bytes = layout.carve(nullptr, p_, hk.cap, int(k.neighbors.extent(1)));
    if (host_scratch_.extent(0) < bytes * threads) {
      // zeroed by memset: a View's own initialisation would dispatch to the default host space,
      // which a thread other than the one that initialised Kokkos may not use (fix nep/train)
      host_scratch_ = Kokkos::View<char*, Kokkos::HostSpace>(Kokkos::view_alloc(Kokkos::WithoutInitializing, "nep:host_scratch"),
                                                             bytes * threads + 64);
      std::memset(host_scratch_.data(), 0, host_scratch_.extent(0));
    }
    char* base = reinterpret_cast<char*>((reinterpret_cast<std::uintptr_t>(host_scratch_.data()) + 63) / 64 * 64);
    std::vector<detail::HostScratch<Real>> scratch(threads);
    for (int t = 0; t < threads; ++t) scratch[t].carve(base + t * bytes, p_, hk.cap, int(k.neighbors.extent(1)));
    hk.scratch = scratch.data();
    hk.timing = timing_enabled();
    if (hk.timing)
      for (auto& sc : scratch)
        for (int ph = 0; ph < detail::kNumHostPhases; ++ph) sc.ticks[ph] = 0;
    const auto t0 = std::chrono::steady_clock::now();
    {
      ScopedStage scoped(stage == 0 ? "core:fused" : stage == 1 ? "core:fused_charges" : "core:fused_charge_forces");
      detail::reduce_stage<execution_space, detail::TagNepFused>("nep:fused", nlocal, hk, e);
      Kokkos::Experimental::contribute(f, hk.f);
      if (hk.want_vatom) Kokkos::Experimental::contribute(vatom, hk.vatom);
    }
    if (hk.timing) {  // the kernel's wall time split by the phases' cycle counts
      const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      double ticks[detail::kNumHostPhases] = {}, total = 0;
      for (const auto& sc : scratch)
        for (int ph = 0; ph < detail::kNumHostPhases; ++ph) ticks[ph] += double(sc.ticks[ph]);
      for (double t : ticks) total += t;
      if (total > 0)
        for (int ph = 0; ph < detail::kNumHostPhases; ++ph) timing_add(detail::host_phase_stage(ph), wall * ticks[ph] / total);
    }
  } else {
    (void) k, (void) nlocal, (void) stage, (void) f, (void) vatom;
    throw Error("the fused kernel runs on host spaces only");
  }
  return e;
}

template <class DeviceType, class Real>
EnergyVirial Evaluator<DeviceType, Real>::compute(int inum, t_int ilist, t_x x, t_int type, t_int num_neighbors,
                                                  t_neighbors neighbors, t_f f, t_eatom eatom, t_vatom vatom) {
  if (!is_potential_)
    throw Error(std::string("this is a ") + kind_name_ + " model, not a potential: it has no energy/force evaluation of its own");
  EnergyVirial out;
  const int nlocal = inum;
  if (nlocal <= 0) return out;
  detail::NepKernel<DeviceType, Real> k;
  const bool fused = !two_pass_ && Kokkos::SpaceAccessibility<Kokkos::HostSpace, typename DeviceType::memory_space>::accessible;
  fill_kernel(k, inum, ilist, x, type, num_neighbors, neighbors, f, eatom, vatom, !fused);

  if (fused) {
    const detail::EnergyVirialSum e = run_fused(k, nlocal, 0, f, vatom);
    out.energy = e.e;
    for (int c = 0; c < 9; ++c) out.virial[c] = e.v[c];
    return out;
  }

  detail::EnergyVirialSum e1, e2;
  {
    ScopedStage stage("core:descriptor");
    detail::reduce_stage<execution_space, detail::TagNepDescriptor>("nep:descriptor", nlocal, k, e1);
    if (timing_enabled()) execution_space().fence();
  }
  {
    ScopedStage stage("core:force");
    detail::reduce_stage<execution_space, detail::TagNepForce>("nep:force", nlocal, k, e2);
    Kokkos::Experimental::contribute(f, k.f);
    if (k.want_vatom) Kokkos::Experimental::contribute(vatom, k.vatom);
    if (timing_enabled()) execution_space().fence();
  }
  out.energy = e1.e;
  for (int c = 0; c < 9; ++c) out.virial[c] = e2.v[c];
  return out;
}

}  // namespace nep

#include "evaluator_kinds.hpp"
