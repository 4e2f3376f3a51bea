// The Kokkos calls whose form changed between Kokkos 3.4.01 (the one LAMMPS 29Sep2021 uses) and
// Kokkos 4.3+/5.x (LAMMPS 4Feb2025 needs >= 4.5, 4Jul2026 >= 5.1), in one place for the core and
// the trainer's Kokkos kernels (public: nep/core/).
#pragma once
#include <Kokkos_Core.hpp>

namespace nep {

// portable math functions: Kokkos::Experimental up to 3.6, Kokkos:: from 3.7 (Experimental removed in 4.3)
#if KOKKOS_VERSION >= 30700
namespace kmath = ::Kokkos;
#else
namespace kmath = ::Kokkos::Experimental;
#endif

// Kokkos::initialize with `threads` host threads (<= 0: Kokkos's default) and its warnings off
// (Kokkos::InitArguments until 3.6, InitializationSettings from 3.7; InitArguments removed in 4.3)
inline void kokkos_initialize(int threads) {
#if KOKKOS_VERSION >= 30700
  Kokkos::InitializationSettings settings;
  if (threads > 0) settings.set_num_threads(threads);
  settings.set_disable_warnings(true);
  Kokkos::initialize(settings);
#else
  Kokkos::InitArguments args;
  args.num_threads = threads > 0 ? threads : -1;
  args.disable_warnings = true;
  Kokkos::initialize(args);
#endif
}

}  // namespace nep
