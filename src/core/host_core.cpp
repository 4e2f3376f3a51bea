#include "nep/host_core.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "nep/core/kokkos_compat.hpp"
#include "nep/evaluator.hpp"
#include "nep/error.hpp"
#include "nep/fault.hpp"

namespace nep {

void ensure_kokkos_initialized() {
  if (Kokkos::is_initialized()) return;
  kokkos_initialize(0);
  std::atexit([] {
    if (Kokkos::is_initialized()) Kokkos::finalize();
  });
}

namespace {

struct CoreBase {
  virtual ~CoreBase() = default;
  virtual EnergyVirial compute(int inum, const int* ilist, int nall, const double* x, const int* mtype,
                               const int* numneigh, int* const* firstneigh, double* f, double* eatom, double* w9) = 0;
  virtual const char* name() const = 0;
  virtual double bytes() const = 0;
  // the other model kinds (host spaces only)
  virtual double charges(int inum, const int* ilist, int nall, const double* x, const int* mtype, const int* numneigh,
                         int* const* firstneigh, double* eatom, double* charge) = 0;
  virtual EnergyVirial charge_forces(const double* phi, double* f, double* w9) = 0;
  virtual EnergyVirial tensor(int inum, const int* ilist, int nall, const double* x, const int* mtype,
                              const int* numneigh, int* const* firstneigh, bool dipole, double* t9) = 0;
};

template <class DeviceType, class Real>
struct CoreImpl : CoreBase {
  using Ev = Evaluator<DeviceType, Real>;
  using memory_space = typename DeviceType::memory_space;
  static constexpr bool kOnHost = std::is_same<memory_space, Kokkos::HostSpace>::value;
  Ev ev;
  Kokkos::View<int*, DeviceType> d_type, d_numneigh, d_ilist;
  Kokkos::View<int**, DeviceType> d_neigh;
  Kokkos::View<double* [3], Kokkos::LayoutRight, DeviceType> d_x, d_f;
  Kokkos::View<double*, DeviceType> d_eatom;
  Kokkos::View<double* [9], Kokkos::LayoutRight, DeviceType> d_w9;

  explicit CoreImpl(const Model& m) : ev(m) {}
  const char* name() const override { return DeviceType::execution_space::name(); }
  double bytes() const override {
    return double(d_type.span() + d_numneigh.span() + d_ilist.span() + d_neigh.span()) * sizeof(int) +
           double(d_x.span() + d_f.span() + d_eatom.span() + d_w9.span()) * sizeof(double);
  }

  template <class V>
  static void grow(V& v, const char* label, size_t n) {
    if (v.extent(0) >= n) return;
    maybe_fail("pair:alloc");
    v = V(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string(label)), n + n / 8 + 16);
  }

  // the lists of the last upload (stage 2 of a charge model reuses them)
  int inum_ = 0, nall_ = 0;
  const double* x_ = nullptr;

  void upload(int inum, const int* ilist, int nall, const int* mtype, const int* numneigh, int* const* firstneigh) {
    int maxn = 1;
    for (int ii = 0; ii < inum; ++ii) maxn = std::max(maxn, numneigh[ilist[ii]]);
    const int nmax = nall;  // atom indices are < nall
    grow(d_type, "nep:type", nall);
    grow(d_numneigh, "nep:numneigh", nmax);
    grow(d_ilist, "nep:ilist", std::max(inum, 1));
    if (d_neigh.extent(0) < size_t(nmax) || d_neigh.extent(1) < size_t(maxn))
      d_neigh = Kokkos::View<int**, DeviceType>(Kokkos::view_alloc(Kokkos::WithoutInitializing, std::string("nep:neigh")),
                                                nmax + nmax / 8 + 16, maxn + maxn / 8 + 4);
    auto h_type = Kokkos::create_mirror_view(d_type);
    auto h_num = Kokkos::create_mirror_view(d_numneigh);
    auto h_ilist = Kokkos::create_mirror_view(d_ilist);
    auto h_neigh = Kokkos::create_mirror_view(d_neigh);
    for (int i = 0; i < nall; ++i) h_type(i) = mtype[i];
    for (int ii = 0; ii < inum; ++ii) {
      const int i = ilist[ii];
      h_ilist(ii) = i;
      h_num(i) = numneigh[i];
      for (int k = 0; k < numneigh[i]; ++k) h_neigh(i, k) = firstneigh[i][k];
    }
    Kokkos::deep_copy(d_type, h_type);
    Kokkos::deep_copy(d_numneigh, h_num);
    Kokkos::deep_copy(d_ilist, h_ilist);
    Kokkos::deep_copy(d_neigh, h_neigh);
  }

  using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
  using HostX = Kokkos::View<double* [3], Kokkos::LayoutRight, Kokkos::HostSpace, Unmanaged>;
  using HostS = Kokkos::View<double*, Kokkos::HostSpace, Unmanaged>;
  using HostW = Kokkos::View<double* [9], Kokkos::LayoutRight, Kokkos::HostSpace, Unmanaged>;

  double charges(int inum, const int* ilist, int nall, const double* x, const int* mtype, const int* numneigh,
                 int* const* firstneigh, double* eatom, double* charge) override {
    if constexpr (!kOnHost) {
      throw Error("charge models run on the host core only");
    } else {
      upload(inum, ilist, nall, mtype, numneigh, firstneigh);
      inum_ = inum;
      nall_ = nall;
      x_ = x;
      return ev.compute_charges(inum, Kokkos::subview(d_ilist, std::make_pair(0, inum)), HostX(const_cast<double*>(x), nall),
                                d_type, d_numneigh, d_neigh, HostS(eatom, eatom ? nall : 0), HostS(charge, nall));
    }
  }

  EnergyVirial charge_forces(const double* phi, double* f, double* w9) override {
    if constexpr (!kOnHost) {
      throw Error("charge models run on the host core only");
    } else {
      return ev.compute_charge_forces(inum_, Kokkos::subview(d_ilist, std::make_pair(0, inum_)),
                                      HostX(const_cast<double*>(x_), nall_), d_type, d_numneigh, d_neigh,
                                      HostS(const_cast<double*>(phi), nall_), HostX(f, nall_), HostW(w9, w9 ? nall_ : 0));
    }
  }

  EnergyVirial tensor(int inum, const int* ilist, int nall, const double* x, const int* mtype, const int* numneigh,
                      int* const* firstneigh, bool dipole, double* t9) override {
    if constexpr (!kOnHost) {
      throw Error("tensor models run on the host core only");
    } else {
      upload(inum, ilist, nall, mtype, numneigh, firstneigh);
      return ev.compute_tensor(inum, Kokkos::subview(d_ilist, std::make_pair(0, inum)), HostX(const_cast<double*>(x), nall),
                               d_type, d_numneigh, d_neigh, dipole ? Ev::TensorForm::Dipole : Ev::TensorForm::Virial,
                               HostW(t9, t9 ? nall : 0));
    }
  }

  EnergyVirial compute(int inum, const int* ilist, int nall, const double* x, const int* mtype, const int* numneigh,
                       int* const* firstneigh, double* f, double* eatom, double* w9) override {
    upload(inum, ilist, nall, mtype, numneigh, firstneigh);

    HostX hx(const_cast<double*>(x), nall), hf(f, nall);
    HostS he(eatom, eatom ? nall : 0);
    HostW hw(w9, w9 ? nall : 0);
    auto sub_ilist = Kokkos::subview(d_ilist, std::make_pair(0, inum));
    EnergyVirial r;
    if constexpr (kOnHost) {
      r = ev.compute(inum, sub_ilist, hx, d_type, d_numneigh, d_neigh, hf, he, hw);
    } else {
      grow(d_x, "nep:x", nall);
      grow(d_f, "nep:f", nall);
      auto x_sub = Kokkos::subview(d_x, std::make_pair(0, nall), Kokkos::ALL);
      auto f_sub = Kokkos::subview(d_f, std::make_pair(0, nall), Kokkos::ALL);
      Kokkos::deep_copy(x_sub, hx);
      Kokkos::deep_copy(f_sub, 0.0);
      typename Ev::t_eatom e_dev;
      typename Ev::t_vatom w_dev;
      if (eatom) e_dev = typename Ev::t_eatom("nep:eatom", nall);
      if (w9) w_dev = typename Ev::t_vatom("nep:w9", nall);
      r = ev.compute(inum, sub_ilist, x_sub, d_type, d_numneigh, d_neigh, f_sub, e_dev, w_dev);
      auto f_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), f_sub);
      for (int i = 0; i < nall; ++i)
        for (int d = 0; d < 3; ++d) f[3 * i + d] += f_host(i, d);
      if (eatom) {
        auto e_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), e_dev);
        for (int ii = 0; ii < inum; ++ii) eatom[ilist[ii]] = e_host(ilist[ii]);
      }
      if (w9) {
        auto w_host = Kokkos::create_mirror_view_and_copy(Kokkos::HostSpace(), w_dev);
        for (int i = 0; i < nall; ++i)
          for (int c = 0; c < 9; ++c) w9[9 * i + c] += w_host(i, c);
      }
    }
    return r;
  }
};

template <class DeviceType>
std::unique_ptr<CoreBase> make_core(const Model& m, bool single) {
  if (single) return std::make_unique<CoreImpl<DeviceType, float>>(m);
  return std::make_unique<CoreImpl<DeviceType, double>>(m);
}

}  // namespace

struct HostCore::Impl {
  std::unique_ptr<CoreBase> core;
  std::unique_ptr<CoreBase> diagonal;  // polarizability: the second network, as a potential
  ModelKind kind = ModelKind::Potential;
  std::vector<double> scratch_f;
};

HostCore::HostCore(const Model& model, bool single_precision) : impl_(new Impl) {
  ensure_kokkos_initialized();
#if defined(KOKKOS_ENABLE_OPENMP)
  using Space = Kokkos::OpenMP;
#else
  using Space = Kokkos::Serial;
#endif
  impl_->kind = model.kind;
  impl_->core = make_core<Space>(model, single_precision);
  if (model.kind == ModelKind::Polarizability)
    impl_->diagonal = make_core<Space>(polarizability_diagonal_model(model), single_precision);
}

ModelKind HostCore::kind() const { return impl_->kind; }

double HostCore::compute_charges(int inum, const int* ilist, int nall, const double* x, const int* model_type,
                                 const int* numneigh, int* const* firstneigh, double* eatom, double* charge) {
  return impl_->core->charges(inum, ilist, nall, x, model_type, numneigh, firstneigh, eatom, charge);
}

EnergyVirial HostCore::compute_charge_forces(const double* phi, double* f, double* w9) {
  return impl_->core->charge_forces(phi, f, w9);
}

EnergyVirial HostCore::compute_tensor(int inum, const int* ilist, int nall, const double* x, const int* model_type,
                                      const int* numneigh, int* const* firstneigh, double* t9) {
  const bool dipole = impl_->kind == ModelKind::Dipole;
  EnergyVirial r = impl_->core->tensor(inum, ilist, nall, x, model_type, numneigh, firstneigh, dipole, t9);
  if (impl_->diagonal) {  // network 2's scalar on each atom's own diagonal
    std::vector<double> a(nall, 0.0);
    impl_->scratch_f.assign(3 * static_cast<size_t>(nall), 0.0);
    impl_->diagonal->compute(inum, ilist, nall, x, model_type, numneigh, firstneigh, impl_->scratch_f.data(), a.data(),
                             nullptr);
    for (int ii = 0; ii < inum; ++ii) {
      const int i = ilist[ii];
      if (model_type[i] < 0) continue;
      for (int c : {0, 4, 8}) {
        if (t9) t9[9 * static_cast<size_t>(i) + c] += a[i];
        r.virial[c] += a[i];
      }
    }
  }
  return r;
}

HostCore::~HostCore() = default;

EnergyVirial HostCore::compute(int inum, const int* ilist, int nall, const double* x, const int* model_type,
                               const int* numneigh, int* const* firstneigh, double* f, double* eatom, double* w9) {
  return impl_->core->compute(inum, ilist, nall, x, model_type, numneigh, firstneigh, f, eatom, w9);
}

const char* HostCore::space_name() const { return impl_->core->name(); }
double HostCore::memory_bytes() const { return impl_->core->bytes(); }

}  // namespace nep
