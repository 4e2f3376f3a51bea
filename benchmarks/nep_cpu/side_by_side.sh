#!/usr/bin/env bash
# lammps-nep `nep` beside NEP_CPU's own pair style in the same lmp, one core, interleaved repetitions
# (issue #20). NEP_CPU_PLUGIN: a plugin built by build_plugin.sh.
#   NEP_CPU_PLUGIN=X.so benchmarks/nep_cpu/side_by_side.sh [systems="pbte si c unep"] [steps=50] [reps=3]
# NEP_SBS_FLOAT=1 adds `nep precision float` (label nep-float) beside the two double-precision styles.
# Sizes: PbTe 4096 atoms, Si and C 8000, UNEP-v1 16-element fcc alloy 8788 (in.side_by_side).
# Per run: atom-steps/s over the timed loop (wall) and LAMMPS's "CPU use"; per system: the initial
# energy and pressure of the two styles (relative difference) and the best-of-reps speed ratio.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/env.sh" > /dev/null
cpu_plugin=${NEP_CPU_PLUGIN:?set NEP_CPU_PLUGIN to nepcpuplugin.so (benchmarks/nep_cpu/build_plugin.sh)}
systems=${1:-pbte si c unep} steps=${2:-50} reps=${3:-3}
potdir=$(cd "$here/../../tests/data/potentials" && pwd)
log=$(mktemp) runs=$(mktemp)
trap 'rm -f "$log" "$runs"' EXIT
declare -A cells=([pbte]=8 [si]=10 [c]=10 [unep]=13)
printf "%-5s %-4s %-8s %7s %14s %6s %24s %24s\n" sys rep style atoms atom-steps/s cpu% "PE(0) eV" "P(0) bar"
for sys in $systems; do
  for r in $(seq "$reps"); do
    styles=(nep nep/cpu); [ "${NEP_SBS_FLOAT:-0}" = 1 ] && styles+=(nep-float)
    for style in "${styles[@]}"; do
      pair=$style; [ "$style" = nep-float ] && pair="nep precision float"
      OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive "$LMP" -in "$here/in.side_by_side" -log "$log" -screen none \
        -var system "$sys" -var n "${cells[$sys]}" -var steps "$steps" -var style "$pair" \
        -var plugin "$NEP_PLUGIN" -var cpu_plugin "$cpu_plugin" -var potdir "$potdir" > /dev/null  # NEP_CPU prints to stdout
      awk -v sys="$sys" -v r="$r" -v st="$style" '
        /^ +Step|^Step/ { hdr++ } hdr == 1 && $1 == "0" && pe == "" { pe = $2; p = $3 }
        /^Loop time of/ { t = $4; s = $9; a = $12 } /CPU use with/ { cpu = $1 }
        END { printf "%-5s %-4s %-8s %7d %14.0f %6s %24s %24s\n", sys, r, st, a, a * s / t, cpu, pe, p }' "$log"
    done
  done
done | tee "$runs"
awk '
  { key = $1 " " $3; if ($5 > best[key]) best[key] = $5; pe[key] = $7; p[key] = $8; sys[$1] = 1 }
  END {
    print ""
    printf "%-5s %14s %14s %8s %10s %10s\n", "sys", "nep best", "nep/cpu best", "ratio", "dPE/PE", "dP/P"
    for (s in sys) {
      a = s " nep"; b = s " nep/cpu"
      dpe = (pe[a] - pe[b]) / pe[b]; dp = (p[a] - p[b]) / p[b]
      printf "%-5s %14.0f %14.0f %7.2fx %10.1e %10.1e\n", s, best[a], best[b], best[a] / best[b], dpe < 0 ? -dpe : dpe + 0, dp < 0 ? -dp : dp + 0
    }
    for (s in sys) {
      f = s " nep-float"; b = s " nep/cpu"
      if (!(f in best)) continue
      if (!hdr++) printf "\n%-5s %14s %8s %10s %10s\n", "sys", "float best", "vs cpu", "dPE/PE", "dP/P"
      dpe = (pe[f] - pe[b]) / pe[b]; dp = (p[f] - p[b]) / p[b]
      printf "%-5s %14.0f %7.2fx %10.1e %10.1e\n", s, best[f], best[f] / best[b], dpe < 0 ? -dpe : dpe + 0, dp < 0 ? -dp : dp + 0
    }
  }' "$runs"
