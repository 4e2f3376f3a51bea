// Dual-number reverse-mode parameter gradient of the NEP energy (see include/nep/train_gradient.hpp).
// Index conventions follow the core (evaluator_impl.hpp): q = [radial n < NR | angular
// (L-1)*NA + n for L = 1..L3 | q_222 block | q_1111 block], moment entries e < S per n.
#include "nep/train_gradient.hpp"

#include <cmath>

#include "evaluator_basis.hpp"
#include "nep/angular_basis.hpp"
#include "nep/error.hpp"

namespace nep {

namespace {

// value and derivative along the seeded direction t
struct Dual {
  double v = 0.0, d = 0.0;
};
inline Dual operator+(Dual a, Dual b) { return {a.v + b.v, a.d + b.d}; }
inline Dual operator-(Dual a, Dual b) { return {a.v - b.v, a.d - b.d}; }
inline Dual operator*(Dual a, Dual b) { return {a.v * b.v, a.v * b.d + a.d * b.v}; }
inline Dual operator*(double c, Dual a) { return {c * a.v, c * a.d}; }
inline Dual& operator+=(Dual& a, Dual b) {
  a.v += b.v;
  a.d += b.d;
  return a;
}

struct PolyRef {
  const double* p;
  double operator()(int i) const { return p[i]; }
};

// 4-body q_222 from the L = 2 entries a[0..4] and its gradient (same formulas as the core)
Dual q222_value(const double* c, const Dual* a) {
  return c[0] * (a[0] * a[0] * a[0]) + c[1] * (a[0] * (a[1] * a[1] + a[2] * a[2])) +
         c[2] * (a[0] * (a[3] * a[3] + a[4] * a[4])) + c[3] * (a[3] * (a[2] * a[2] - a[1] * a[1])) +
         c[4] * (a[1] * a[2] * a[4]);
}
void q222_grad(const double* c, const Dual* a, Dual fp, Dual* g) {
  g[0] += fp * (3 * c[0] * (a[0] * a[0]) + c[1] * (a[1] * a[1] + a[2] * a[2]) + c[2] * (a[3] * a[3] + a[4] * a[4]));
  g[1] += fp * (2 * c[1] * (a[0] * a[1]) - 2 * c[3] * (a[3] * a[1]) + c[4] * (a[2] * a[4]));
  g[2] += fp * (2 * c[1] * (a[0] * a[2]) + 2 * c[3] * (a[3] * a[2]) + c[4] * (a[1] * a[4]));
  g[3] += fp * (2 * c[2] * (a[0] * a[3]) + c[3] * (a[2] * a[2] - a[1] * a[1]));
  g[4] += fp * (2 * c[2] * (a[0] * a[4]) + c[4] * (a[1] * a[2]));
}

}  // namespace

int num_trainable_parameters(const Model& m) { return m.num_ann_parameters() - 1 + static_cast<int>(m.c.size()); }

void get_trainable_parameters(const Model& m, double* theta) {
  const int na = m.num_ann_parameters() - 1;
  for (int k = 0; k < na; ++k) theta[k] = m.ann[k];
  for (size_t k = 0; k < m.c.size(); ++k) theta[na + k] = m.c[k];
}

void set_trainable_parameters(Model& m, const double* theta) {
  const int na = m.num_ann_parameters() - 1;
  for (int k = 0; k < na; ++k) m.ann[k] = theta[k];
  for (size_t k = 0; k < m.c.size(); ++k) m.c[k] = theta[na + k];
}

GradientKernel::GradientKernel(const Model& m) : m_(m) {
  if (m.version != 3 && m.version != 4) throw Error("training supports NEP3 and NEP4 models (this one is NEP" + std::to_string(m.version) + ")");
  for (int f = kQ112; f < kNumAngularFlags; ++f)
    if (m.flags[f]) throw Error("training does not support the q_112/q_123/q_233/q_134 channels");
  T_ = m.num_types();
  D_ = m.dim();
  H_ = m.num_neurons;
  NR_ = m.n_max_radial + 1;
  NA_ = m.n_max_angular + 1;
  KR_ = m.basis_size_radial + 1;
  KA_ = m.basis_size_angular + 1;
  L3_ = m.l_max;
  S_ = (L3_ + 1) * (L3_ + 1) - 1;
  q222_ = m.flags[kQ222];
  q1111_ = m.flags[kQ1111];
  ann_stride_ = m.version == 3 ? 0 : (D_ + 2) * H_;
  n_ann_ = m.num_ann_parameters() - 1;
  n_cR_ = m.num_c_radial();
  P_ = num_trainable_parameters(m);
  rcR_.resize(T_ * T_);
  rcA_.resize(T_ * T_);
  for (int a = 0; a < T_; ++a)
    for (int b = 0; b < T_; ++b) {
      rcR_[a * T_ + b] = 0.5 * (m.rc_radial[a] + m.rc_radial[b]);
      rcA_[a * T_ + b] = 0.5 * (m.rc_angular[a] + m.rc_angular[b]);
    }
  const AngularTables& tab = angular_tables();
  poly_.assign(&tab.poly[0][0][0], &tab.poly[0][0][0] + (kMaxL + 1) * (kMaxL + 1) * (kMaxL + 1));
  c3b_.assign(tab.c3b, tab.c3b + kNumAngularEntries);
}

void GradientKernel::accumulate(const NeighborList& nl, int i0, int i1, double wE, const double* delta,
                                const double* Delta, double* grad, Scratch& sc, double* e_nn, double* phi) const {
  using detail::kMaxBasis;
  const int T = T_, D = D_, H = H_, NR = NR_, NA = NA_, KR = KR_, KA = KA_, S = S_;
  sc.Bv.resize(T * KR);
  sc.Bd.resize(T * KR);
  sc.Av.resize(static_cast<size_t>(T) * KA * S);
  sc.Ad.resize(static_cast<size_t>(T) * KA * S);
  double* Bv = sc.Bv.data();
  double* Bd = sc.Bd.data();
  double* Av = sc.Av.data();
  double* Ad = sc.Ad.data();
  const PolyRef poly{poly_.data()};
  const double* ann = m_.ann.data();
  const double* qsc = m_.q_scaler.data();
  const double* cR = m_.c.data();
  const double* cA = m_.c.data() + n_cR_;
  double* gc_R = grad + n_ann_;
  double* gc_A = grad + n_ann_ + n_cR_;
  std::vector<Dual> q(D), Fp(D);
  std::vector<double> qsv(D), qsd(D), Fpv(D), Fpd(D);
  sc.sv.resize(static_cast<size_t>(NA) * S);
  sc.sd.resize(static_cast<size_t>(NA) * S);
  double* sv = sc.sv.data();
  double* sd = sc.sd.data();
  double fk[kMaxBasis], fkp[kMaxBasis], Y[kNumAngularEntries], dY[3 * kNumAngularEntries], Yd[kNumAngularEntries];
  double e_sum = 0.0, phi_sum = 0.0;
  auto coef = [wE](Dual x) { return wE * x.v - x.d; };  // contribution of dX/dtheta to dL/dtheta

  for (int i = i0; i < i1; ++i) {
    const int ti = nl.type[i];
    if (ti < 0) continue;
    std::fill(sc.Bv.begin(), sc.Bv.end(), 0.0);
    std::fill(sc.Bd.begin(), sc.Bd.end(), 0.0);
    std::fill(sc.Av.begin(), sc.Av.end(), 0.0);
    std::fill(sc.Ad.begin(), sc.Ad.end(), 0.0);
    const double* xi = &nl.x[3 * i];
    const int nn = nl.num_neighbors[i];
    const int* row = &nl.neighbors[static_cast<size_t>(i) * nl.max_neighbors];
    // ---- pair loop: type-resolved radial sums B_tk = sum_j f_k(d_ij) and angular sums
    //      A_tke = sum_j f_k(d_ij) Y_e(r_hat_ij), each with its tangent
    for (int jj = 0; jj < nn; ++jj) {
      const int j = row[jj];
      const int tj = nl.type[j];
      if (tj < 0) continue;
      const double r[3] = {nl.x[3 * j] - xi[0], nl.x[3 * j + 1] - xi[1], nl.x[3 * j + 2] - xi[2]};
      const double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
      const int pair = ti * T + tj;
      const double rcR = rcR_[pair], rcA = rcA_[pair];
      const bool in_r = d2 < rcR * rcR, in_a = d2 < rcA * rcA;
      if (!in_r && !in_a) continue;
      const double d = std::sqrt(d2), dinv = 1.0 / d;
      // tangent of r_ij: u = delta_j - delta_i + Delta^T r
      const int oj = nl.owner[j];
      double u[3];
      for (int c = 0; c < 3; ++c) {
        u[c] = delta ? delta[3 * oj + c] - delta[3 * i + c] : 0.0;
        if (Delta) u[c] += Delta[c] * r[0] + Delta[3 + c] * r[1] + Delta[6 + c] * r[2];
      }
      const double dd = (r[0] * u[0] + r[1] * u[1] + r[2] * u[2]) * dinv;
      if (in_r) {
        detail::radial_basis<double>(KR, d, 1.0 / rcR, fk, fkp);
        double* bv = Bv + tj * KR;
        double* bd = Bd + tj * KR;
        for (int k = 0; k < KR; ++k) {
          bv[k] += fk[k];
          bd[k] += fkp[k] * dd;
        }
      }
      if (in_a) {
        detail::radial_basis<double>(KA, d, 1.0 / rcA, fk, fkp);
        const double uh[3] = {r[0] * dinv, r[1] * dinv, r[2] * dinv};
        const double uu = uh[0] * u[0] + uh[1] * u[1] + uh[2] * u[2];
        const double ud[3] = {(u[0] - uh[0] * uu) * dinv, (u[1] - uh[1] * uu) * dinv, (u[2] - uh[2] * uu) * dinv};
        detail::angular_entries<double>(L3_, poly, uh[0], uh[1], uh[2], Y, dY);
        for (int e = 0; e < S; ++e) Yd[e] = dY[3 * e] * ud[0] + dY[3 * e + 1] * ud[1] + dY[3 * e + 2] * ud[2];
        for (int k = 0; k < KA; ++k) {
          const double fv = fk[k], fd = fkp[k] * dd;
          double* av = Av + (static_cast<size_t>(tj) * KA + k) * S;
          double* ad = Ad + (static_cast<size_t>(tj) * KA + k) * S;
          for (int e = 0; e < S; ++e) {
            av[e] += fv * Y[e];
            ad[e] += fd * Y[e] + fv * Yd[e];
          }
        }
      }
    }
    // ---- descriptor: q_n = sum_t sum_k c_nk(ti,t) B_tk;  s_ne = sum_t sum_k c_nk(ti,t) A_tke
    for (int n = 0; n < NR; ++n) {
      Dual acc;
      for (int k = 0; k < KR; ++k)
        for (int t = 0; t < T; ++t) {
          const double c = cR[(n * KR + k) * T * T + ti * T + t];
          acc.v += c * Bv[t * KR + k];
          acc.d += c * Bd[t * KR + k];
        }
      q[n] = acc;
    }
    for (int n = 0; n < NA; ++n) {
      double* snv = &sv[static_cast<size_t>(n) * S];
      double* snd = &sd[static_cast<size_t>(n) * S];
      for (int e = 0; e < S; ++e) snv[e] = snd[e] = 0.0;
      for (int k = 0; k < KA; ++k)
        for (int t = 0; t < T; ++t) {
          const double c = cA[(n * KA + k) * T * T + ti * T + t];
          const double* av = Av + (static_cast<size_t>(t) * KA + k) * S;
          const double* ad = Ad + (static_cast<size_t>(t) * KA + k) * S;
          for (int e = 0; e < S; ++e) {
            snv[e] += c * av[e];
            snd[e] += c * ad[e];
          }
        }
      Dual sn[kNumAngularEntries];
      for (int e = 0; e < S; ++e) sn[e] = {snv[e], snd[e]};
      for (int L = 1; L <= L3_; ++L) {
        const int base = L * L - 1;
        Dual acc;
        for (int k = 1; k <= 2 * L; ++k) acc += c3b_[base + k] * (sn[base + k] * sn[base + k]);
        q[NR + (L - 1) * NA + n] = c3b_[base] * (sn[base] * sn[base]) + 2.0 * acc;
      }
      int ch = L3_;
      if (q222_) q[NR + (ch++) * NA + n] = q222_value(kC4B, sn + 3);
      if (q1111_) {
        const Dual b0sq = sn[0] * sn[0], b12 = sn[1] * sn[1] + sn[2] * sn[2];
        q[NR + ch * NA + n] = kC5B[0] * (b0sq * b0sq) + kC5B[1] * (b0sq * b12) + kC5B[2] * (b12 * b12);
      }
    }
    // ---- network U = sum_h w1_h tanh(z_h) - b1, z_h = sum_d w0_hd q~_d - b0_h, q~ = q * q_scaler
    const int off = ann_stride_ * ti;
    const double* w0 = ann + off;  // [h][d]
    const double* b0 = w0 + H * D;
    const double* w1 = b0 + H;
    double* gw0 = grad + off;
    double* gb0 = gw0 + H * D;
    double* gw1 = gb0 + H;
    for (int d = 0; d < D; ++d) {
      qsv[d] = qsc[d] * q[d].v;
      qsd[d] = qsc[d] * q[d].d;
      Fpv[d] = Fpd[d] = 0.0;
    }
    Dual U;
    for (int h = 0; h < H; ++h) {
      const double* w = w0 + h * D;
      double zv = -b0[h], zd = 0.0;
#pragma omp simd reduction(+ : zv, zd)
      for (int d = 0; d < D; ++d) {
        zv += w[d] * qsv[d];
        zd += w[d] * qsd[d];
      }
      const double t = std::tanh(zv);
      const Dual th{t, (1.0 - t * t) * zd};
      U.v += w1[h] * th.v;
      U.d += w1[h] * th.d;
      const Dual gh{w1[h] * (1.0 - t * t), -2.0 * w1[h] * t * th.d};  // dU/dz_h
      gw1[h] += coef(th);
      gb0[h] -= coef(gh);
      // dL/dw0_hd = coef(g_h q~_d) = (wE g - g') q~ - g q~'
      const double a = wE * gh.v - gh.d, b = -gh.v;
      double* gw = gw0 + h * D;
      for (int d = 0; d < D; ++d) {
        gw[d] += a * qsv[d] + b * qsd[d];
        Fpv[d] += gh.v * w[d];
        Fpd[d] += gh.d * w[d];
      }
    }
    e_sum += U.v - ann[m_.ann_b1_offset()];
    phi_sum += U.d;
    for (int d = 0; d < D; ++d) Fp[d] = {qsc[d] * Fpv[d], qsc[d] * Fpd[d]};  // dU/dq (raw descriptor)
    // ---- radial c: dU/dc_nk(ti,t) = Fp_n B_tk
    for (int n = 0; n < NR; ++n)
      for (int k = 0; k < KR; ++k)
        for (int t = 0; t < T; ++t) {
          const Dual b{Bv[t * KR + k], Bd[t * KR + k]};
          gc_R[(n * KR + k) * T * T + ti * T + t] += coef(Fp[n] * b);
        }
    // ---- angular: G_ne = dU/ds_ne through the invariants, then dU/dc_nk(ti,t) = sum_e G_ne A_tke
    for (int n = 0; n < NA; ++n) {
      Dual sn[kNumAngularEntries], Gn[kNumAngularEntries];
      for (int e = 0; e < S; ++e) sn[e] = {sv[static_cast<size_t>(n) * S + e], sd[static_cast<size_t>(n) * S + e]};
      for (int L = 1; L <= L3_; ++L) {
        const int base = L * L - 1;
        const Dual fpL = Fp[NR + (L - 1) * NA + n];
        Gn[base] = (2.0 * c3b_[base]) * (sn[base] * fpL);
        for (int k = 1; k <= 2 * L; ++k) Gn[base + k] = (4.0 * c3b_[base + k]) * (sn[base + k] * fpL);
      }
      int ch = L3_;
      if (q222_) q222_grad(kC4B, sn + 3, Fp[NR + (ch++) * NA + n], Gn + 3);
      if (q1111_) {
        const Dual fp5 = Fp[NR + ch * NA + n];
        const Dual b0sq = sn[0] * sn[0], b12 = sn[1] * sn[1] + sn[2] * sn[2];
        Gn[0] += fp5 * ((4 * kC5B[0]) * (b0sq * sn[0]) + (2 * kC5B[1]) * (sn[0] * b12));
        const Dual c = (2 * kC5B[1]) * b0sq + (4 * kC5B[2]) * b12;
        Gn[1] += fp5 * (c * sn[1]);
        Gn[2] += fp5 * (c * sn[2]);
      }
      double Gv[kNumAngularEntries], Gd[kNumAngularEntries];
      for (int e = 0; e < S; ++e) {
        Gv[e] = Gn[e].v;
        Gd[e] = Gn[e].d;
      }
      for (int k = 0; k < KA; ++k)
        for (int t = 0; t < T; ++t) {
          const double* av = Av + (static_cast<size_t>(t) * KA + k) * S;
          const double* ad = Ad + (static_cast<size_t>(t) * KA + k) * S;
          double gv = 0.0, gd = 0.0;
#pragma omp simd reduction(+ : gv, gd)
          for (int e = 0; e < S; ++e) {
            gv += Gv[e] * av[e];
            gd += Gv[e] * ad[e] + Gd[e] * av[e];
          }
          gc_A[(n * KA + k) * T * T + ti * T + t] += wE * gv - gd;
        }
    }
  }
  if (e_nn) *e_nn += e_sum;
  if (phi) *phi += phi_sum;
}

}  // namespace nep
