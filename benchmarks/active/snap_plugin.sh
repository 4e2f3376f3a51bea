#!/usr/bin/env bash
# Builds snapplugin.so: LAMMPS's own pair_style snap (src/ML-SNAP/pair_snap.cpp and sna.cpp of the
# LAMMPS source the project's LAMMPS was built from) plus the registration in snapplugin.cpp, for
# a LAMMPS without the ML-SNAP package. Prints the path of the plugin.
# Usage: benchmarks/active/snap_plugin.sh [OUTDIR]   (default: build-snap/ in the repository)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/env.sh" > /dev/null
: "${LMP:?no LAMMPS (run tools/deps.sh)}"
prefix=$(cd "$(dirname "$LMP")/.." && pwd)
src=$prefix/share/lammps-src/src
[ -f "$src/ML-SNAP/pair_snap.cpp" ] || { echo "snap_plugin.sh: no $src/ML-SNAP/pair_snap.cpp" >&2; exit 1; }
out=${1:-$here/../../build-snap}
mkdir -p "$out"
so=$out/snapplugin.so
if [ ! -f "$so" ] || [ "$here/snapplugin.cpp" -nt "$so" ]; then
  echo "snap_plugin.sh: compiling LAMMPS's ML-SNAP sources into $so (about a minute)" >&2
  # the compile definitions of the project's LAMMPS, from its CMake package (LAMMPS_SMALLBIG ...)
  defs=$(sed -n 's/.*INTERFACE_COMPILE_DEFINITIONS "\([^"]*\)".*/\1/p' "$prefix"/lib/cmake/LAMMPS/LAMMPS_Targets.cmake | head -n1)
  dflags=()
  IFS=';' read -r -a dl <<< "$defs"
  for d in "${dl[@]}"; do [ -n "$d" ] && [ "$d" != LMP_KOKKOS ] && dflags+=("-D$d"); done
  mpicxx -O3 -fPIC -shared -std=c++11 -DLMP_PLUGIN "${dflags[@]}" -I"$src" -I"$src/ML-SNAP" -I"$prefix/include/lammps" \
    "$here/snapplugin.cpp" "$src/ML-SNAP/pair_snap.cpp" "$src/ML-SNAP/sna.cpp" \
    -L"$prefix/lib" -llammps -Wl,-rpath,"$prefix/lib" -o "$so"
fi
echo "$so"
