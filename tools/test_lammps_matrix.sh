#!/usr/bin/env bash
# The LAMMPS version matrix beyond 7Jan2022 (tools/test.sh runs every test against that one):
#   for each release V of NEP_LAMMPS_NEWER (4Feb2025, 4Jul2026):
#     - LAMMPS V without its KOKKOS package (tools/deps.sh --lammps V: built once, then cached);
#     - nepplugin.so (nep, nep/gpu), nepplugin_train.so (fix nep/train), nep-predict, nep-frames and nep-train built against it in
#       build-lmpV/ (NEP_PLUGIN_KOKKOS=OFF);
#     - the LAMMPS-level tests that need no KOKKOS package (ctest -L lammps_nokk: NEP_CPU parity,
#       newton on/off, 1 and 2 ranks, restart, hybrid, the LAMMPS_PLUGIN_PATH deck, a LAMMPS of the
#       previous release refusing the plugin, fix nep/train incl. kill -9, the examples, and
#       install_checks: the installed plugin from LAMMPS_PLUGIN_PATH);
#   then the KOKKOS styles and the core against LAMMPS 4Jul2026's KOKKOS package and Kokkos 5
#   headers, compiled, not run (tools/kokkos5_compile_check.sh).
# Prints the seconds each step took. Exit status non-zero when anything failed.
# Usage: tools/test_lammps_matrix.sh [V...]      (default: every release of NEP_LAMMPS_NEWER)
#        NEP_KOKKOS5_CHECK=0 skips the compile check
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
jobs=${NEP_JOBS:-$(nproc)}
versions=("$@")
[ ${#versions[@]} -gt 0 ] || read -ra versions <<< "$NEP_LAMMPS_NEWER"
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
say() { echo "matrix: $*"; }
failed=()
other=$NEP_LAMMPS_PREFIX   # the LAMMPS that must refuse the next plugin: the previous release
for v in "${versions[@]}"; do
  t0=$SECONDS
  # the cached release, whatever LAMMPS_DIR names (that one is the 7Jan2022 build's)
  env -u LAMMPS_DIR "$here/deps.sh" --lammps "$v"
  prefix=$(nep_lammps_prefix "$v")
  dir=$NEP_REPO/build-lmp$v
  t1=$SECONDS
  other_arg=()
  [ -f "$other/.stamp" ] && other_arg=(-DNEP_LMP_OTHER_PREFIX="$other")
  mkdir -p "$dir"
  cmake -S "$NEP_REPO" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DKokkos_DIR="$NEP_KOKKOS_DIR" \
    -DLAMMPS_DIR="$prefix/lib/cmake/LAMMPS" -DNEP_PLUGIN_KOKKOS=OFF -DNEP_BUILD_BENCHMARKS=OFF \
    "${other_arg[@]}" > "$dir/matrix-configure.log" 2>&1 || { cat "$dir/matrix-configure.log" >&2; exit 1; }
  cmake --build "$dir" -j "$jobs" --target nepplugin nepplugin_train nep-predict nep-frames nep-train > "$dir/matrix-build.log" 2>&1 ||
    { tail -n 60 "$dir/matrix-build.log" >&2; say "LAMMPS $v: build failed (log: $dir/matrix-build.log)"; failed+=("$v build"); continue; }
  t2=$SECONDS
  (cd "$dir" && ctest -L lammps_nokk --output-on-failure -j "$jobs") || failed+=("$v tests")
  say "LAMMPS $v: set-up $((t1 - t0)) s, build $((t2 - t1)) s, ctest -L lammps_nokk $((SECONDS - t2)) s"
  other=$prefix
done
if [ "${NEP_KOKKOS5_CHECK:-1}" = 1 ]; then
  t0=$SECONDS
  NEP_JOBS=$jobs "$here/kokkos5_compile_check.sh" || failed+=("kokkos5_compile_check")
  say "Kokkos 5 / LAMMPS 4Jul2026 KOKKOS compile check $((SECONDS - t0)) s"
fi
if [ ${#failed[@]} -gt 0 ]; then
  say "FAILED: ${failed[*]}"
  exit 1
fi
say "all passed (${versions[*]})"
