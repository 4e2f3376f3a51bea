// Per-pair building blocks of the NEP kernels (device-callable, precision-generic).
#pragma once
#include <Kokkos_Core.hpp>

#include "nep/angular_basis.hpp"
#include "nep/core/kokkos_compat.hpp"
#include "nep/model.hpp"

namespace nep {
namespace detail {

using limits::kMaxBasis;  // per-thread array bounds: the size limits of nep/model.hpp
using limits::kMaxDim;
using limits::kMaxNeurons;
using limits::kMaxTypes;
constexpr int kNeighMask = 0x1FFFFFFF;  // LAMMPS NEIGHMASK: strips special-bond bits

// sin(pi u) and cos(pi u) for |u| <= 1/2 from their Taylor series in x = pi u, kept to x^23 and
// x^24 (the first omitted term is < 1e-19 relative for |x| <= pi/2), so the result is as accurate
// as libm's and several times cheaper. Coefficients (-1)^k/(2k+1)! and (-1)^k/(2k)!.
template <class Real>
KOKKOS_INLINE_FUNCTION void sincos_pi_half_range(Real u, Real& s, Real& c) {
  constexpr double ks[12] = {1.0, -0.16666666666666666, 0.008333333333333333, -0.0001984126984126984, 2.7557319223985893e-06, -2.505210838544172e-08, 1.6059043836821613e-10, -7.647163731819816e-13, 2.8114572543455206e-15, -8.22063524662433e-18, 1.9572941063391263e-20, -3.868170170630684e-23};
  constexpr double kc[13] = {1.0, -0.5, 0.041666666666666664, -0.001388888888888889, 2.48015873015873e-05, -2.755731922398589e-07, 2.08767569878681e-09, -1.1470745597729725e-11, 4.779477332387385e-14, -1.5619206968586225e-16, 4.110317623312165e-19, -8.896791392450574e-22, 1.6117375710961184e-24};
  const Real x = Real(3.14159265358979323846) * u;
  const Real y = x * x;
  Real as = Real(ks[11]), ac = Real(kc[12]);
  for (int k = 10; k >= 0; --k) as = as * y + Real(ks[k]);
  for (int k = 11; k >= 0; --k) ac = ac * y + Real(kc[k]);
  s = as * x;
  c = ac;
}

// sin(pi u) alone (the descriptor pass needs no derivative)
template <class Real>
KOKKOS_INLINE_FUNCTION Real sin_pi_half_range(Real u) {
  constexpr double ks[12] = {1.0, -1.0 / 6, 1.0 / 120, -1.0 / 5040, 1.0 / 362880, -1.0 / 39916800,
                             1.0 / 6227020800.0, -1.0 / 1307674368000.0, 1.0 / 355687428096000.0,
                             -1.0 / 121645100408832000.0, 1.0 / 51090942171709440000.0,
                             -1.0 / 25852016738884976640000.0};
  const Real x = Real(3.14159265358979323846) * u;
  const Real y = x * x;
  Real as = Real(ks[11]);
  for (int k = 10; k >= 0; --k) as = as * y + Real(ks[k]);
  return as * x;
}

// Cosine cutoff fc(d) = (1 + cos(pi d / rc)) / 2 and its derivative (NEP Eq. 6), d < rc.
// With u = d/rc - 1/2: cos(pi d/rc) = -sin(pi u), sin(pi d/rc) = cos(pi u).
template <class Real>
KOKKOS_INLINE_FUNCTION void cutoff_fn(Real d, Real rcinv, Real& fc, Real& fcp) {
  const Real pi = Real(3.14159265358979323846);
  Real s, c;
  sincos_pi_half_range(d * rcinv - Real(0.5), s, c);
  fc = Real(-0.5) * s + Real(0.5);
  fcp = Real(-0.5) * pi * c * rcinv;
}

// Chebyshev radial basis f_k(d) = (T_k(x) + 1)/2 fc(d), x = 2 (d/rc - 1)^2 - 1, k = 0..kmax-1
// (NEP Eq. 5), and df_k/dd when fkp != nullptr (T_k' = k U_{k-1}).
template <class Real>
KOKKOS_INLINE_FUNCTION void radial_basis(int kmax, Real d, Real rcinv, Real* fk, Real* fkp) {
  Real fc, fcp = Real(0);
  if (fkp) cutoff_fn(d, rcinv, fc, fcp);
  else fc = Real(-0.5) * sin_pi_half_range(d * rcinv - Real(0.5)) + Real(0.5);
  const Real dr = d * rcinv - Real(1);
  const Real x = Real(2) * dr * dr - Real(1);
  const Real dxdd = Real(4) * dr * rcinv;
  Real t0 = Real(1), t1 = x, u0 = Real(1), u1 = Real(2) * x;  // T_{k-1..}, U_{k-1..}
  for (int k = 0; k < kmax; ++k) {
    Real tk, dtk;
    if (k == 0) {
      tk = Real(1);
      dtk = Real(0);
    } else if (k == 1) {
      tk = x;
      dtk = Real(1);
    } else {
      tk = Real(2) * x * t1 - t0;
      t0 = t1;
      t1 = tk;
      dtk = Real(k) * u1;  // k U_{k-1}
      const Real u2 = Real(2) * x * u1 - u0;
      u0 = u1;
      u1 = u2;
    }
    const Real half_t = Real(0.5) * (tk + Real(1));
    fk[k] = half_t * fc;
    if (fkp) fkp[k] = Real(0.5) * dtk * dxdd * fc + half_t * fcp;
  }
}

// Angular moment entries Y_e(u) for L = 1..lmax (see angular_basis.hpp for the ordering) and,
// if dY != nullptr, their partial derivatives with respect to (x, y, z) taken as free variables.
template <class Real, class PolyView>
KOKKOS_INLINE_FUNCTION void angular_entries(int lmax, const PolyView& poly, Real x, Real y, Real z,
                                            Real* Y, Real* dY) {
  Real zp[kMaxL + 1], cm[kMaxL + 1], sm[kMaxL + 1];
  zp[0] = Real(1);
  cm[0] = Real(1);
  sm[0] = Real(0);
  for (int k = 1; k <= lmax; ++k) {
    zp[k] = zp[k - 1] * z;
    cm[k] = cm[k - 1] * x - sm[k - 1] * y;  // Re (x + i y)^k
    sm[k] = sm[k - 1] * x + cm[k - 1] * y;  // Im (x + i y)^k
  }
  for (int L = 1; L <= lmax; ++L) {
    const int base = L * L - 1;
    for (int m = 0; m <= L; ++m) {
      const int off = (L * (kMaxL + 1) + m) * (kMaxL + 1);
      Real P = Real(0), dP = Real(0);
      for (int k = L - m; k >= 0; --k) P = P * z + poly(off + k);
      for (int k = L - m; k >= 1; --k) dP = dP * z + Real(k) * poly(off + k);
      if (m == 0) {
        Y[base] = P;
        if (dY) {
          dY[3 * base] = Real(0);
          dY[3 * base + 1] = Real(0);
          dY[3 * base + 2] = dP;
        }
      } else {
        const int er = base + 2 * m - 1, ei = base + 2 * m;
        Y[er] = P * cm[m];
        Y[ei] = P * sm[m];
        if (dY) {
          const Real pm = P * Real(m);
          dY[3 * er] = pm * cm[m - 1];
          dY[3 * er + 1] = -pm * sm[m - 1];
          dY[3 * er + 2] = dP * cm[m];
          dY[3 * ei] = pm * sm[m - 1];
          dY[3 * ei + 1] = pm * cm[m - 1];
          dY[3 * ei + 2] = dP * sm[m];
        }
      }
    }
  }
}

// ZBL pair energy V(d) and dV/dd with the cosine switch between rin and rout (NEP-ZBL, GPUMD).
// p: rin rout c1 e1 c2 e2 c3 e3 c4 e4 zizj*k_e a_inv;  phi(x) = sum c_k exp(-e_k x), x = d a_inv.
template <class Real, class ZView>
KOKKOS_INLINE_FUNCTION void zbl_pair(const ZView& p, int pair, Real d, Real& V, Real& dV) {
  const Real rin = p(pair, 0), rout = p(pair, 1), zizj = p(pair, 10), a_inv = p(pair, 11);
  if (!(d < rout)) {
    V = dV = Real(0);
    return;
  }
  const Real x = d * a_inv;
  Real phi = Real(0), dphi = Real(0);
  for (int k = 0; k < 4; ++k) {
    const Real t = p(pair, 2 + 2 * k) * kmath::exp(-p(pair, 3 + 2 * k) * x);
    phi += t;
    dphi -= p(pair, 3 + 2 * k) * t;
  }
  const Real dinv = Real(1) / d;
  const Real f = zizj * phi * dinv;
  const Real fp = zizj * (dphi * a_inv * dinv - phi * dinv * dinv);
  Real sw = Real(1), swp = Real(0);
  if (d >= rin) {
    const Real pi = Real(3.14159265358979323846);
    const Real w = pi / (rout - rin);
    sw = Real(0.5) * kmath::cos(w * (d - rin)) + Real(0.5);
    swp = Real(-0.5) * w * kmath::sin(w * (d - rin));
  }
  V = f * sw;
  dV = fp * sw + f * swp;
}

}  // namespace detail
}  // namespace nep
