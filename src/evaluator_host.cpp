// Explicit instantiation of the NEP core for the host execution spaces Kokkos was built with.
#include "evaluator_impl.hpp"

namespace nep {
#ifdef KOKKOS_ENABLE_SERIAL
template class Evaluator<Kokkos::Device<Kokkos::Serial, Kokkos::HostSpace>, double>;
template class Evaluator<Kokkos::Device<Kokkos::Serial, Kokkos::HostSpace>, float>;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
template class Evaluator<Kokkos::Device<Kokkos::OpenMP, Kokkos::HostSpace>, double>;
template class Evaluator<Kokkos::Device<Kokkos::OpenMP, Kokkos::HostSpace>, float>;
#endif
}  // namespace nep
