#include "nep/calculator.hpp"

#include "nep/coulomb.hpp"

#include <Kokkos_Core.hpp>

#include "nep/core/kokkos_compat.hpp"
#include "nep/error.hpp"
#include "nep/evaluator.hpp"
#include "nep/timing.hpp"

namespace nep {

Precision parse_precision(const std::string& s) {
  if (s == "double") return Precision::Double;
  if (s == "float") return Precision::Float;
  throw Error("unknown precision '" + s + "' (expected double or float)");
}

Backend parse_backend(const std::string& s) {
  if (s == "serial") return Backend::Serial;
  if (s == "openmp") return Backend::OpenMP;
  if (s == "device") return Backend::Device;
  if (s == "host") return Backend::Host;
  throw Error("unknown backend '" + s + "' (expected serial, openmp, device or host)");
}

namespace {

struct Backend_ {
  virtual ~Backend_() = default;
  virtual EnergyVirial run(const NeighborList& nl, bool want_vatom, std::vector<double>& eatom,
                           std::vector<double>& f, std::vector<double>& vatom, std::vector<double>* q) = 0;
  // dipole / polarizability: per-atom tensors (9 each) folded onto the structure's atoms
  virtual EnergyVirial run_tensor(const NeighborList& nl, bool dipole, std::vector<double>& per_atom) = 0;
  // qNEP: stage 1 (short-range eatom, raw charges Q), the Born charges' pair part, stage 2 with phi
  virtual double charge_stage1(const NeighborList& nl, std::vector<double>& eatom, std::vector<double>& Q) = 0;
  virtual void charge_bec(std::vector<double>& bec) = 0;
  virtual EnergyVirial charge_stage2(const std::vector<double>& phi, bool want_vatom, std::vector<double>& f,
                                     std::vector<double>& vatom) = 0;
  virtual void two_pass(bool on) = 0;
};

template <class DeviceType, class Real>
struct BackendImpl : Backend_ {
  using Ev = Evaluator<DeviceType, Real>;
  Ev ev;
  // the last uploaded neighbour list
  const NeighborList* nl_ = nullptr;
  Kokkos::View<double* [3], Kokkos::LayoutRight, DeviceType> x;
  Kokkos::View<int*, DeviceType> type, numneigh;
  Kokkos::View<int**, DeviceType> neigh;

  explicit BackendImpl(const Model& m) : ev(m) {}
  void two_pass(bool on) override { ev.force_two_pass(on); }

  void upload(const NeighborList& nl) {
    nl_ = &nl;
    const int nall = nl.nall, nlocal = nl.nlocal, maxn = std::max(1, nl.max_neighbors);
    x = decltype(x)("x", nall);
    type = decltype(type)("type", nall);
    numneigh = decltype(numneigh)("numneigh", nlocal);
    neigh = decltype(neigh)("neigh", nlocal, maxn);
    auto hx = Kokkos::create_mirror_view(x);
    auto ht = Kokkos::create_mirror_view(type);
    auto hn = Kokkos::create_mirror_view(numneigh);
    auto hl = Kokkos::create_mirror_view(neigh);
    for (int i = 0; i < nall; ++i) {
      for (int d = 0; d < 3; ++d) hx(i, d) = nl.x[3 * i + d];
      ht(i) = nl.type[i];
    }
    for (int i = 0; i < nlocal; ++i) {
      hn(i) = nl.num_neighbors[i];
      for (int k = 0; k < nl.num_neighbors[i]; ++k) hl(i, k) = nl.neighbors[static_cast<size_t>(i) * nl.max_neighbors + k];
    }
    Kokkos::deep_copy(x, hx);
    Kokkos::deep_copy(type, ht);
    Kokkos::deep_copy(numneigh, hn);
    Kokkos::deep_copy(neigh, hl);
  }

  // fold an nall x C device array onto the local atoms (ghosts are images of their owners)
  template <class V>
  std::vector<double> fold(const V& d, int C) const {
    auto h = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), d);
    std::vector<double> out(static_cast<size_t>(C) * nl_->nlocal, 0.0);
    if (h.extent(0) == 0) return {};
    for (int i = 0; i < nl_->nall; ++i) {
      const int o = nl_->owner[i];
      for (int c = 0; c < C; ++c) out[static_cast<size_t>(C) * o + c] += h(i, c);
    }
    return out;
  }

  EnergyVirial run(const NeighborList& nl, bool want_vatom, std::vector<double>& eatom,
                   std::vector<double>& f, std::vector<double>& vatom, std::vector<double>* q) override {
    ScopedStage stage_all("calculator:upload+eval+fold");
    upload(nl);
    const int nall = nl.nall, nlocal = nl.nlocal;
    typename Ev::t_f df("f", nall);
    typename Ev::t_eatom de("eatom", nlocal);
    typename Ev::t_vatom dv("vatom", want_vatom ? nall : 0);
    typename Ev::t_descriptor dq;
    if (q) dq = typename Ev::t_descriptor("q", nlocal, ev.dim());
    ev.set_descriptor_output(dq);
    EnergyVirial r = ev.compute(nlocal, typename Ev::t_int(), x, type, numneigh, neigh, df, de, dv);
    ev.set_descriptor_output(typename Ev::t_descriptor());
    if (q) {
      auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dq);
      q->assign(hq.data(), hq.data() + hq.size());
    }
    auto he = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), de);
    eatom.assign(he.data(), he.data() + nlocal);
    f = fold(df, 3);
    vatom = want_vatom ? fold(dv, 9) : std::vector<double>();
    return r;
  }

  EnergyVirial run_tensor(const NeighborList& nl, bool dipole, std::vector<double>& per_atom) override {
    upload(nl);
    typename Ev::t_tensor dt("tensor", nl.nall);
    EnergyVirial r = ev.compute_tensor(nl.nlocal, typename Ev::t_int(), x, type, numneigh, neigh,
                                       dipole ? Ev::TensorForm::Dipole : Ev::TensorForm::Virial, dt);
    per_atom = fold(dt, 9);
    return r;
  }

  double charge_stage1(const NeighborList& nl, std::vector<double>& eatom, std::vector<double>& Q) override {
    upload(nl);
    typename Ev::t_eatom de("eatom", nl.nlocal);
    typename Ev::t_scalar dq("charge", nl.nlocal);
    const double e = ev.compute_charges(nl.nlocal, typename Ev::t_int(), x, type, numneigh, neigh, de, dq);
    auto he = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), de);
    auto hq = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dq);
    eatom.assign(he.data(), he.data() + nl.nlocal);
    Q.assign(hq.data(), hq.data() + nl.nlocal);
    return e;
  }

  void charge_bec(std::vector<double>& bec) override {
    typename Ev::t_tensor db("bec", nl_->nall);
    ev.compute_charge_bec(nl_->nlocal, typename Ev::t_int(), x, type, numneigh, neigh, db);
    bec = fold(db, 9);
  }

  EnergyVirial charge_stage2(const std::vector<double>& phi, bool want_vatom, std::vector<double>& f,
                             std::vector<double>& vatom) override {
    typename Ev::t_scalar dphi("phi", nl_->nlocal);
    auto hphi = Kokkos::create_mirror_view(dphi);
    for (int i = 0; i < nl_->nlocal; ++i) hphi(i) = phi[i];
    Kokkos::deep_copy(dphi, hphi);
    typename Ev::t_f df("f", nl_->nall);
    typename Ev::t_vatom dv("vatom", want_vatom ? nl_->nall : 0);
    EnergyVirial r = ev.compute_charge_forces(nl_->nlocal, typename Ev::t_int(), x, type, numneigh, neigh, dphi, df, dv);
    f = fold(df, 3);
    vatom = want_vatom ? fold(dv, 9) : std::vector<double>();
    return r;
  }
};

template <class DeviceType>
std::unique_ptr<Backend_> make_for_device(const Model& m, Precision p) {
  if (p == Precision::Float) return std::make_unique<BackendImpl<DeviceType, float>>(m);
  return std::make_unique<BackendImpl<DeviceType, double>>(m);
}

}  // namespace

struct Calculator::Impl {
  Model model;
  std::unique_ptr<Backend_> backend;
  NeighborList nl;
  bool born_charges = false;
  ChargeForces charge_forces = ChargeForces::Exact;
  double kmax_factor = 1.0;
  bool exact_two_pi = false;
  Precision precision = Precision::Double;
  Backend backend_kind = Backend::Device;
  std::unique_ptr<Calculator> diagonal;  // polarizability: network 2 as a potential

  void check_types_and_list(const Structure& s) {
    const int T = model.num_types();
    for (size_t i = 0; i < s.type.size(); ++i)
      if (s.type[i] < 0 || s.type[i] >= T)
        throw Error("atom " + std::to_string(i) + " has type " + std::to_string(s.type[i]) + ", model has " +
                    std::to_string(T));
    ScopedStage stage("calculator:neighbor");
    nl = build_neighbor_list(s.x, s.type, s.cell, model.cutoff_max());
  }
  Prediction compute_charge_model(const Structure& s, bool per_atom_virial);
};

// qNEP (docs/model_kinds.md): short-range energy and raw charges Q_i, charges q = Q - mean(Q),
// electrostatics E(q) with phi = dE/dq, then the forces of U + E through the network with
// dE/dQ_j = phi_j - mean(phi) (the mean removal's derivative; NepCpu: phi_j alone)
Prediction Calculator::Impl::compute_charge_model(const Structure& s, bool per_atom_virial) {
  Prediction p;
  std::vector<double> Q;
  p.energy = backend->charge_stage1(nl, p.eatom, Q);
  const int n = nl.nlocal;
  double mean = 0.0;
  for (double v : Q) mean += v;
  mean /= std::max(1, n);
  p.charge.resize(n);
  for (int i = 0; i < n; ++i) p.charge[i] = Q[i] - mean;
  if (born_charges) {
    backend->charge_bec(p.bec);
    const double se = model.ann[model.ann_sqrt_epsilon_inf_offset()];
    for (int i = 0; i < n; ++i)
      for (int c = 0; c < 9; ++c) p.bec[9 * i + c] = se * (p.bec[9 * i + c] + (c % 4 == 0 ? p.charge[i] : 0.0));
  }
  ChargeSetup setup = charge_setup(model);
  setup.kmax_factor = kmax_factor;
  if (exact_two_pi) setup.exact_two_pi();
  const Electrostatics el = charge_model_electrostatics(setup, nl, s.cell, s.x, p.charge);
  std::vector<double> phi = el.phi;
  if (charge_forces == ChargeForces::Exact) {
    double pm = 0.0;
    for (double v : phi) pm += v;
    pm /= std::max(1, n);
    for (double& v : phi) v -= pm;
  }
  const EnergyVirial sr = backend->charge_stage2(phi, per_atom_virial, p.force, p.vatom);
  p.energy += el.total.energy;
  for (int c = 0; c < 9; ++c) p.virial[c] = sr.virial[c] + el.total.virial[c];
  for (int i = 0; i < n; ++i) {
    p.eatom[i] += el.eatom[i];
    for (int a = 0; a < 3; ++a) p.force[3 * i + a] += el.force[3 * i + a];
    if (per_atom_virial)
      for (int c = 0; c < 9; ++c) p.vatom[9 * i + c] += el.vatom[9 * i + c];
  }
  return p;
}

Calculator::Calculator(const Model& model, Precision precision, Backend backend) : impl_(new Impl) {
  impl_->model = model;
  impl_->precision = precision;
  impl_->backend_kind = backend;
  if (backend == Backend::Host) {
#ifdef KOKKOS_ENABLE_OPENMP
    backend = Backend::OpenMP;
#else
    backend = Backend::Serial;
#endif
  }
  if (backend == Backend::Device) {
#ifdef KOKKOS_ENABLE_CUDA
    impl_->backend = make_for_device<Kokkos::Cuda>(model, precision);
#elif defined(KOKKOS_ENABLE_OPENMP)
    impl_->backend = make_for_device<Kokkos::OpenMP>(model, precision);
#else
    impl_->backend = make_for_device<Kokkos::Serial>(model, precision);
#endif
  } else if (backend == Backend::Serial) {
#ifdef KOKKOS_ENABLE_SERIAL
    impl_->backend = make_for_device<Kokkos::Serial>(model, precision);
#else
    throw Error("this build of Kokkos has no Serial backend");
#endif
  } else {
#ifdef KOKKOS_ENABLE_OPENMP
    impl_->backend = make_for_device<Kokkos::OpenMP>(model, precision);
#else
    throw Error("this build of Kokkos has no OpenMP backend");
#endif
  }
}

Calculator::~Calculator() = default;

double Calculator::cutoff() const { return impl_->model.cutoff_max(); }

const NeighborList& Calculator::last_neighbor_list() const { return impl_->nl; }

Prediction Calculator::compute(const Structure& s, bool per_atom_virial, bool descriptors) {
  const Model& m = impl_->model;
  if (m.kind == ModelKind::Dipole || m.kind == ModelKind::Polarizability)
    throw Error(std::string("a ") + kind_name(m.kind) + " model has no energy or forces (use compute_tensor)");
  impl_->check_types_and_list(s);
  if (m.kind == ModelKind::Charge) {
    if (descriptors) throw Error("descriptor output is not available for charge models");
    return impl_->compute_charge_model(s, per_atom_virial);
  }
  Prediction p;
  EnergyVirial ev =
      impl_->backend->run(impl_->nl, per_atom_virial, p.eatom, p.force, p.vatom, descriptors ? &p.descriptor : nullptr);
  p.energy = ev.energy;
  for (int c = 0; c < 9; ++c) p.virial[c] = ev.virial[c];
  return p;
}

// dipole: the pair terms; polarizability: network 1's virial-like pair terms plus network 2's
// scalar (with its bias) on the diagonal of each atom's own tensor
TensorPrediction Calculator::compute_tensor(const Structure& s) {
  const Model& m = impl_->model;
  if (m.kind != ModelKind::Dipole && m.kind != ModelKind::Polarizability)
    throw Error(std::string("compute_tensor needs a dipole or polarizability model, not a ") + kind_name(m.kind) + " model");
  impl_->check_types_and_list(s);
  TensorPrediction t;
  t.dipole = m.kind == ModelKind::Dipole;
  const EnergyVirial r = impl_->backend->run_tensor(impl_->nl, t.dipole, t.per_atom);
  for (int c = 0; c < 9; ++c) t.total[c] = r.virial[c];
  if (!t.dipole) {
    if (!impl_->diagonal) {  // network 2 as a potential: its per-atom "energy" is the scalar
      impl_->diagonal = std::make_unique<Calculator>(polarizability_diagonal_model(m), impl_->precision, impl_->backend_kind);
    }
    const Prediction a = impl_->diagonal->compute(s, false);
    for (size_t i = 0; i < a.eatom.size(); ++i)
      for (int c : {0, 4, 8}) {
        t.per_atom[9 * i + c] += a.eatom[i];
        t.total[c] += a.eatom[i];
      }
  }
  return t;
}

void Calculator::set_charge_options(bool born_charges, ChargeForces forces) {
  impl_->born_charges = born_charges;
  impl_->charge_forces = forces;
}

void Calculator::force_two_pass(bool on) { impl_->backend->two_pass(on); }

void Calculator::set_ewald(double kmax_factor, bool exact_two_pi) {
  impl_->kmax_factor = kmax_factor;
  impl_->exact_two_pi = exact_two_pi;
}

const Model& Calculator::model() const { return impl_->model; }

KokkosSession::KokkosSession(int threads) {
  if (Kokkos::is_initialized()) return;
  kokkos_initialize(threads);
  owns_ = true;
}

KokkosSession::~KokkosSession() {
  if (owns_ && Kokkos::is_initialized()) Kokkos::finalize();
}

}  // namespace nep
