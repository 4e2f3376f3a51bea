// Explicit instantiation of the NEP core for a device execution space (CUDA builds of Kokkos).
#include "evaluator_impl.hpp"

namespace nep {
#ifdef KOKKOS_ENABLE_CUDA
template class Evaluator<Kokkos::Cuda, double>;
template class Evaluator<Kokkos::Cuda, float>;
#endif
}  // namespace nep
