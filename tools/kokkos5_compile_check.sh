#!/usr/bin/env bash
# Compile check (compile only: no link, no run) of the Kokkos paths against what this machine
# cannot build or run: Kokkos 5 (Debian sid's libkokkos-dev 5.2.2 headers; its libraries need
# glibc >= 2.38) and LAMMPS 4Jul2026's KOKKOS package (which needs Kokkos >= 5.1, C++20):
#   - the core's sources that include Kokkos (src/, src/train/, apps/) against Kokkos 5;
#   - every plugin source, with the KOKKOS-package styles (pair_nep_kokkos.cpp), against LAMMPS
#     4Jul2026's src/ and src/KOKKOS, with the definitions LAMMPS's default KOKKOS build gives
#     (LMP_KOKKOS, double precision, legacy layout).
# Kokkos is configured as LAMMPS's kokkos-openmp preset builds it (Serial + OpenMP); sid's build has
# no Serial backend, so an overlay of its three configuration headers adds it.
# Usage: tools/kokkos5_compile_check.sh [FILE...]   (default: all of them; NEP_JOBS compiles at once)
# Objects and logs go to build-kokkos5-check/; the exit status is non-zero when any file fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
lammps_version=20260704
lmp=$("$here/lammps_sources.sh" $lammps_version)
kk=$("$here/lammps_sources.sh" kokkos5-headers)/include/kokkos
out=$NEP_REPO/build-kokkos5-check
mkdir -p "$out/kokkos-config" "$out/obj"

# ---- Kokkos 5 with Serial + OpenMP: KokkosCore_config.h and the backend lists ----------------
sed 's|^/\* #undef KOKKOS_ENABLE_SERIAL \*/$|#define KOKKOS_ENABLE_SERIAL|' "$kk/KokkosCore_config.h" \
  > "$out/kokkos-config/KokkosCore_config.h"
grep -q '^#define KOKKOS_ENABLE_SERIAL$' "$out/kokkos-config/KokkosCore_config.h" ||
  { echo "kokkos5_compile_check: $kk/KokkosCore_config.h has no KOKKOS_ENABLE_SERIAL line to enable" >&2; exit 1; }
grep -q '^#define KOKKOS_ENABLE_OPENMP$' "$out/kokkos-config/KokkosCore_config.h" ||
  { echo "kokkos5_compile_check: $kk is not an OpenMP build of Kokkos" >&2; exit 1; }
for kind in Declare:decl:KOKKOS_DECLARE_HPP_ Fwd:fwd:KOKKOS_FWD_HPP_; do
  IFS=: read -r name dir guard <<< "$kind"
  printf '#ifndef %s\n#define %s\n#include <%s/Kokkos_%s_OPENMP.hpp>\n#include <%s/Kokkos_%s_SERIAL.hpp>\n#endif\n' \
    "$guard" "$guard" "$dir" "$name" "$dir" "$name" > "$out/kokkos-config/KokkosCore_Config_${name}Backend.hpp"
done
cp "$kk/KokkosCore_Config_SetupBackend.hpp" "$out/kokkos-config/"

cd "$NEP_REPO"
common=(-std=c++20 -fopenmp -I"$out/kokkos-config" -isystem "$kk" -I"$NEP_REPO/include"
        -isystem /usr/include/hdf5/serial)
# as LAMMPS 4Jul2026's own KOKKOS build compiles (cmake/Modules/Packages/KOKKOS.cmake defaults)
lammps=(-DLMP_KOKKOS -DLMP_KOKKOS_DOUBLE_DOUBLE -DLMP_KOKKOS_LAYOUT_LEGACY -DLAMMPS_SMALLBIG -DLAMMPS_MEMALIGN=64
        -DLMP_PLUGIN -DNEP_PLUGIN_KOKKOS -DNEP_PLUGIN_TRAIN -DNEP_LAMMPS_VERSION=$lammps_version -I"$lmp/src" -I"$lmp/src/KOKKOS"
        -I"$NEP_REPO/lammps_plugin" $(mpicxx --showme:compile))
files=("$@")
if [ ${#files[@]} = 0 ]; then
  # the core: every source that includes Kokkos (found by preprocessing); the plugin: every source
  for f in src/core/*.cpp src/data/*.cpp src/train/*.cpp apps/*.cpp; do
    g++ "${common[@]}" -M -isystem /usr/include/torch/csrc/api/include "$f" 2>/dev/null |
      grep '/Kokkos_Core.hpp' > /dev/null && files+=("$f")    # (grep -q: SIGPIPE under pipefail)
  done
  [ ${#files[@]} -gt 0 ] || { echo "kokkos5_compile_check: no core source includes Kokkos_Core.hpp?" >&2; exit 1; }
  files+=(lammps_plugin/*.cpp)
fi

check() {  # FILE: compile it into $out/obj; compiler output in NAME.log, a verdict in NAME.result
  local f=$1 name t0=$SECONDS flags=("${common[@]}")
  name=$(echo "$f" | tr / _)
  [[ $f == lammps_plugin/* ]] && flags+=("${lammps[@]}")
  if g++ "${flags[@]}" -O0 -c "$f" -o "$out/obj/$name.o" > "$out/obj/$name.log" 2>&1; then
    echo "ok    $f ($((SECONDS - t0)) s)" > "$out/obj/$name.result"
  else
    { echo "FAIL  $f (log: $out/obj/$name.log)"; grep -m 5 'error' "$out/obj/$name.log" | sed 's/^/        /'; } \
      > "$out/obj/$name.result"
  fi
}
running=0
for f in "${files[@]}"; do
  rm -f "$out/obj/$(echo "$f" | tr / _).result"
  check "$f" &
  running=$((running + 1))
  if [ $running -ge "${NEP_JOBS:-1}" ]; then wait -n || true; running=$((running - 1)); fi
done
wait
nfail=0
for f in "${files[@]}"; do
  r=$out/obj/$(echo "$f" | tr / _).result
  cat "$r"
  grep -q '^ok' "$r" || nfail=$((nfail + 1))
done
echo "Kokkos $(sed -n 's/^#define KOKKOS_VERSION \([0-9]*\)$/\1/p' "$kk/KokkosCore_config.h"), LAMMPS $(sed -n 's/^#define LAMMPS_VERSION "\(.*\)"$/\1/p' "$lmp/src/version.h"), g++ $(g++ -dumpversion)"
[ $nfail = 0 ] || { echo "kokkos5_compile_check: $nfail of ${#files[@]} files failed"; exit 1; }
echo "kokkos5_compile_check: ${#files[@]} files compile"
