// Per-frame basis cache (include/nep/pair_basis.hpp).
#include "nep/pair_basis.hpp"

#include <cmath>

#include "evaluator_basis.hpp"
#include "nep/list_evaluate.hpp"

namespace nep {

size_t PairBasis::bytes() const {
  const size_t ints = type.size() + r_begin.size() + r_owner.size() + r_type.size() + a_begin.size() + a_owner.size() +
                      a_type.size();
  const size_t dbls = B.size() + r_geom.size() + r_fp.size() + a_geom.size() + a_f.size() + a_fp.size() + a_Y.size() +
                      a_dY.size() + zbl_force.size();
  return ints * sizeof(int) + dbls * sizeof(double);
}

namespace {

// ZBL part alone, by the core: with every network weight, bias and descriptor coefficient zero
// the network energy is exactly zero and only the ZBL pairs remain.
void zbl_totals(const Model& m, const NeighborList& nl, PairBasis& pb) {
  Model zero = m;
  for (double& v : zero.ann) v = 0.0;
  for (double& v : zero.c) v = 0.0;
  SerialEvaluator ev(zero);
  const EnergyVirial r = evaluate_list(ev, nl, pb.zbl_force);
  pb.zbl_energy = r.energy;
  for (int c = 0; c < 9; ++c) pb.zbl_virial[c] = r.virial[c];
}

struct PolyRef {
  const double* p;
  double operator()(int i) const { return p[i]; }
};

}  // namespace

PairBasis build_pair_basis(const Model& m, const NeighborList& nl, const std::vector<char>* sites) {
  PairBasis pb;
  const ModelSizes z = m.sizes();
  const int T = z.T, KR = z.KR, KA = z.KA, L3 = z.L3, S = z.S;
  pb.nlocal = nl.nlocal;
  pb.T = T;
  pb.KR = KR;
  pb.KRp = radial_row_stride(KR);
  pb.KA = KA;
  pb.S = S;
  pb.type.assign(nl.type.begin(), nl.type.begin() + nl.nlocal);
  if (sites)
    for (int i = 0; i < nl.nlocal; ++i)
      if (!(*sites)[static_cast<size_t>(i)]) pb.type[i] = -1;  // left out: no site of its own
  pb.B.assign(static_cast<size_t>(nl.nlocal) * T * KR, 0.0);
  std::vector<double> rcR(T * T), rcA(T * T);
  for (int a = 0; a < T; ++a)
    for (int b = 0; b < T; ++b) {
      rcR[a * T + b] = m.rc_radial_pair(a, b);
      rcA[a * T + b] = m.rc_angular_pair(a, b);
    }
  // Visits the pairs inside a cutoff in neighbour-list order: fn(i, j, tj, r, d2, in_r, in_a).
  auto for_each_pair = [&](auto&& fn) {
    for (int i = 0; i < nl.nlocal; ++i) {
      const int ti = pb.type[i];
      const int nn = ti < 0 ? 0 : nl.num_neighbors[i];
      const int* row = nl.neighbors.data() + static_cast<size_t>(i) * nl.max_neighbors;
      const double* xi = &nl.x[3 * i];
      for (int jj = 0; jj < nn; ++jj) {
        const int j = row[jj];
        const int tj = nl.type[j];
        if (tj < 0) continue;
        const double r[3] = {nl.x[3 * j] - xi[0], nl.x[3 * j + 1] - xi[1], nl.x[3 * j + 2] - xi[2]};
        const double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        const int pair = ti * T + tj;
        const bool in_r = d2 < rcR[pair] * rcR[pair], in_a = d2 < rcA[pair] * rcA[pair];
        if (in_r || in_a) fn(i, j, tj, r, d2, in_r, in_a);
      }
    }
  };
  // pass 1: counts, so every array is allocated once at its final size
  pb.r_begin.assign(nl.nlocal + 1, 0);
  pb.a_begin.assign(nl.nlocal + 1, 0);
  for_each_pair([&](int i, int, int, const double*, double, bool in_r, bool in_a) {
    pb.r_begin[i + 1] += in_r;
    pb.a_begin[i + 1] += in_a;
  });
  for (int i = 0; i < nl.nlocal; ++i) {
    pb.r_begin[i + 1] += pb.r_begin[i];
    pb.a_begin[i + 1] += pb.a_begin[i];
  }
  const size_t nr = pb.r_begin[nl.nlocal], na = pb.a_begin[nl.nlocal];
  pb.r_owner.resize(nr);
  pb.r_type.resize(nr);
  pb.r_geom.resize(4 * nr);
  pb.r_fp.assign(nr * pb.KRp, 0.0);
  pb.a_owner.resize(na);
  pb.a_type.resize(na);
  pb.a_geom.resize(4 * na);
  pb.a_f.resize(na * KA);
  pb.a_fp.resize(na * KA);
  pb.a_Y.resize(na * S);
  pb.a_dY.resize(na * 3 * S);
  // pass 2: the basis
  const PolyRef poly{&angular_tables().poly[0][0][0]};
  double fk[detail::kMaxBasis];
  size_t pr = 0, pa = 0;
  auto put_geom = [](double* g, const double* r, double dinv) {
    for (int c = 0; c < 3; ++c) g[c] = r[c];
    g[3] = dinv;
  };
  for_each_pair([&](int i, int j, int tj, const double* r, double d2, bool in_r, bool in_a) {
    const int pair = pb.type[i] * T + tj;
    const double d = std::sqrt(d2), dinv = 1.0 / d;
    if (in_r) {
      detail::radial_basis<double>(KR, d, 1.0 / rcR[pair], fk, &pb.r_fp[pr * pb.KRp]);
      double* b = &pb.B[(static_cast<size_t>(i) * T + tj) * KR];
      for (int k = 0; k < KR; ++k) b[k] += fk[k];
      pb.r_owner[pr] = nl.owner[j];
      pb.r_type[pr] = tj;
      put_geom(&pb.r_geom[4 * pr], r, dinv);
      ++pr;
    }
    if (in_a) {
      detail::radial_basis<double>(KA, d, 1.0 / rcA[pair], &pb.a_f[pa * KA], &pb.a_fp[pa * KA]);
      detail::angular_entries<double>(L3, poly, r[0] * dinv, r[1] * dinv, r[2] * dinv, &pb.a_Y[pa * S], &pb.a_dY[pa * 3 * S]);
      pb.a_owner[pa] = nl.owner[j];
      pb.a_type[pa] = tj;
      put_geom(&pb.a_geom[4 * pa], r, dinv);
      ++pa;
    }
  });
  pb.has_zbl = m.zbl != ZblMode::None;
  if (pb.has_zbl) zbl_totals(m, nl, pb);
  return pb;
}

}  // namespace nep
