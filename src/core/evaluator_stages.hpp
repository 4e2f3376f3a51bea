// Pieces of the two-pass kernels of nep::Evaluator (evaluator_impl.hpp): the device network's tanh,
// the energy/virial reduction value, and how one kernel stage runs over the atoms.
#pragma once
#include <Kokkos_Core.hpp>
#include <type_traits>

#include "nep/core/kokkos_compat.hpp"

namespace nep {
namespace detail {

// tanh of an array element by element (the device kernels' network)
struct TanhEach {
  template <class Real>
  KOKKOS_INLINE_FUNCTION void operator()(int n, Real* z) const {
    for (int h = 0; h < n; ++h) z[h] = kmath::tanh(z[h]);
  }
};

// Reduction value: energy and 9-component virial (row-major r^a f^b).
struct EnergyVirialSum {
  double e = 0.0;
  double v[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  KOKKOS_INLINE_FUNCTION EnergyVirialSum() {}
  KOKKOS_INLINE_FUNCTION void operator+=(const EnergyVirialSum& o) {
    e += o.e;
    for (int k = 0; k < 9; ++k) v[k] += o.v[k];
  }
  KOKKOS_INLINE_FUNCTION void operator+=(const volatile EnergyVirialSum& o) volatile {
    e += o.e;
    for (int k = 0; k < 9; ++k) v[k] += o.v[k];
  }
};

// One kernel stage over atoms 0..n-1 with an energy/virial reduction. On Kokkos::Serial the
// functor is called in a plain loop: Serial's parallel_reduce keeps its scratch in one
// process-wide buffer (Kokkos 3.4, and the default instance later), so two threads reducing at
// once (MD and fix nep/train's training thread) would share it; the loop touches no Kokkos state
// and gives the same sums in the same order.
template <class ExecSpace, class Tag, class Kernel>
void reduce_stage(const char* label, int n, const Kernel& k, EnergyVirialSum& sum) {
#ifdef KOKKOS_ENABLE_SERIAL
  if constexpr (std::is_same<ExecSpace, Kokkos::Serial>::value) {
    for (int ii = 0; ii < n; ++ii) k(Tag(), ii, sum);
    return;
  }
#endif
  Kokkos::parallel_reduce(label, Kokkos::RangePolicy<ExecSpace, Tag>(0, n), k, sum);
}

// The same for a stage without a reduction.
template <class ExecSpace, class Tag, class Kernel>
void for_stage(const char* label, int n, const Kernel& k) {
#ifdef KOKKOS_ENABLE_SERIAL
  if constexpr (std::is_same<ExecSpace, Kokkos::Serial>::value) {
    for (int ii = 0; ii < n; ++ii) k(Tag(), ii);
    return;
  }
#endif
  Kokkos::parallel_for(label, Kokkos::RangePolicy<ExecSpace, Tag>(0, n), k);
}

}  // namespace detail
}  // namespace nep
