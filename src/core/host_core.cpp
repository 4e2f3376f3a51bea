#include "nep/host_core.hpp"

#include <Kokkos_Core.hpp>
#include <algorithm>
#include <cstdlib>
#include <type_traits>

#include "nep/core/kokkos_compat.hpp"
#include "nep/evaluator.hpp"
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

  EnergyVirial compute(int inum, const int* ilist, int nall, const double* x, const int* mtype, const int* numneigh,
                       int* const* firstneigh, double* f, double* eatom, double* w9) override {
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

    using Unmanaged = Kokkos::MemoryTraits<Kokkos::Unmanaged>;
    Kokkos::View<double* [3], Kokkos::LayoutRight, Kokkos::HostSpace, Unmanaged> hx(const_cast<double*>(x), nall), hf(f, nall);
    Kokkos::View<double*, Kokkos::HostSpace, Unmanaged> he(eatom, eatom ? nall : 0);
    Kokkos::View<double* [9], Kokkos::LayoutRight, Kokkos::HostSpace, Unmanaged> hw(w9, w9 ? nall : 0);
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
};

HostCore::HostCore(const Model& model, bool single_precision) : impl_(new Impl) {
  ensure_kokkos_initialized();
#if defined(KOKKOS_ENABLE_OPENMP)
  impl_->core = make_core<Kokkos::OpenMP>(model, single_precision);
#else
  impl_->core = make_core<Kokkos::Serial>(model, single_precision);
#endif
}

HostCore::~HostCore() = default;

EnergyVirial HostCore::compute(int inum, const int* ilist, int nall, const double* x, const int* model_type,
                               const int* numneigh, int* const* firstneigh, double* f, double* eatom, double* w9) {
  return impl_->core->compute(inum, ilist, nall, x, model_type, numneigh, firstneigh, f, eatom, w9);
}

const char* HostCore::space_name() const { return impl_->core->name(); }
double HostCore::memory_bytes() const { return impl_->core->bytes(); }

}  // namespace nep
