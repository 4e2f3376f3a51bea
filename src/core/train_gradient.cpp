// Dual-number reverse-mode parameter gradient of the NEP energy (see include/nep/train_gradient.hpp).
// Index conventions follow the core (evaluator_impl.hpp): q = [radial n < NR | angular
// (L-1)*NA + n for L = 1..L3 | q_222 block | q_1111 block], moment entries e < S per n.
#include "nep/train_gradient.hpp"

#include <cmath>

#include "evaluator_basis.hpp"
#include "nep/angular_basis.hpp"
#include "nep/error.hpp"
#include "train_gradient_math.hpp"

namespace nep {

using detail::Dual;

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
  const ModelSizes z = m.sizes();
  T_ = z.T, D_ = z.D, H_ = z.H, NR_ = z.NR, NA_ = z.NA, KR_ = z.KR, KA_ = z.KA, L3_ = z.L3, S_ = z.S;
  q222_ = z.q222;
  q1111_ = z.q1111;
  ann_stride_ = m.ann_stride();
  n_ann_ = m.num_ann_parameters() - 1;
  n_cR_ = m.num_c_radial();
  P_ = num_trainable_parameters(m);
  rcR_.resize(T_ * T_);
  rcA_.resize(T_ * T_);
  for (int a = 0; a < T_; ++a)
    for (int b = 0; b < T_; ++b) {
      rcR_[a * T_ + b] = m.rc_radial_pair(a, b);
      rcA_[a * T_ + b] = m.rc_angular_pair(a, b);
    }
  const AngularTables& tab = angular_tables();
  c3b_.assign(tab.c3b, tab.c3b + kNumAngularEntries);
  cA_pair_.resize(static_cast<size_t>(T_) * T_ * NA_ * KA_);
  for (int n = 0; n < NA_; ++n)
    for (int k = 0; k < KA_; ++k)
      for (int pr = 0; pr < T_ * T_; ++pr) cA_pair_[pr * NA_ * KA_ + n * KA_ + k] = m.c[n_cR_ + (n * KA_ + k) * T_ * T_ + pr];
  const int n_nets = m.version == 3 ? 1 : T_;
  w0t_.resize(static_cast<size_t>(n_nets) * D_ * H_);
  for (int t = 0; t < n_nets; ++t)
    for (int h = 0; h < H_; ++h)
      for (int d = 0; d < D_; ++d) w0t_[(static_cast<size_t>(t) * D_ + d) * H_ + h] = m.ann[ann_stride_ * t + h * D_ + d];
}

void GradientKernel::accumulate(const PairBasis& pb, int i0, int i1, double wE, const double* delta,
                                const double* Delta, double* grad, Scratch& sc, double* e_nn, double* phi) const {
  const int T = T_, D = D_, H = H_, NR = NR_, NA = NA_, KR = KR_, KA = KA_, S = S_;
  sc.Bd.resize(T * KR);
  sc.sv.resize(static_cast<size_t>(NA) * S);
  sc.sd.resize(static_cast<size_t>(NA) * S);
  sc.Gv.resize(static_cast<size_t>(NA) * S);
  sc.Gd.resize(static_cast<size_t>(NA) * S);
  sc.gA.resize(static_cast<size_t>(T) * NA * KA);
  double* Bd = sc.Bd.data();
  double* sv = sc.sv.data();
  double* sd = sc.sd.data();
  double* Gv = sc.Gv.data();
  double* Gd = sc.Gd.data();
  double* gA = sc.gA.data();
  const double* ann = m_.ann.data();
  const double* qsc = m_.q_scaler.data();
  const double* cR = m_.c.data();
  double* gc_R = grad + n_ann_;
  double* gc_A = grad + n_ann_ + n_cR_;
  for (auto* v : {&sc.qsv, &sc.qsd, &sc.Fpv, &sc.Fpd}) v->resize(D);
  double* qsv = sc.qsv.data();
  double* qsd = sc.qsd.data();
  double* Fpv = sc.Fpv.data();
  double* Fpd = sc.Fpd.data();
  Dual q[detail::kMaxDim], Fp[detail::kMaxDim];
  double e_sum = 0.0, phi_sum = 0.0;
  auto coef = [wE](Dual x) { return wE * x.v - x.d; };  // contribution of dX/dtheta to dL/dtheta
  // tangent of r_ij along the seeded direction: u = delta_j - delta_i + Delta^T r_ij
  auto tangent = [&](int i, int oj, const double* r, double* u) {
    for (int c = 0; c < 3; ++c) {
      u[c] = delta ? delta[3 * oj + c] - delta[3 * i + c] : 0.0;
      if (Delta) u[c] += Delta[c] * r[0] + Delta[3 + c] * r[1] + Delta[6 + c] * r[2];
    }
  };

  for (int i = i0; i < i1; ++i) {
    const int ti = pb.type[i];
    if (ti < 0) continue;
    // ---- radial: B_tk (cached) and its tangent Bd_tk = sum_j f_k'(d_ij) (r_hat_ij . u_ij)
    const double* Bv = &pb.B[static_cast<size_t>(i) * T * KR];
    std::fill(sc.Bd.begin(), sc.Bd.end(), 0.0);
    for (int p = pb.r_begin[i]; p < pb.r_begin[i + 1]; ++p) {
      const double* g = &pb.r_geom[4 * static_cast<size_t>(p)];
      double u[3];
      tangent(i, pb.r_owner[p], g, u);
      const double dd = (g[0] * u[0] + g[1] * u[1] + g[2] * u[2]) * g[3];
      const double* fp = &pb.r_fp[static_cast<size_t>(p) * KR];
      double* bd = Bd + pb.r_type[p] * KR;
      for (int k = 0; k < KR; ++k) bd[k] += fp[k] * dd;
    }
    // ---- angular moments s_ne = sum_j g_n(d_ij) Y_e(r_hat_ij), g_n = sum_k c_nk(ti,tj) f_k, with
    //      tangents; per pair keep dd = r_hat.u and Yd_e = grad Y_e . d r_hat for the c gradient
    const int a0 = pb.a_begin[i], na = pb.a_begin[i + 1] - a0;
    sc.pair_dd.resize(na);
    sc.pair_Yd.resize(static_cast<size_t>(na) * S);
    std::fill(sc.sv.begin(), sc.sv.end(), 0.0);
    std::fill(sc.sd.begin(), sc.sd.end(), 0.0);
    for (int pp = 0; pp < na; ++pp) {
      const size_t p = static_cast<size_t>(a0 + pp);
      const double* g = &pb.a_geom[4 * p];
      const double dinv = g[3];
      double u[3];
      tangent(i, pb.a_owner[p], g, u);
      const double uh[3] = {g[0] * dinv, g[1] * dinv, g[2] * dinv};
      const double uu = uh[0] * u[0] + uh[1] * u[1] + uh[2] * u[2];
      const double ud[3] = {(u[0] - uh[0] * uu) * dinv, (u[1] - uh[1] * uu) * dinv, (u[2] - uh[2] * uu) * dinv};
      const double dd = uu;
      const double* Y = &pb.a_Y[p * S];
      const double* dY = &pb.a_dY[p * 3 * S];
      double* Yd = &sc.pair_Yd[static_cast<size_t>(pp) * S];
      for (int e = 0; e < S; ++e) Yd[e] = dY[3 * e] * ud[0] + dY[3 * e + 1] * ud[1] + dY[3 * e + 2] * ud[2];
      sc.pair_dd[pp] = dd;
      const double* f = &pb.a_f[p * KA];
      const double* fp = &pb.a_fp[p * KA];
      const double* c = &cA_pair_[static_cast<size_t>(ti * T + pb.a_type[p]) * NA * KA];
      for (int n = 0; n < NA; ++n) {
        const double gv = detail::radial_sum(c + n * KA, f, KA), gd = detail::radial_sum(c + n * KA, fp, KA) * dd;
        double* snv = sv + n * S;
        double* snd = sd + n * S;
#pragma omp simd
        for (int e = 0; e < S; ++e) {
          snv[e] += gv * Y[e];
          snd[e] += gd * Y[e] + gv * Yd[e];
        }
      }
    }
    // ---- descriptor: q_n = sum_t sum_k c_nk(ti,t) B_tk; angular invariants of s
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
      Dual sn[kNumAngularEntries];
      for (int e = 0; e < S; ++e) sn[e] = {sv[n * S + e], sd[n * S + e]};
      detail::angular_invariants(L3_, c3b_.data(), kC4B, kC5B, q222_, q1111_, sn, &q[NR + n], NA);
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
#pragma omp simd
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
    // ---- angular: G_ne = dU/ds_ne through the invariants; per pair P_n = sum_e G_ne Y_e and
    //      dU/dc_nk(ti,tj) += P_n f_k(d_ij) (all as duals)
    for (int n = 0; n < NA; ++n) {
      Dual sn[kNumAngularEntries], Gn[kNumAngularEntries];
      for (int e = 0; e < S; ++e) sn[e] = {sv[n * S + e], sd[n * S + e]};
      detail::angular_invariant_grad(L3_, c3b_.data(), kC4B, kC5B, q222_, q1111_, sn, &Fp[NR + n], NA, S, Gn);
      for (int e = 0; e < S; ++e) {
        Gv[n * S + e] = Gn[e].v;
        Gd[n * S + e] = Gn[e].d;
      }
    }
    std::fill(sc.gA.begin(), sc.gA.end(), 0.0);
    for (int pp = 0; pp < na; ++pp) {
      const size_t p = static_cast<size_t>(a0 + pp);
      const double* Y = &pb.a_Y[p * S];
      const double* Yd = &sc.pair_Yd[static_cast<size_t>(pp) * S];
      const double* f = &pb.a_f[p * KA];
      const double* fp = &pb.a_fp[p * KA];
      const double dd = sc.pair_dd[pp];
      double* ga = gA + static_cast<size_t>(pb.a_type[p]) * NA * KA;
      for (int n = 0; n < NA; ++n) {
        const double* gv = Gv + n * S;
        const double* gd = Gd + n * S;
        double pv = 0.0, pd = 0.0;
#pragma omp simd reduction(+ : pv, pd)
        for (int e = 0; e < S; ++e) {
          pv += gv[e] * Y[e];
          pd += gd[e] * Y[e] + gv[e] * Yd[e];
        }
        // coef(P f) = wE pv f - (pd f + pv f' dd)
        const double a = wE * pv - pd, b = pv * dd;
        for (int k = 0; k < KA; ++k) ga[n * KA + k] += a * f[k] - b * fp[k];
      }
    }
    for (int t = 0; t < T; ++t)
      for (int n = 0; n < NA; ++n)
        for (int k = 0; k < KA; ++k) gc_A[(n * KA + k) * T * T + ti * T + t] += gA[(static_cast<size_t>(t) * NA + n) * KA + k];
  }
  if (e_nn) *e_nn += e_sum;
  if (phi) *phi += phi_sum;
}

void GradientKernel::forward(const PairBasis& pb, double& energy, double* virial, double* force, Scratch& sc) const {
  const int T = T_, D = D_, H = H_, NR = NR_, NA = NA_, KR = KR_, KA = KA_, S = S_;
  const int n = pb.nlocal;
  const double* ann = m_.ann.data();
  const double* qsc = m_.q_scaler.data();
  const double* cR = m_.c.data();
  sc.sv.resize(static_cast<size_t>(NA) * S);
  sc.Gv.resize(static_cast<size_t>(NA) * S);
  sc.cF.resize(static_cast<size_t>(T) * KR);
  double* s = sc.sv.data();
  double* G = sc.Gv.data();
  double* cF = sc.cF.data();
  for (auto* v : {&sc.qv, &sc.qd}) v->resize(D);
  sc.z.resize(H);
  double* q = sc.qv.data();
  double* dU = sc.qd.data();
  double* z = sc.z.data();
  double e_sum = 0.0, w[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  for (int k = 0; k < 3 * n; ++k) force[k] = 0.0;
  for (int i = 0; i < n; ++i) {
    const int ti = pb.type[i];
    if (ti < 0) continue;
    // descriptor (radial sums cached; angular moments from the cached pair basis)
    const double* Bv = &pb.B[static_cast<size_t>(i) * T * KR];
    for (int nn = 0; nn < NR; ++nn) {
      double acc = 0.0;
      for (int k = 0; k < KR; ++k)
        for (int t = 0; t < T; ++t) acc += cR[(nn * KR + k) * T * T + ti * T + t] * Bv[t * KR + k];
      q[nn] = acc;
    }
    const int a0 = pb.a_begin[i], a1 = pb.a_begin[i + 1];
    std::fill(sc.sv.begin(), sc.sv.end(), 0.0);
    sc.pair_g.resize(static_cast<size_t>(a1 - a0) * NA);  // g_n of each pair, again in the force loop
    for (int p = a0; p < a1; ++p) {
      const double* Y = &pb.a_Y[static_cast<size_t>(p) * S];
      const double* f = &pb.a_f[static_cast<size_t>(p) * KA];
      const double* c = &cA_pair_[static_cast<size_t>(ti * T + pb.a_type[p]) * NA * KA];
      double* gp = &sc.pair_g[static_cast<size_t>(p - a0) * NA];
      for (int nn = 0; nn < NA; ++nn) {
        const double g = detail::radial_sum(c + nn * KA, f, KA);
        gp[nn] = g;
        double* sn = s + nn * S;
#pragma omp simd
        for (int e = 0; e < S; ++e) sn[e] += g * Y[e];
      }
    }
    for (int nn = 0; nn < NA; ++nn) detail::angular_invariants(L3_, c3b_.data(), kC4B, kC5B, q222_, q1111_, s + nn * S, &q[NR + nn], NA);
    // network
    const int off = ann_stride_ * ti;
    const double* w0 = ann + off;
    const double* w0t = &w0t_[static_cast<size_t>(m_.version == 3 ? 0 : ti) * D * H];
    const double* b0 = w0 + H * D;
    const double* w1 = b0 + H;
    for (int h = 0; h < H; ++h) z[h] = -b0[h];
    for (int d = 0; d < D; ++d) {
      const double qd = q[d] * qsc[d];
      const double* wt = w0t + d * H;
#pragma omp simd
      for (int h = 0; h < H; ++h) z[h] += wt[h] * qd;
    }
    double U = 0.0;
    for (int h = 0; h < H; ++h) {
      const double t = std::tanh(z[h]);
      U += w1[h] * t;
      z[h] = w1[h] * (1.0 - t * t);
    }
    for (int d = 0; d < D; ++d) dU[d] = 0.0;
    for (int h = 0; h < H; ++h) {
      const double gh = z[h];
      const double* wr = w0 + h * D;
#pragma omp simd
      for (int d = 0; d < D; ++d) dU[d] += gh * wr[d];
    }
    for (int d = 0; d < D; ++d) dU[d] *= qsc[d];
    e_sum += U - ann[m_.ann_b1_offset()];
    // forces: radial f_ij = (sum_k f_k'(d) cF_{tj,k}) r_hat, cF_tk = sum_n c_nk(ti,t) dU/dq_n
    for (int t = 0; t < T; ++t)
      for (int k = 0; k < KR; ++k) {
        double acc = 0.0;
        for (int nn = 0; nn < NR; ++nn) acc += cR[(nn * KR + k) * T * T + ti * T + t] * dU[nn];
        cF[t * KR + k] = acc;
      }
    double fi[3] = {0, 0, 0};
    auto add_pair = [&](int oj, const double* r, const double* fij) {
      for (int c = 0; c < 3; ++c) {
        fi[c] += fij[c];
        force[3 * oj + c] -= fij[c];
      }
      for (int a = 0; a < 3; ++a)
        for (int b = 0; b < 3; ++b) w[3 * a + b] -= r[a] * fij[b];
    };
    for (int p = pb.r_begin[i]; p < pb.r_begin[i + 1]; ++p) {
      const double* g = &pb.r_geom[4 * static_cast<size_t>(p)];
      const double* fp = &pb.r_fp[static_cast<size_t>(p) * KR];
      const double* c = cF + pb.r_type[p] * KR;
      double fr = 0.0;
      for (int k = 0; k < KR; ++k) fr += fp[k] * c[k];
      fr *= g[3];
      const double fij[3] = {fr * g[0], fr * g[1], fr * g[2]};
      add_pair(pb.r_owner[p], g, fij);
    }
    // angular: G_ne = dU/ds_ne; d/dr [g_n(d) Y_e(r_hat)] = g_n' Y_e r_hat + g_n (grad Y_e)_perp / d
    for (int nn = 0; nn < NA; ++nn)
      detail::angular_invariant_grad(L3_, c3b_.data(), kC4B, kC5B, q222_, q1111_, s + nn * S, &dU[NR + nn], NA, S, G + nn * S);
    for (int p = a0; p < a1; ++p) {
      const double* g = &pb.a_geom[4 * static_cast<size_t>(p)];
      const double* Y = &pb.a_Y[static_cast<size_t>(p) * S];
      const double* dY = &pb.a_dY[static_cast<size_t>(p) * 3 * S];
      const double* fp = &pb.a_fp[static_cast<size_t>(p) * KA];
      const double* c = &cA_pair_[static_cast<size_t>(ti * T + pb.a_type[p]) * NA * KA];
      const double* g_pair = &sc.pair_g[static_cast<size_t>(p - a0) * NA];
      double Hn[kNumAngularEntries] = {}, Hp[kNumAngularEntries] = {};
      for (int nn = 0; nn < NA; ++nn) {
        const double gn = g_pair[nn];
        const double gp = detail::radial_sum(c + nn * KA, fp, KA);
        const double* Gn = G + nn * S;
#pragma omp simd
        for (int e = 0; e < S; ++e) {
          Hn[e] += Gn[e] * gn;
          Hp[e] += Gn[e] * gp;
        }
      }
      const double dinv = g[3];
      const double uh[3] = {g[0] * dinv, g[1] * dinv, g[2] * dinv};
      double a = 0.0, b[3] = {0, 0, 0};
      for (int e = 0; e < S; ++e) {
        a += Hp[e] * Y[e];
        b[0] += Hn[e] * dY[3 * e];
        b[1] += Hn[e] * dY[3 * e + 1];
        b[2] += Hn[e] * dY[3 * e + 2];
      }
      const double bu = b[0] * uh[0] + b[1] * uh[1] + b[2] * uh[2];
      double fij[3];
      for (int c3 = 0; c3 < 3; ++c3) fij[c3] = a * uh[c3] + (b[c3] - bu * uh[c3]) * dinv;
      add_pair(pb.a_owner[p], g, fij);
    }
    for (int c = 0; c < 3; ++c) force[3 * i + c] += fi[c];
  }
  energy = e_sum;
  for (int c = 0; c < 9; ++c) virial[c] = w[c];
  if (pb.has_zbl) {
    energy += pb.zbl_energy;
    for (int c = 0; c < 9; ++c) virial[c] += pb.zbl_virial[c];
    for (int k = 0; k < 3 * n; ++k) force[k] += pb.zbl_force[k];
  }
}

}  // namespace nep
