// Electrostatics of NEP charge models: real-space pair sums, self term, Ewald reciprocal sum
// (formulas in docs/model_kinds.md; NEP_CPU's and GPUMD's set-up in charge_setup).
#include "nep/coulomb.hpp"

#include <algorithm>
#include <cmath>

#include "nep/error.hpp"

namespace nep {

namespace {
constexpr double kPi = 3.141592653589793;

void cross(const double* a, const double* b, double* c) {
  c[0] = a[1] * b[2] - a[2] * b[1];
  c[1] = a[2] * b[0] - a[0] * b[2];
  c[2] = a[0] * b[1] - a[1] * b[0];
}
double norm(const double* a) { return std::sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }
}  // namespace

void ChargeSetup::exact_two_pi() { two_pi = 2.0 * kPi; }

ChargeSetup charge_setup(const Model& m) {
  if (m.kind != ModelKind::Charge) throw Error(std::string("not a charge model (") + kind_name(m.kind) + ")");
  ChargeSetup s;
  s.mode = m.charge_mode;
  s.rc = m.rc_radial_max();
  s.alpha = kPi / s.rc;
  // charge3: the shifted-force pair function erfc(a r)/r + A r + B with zero value and slope at rc
  const double e = std::erfc(kPi);
  s.A = e / (s.rc * s.rc) + 2.0 * s.alpha / std::sqrt(kPi) * std::exp(-kPi * kPi) / s.rc;
  s.B = -e / s.rc - s.A * s.rc;
  return s;
}

EnergyVirial coulomb_real_space(int mode, double alpha, double rc, double A, double B, int inum, const int* ilist,
                                const double* x, const double* q, const int* numneigh, const int* const* firstneigh,
                                double* f, double* eatom, double* vatom, double* phi) {
  EnergyVirial out;
  const double rc2 = rc * rc, two_a_sqrtpi = 2.0 * alpha / std::sqrt(kPi);
  const bool shifted = mode == 3;
  for (int ii = 0; ii < inum; ++ii) {
    const int i = ilist ? ilist[ii] : ii;
    const double qi = q[i];
    double e = 0.0, p = 0.0, fi[3] = {0, 0, 0}, w[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int jj = 0; jj < numneigh[i]; ++jj) {
      const int j = firstneigh[i][jj] & 0x1FFFFFFF;  // LAMMPS's special-bond bits off
      const double r[3] = {x[3 * j] - x[3 * i], x[3 * j + 1] - x[3 * i + 1], x[3 * j + 2] - x[3 * i + 2]};
      const double d2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
      if (d2 >= rc2) continue;
      const double d = std::sqrt(d2), dinv = 1.0 / d;
      const double erfc_r = std::erfc(alpha * d) * dinv;
      double v = erfc_r;                                                   // pair function
      double dv = -(erfc_r + two_a_sqrtpi * std::exp(-alpha * alpha * d2)) * dinv;  // its slope
      if (shifted) {
        v += A * d + B;
        dv += A;
      }
      p += q[j] * v;
      e += 0.5 * qi * q[j] * v;
      // half the pair energy's gradient along r_ij: f_half = dU/dr_ij, force on i = 2 f_half
      const double s = 0.5 * kCoulombK * qi * q[j] * dv * dinv;
      for (int a = 0; a < 3; ++a) {
        fi[a] += 2.0 * s * r[a];
        for (int b = 0; b < 3; ++b) w[3 * a + b] -= r[a] * s * r[b];
      }
    }
    e *= kCoulombK;
    if (eatom) eatom[i] += e;
    if (phi) phi[i] += kCoulombK * p;
    if (f)
      for (int a = 0; a < 3; ++a) f[3 * i + a] += fi[a];
    if (vatom)
      for (int c = 0; c < 9; ++c) vatom[9 * i + c] += w[c];
    out.energy += e;
    for (int c = 0; c < 9; ++c) out.virial[c] += w[c];
  }
  return out;
}

double coulomb_self(double alpha, double scale, int inum, const int* ilist, const double* q, double* eatom, double* phi) {
  const double c = scale * kCoulombK * alpha / std::sqrt(kPi);
  double sum = 0.0;
  for (int ii = 0; ii < inum; ++ii) {
    const int i = ilist ? ilist[ii] : ii;
    const double e = -c * q[i] * q[i];
    if (eatom) eatom[i] += e;
    if (phi) phi[i] += -2.0 * c * q[i];
    sum += e;
  }
  return sum;
}

EwaldKVectors ewald_kvectors(const ChargeSetup& s, const Cell& cell) {
  const double* a1 = cell.h;
  const double* a2 = cell.h + 3;
  const double* a3 = cell.h + 6;
  double c23[3], c31[3], c12[3];
  cross(a2, a3, c23);
  cross(a3, a1, c31);
  cross(a1, a2, c12);
  const double det = a1[0] * c23[0] + a1[1] * c23[1] + a1[2] * c23[2];
  if (!(std::fabs(det) > 0.0)) throw Error("Ewald sum: the cell has zero volume");
  // reciprocal vectors b_i = two_pi (a_j x a_k) / det
  const double tpd = s.two_pi / det;
  double b[3][3];
  for (int d = 0; d < 3; ++d) {
    b[0][d] = c23[d] * tpd;
    b[1][d] = c31[d] * tpd;
    b[2][d] = c12[d] * tpd;
  }
  // |n_i| bound: the k-sphere's extent along b_i, alpha two_pi |b_j x b_k| / V_k
  const double vk = s.two_pi * s.two_pi * s.two_pi / std::fabs(det);
  int nmax[3];
  for (int i = 0; i < 3; ++i) {
    double c[3];
    cross(b[(i + 1) % 3], b[(i + 2) % 3], c);
    nmax[i] = static_cast<int>(s.kmax_factor * s.alpha * s.two_pi * norm(c) / vk);
  }
  const double ksq_max = s.two_pi * s.two_pi * s.alpha * s.alpha * s.kmax_factor * s.kmax_factor;
  const double factor = 1.0 / (4.0 * s.alpha * s.alpha);
  EwaldKVectors kv;
  kv.alpha = s.alpha;
  for (int n1 = 0; n1 <= nmax[0]; ++n1)
    for (int n2 = -nmax[1]; n2 <= nmax[1]; ++n2)
      for (int n3 = -nmax[2]; n3 <= nmax[2]; ++n3) {
        // half space: n1 > 0, or n1 = 0 and (n2 > 0, or n2 = 0 and n3 > 0)
        if (n1 == 0 && (n2 < 0 || (n2 == 0 && n3 <= 0))) continue;
        double k[3];
        for (int d = 0; d < 3; ++d) k[d] = n1 * b[0][d] + n2 * b[1][d] + n3 * b[2][d];
        const double ksq = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
        if (!(ksq < ksq_max)) continue;
        kv.k.insert(kv.k.end(), k, k + 3);
        kv.G.push_back(2.0 * std::fabs(tpd) / ksq * std::exp(-ksq * factor));
      }
  return kv;
}

void ewald_structure_factor(const EwaldKVectors& kv, int n, const double* x, const double* q, double* re, double* im) {
  const int nk = kv.size();
  for (int m = 0; m < nk; ++m) {
    const double* k = &kv.k[3 * m];
    double sr = 0.0, si = 0.0;
    for (int j = 0; j < n; ++j) {
      const double kr = k[0] * x[3 * j] + k[1] * x[3 * j + 1] + k[2] * x[3 * j + 2];
      sr += q[j] * std::cos(kr);
      si -= q[j] * std::sin(kr);
    }
    re[m] += sr;
    im[m] += si;
  }
}

EnergyVirial ewald_reciprocal(const EwaldKVectors& kv, const double* re, const double* im, int n, const double* x,
                              const double* q, double* f, double* eatom, double* vatom, double* phi) {
  EnergyVirial out;
  const int nk = kv.size();
  const double factor = 1.0 / (4.0 * kv.alpha * kv.alpha);
  for (int i = 0; i < n; ++i) {
    double e = 0.0, p = 0.0, fi[3] = {0, 0, 0}, w[6] = {0, 0, 0, 0, 0, 0};
    for (int m = 0; m < nk; ++m) {
      const double* k = &kv.k[3 * m];
      const double kr = k[0] * x[3 * i] + k[1] * x[3 * i + 1] + k[2] * x[3 * i + 2];
      const double c = std::cos(kr), s = std::sin(kr), G = kv.G[m];
      const double gre = G * (re[m] * c - im[m] * s);  // G Re(S e^{ik.x_i})
      const double gim = G * (re[m] * s + im[m] * c);  // G Im(S e^{ik.x_i})
      p += gre;
      const double ei = q[i] * gre;
      e += ei;
      for (int a = 0; a < 3; ++a) fi[a] += k[a] * gim;
      // E_k (delta_ab - 2 (1/k^2 + 1/(4 alpha^2)) k_a k_b): xx yy zz xy yz zx
      const double kk = 2.0 * (factor + 1.0 / (k[0] * k[0] + k[1] * k[1] + k[2] * k[2]));
      w[0] += ei * (1.0 - kk * k[0] * k[0]);
      w[1] += ei * (1.0 - kk * k[1] * k[1]);
      w[2] += ei * (1.0 - kk * k[2] * k[2]);
      w[3] -= ei * kk * k[0] * k[1];
      w[4] -= ei * kk * k[1] * k[2];
      w[5] -= ei * kk * k[2] * k[0];
    }
    const double w9[9] = {w[0], w[3], w[5], w[3], w[1], w[4], w[5], w[4], w[2]};
    if (eatom) eatom[i] += kCoulombK * e;
    if (phi) phi[i] += 2.0 * kCoulombK * p;
    if (f)
      for (int a = 0; a < 3; ++a) f[3 * i + a] += 2.0 * kCoulombK * q[i] * fi[a];
    if (vatom)
      for (int c = 0; c < 9; ++c) vatom[9 * i + c] += kCoulombK * w9[c];
    out.energy += kCoulombK * e;
    for (int c = 0; c < 9; ++c) out.virial[c] += kCoulombK * w9[c];
  }
  return out;
}

Electrostatics charge_model_electrostatics(const ChargeSetup& s, const NeighborList& nl, const Cell& cell,
                                           const std::vector<double>& x_local, const std::vector<double>& q) {
  const int n = nl.nlocal;
  Electrostatics out;
  out.eatom.assign(n, 0.0);
  out.force.assign(3 * static_cast<size_t>(n), 0.0);
  out.vatom.assign(9 * static_cast<size_t>(n), 0.0);
  out.phi.assign(n, 0.0);
  auto add = [&](const EnergyVirial& t) {
    out.total.energy += t.energy;
    for (int c = 0; c < 9; ++c) out.total.virial[c] += t.virial[c];
  };
  if (s.mode == 1 || s.mode == 2) {
    const EwaldKVectors kv = ewald_kvectors(s, cell);
    std::vector<double> re(kv.size(), 0.0), im(kv.size(), 0.0);
    ewald_structure_factor(kv, n, x_local.data(), q.data(), re.data(), im.data());
    add(ewald_reciprocal(kv, re.data(), im.data(), n, x_local.data(), q.data(), out.force.data(), out.eatom.data(),
                         out.vatom.data(), out.phi.data()));
  }
  if (s.mode == 1 || s.mode == 3) {
    // charges of every atom of the list (images carry their owner's charge)
    std::vector<double> q_all(nl.nall);
    for (int j = 0; j < nl.nall; ++j) q_all[j] = q[nl.owner[j]];
    std::vector<const int*> rows(n);
    for (int i = 0; i < n; ++i) rows[i] = nl.neighbors.data() + static_cast<size_t>(i) * nl.max_neighbors;
    add(coulomb_real_space(s.mode, s.alpha, s.rc, s.A, s.B, n, nullptr, nl.x.data(), q_all.data(),
                           nl.num_neighbors.data(), rows.data(), out.force.data(), out.eatom.data(), out.vatom.data(),
                           out.phi.data()));
    if (s.mode == 1) {
      const double e = coulomb_self(s.alpha, 1.0, n, nullptr, q.data(), out.eatom.data(), out.phi.data());
      out.total.energy += e;
    }
  }
  return out;
}

}  // namespace nep
