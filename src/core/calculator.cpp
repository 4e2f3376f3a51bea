#include "nep/calculator.hpp"

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
};

template <class DeviceType, class Real>
struct BackendImpl : Backend_ {
  using Ev = Evaluator<DeviceType, Real>;
  Ev ev;
  explicit BackendImpl(const Model& m) : ev(m) {}

  EnergyVirial run(const NeighborList& nl, bool want_vatom, std::vector<double>& eatom,
                   std::vector<double>& f, std::vector<double>& vatom, std::vector<double>* q) override {
    const int nall = nl.nall, nlocal = nl.nlocal, maxn = std::max(1, nl.max_neighbors);
    ScopedStage stage_all("calculator:upload+eval+fold");
    Kokkos::View<double* [3], Kokkos::LayoutRight, DeviceType> x("x", nall);
    Kokkos::View<int*, DeviceType> type("type", nall), numneigh("numneigh", nlocal);
    Kokkos::View<int**, DeviceType> neigh("neigh", nlocal, maxn);
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
    auto hf = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), df);
    auto he = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), de);
    auto hv = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), dv);
    // fold ghost (image) contributions onto their owners
    eatom.assign(nlocal, 0.0);
    f.assign(3 * static_cast<size_t>(nlocal), 0.0);
    vatom.assign(want_vatom ? 9 * static_cast<size_t>(nlocal) : 0, 0.0);
    for (int i = 0; i < nlocal; ++i) eatom[i] = he(i);
    for (int i = 0; i < nall; ++i) {
      const int o = nl.owner[i];
      for (int d = 0; d < 3; ++d) f[3 * o + d] += hf(i, d);
      if (want_vatom)
        for (int c = 0; c < 9; ++c) vatom[9 * o + c] += hv(i, c);
    }
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
};

Calculator::Calculator(const Model& model, Precision precision, Backend backend) : impl_(new Impl) {
  impl_->model = model;
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
  const int T = impl_->model.num_types();
  for (size_t i = 0; i < s.type.size(); ++i)
    if (s.type[i] < 0 || s.type[i] >= T)
      throw Error("atom " + std::to_string(i) + " has type " + std::to_string(s.type[i]) + ", model has " + std::to_string(T));
  {
    ScopedStage stage("calculator:neighbor");
    impl_->nl = build_neighbor_list(s.x, s.type, s.cell, impl_->model.cutoff_max());
  }
  Prediction p;
  EnergyVirial ev =
      impl_->backend->run(impl_->nl, per_atom_virial, p.eatom, p.force, p.vatom, descriptors ? &p.descriptor : nullptr);
  p.energy = ev.energy;
  for (int c = 0; c < 9; ++c) p.virial[c] = ev.virial[c];
  return p;
}

KokkosSession::KokkosSession(int threads) {
  if (Kokkos::is_initialized()) return;
  kokkos_initialize(threads);
  owns_ = true;
}

KokkosSession::~KokkosSession() {
  if (owns_ && Kokkos::is_initialized()) Kokkos::finalize();
}

}  // namespace nep
