#!/usr/bin/env bash
# Build NEP_CPU's LAMMPS pair style as a plugin (pair style `nep/cpu`) for side_by_side.sh.
# NEP_CPU is not part of this repository and is never copied into it: give its files in a folder
#   NEP_CPU_SRC=DIR benchmarks/nep_cpu/build_plugin.sh [OUT.so]
# DIR holds NEP_CPU's src/nep.cpp, src/nep.h, src/dftd3para.h (and what they include) and
# interface/lammps/USER-NEP/pair_NEP.cpp, pair_NEP.h, side by side. Built against the LAMMPS of
# tools/env.sh ($NEP_LAMMPS_DIR), -O3, NEP_CPU's default options; with NEP_NATIVE=1 also -march=native.
# -fvisibility=hidden: LAMMPS loads plugins RTLD_GLOBAL and both NEP_CPU and lammps-nep define
# LAMMPS_NS::PairNEP; only the plugin entry point is exported.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/env.sh" > /dev/null
src=${NEP_CPU_SRC:?set NEP_CPU_SRC to a folder with NEP_CPU sources (nep.cpp, nep.h, pair_NEP.cpp, pair_NEP.h)}
out=${1:-$here/nepcpuplugin.so}
lmp_src=$NEP_LAMMPS_DIR/share/lammps-src/src
for f in nep.cpp nep.h pair_NEP.cpp pair_NEP.h; do
  [ -f "$src/$f" ] || { echo "build_plugin.sh: $src/$f missing" >&2; exit 1; }
done
flags=(-O3 -std=c++17 -fPIC -fvisibility=hidden -fvisibility-inlines-hidden -DLAMMPS_SMALLBIG -DLAMMPS_EXCEPTIONS
       -DOMPI_SKIP_MPICXX -DMPICH_SKIP_MPICXX -I"$src" -I"$lmp_src" $(mpicxx --showme:compile))
[ "${NEP_NATIVE:-0}" = 1 ] && flags+=(-march=native)
# pair_NEP.cpp asks for its list with Neighbor::add_request (LAMMPS >= 24Mar2022); older LAMMPS
# gets the same full list through the old API (lammps_compat_add_request.h)
compat=()
grep -q "add_request" "$lmp_src/neighbor.h" || compat=(-include "$here/lammps_compat_add_request.h")
obj=$(mktemp -d)
trap 'rm -rf "$obj"' EXIT
g++ "${flags[@]}" -c "$src/nep.cpp" -o "$obj/nep.o"
g++ "${flags[@]}" "${compat[@]}" -c "$src/pair_NEP.cpp" -o "$obj/pair_NEP.o"
g++ "${flags[@]}" -c "$here/nepcpu_plugin.cpp" -o "$obj/nepcpu_plugin.o"
g++ -shared -o "$out" "$obj/nep.o" "$obj/pair_NEP.o" "$obj/nepcpu_plugin.o"
echo "built $out"
