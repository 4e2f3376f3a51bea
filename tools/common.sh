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

# lammps_install SRC BUILD PREFIX [CMAKE_ARGS...]: configure, build and install LAMMPS (PLUGIN,
# KOKKOS on an external Kokkos, MANYBODY, shared libs) from its source tree SRC through BUILD into
# PREFIX; keep LAMMPS's src/ (and potentials/) beside the install for the plugin build; remove BUILD
# and stamp PREFIX. Compiler output goes to PREFIX.log, whose end is shown if the build fails.
lammps_install() {
  local src=$1 build=$2 prefix=$3 log=$3.log
  shift 3
  rm -rf "$build"
  if ! { cmake -S "$src/cmake" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
           -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -DLAMMPS_EXCEPTIONS=ON -DPKG_PLUGIN=ON \
           -DPKG_KOKKOS=ON -DEXTERNAL_KOKKOS=ON -DPKG_MANYBODY=ON -DBUILD_DOC=OFF -DBUILD_TOOLS=OFF "$@" &&
         cmake --build "$build" -j "${NEP_JOBS:-$(nproc)}" && cmake --install "$build"; } > "$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "lammps_install: building LAMMPS into $prefix failed (log: $log)" >&2
    return 1
  fi
  mkdir -p "$prefix/share/lammps-src"
  cp -r "$src/src" "$prefix/share/lammps-src/"
  cp -r "$src/potentials" "$prefix/share/lammps-src/" 2>/dev/null || true
  rm -rf "$build"
  touch "$prefix/.stamp"
}
