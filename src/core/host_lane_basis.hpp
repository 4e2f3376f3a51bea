// Lane-wise basis helpers of the fused host kernel (evaluator_host_kernel.hpp): the radial and
// angular basis of a row of pairs, one 512-bit vector of lanes at a time, and the angular moments
// as outer-product sums over pairs. The arithmetic of evaluator_basis.hpp / angular_entries,
// vectorised across pairs; rows hold pairs p < n with n a multiple of the lane count.
#pragma once

#include <cmath>

#include "evaluator_basis.hpp"
#include "nep/core/descriptor_math.hpp"

namespace nep {
namespace detail {

template <class Real>
constexpr int kLanes = 64 / int(sizeof(Real));  // one 512-bit vector

inline int round_up(int n, int w) { return (n + w - 1) / w * w; }

// f_k(d_p) and f_k'(d_p), k < K, for pairs p < n (a multiple of the lane count) into rows
// f[k * ld + p]; the cutoff function is multiplied by mask[p] (by p < n_valid when mask is null),
// which zeroes unused lanes. The arithmetic of radial_basis (evaluator_basis.hpp), lane-wise.
template <class Real>
inline void radial_basis_rows(int K, int n, const Real* d, const Real* rcinv, const Real* mask, int n_valid, Real* f,
                              Real* fp, int ld) {
  constexpr int W = kLanes<Real>;
  const Real pi = Real(3.14159265358979323846);
  for (int p0 = 0; p0 < n; p0 += W) {
    Real x2[W], fc[W], fcp[W], dxdd[W], t0[W], t1[W], u0[W], u1[W];
    NEP_SIMD
    for (int l = 0; l < W; ++l) {
      const int p = p0 + l;
      const Real m = mask ? mask[p] : Real(p < n_valid ? 1 : 0);
      const Real dr1 = d[p] * rcinv[p];
      Real s, c;
      sincos_pi_half_range(dr1 - Real(0.5), s, c);
      fc[l] = (Real(-0.5) * s + Real(0.5)) * m;
      fcp[l] = (Real(-0.5) * pi * c * rcinv[p]) * m;
      const Real dr = dr1 - Real(1);
      const Real x = Real(2) * dr * dr - Real(1);
      x2[l] = Real(2) * x;
      dxdd[l] = Real(4) * dr * rcinv[p];
      t0[l] = Real(1);
      t1[l] = x;
      u0[l] = Real(1);
      u1[l] = Real(2) * x;
      f[p] = fc[l];  // k = 0: T_0 = 1
      fp[p] = fcp[l];
      if (K > 1) {  // k = 1: T_1 = x, T_1' = 1
        const Real half_t = Real(0.5) * (x + Real(1));
        f[ld + p] = half_t * fc[l];
        fp[ld + p] = Real(0.5) * dxdd[l] * fc[l] + half_t * fcp[l];
      }
    }
    for (int k = 2; k < K; ++k) {
      Real* fk = f + k * ld + p0;
      Real* fpk = fp + k * ld + p0;
      NEP_SIMD
      for (int l = 0; l < W; ++l) {
        const Real tk = x2[l] * t1[l] - t0[l];
        t0[l] = t1[l];
        t1[l] = tk;
        const Real dtk = Real(k) * u1[l];  // k U_{k-1}
        const Real u2 = x2[l] * u1[l] - u0[l];
        u0[l] = u1[l];
        u1[l] = u2;
        const Real half_t = Real(0.5) * (tk + Real(1));
        fk[l] = half_t * fc[l];
        fpk[l] = Real(0.5) * dtk * dxdd[l] * fc[l] + half_t * fcp[l];
      }
    }
  }
}

// P(z) = sum_k c_k z^k and P'(z) of degree DEG (Horner, as angular_entries) for one vector of lanes
template <int DEG, class Real>
inline void poly_lanes(const Real* c, const Real* z, Real* P, Real* dP) {
  NEP_SIMD
  for (int l = 0; l < kLanes<Real>; ++l) {
    Real pv = Real(0), dv = Real(0);
    for (int k = DEG; k >= 0; --k) pv = pv * z[l] + c[k];
    for (int k = DEG; k >= 1; --k) dv = dv * z[l] + Real(k) * c[k];
    P[l] = pv;
    dP[l] = dv;
  }
}

// Y_e(u_p) and dY_e/d(x,y,z) for pairs p < n (a multiple of the lane count) into rows
// Y[e * ld + p], dY[(c * S + e) * ld + p], and Y transposed, Yt[p * ldt + e]: the arithmetic
// of angular_entries, lane-wise.
template <class Real>
inline void angular_rows(int lmax, const Real* poly, int n, const Real* ux, const Real* uy, const Real* uz, Real* Y,
                         Real* dY, int ld, Real* Yt, int ldt) {
  const int S = (lmax + 1) * (lmax + 1) - 1;
  constexpr int W = kLanes<Real>;
  for (int p0 = 0; p0 < n; p0 += W) {
    const Real* x = ux + p0;
    const Real* y = uy + p0;
    const Real* z = uz + p0;
    Real cm[kMaxL + 1][W], sm[kMaxL + 1][W];
    NEP_SIMD
    for (int l = 0; l < W; ++l) {
      cm[0][l] = Real(1);
      sm[0][l] = Real(0);
    }
    for (int k = 1; k <= lmax; ++k) {
      NEP_SIMD
      for (int l = 0; l < W; ++l) {
        cm[k][l] = cm[k - 1][l] * x[l] - sm[k - 1][l] * y[l];  // Re (x + i y)^k
        sm[k][l] = sm[k - 1][l] * x[l] + cm[k - 1][l] * y[l];  // Im (x + i y)^k
      }
    }
    for (int L = 1; L <= lmax; ++L) {
      const int base = L * L - 1;
      for (int m = 0; m <= L; ++m) {
        const Real* c = poly + (L * (kMaxL + 1) + m) * (kMaxL + 1);
        Real P[W], dP[W];
        switch (L - m) {
          case 0: poly_lanes<0>(c, z, P, dP); break;
          case 1: poly_lanes<1>(c, z, P, dP); break;
          case 2: poly_lanes<2>(c, z, P, dP); break;
          case 3: poly_lanes<3>(c, z, P, dP); break;
          case 4: poly_lanes<4>(c, z, P, dP); break;
          case 5: poly_lanes<5>(c, z, P, dP); break;
          case 6: poly_lanes<6>(c, z, P, dP); break;
          case 7: poly_lanes<7>(c, z, P, dP); break;
          default: poly_lanes<kMaxL>(c, z, P, dP); break;
        }
        if (m == 0) {
          Real* Yr = Y + base * ld + p0;
          Real* dx = dY + base * ld + p0;
          Real* dy = dY + (S + base) * ld + p0;
          Real* dz = dY + (2 * S + base) * ld + p0;
          Real* yt = Yt + p0 * ldt + base;
          NEP_SIMD
          for (int l = 0; l < W; ++l) {
            Yr[l] = P[l];
            yt[l * ldt] = P[l];
            dx[l] = Real(0);
            dy[l] = Real(0);
            dz[l] = dP[l];
          }
        } else {
          const int er = base + 2 * m - 1, ei = base + 2 * m;
          Real *Yr = Y + er * ld + p0, *Yi = Y + ei * ld + p0;
          Real *dxr = dY + er * ld + p0, *dyr = dY + (S + er) * ld + p0, *dzr = dY + (2 * S + er) * ld + p0;
          Real *dxi = dY + ei * ld + p0, *dyi = dY + (S + ei) * ld + p0, *dzi = dY + (2 * S + ei) * ld + p0;
          Real* yt = Yt + p0 * ldt + er;
          NEP_SIMD
          for (int l = 0; l < W; ++l) {
            Yr[l] = P[l] * cm[m][l];
            Yi[l] = P[l] * sm[m][l];
            yt[l * ldt] = Yr[l];
            yt[l * ldt + 1] = Yi[l];
            const Real pm = P[l] * Real(m);
            dxr[l] = pm * cm[m - 1][l];
            dyr[l] = -pm * sm[m - 1][l];
            dzr[l] = dP[l] * cm[m][l];
            dxi[l] = pm * sm[m - 1][l];
            dyi[l] = pm * cm[m - 1][l];
            dzi[l] = dP[l] * sm[m][l];
          }
        }
      }
    }
  }
}

// Angular moments s[n * S + e] = sum_{p < np} g[n * ld + p] Yt[p * V*W + e], e < S <= V*W:
// an outer-product sum over pairs with the moment rows of two n in registers (V vectors each).
template <int V, class Real>
inline void moments_vec(int NA, int np, int S, const Real* g, int ld, const Real* Yt, Real* s) {
  constexpr int SW = V * kLanes<Real>;
  int n = 0;
  for (; n + 2 <= NA; n += 2) {
    Real a0[SW], a1[SW];
    NEP_SIMD
    for (int e = 0; e < SW; ++e) a0[e] = a1[e] = Real(0);
    const Real* g0 = g + n * ld;
    const Real* g1 = g0 + ld;
    for (int p = 0; p < np; ++p) {
      const Real* y = Yt + p * SW;
      const Real x0 = g0[p], x1 = g1[p];
      NEP_SIMD
      for (int e = 0; e < SW; ++e) {
        a0[e] += x0 * y[e];
        a1[e] += x1 * y[e];
      }
    }
    for (int e = 0; e < S; ++e) {
      s[n * S + e] = a0[e];
      s[(n + 1) * S + e] = a1[e];
    }
  }
  if (n < NA) {
    Real a0[SW];
    NEP_SIMD
    for (int e = 0; e < SW; ++e) a0[e] = Real(0);
    const Real* g0 = g + n * ld;
    for (int p = 0; p < np; ++p) {
      const Real* y = Yt + p * SW;
      const Real x0 = g0[p];
      NEP_SIMD
      for (int e = 0; e < SW; ++e) a0[e] += x0 * y[e];
    }
    for (int e = 0; e < S; ++e) s[n * S + e] = a0[e];
  }
}

// The same for any S (rows of ldt = round_up(S, lanes)): four or fewer vectors per row in
// registers, longer rows accumulated in memory.
template <class Real>
inline void moments(int NA, int np, int S, const Real* g, int ld, const Real* Yt, int ldt, Real* s) {
  switch (ldt / kLanes<Real>) {
    case 1: return moments_vec<1>(NA, np, S, g, ld, Yt, s);
    case 2: return moments_vec<2>(NA, np, S, g, ld, Yt, s);
    case 3: return moments_vec<3>(NA, np, S, g, ld, Yt, s);
    case 4: return moments_vec<4>(NA, np, S, g, ld, Yt, s);
    default:
      for (int k = 0; k < NA * S; ++k) s[k] = Real(0);
      for (int n = 0; n < NA; ++n)
        for (int p = 0; p < np; ++p) {
          const Real x0 = g[n * ld + p];
          const Real* y = Yt + p * ldt;
          NEP_SIMD
          for (int e = 0; e < S; ++e) s[n * S + e] += x0 * y[e];
        }
  }
}

}  // namespace detail
}  // namespace nep
