// Angular basis of the NEP descriptor (Fan et al., PRB 104, 104309 (2021), Eqs. 8-11).
//
// For a unit vector u = (x, y, z) the moment entries are, per L = 1..8 (block of 2L+1 entries
// starting at index L*L - 1):
//   entry 0      : P_L0(z)
//   entry 2m - 1 : P_Lm(z) * Re((x + i y)^m)      m = 1..L
//   entry 2m     : P_Lm(z) * Im((x + i y)^m)
// where P_Lm is the primitive integer polynomial proportional to d^m P_L / dz^m (P_L = Legendre),
// with positive leading coefficient. The 3-body invariant is
//   q_nL = C3B[L*L-1] s_0^2 + 2 sum_{k=1..2L} C3B[L*L-1+k] s_k^2
// with C3B = (2L+1)/(4 pi) (L-m)!/(L+m)! a_Lm^2, a_Lm the factor d^m P_L/dz^m = a_Lm P_Lm, i.e. the
// squared real-spherical-harmonic normalisation (q_nL = sum_m |A_nLm|^2). Both tables are computed
// here from these definitions, not copied.
#pragma once

namespace nep {

constexpr int kMaxL = 8;
constexpr int kNumAngularEntries = (kMaxL + 1) * (kMaxL + 1) - 1;  // 80

struct AngularTables {
  // poly[L][m][k]: coefficient of z^k of P_Lm (k <= L - m)
  double poly[kMaxL + 1][kMaxL + 1][kMaxL + 1] = {};
  // C3B per moment entry (index L*L - 1 + k)
  double c3b[kNumAngularEntries] = {};
};

const AngularTables& angular_tables();

// 4-body q_222 and 5-body q_1111 coefficients in the entry ordering above (GPUMD's values; they
// are the Clebsch-Gordan contractions of the L=2 block with itself three times, and of the L=1
// block four times, in this normalisation).
constexpr double kC4B[5] = {-0.007499480826664, -0.134990654879954, 0.067495327439977,
                            0.404971964639861, -0.809943929279723};
constexpr double kC5B[3] = {0.026596810706114, 0.053193621412227, 0.026596810706114};

}  // namespace nep
