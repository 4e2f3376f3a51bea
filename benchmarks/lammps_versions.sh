#!/usr/bin/env bash
# LAMMPS MD speed of the plugin in each LAMMPS release of the version matrix (issue #17: no speed
# regression from one release to the next). One source tree, the same compile flags for every
# release (-DNEP_NATIVE=${NEP_NATIVE:-ON}, pair styles only: no HDF5, no trainer, no /kk styles);
# the deck benchmarks/md/in.bench (NVT 300 K, PbTe 4096 atoms and Si 8000 atoms), interleaved
# repetitions (release after release within each repetition), best of the repetitions.
# Usage: benchmarks/lammps_versions.sh [reps=3] [steps=200]    (after tools/test.sh and
#        tools/deps.sh --lammps V for V in 20250204 20260704; builds build-bench-lmpV/ once)
# Prints per run: release, system, variant, atom-steps/s (wall, timed loop) and LAMMPS's "CPU use".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../tools/common.sh"
reps=${1:-3} steps=${2:-200}
releases=(20220106 $NEP_LAMMPS_NEWER)
jobs=${NEP_JOBS:-$(nproc)}
declare -A plugin
for v in "${releases[@]}"; do
  prefix=$(nep_lammps_prefix "$v")
  [ -x "$prefix/bin/lmp" ] || { echo "lammps_versions: no LAMMPS $v in $prefix (tools/deps.sh --lammps $v)" >&2; exit 1; }
  dir=$NEP_REPO/build-bench-lmp$v
  if [ ! -f "$dir/build.ninja" ]; then
    cmake -S "$NEP_REPO" -B "$dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEP_NATIVE="${NEP_NATIVE:-ON}" \
      -DKokkos_DIR="$NEP_KOKKOS_DIR" -DLAMMPS_DIR="$prefix/lib/cmake/LAMMPS" -DNEP_PLUGIN_KOKKOS=OFF \
      -DNEP_BUILD_DATA=OFF -DNEP_BUILD_TRAINER=OFF -DNEP_BUILD_TESTS=OFF -DNEP_BUILD_BENCHMARKS=OFF > /dev/null
  fi
  cmake --build "$dir" -j "$jobs" --target nepplugin > /dev/null
  plugin[$v]=$dir/nepplugin.so
done
log=$(mktemp)
trap 'rm -f "$log"' EXIT
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false OMP_NUM_THREADS=1
printf "%-3s %-9s %-5s %-16s %14s %8s\n" rep lammps sys variant atom-steps/s cpu%
for r in $(seq "$reps"); do
  for sys in "pbte 8" "si 10"; do
    set -- $sys
    for v in "${releases[@]}"; do
      prefix=$(nep_lammps_prefix "$v")
      for variant in nep nep/gpu "nep-2ranks"; do
        cmd=("$prefix/bin/lmp")
        [ "$variant" = nep-2ranks ] && cmd=(mpirun --oversubscribe --allow-run-as-root -np 2 "$prefix/bin/lmp")
        LD_LIBRARY_PATH="$prefix/lib:$NEP_KOKKOS_PREFIX/lib:${LD_LIBRARY_PATH:-}" "${cmd[@]}" -in "$here/md/in.bench" \
          -log "$log" -screen none -var system "$1" -var n "$2" -var steps "$steps" -var plugin "${plugin[$v]}" \
          -var style "${variant%-2ranks}" -var potdir "$here/../potentials"
        awk -v r="$r" -v v="$v" -v sys="$1" -v var="$variant" '
          /^Loop time of/ { t = $4; s = $9; a = $12 } /CPU use with/ { cpu = $1 }
          END { printf "%-3s %-9s %-5s %-16s %14.0f %8s\n", r, v, sys, var, a * s / t, cpu }' "$log"
      done
    done
  done
done | tee "$log.runs"
echo
echo "best of $reps (atom-steps/s) and ratio to 20220106:"
awk '{ k = $3 " " $4; b[$2 " " k] = ($5 > b[$2 " " k] ? $5 : b[$2 " " k]); keys[k] = 1; rel[$2] = 1 }
  END { for (k in keys) { line = sprintf("%-5s %-12s", substr(k, 1, index(k, " ") - 1), substr(k, index(k, " ") + 1));
          for (v in rel) line = line sprintf("  %s %7.0f (%.2fx)", v, b[v " " k], b[v " " k] / b["20220106 " k]); print line } }' "$log.runs" | sort
rm -f "$log.runs"
