# Shared settings for the tools/ scripts (sourced, not run).
NEP_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAMMPS_NEP_CACHE=${LAMMPS_NEP_CACHE:-$HOME/.cache/lammps-nep}
NEP_KOKKOS_PREFIX=$LAMMPS_NEP_CACHE/kokkos-3.4.01-omp
NEP_LAMMPS_PREFIX=$LAMMPS_NEP_CACHE/lammps-20220106-k3.4.01-omp
NEP_BUILD_DIR=${NEP_BUILD_DIR:-$NEP_REPO/build}
NEP_KOKKOS_DIR=${Kokkos_DIR:-$NEP_KOKKOS_PREFIX/lib/cmake/Kokkos}
NEP_LAMMPS_DIR=${LAMMPS_DIR:-$NEP_LAMMPS_PREFIX}   # a LAMMPS install prefix (bin/lmp, lib/cmake/LAMMPS)

# nep_build: configure (once) and build lammps-nep into $NEP_BUILD_DIR
nep_build() {
  if [ ! -f "$NEP_BUILD_DIR/build.ninja" ]; then
    cmake -S "$NEP_REPO" -B "$NEP_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DKokkos_DIR="$NEP_KOKKOS_DIR" -DLAMMPS_DIR="$NEP_LAMMPS_DIR/lib/cmake/LAMMPS" "$@" >/dev/null
  fi
  cmake --build "$NEP_BUILD_DIR" -j "${NEP_JOBS:-$(nproc)}"
}
