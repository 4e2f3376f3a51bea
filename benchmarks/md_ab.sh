#!/usr/bin/env bash
# Interleaved A/B of two builds of the plugin (e.g. before/after a change) on the MD deck
# benchmarks/md/in.bench, one core: per repetition A then B, for `nep` and `nep/gpu -k on t 1 -sf kk`.
# Usage: benchmarks/md_ab.sh PLUGIN_A PLUGIN_B [system=pbte|si] [cells=8] [steps=200] [reps=3]
# Prints per run: atom-steps/s over the timed loop (wall), the pair style's share, and LAMMPS's "CPU
# use" (the share of the wall time the process got: on a loaded machine compare rate / CPU use too).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tools/env.sh"
a=$1 b=$2 system=${3:-pbte} n=${4:-8} steps=${5:-200} reps=${6:-3}
log=$(mktemp)
trap 'rm -f "$log"' EXIT
printf "%-4s %-2s %-12s %8s %14s %7s %8s\n" rep AB style atoms atom-steps/s pair% cpu%
for r in $(seq "$reps"); do
  for ab in A B; do
    plugin=$a; [ "$ab" = B ] && plugin=$b
    for style in nep nep/gpu-kk; do
      args=(); [ "$style" = nep/gpu-kk ] && args=(-k on t 1 -sf kk)
      OMP_NUM_THREADS=1 "$LMP" "${args[@]}" -in "$here/md/in.bench" -log "$log" -screen none -var system "$system" \
        -var n "$n" -var steps "$steps" -var plugin "$plugin" -var style "${style%-kk}" -var potdir "$here/../potentials"
      awk -v r="$r" -v ab="$ab" -v st="$style" '
        /^Loop time of/ { t = $4; s = $9; a = $12 } /^Pair  *\|/ { pair = $NF } /CPU use with/ { cpu = $1 }
        END { printf "%-4s %-2s %-12s %8d %14.0f %6.1f%% %8s\n", r, ab, st, a, a * s / t, pair, cpu }' "$log"
    done
  done
done
