// Explicit instantiation of the NEP core for the host execution spaces Kokkos was built with.
#include "evaluator_impl.hpp"

namespace nep {
// Device types are the plain execution spaces, as LAMMPS's LMPDeviceType / LMPHostType are.
#ifdef KOKKOS_ENABLE_SERIAL
template class Evaluator<Kokkos::Serial, double>;
template class Evaluator<Kokkos::Serial, float>;
#endif
#ifdef KOKKOS_ENABLE_OPENMP
template class Evaluator<Kokkos::OpenMP, double>;
template class Evaluator<Kokkos::OpenMP, float>;
#endif
}  // namespace nep
