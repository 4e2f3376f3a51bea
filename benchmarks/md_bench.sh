#!/usr/bin/env bash
# LAMMPS MD speed of the NEP pair styles (issue targets: >= 2x NEP_CPU single-core, ~30k atom-steps/s
# PbTe and ~10k Si on this kind of machine; >= 1.8x from 1 to 2 threads or ranks).
# Usage: benchmarks/md_bench.sh [steps=1000]    (after tools/test.sh or tools/quickstart.sh built it)
# Prints one line per (system, variant): atom-steps/s and the share of time in the pair style.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tools/env.sh"
steps=${1:-1000}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
printf "%-6s %6s  %-34s %14s %8s\n" system atoms variant atom-steps/s pair%
run() {  # system n label env... -- lmp args...
  local system=$1 n=$2 label=$3; shift 3
  local envs=() ; while [ "$1" != "--" ]; do envs+=("$1"); shift; done; shift
  local log="$work/log"
  env "${envs[@]}" OMP_WAIT_POLICY=passive OMP_PROC_BIND=false "$@" -in "$here/md/in.bench" -log "$log" -screen none \
    -var system "$system" -var n "$n" -var steps "$steps" -var plugin "$NEP_PLUGIN" \
    -var potdir "$here/../potentials"
  # last "Loop time of T on P procs for S steps with N atoms" and the Pair row of the timing table
  awk -v label="$label" -v sysname="$system" '
    /^Loop time of/ { t = $4; s = $9; a = $12 }
    /^Pair  *\|/ { pair = $NF }
    END { printf "%-6s %6d  %-34s %14.0f %7.1f%%\n", sysname, a, label, a * s / t, pair }' "$log"
}
for sys in "pbte 8" "si 10"; do   # 4096-atom PbTe, 8000-atom Si
  set -- $sys
  run "$1" "$2" "nep/gpu kokkos 1 thread"   OMP_NUM_THREADS=1 -- "$LMP" -k on t 1 -sf kk -var style nep/gpu
  run "$1" "$2" "nep/gpu kokkos 2 threads"  OMP_NUM_THREADS=2 -- "$LMP" -k on t 2 -sf kk -var style nep/gpu
  run "$1" "$2" "nep/gpu no kokkos 1 thread" OMP_NUM_THREADS=1 -- "$LMP" -var style nep/gpu
  run "$1" "$2" "nep 1 thread"               OMP_NUM_THREADS=1 -- "$LMP" -var style nep
  run "$1" "$2" "nep 2 MPI ranks"            OMP_NUM_THREADS=1 -- mpirun --oversubscribe --allow-run-as-root -np 2 "$LMP" -var style nep
done
