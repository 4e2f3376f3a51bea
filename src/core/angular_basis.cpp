#include "nep/angular_basis.hpp"

#include <cmath>
#include <cstdint>
#include <numeric>

namespace nep {
namespace {

AngularTables make_tables() {
  AngularTables t;
  using i64 = std::int64_t;
  for (int L = 1; L <= kMaxL; ++L) {
    // 2^L L! P_L(z) = d^L/dz^L (z^2 - 1)^L  (Rodrigues); integer coefficients of (z^2-1)^L first
    i64 binom[2 * kMaxL + 1] = {};  // coefficients of (z^2 - 1)^L in z^0..z^2L
    i64 c = 1;
    for (int k = 0; k <= L; ++k) {  // term C(L,k) z^{2k} (-1)^{L-k}
      binom[2 * k] = ((L - k) % 2 ? -c : c);
      c = c * (L - k) / (k + 1);
    }
    // Q(z) = d^L/dz^L (z^2-1)^L = 2^L L! P_L(z): integer coefficients q[k], k = 0..L
    i64 q[kMaxL + 1] = {};
    for (int k = L; k <= 2 * L; ++k) {
      i64 f = 1;
      for (int s = 0; s < L; ++s) f *= (k - s);
      q[k - L] = binom[k] * f;
    }
    long double twoLfact = std::pow(2.0L, L);
    for (int s = 2; s <= L; ++s) twoLfact *= s;  // 2^L L!
    for (int m = 0; m <= L; ++m) {
      // d^m Q / dz^m: coefficients dq[k], k = 0..L-m
      i64 dq[kMaxL + 1] = {};
      for (int k = m; k <= L; ++k) {
        i64 f = 1;
        for (int s = 0; s < m; ++s) f *= (k - s);
        dq[k - m] = q[k] * f;
      }
      i64 g = 0;
      for (int k = 0; k <= L - m; ++k) g = std::gcd(g, dq[k] < 0 ? -dq[k] : dq[k]);
      i64 lead = dq[L - m];
      if (lead < 0) g = -g;
      for (int k = 0; k <= L - m; ++k) t.poly[L][m][k] = static_cast<double>(dq[k] / g);
      // d^m P_L/dz^m = (g / (2^L L!)) * P_Lm  =>  a_Lm = g / (2^L L!)
      const long double a = static_cast<long double>(g) / twoLfact;
      long double ratio = 1.0L;  // (L-m)!/(L+m)!
      for (int s = L - m + 1; s <= L + m; ++s) ratio /= s;
      const long double pi = 3.141592653589793238462643383279502884L;
      const double c3 = static_cast<double>((2 * L + 1) / (4 * pi) * ratio * a * a);
      const int base = L * L - 1;
      if (m == 0) {
        t.c3b[base] = c3;
      } else {
        t.c3b[base + 2 * m - 1] = c3;
        t.c3b[base + 2 * m] = c3;
      }
    }
  }
  return t;
}

}  // namespace

const AngularTables& angular_tables() {
  static const AngularTables tables = make_tables();
  return tables;
}

}  // namespace nep
