// Dual-number reverse-mode parameter gradient of the NEP energy (see include/nep/train/train_gradient.hpp).
// Index conventions follow the core (evaluator_impl.hpp): q = [radial n < NR | angular
// (L-1)*NA + n for L = 1..L3 | q_222 block | q_1111 block], moment entries e < S per n.
#include "nep/train/train_gradient.hpp"

#include <cmath>

#include "nep/angular_basis.hpp"
#include "nep/core/host_tanh.hpp"
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

namespace {
constexpr int kLanes = 8;  // doubles per register block in the network loops (one AVX-512 vector)

// g_n = sum_k c_nk f_k and g'_n = sum_k c_nk f'_k of one pair for n < NAp, with c stored [k][n]
inline void radial_sums(const double* cT, const double* f, const double* fp, int K, int NAp, double* g, double* gp) {
  for (int n = 0; n < NAp; ++n) g[n] = gp[n] = 0.0;
  for (int k = 0; k < K; ++k) {
    const double* c = cT + k * NAp;
    const double fk = f[k], fpk = fp[k];
#pragma omp simd
    for (int n = 0; n < NAp; ++n) {
      g[n] += c[n] * fk;
      gp[n] += c[n] * fpk;
    }
  }
}
// out[c] = sum_{r < rows} x[r] W[r*ld + c] for c < ld (ld a multiple of kLanes; with Two, also
// out2 from x2), kLanes columns at a time held in registers: the network's products with the
// first-layer weights, through the transposed copy (over neurons) or the padded one (over q)
template <bool Two>
inline void rows_times(const double* W, int ld, int rows, const double* x, const double* x2, double* out, double* out2) {
  for (int c0 = 0; c0 < ld; c0 += kLanes) {
    double a[kLanes] = {}, b[kLanes] = {};
    for (int r = 0; r < rows; ++r) {
      const double* w = W + static_cast<size_t>(r) * ld + c0;
      const double xr = x[r], yr = Two ? x2[r] : 0.0;
#pragma omp simd
      for (int l = 0; l < kLanes; ++l) {
        a[l] += w[l] * xr;
        if (Two) b[l] += w[l] * yr;
      }
    }
    for (int l = 0; l < kLanes; ++l) out[c0 + l] = a[l];
    if (Two)
      for (int l = 0; l < kLanes; ++l) out2[c0 + l] = b[l];
  }
}

// r_hat_ij . u_ij of the radial pairs [r0, r0 + nr) of atom i, u = delta_j - delta_i + Delta^T r_ij
void radial_tangents(const PairBasis& pb, int i, int r0, int nr, const double* delta, const double* Delta, double* dd) {
  const double* g = pb.r_geom.data() + 4 * static_cast<size_t>(r0);  // (nr may be 0 at the end)
  const int* owner = pb.r_owner.data() + r0;
  for (int p = 0; p < nr; ++p) dd[p] = 0.0;
  if (delta) {
    const double di[3] = {delta[3 * i], delta[3 * i + 1], delta[3 * i + 2]};
    for (int p = 0; p < nr; ++p) {
      const double* dj = delta + 3 * owner[p];
      const double* r = g + 4 * p;
      dd[p] = ((dj[0] - di[0]) * r[0] + (dj[1] - di[1]) * r[1] + (dj[2] - di[2]) * r[2]) * r[3];
    }
  }
  if (Delta)
    for (int p = 0; p < nr; ++p) {  // r_hat . (Delta^T r) = sum_ab r_a Delta_ab r_b / d
      const double* r = g + 4 * p;
      double acc = 0.0;
      for (int a = 0; a < 3; ++a) acc += r[a] * (Delta[3 * a] * r[0] + Delta[3 * a + 1] * r[1] + Delta[3 * a + 2] * r[2]);
      dd[p] += acc * r[3];
    }
}
}  // namespace

GradientKernel::GradientKernel(const Model& m) : m_(m) {
  if (!m.is_potential())
    throw Error(std::string("training supports potential models only (this one is a ") + kind_name(m.kind) + " model, " +
                m.tag() + "); dipole, polarizability and charge models are evaluated, not trained, here");
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
  NAp_ = (NA_ + 3) / 4 * 4;
  cAt_.assign(static_cast<size_t>(T_) * T_ * KA_ * NAp_, 0.0);
  for (int pr = 0; pr < T_ * T_; ++pr)
    for (int k = 0; k < KA_; ++k)
      for (int n = 0; n < NA_; ++n) cAt_[(static_cast<size_t>(pr) * KA_ + k) * NAp_ + n] = m.c[n_cR_ + (n * KA_ + k) * T_ * T_ + pr];
  n_nets_ = m.version == 3 ? 1 : T_;
  const int n_nets = n_nets_;
  Hp_ = (H_ + kLanes - 1) / kLanes * kLanes;
  Dp_ = (D_ + kLanes - 1) / kLanes * kLanes;
  w0p_.assign(static_cast<size_t>(n_nets) * H_ * Dp_, 0.0);
  for (int t = 0; t < n_nets; ++t)
    for (int h = 0; h < H_; ++h)
      for (int d = 0; d < D_; ++d) w0p_[(static_cast<size_t>(t) * H_ + h) * Dp_ + d] = m.ann[ann_stride_ * t + h * D_ + d];
  w0t_.assign(static_cast<size_t>(n_nets) * D_ * Hp_, 0.0);
  for (int t = 0; t < n_nets; ++t)
    for (int h = 0; h < H_; ++h)
      for (int d = 0; d < D_; ++d) w0t_[(static_cast<size_t>(t) * D_ + d) * Hp_ + h] = m.ann[ann_stride_ * t + h * D_ + d];
}

// long-function: one per-atom pass of the dual-number reverse mode in phases that share state: the
// descriptor with its tangents, the network forward and backward, then the radial and angular
// chain rules back to the cached pair basis. The phases share ~20 scratch pointers, padded lane
// counts and the per-atom Dual arrays q[] and Fp[]; the register-blocked loops were tuned in this
// form (docs/benchmarks_log.md §9d), and split into functions each would take all of them.
void GradientKernel::accumulate(const PairBasis& pb, int i0, int i1, double wE, const double* delta,
                                const double* Delta, double* grad, Scratch& sc, double* e_nn, double* phi) const {
  const int T = T_, D = D_, H = H_, NR = NR_, NA = NA_, NAp = NAp_, KR = KR_, KRp = pb.KRp, KA = KA_, S = S_;
  sc.Bd.resize(2 * T * KRp);
  sc.sv.resize(static_cast<size_t>(NA) * S);
  sc.sd.resize(static_cast<size_t>(NA) * S);
  sc.Gv.resize(static_cast<size_t>(NAp) * S);
  sc.Gd.resize(static_cast<size_t>(NAp) * S);
  sc.gA.resize(static_cast<size_t>(T) * NAp * KA);
  double* Bd = sc.Bd.data();
  double* sv = sc.sv.data();
  double* sd = sc.sd.data();
  double* Gv = sc.Gv.data();
  double* Gd = sc.Gd.data();
  double* gA = sc.gA.data();
  std::fill(sc.Gv.begin(), sc.Gv.end(), 0.0);  // the padding lanes n >= NA stay zero
  std::fill(sc.Gd.begin(), sc.Gd.end(), 0.0);
  const double* ann = m_.ann.data();
  const double* qsc = m_.q_scaler.data();
  const double* cR = m_.c.data();
  double* gc_R = grad + n_ann_;
  double* gc_A = grad + n_ann_ + n_cR_;
  for (auto* v : {&sc.qsv, &sc.qsd, &sc.Fpv, &sc.Fpd}) v->assign(Dp_, 0.0);  // padding lanes stay zero
  sc.gwp.assign(static_cast<size_t>(n_nets_) * H * Dp_, 0.0);
  for (auto* v : {&sc.z, &sc.zd, &sc.hv, &sc.hd, &sc.ha}) v->resize(Hp_);
  double* qsv = sc.qsv.data();
  double* qsd = sc.qsd.data();
  double* Fpv = sc.Fpv.data();
  double* Fpd = sc.Fpd.data();
  Dual q[limits::kMaxDim], Fp[limits::kMaxDim];
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
    // (two accumulator copies, even and odd pairs: consecutive pairs of one type do not wait on
    // each other's stores)
    std::fill(sc.Bd.begin(), sc.Bd.end(), 0.0);
    const int r0 = pb.r_begin[i], nr = pb.r_begin[i + 1] - r0;
    sc.pair_rd.resize(nr);
    double* rdd = sc.pair_rd.data();
    radial_tangents(pb, i, r0, nr, delta, Delta, rdd);
    for (int pp = 0; pp < nr; ++pp) {
      const size_t p = static_cast<size_t>(r0 + pp);
      const double* fp = &pb.r_fp[p * KRp];
      double* bd = Bd + ((pp & 1) * T + pb.r_type[p]) * KRp;
      const double dd = rdd[pp];
#pragma omp simd
      for (int k = 0; k < KRp; ++k) bd[k] += fp[k] * dd;
    }
    for (int k = 0; k < T * KRp; ++k) Bd[k] += Bd[T * KRp + k];
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
      // g_n and g_n' of the pair for every n at once (c stored [k][n], n padded to NAp)
      const double* f = &pb.a_f[p * KA];
      const double* fp = &pb.a_fp[p * KA];
      const double* cT = &cAt_[static_cast<size_t>(ti * T + pb.a_type[p]) * KA * NAp];
      double gvn[limits::kMaxBasis], gpn[limits::kMaxBasis];
      radial_sums(cT, f, fp, KA, NAp, gvn, gpn);
      for (int n = 0; n < NA; ++n) {
        const double gv = gvn[n], gd = gpn[n] * dd;
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
          acc.d += c * Bd[t * KRp + k];
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
    }
    // z_h and its tangent, eight neurons at a time held in registers (weights transposed, rows
    // padded with zeros to whole vectors), tanh over the row, the per-neuron scalars, then the
    // rank-2 update and dU/dq~ eight descriptor components at a time
    const int HP = Hp_, DP = Dp_, net = m_.version == 3 ? 0 : ti;
    const double* w0t = &w0t_[static_cast<size_t>(net) * D * HP];
    const double* w0p = &w0p_[static_cast<size_t>(net) * H * DP];
    double* zv = sc.z.data();
    double* zd = sc.zd.data();
    rows_times<true>(w0t, HP, D, qsv, qsd, zv, zd);
    for (int h = 0; h < H; ++h) zv[h] -= b0[h];
    detail::TanhRowsHost()(HP, zv);  // zv <- t_h = tanh(z_h)
    double* hv = sc.hv.data();
    double* hd = sc.hd.data();
    double* ha = sc.ha.data();
    Dual U;
    for (int h = 0; h < H; ++h) {
      const double t = zv[h];
      const Dual th{t, (1.0 - t * t) * zd[h]};
      U.v += w1[h] * th.v;
      U.d += w1[h] * th.d;
      const Dual gh{w1[h] * (1.0 - t * t), -2.0 * w1[h] * t * th.d};  // dU/dz_h
      gw1[h] += coef(th);
      gb0[h] -= coef(gh);
      hv[h] = gh.v;
      hd[h] = gh.d;
      ha[h] = wE * gh.v - gh.d;
    }
    // dL/dw0_hd = coef(g_h q~_d) = (wE g - g') q~ - g q~' (into the padded copy gwp, folded into
    // grad at the end); dU/dq~_d = sum_h g_h w0_hd
    double* gw0p = &sc.gwp[static_cast<size_t>(net) * H * DP];
    for (int h = 0; h < H; ++h) {
      const double x = ha[h], y = -hv[h];
      double* gw = gw0p + h * DP;
#pragma omp simd
      for (int d = 0; d < DP; ++d) gw[d] += x * qsv[d] + y * qsd[d];
    }
    rows_times<true>(w0p, DP, H, hv, hd, Fpv, Fpd);
    e_sum += U.v - ann[m_.ann_b1_offset()];
    phi_sum += U.d;
    for (int d = 0; d < D; ++d) Fp[d] = {qsc[d] * Fpv[d], qsc[d] * Fpd[d]};  // dU/dq (raw descriptor)
    // ---- radial c: dU/dc_nk(ti,t) = Fp_n B_tk
    for (int n = 0; n < NR; ++n)
      for (int k = 0; k < KR; ++k)
        for (int t = 0; t < T; ++t) {
          const Dual b{Bv[t * KR + k], Bd[t * KRp + k]};
          gc_R[(n * KR + k) * T * T + ti * T + t] += coef(Fp[n] * b);
        }
    // ---- angular: G_ne = dU/ds_ne through the invariants; per pair P_n = sum_e G_ne Y_e and
    //      dU/dc_nk(ti,tj) += P_n f_k(d_ij) (all as duals)
    for (int n = 0; n < NA; ++n) {
      Dual sn[kNumAngularEntries], Gn[kNumAngularEntries];
      for (int e = 0; e < S; ++e) sn[e] = {sv[n * S + e], sd[n * S + e]};
      detail::angular_invariant_grad(L3_, c3b_.data(), kC4B, kC5B, q222_, q1111_, sn, &Fp[NR + n], NA, S, Gn);
      for (int e = 0; e < S; ++e) {  // stored [e][n]: the pair loop below runs over n
        Gv[e * NAp + n] = Gn[e].v;
        Gd[e * NAp + n] = Gn[e].d;
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
      // P_n = sum_e G_ne Y_e (value and tangent) for every n at once
      double pv[limits::kMaxBasis], pd[limits::kMaxBasis];
      for (int n = 0; n < NAp; ++n) pv[n] = pd[n] = 0.0;
      for (int e = 0; e < S; ++e) {
        const double* gv = Gv + e * NAp;
        const double* gd = Gd + e * NAp;
        const double y = Y[e], yd = Yd[e];
#pragma omp simd
        for (int n = 0; n < NAp; ++n) {
          pv[n] += gv[n] * y;
          pd[n] += gd[n] * y + gv[n] * yd;
        }
      }
      // coef(P f) = wE pv f - (pd f + pv f' dd); gA stored [tj][k][n]
      double a[limits::kMaxBasis], b[limits::kMaxBasis];
#pragma omp simd
      for (int n = 0; n < NAp; ++n) {
        a[n] = wE * pv[n] - pd[n];
        b[n] = pv[n] * dd;
      }
      double* ga = gA + static_cast<size_t>(pb.a_type[p]) * KA * NAp;
      for (int k = 0; k < KA; ++k) {
        const double fk = f[k], fpk = fp[k];
        double* g = ga + k * NAp;
#pragma omp simd
        for (int n = 0; n < NAp; ++n) g[n] += a[n] * fk - b[n] * fpk;
      }
    }
    for (int t = 0; t < T; ++t)
      for (int n = 0; n < NA; ++n)
        for (int k = 0; k < KA; ++k) gc_A[(n * KA + k) * T * T + ti * T + t] += gA[(static_cast<size_t>(t) * KA + k) * NAp + n];
  }
  // fold the padded first-layer gradient into grad's [h][d] layout
  for (int t = 0; t < n_nets_; ++t)
    for (int h = 0; h < H; ++h) {
      double* g = grad + ann_stride_ * t + h * D;
      const double* gp = &sc.gwp[(static_cast<size_t>(t) * H + h) * Dp_];
      for (int d = 0; d < D; ++d) g[d] += gp[d];
    }
  if (e_nn) *e_nn += e_sum;
  if (phi) *phi += phi_sum;
}

// long-function: the training forward per atom in the same phases as accumulate (descriptor from the
// cached basis, network, dU/dq, radial and angular forces and virial), sharing its scratch and the
// per-atom arrays; kept in one piece for the same reason (docs/benchmarks_log.md §9d).
void GradientKernel::forward(const PairBasis& pb, double& energy, double* virial, double* force, Scratch& sc) const {
  const int T = T_, D = D_, H = H_, NR = NR_, NA = NA_, NAp = NAp_, KR = KR_, KRp = pb.KRp, KA = KA_, S = S_;
  const int n = pb.nlocal;
  const double* ann = m_.ann.data();
  const double* qsc = m_.q_scaler.data();
  const double* cR = m_.c.data();
  sc.sv.resize(static_cast<size_t>(NA) * S);
  sc.Gv.resize(static_cast<size_t>(NA) * S);
  sc.cF.assign(static_cast<size_t>(T) * KRp, 0.0);  // padding lanes stay zero
  double* s = sc.sv.data();
  double* G = sc.Gv.data();
  double* cF = sc.cF.data();
  sc.qv.resize(D);
  sc.qd.resize(Dp_);
  sc.qsv.resize(D);
  sc.z.resize(Hp_);
  double* q = sc.qv.data();
  double* dU = sc.qd.data();
  double* qs = sc.qsv.data();  // q * q_scaler
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
    sc.pair_g.resize(static_cast<size_t>(a1 - a0) * 2 * NAp);  // g_n, g'_n of each pair, again in the force loop
    for (int p = a0; p < a1; ++p) {
      const double* Y = &pb.a_Y[static_cast<size_t>(p) * S];
      const double* f = &pb.a_f[static_cast<size_t>(p) * KA];
      const double* fp = &pb.a_fp[static_cast<size_t>(p) * KA];
      const double* cT = &cAt_[static_cast<size_t>(ti * T + pb.a_type[p]) * KA * NAp];
      double* gp = &sc.pair_g[static_cast<size_t>(p - a0) * 2 * NAp];
      radial_sums(cT, f, fp, KA, NAp, gp, gp + NAp);
      for (int nn = 0; nn < NA; ++nn) {
        const double g = gp[nn];
        double* sn = s + nn * S;
#pragma omp simd
        for (int e = 0; e < S; ++e) sn[e] += g * Y[e];
      }
    }
    for (int nn = 0; nn < NA; ++nn) detail::angular_invariants(L3_, c3b_.data(), kC4B, kC5B, q222_, q1111_, s + nn * S, &q[NR + nn], NA);
    // network
    const int off = ann_stride_ * ti;
    const double* w0 = ann + off;
    const int HP = Hp_, DP = Dp_, net = m_.version == 3 ? 0 : ti;  // padded rows: whole vectors
    const double* w0t = &w0t_[static_cast<size_t>(net) * D * HP];
    const double* w0p = &w0p_[static_cast<size_t>(net) * H * DP];
    const double* b0 = w0 + H * D;
    const double* w1 = b0 + H;
    for (int d = 0; d < D; ++d) qs[d] = q[d] * qsc[d];
    rows_times<false>(w0t, HP, D, qs, nullptr, z, nullptr);
    for (int h = 0; h < H; ++h) z[h] -= b0[h];
    detail::TanhRowsHost()(HP, z);
    double U = 0.0;
    for (int h = 0; h < H; ++h) {
      const double t = z[h];
      U += w1[h] * t;
      z[h] = w1[h] * (1.0 - t * t);
    }
    rows_times<false>(w0p, DP, H, z, nullptr, dU, nullptr);
    for (int d = 0; d < D; ++d) dU[d] *= qsc[d];
    e_sum += U - ann[m_.ann_b1_offset()];
    // forces: radial f_ij = (sum_k f_k'(d) cF_{tj,k}) r_hat, cF_tk = sum_n c_nk(ti,t) dU/dq_n
    for (int t = 0; t < T; ++t)
      for (int k = 0; k < KR; ++k) {
        double acc = 0.0;
        for (int nn = 0; nn < NR; ++nn) acc += cR[(nn * KR + k) * T * T + ti * T + t] * dU[nn];
        cF[t * KRp + k] = acc;
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
    // radial pairs: f_ij = s r_ij with s = g'(d) / d, so their virial s r r^T is symmetric
    double wr[6] = {0, 0, 0, 0, 0, 0};  // xx yy zz xy xz yz
    for (int p = pb.r_begin[i]; p < pb.r_begin[i + 1]; ++p) {
      const double* g = &pb.r_geom[4 * static_cast<size_t>(p)];
      const double* fp = &pb.r_fp[static_cast<size_t>(p) * KRp];
      const double* c = cF + pb.r_type[p] * KRp;
      double fr = 0.0;
#pragma omp simd reduction(+ : fr)
      for (int k = 0; k < KRp; ++k) fr += fp[k] * c[k];
      fr *= g[3];
      const double fij[3] = {fr * g[0], fr * g[1], fr * g[2]};
      const int oj = pb.r_owner[p];
      for (int c3 = 0; c3 < 3; ++c3) {
        fi[c3] += fij[c3];
        force[3 * oj + c3] -= fij[c3];
      }
      wr[0] += g[0] * fij[0];
      wr[1] += g[1] * fij[1];
      wr[2] += g[2] * fij[2];
      wr[3] += g[0] * fij[1];
      wr[4] += g[0] * fij[2];
      wr[5] += g[1] * fij[2];
    }
    w[0] -= wr[0], w[4] -= wr[1], w[8] -= wr[2];
    w[1] -= wr[3], w[3] -= wr[3], w[2] -= wr[4], w[6] -= wr[4], w[5] -= wr[5], w[7] -= wr[5];
    // angular: G_ne = dU/ds_ne; d/dr [g_n(d) Y_e(r_hat)] = g_n' Y_e r_hat + g_n (grad Y_e)_perp / d
    for (int nn = 0; nn < NA; ++nn)
      detail::angular_invariant_grad(L3_, c3b_.data(), kC4B, kC5B, q222_, q1111_, s + nn * S, &dU[NR + nn], NA, S, G + nn * S);
    for (int p = a0; p < a1; ++p) {
      const double* g = &pb.a_geom[4 * static_cast<size_t>(p)];
      const double* Y = &pb.a_Y[static_cast<size_t>(p) * S];
      const double* dY = &pb.a_dY[static_cast<size_t>(p) * 3 * S];
      const double* g_pair = &sc.pair_g[static_cast<size_t>(p - a0) * 2 * NAp];
      double Hn[kNumAngularEntries] = {}, Hp[kNumAngularEntries] = {};
      for (int nn = 0; nn < NA; ++nn) {
        const double gn = g_pair[nn];
        const double gp = g_pair[NAp + nn];
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
