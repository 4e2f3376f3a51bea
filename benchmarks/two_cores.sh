#!/usr/bin/env bash
# Two cores against one (issue #20: >= 1.9x, threads or MPI ranks, whichever is better, both
# reported) on the four systems of the NEP_CPU comparison (benchmarks/nep_cpu/in.side_by_side:
# PbTe NEP4 4096 atoms, Si 5-body and C 2022 8000, UNEP-v1 16-element alloy 8788; NVE, 10 warm-up
# steps then STEPS timed). Per system and repetition, interleaved: `nep` on 1 and 2 MPI ranks,
# `nep/gpu -k on t 1 -sf kk` and `-k on t 2`. Prints every run, then per system the best-of-reps
# rates and the two ratios.
#   benchmarks/two_cores.sh [systems="pbte si c unep"] [steps=100] [reps=2]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tools/env.sh" > /dev/null
systems=${1:-pbte si c unep} steps=${2:-100} reps=${3:-2}
potdir=$(cd "$here/../tests/data/potentials" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
declare -A cells=([pbte]=8 [si]=10 [c]=10 [unep]=13)
variants=("nep 1 rank" "nep 2 ranks" "kk 1 thread" "kk 2 threads")
run() {  # sys variant -> atom-steps/s
  local sys=$1 v=$2 np=1 threads=1 args=(-var style nep)
  case $v in
    "nep 2 ranks") np=2 ;;
    "kk 1 thread") args=(-k on t 1 -sf kk -var style nep/gpu) ;;
    "kk 2 threads") threads=2 args=(-k on t 2 -sf kk -var style nep/gpu) ;;
  esac
  local launch=()  # one process: lmp itself (mpirun -np 1 would bind it, threads included, to one core)
  [ "$np" = 2 ] && launch=(mpirun --oversubscribe --allow-run-as-root -np 2)
  OMP_NUM_THREADS=$threads OMP_WAIT_POLICY=passive OMP_PROC_BIND=false \
    "${launch[@]}" "$LMP" "${args[@]}" -in "$here/nep_cpu/in.side_by_side" \
    -log "$work/log" -screen none -var system "$sys" -var n "${cells[$sys]}" -var steps "$steps" \
    -var plugin "$NEP_PLUGIN" -var with_cpu 0 -var potdir "$potdir" > /dev/null
  awk '/^Loop time of/ { t = $4; s = $9; a = $12 } END { printf "%.0f\n", a * s / t }' "$work/log"
}
echo "== two cores vs one, $(nproc) cores,$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2), $steps steps"
for sys in $systems; do
  declare -A best=()
  for r in $(seq "$reps"); do
    for v in "${variants[@]}"; do
      rate=$(run "$sys" "$v")
      printf "%-5s rep %s  %-13s %10s atom-steps/s\n" "$sys" "$r" "$v" "$rate"
      if [ -z "${best[$v]:-}" ] || [ "$rate" -gt "${best[$v]}" ]; then best[$v]=$rate; fi
    done
  done
  awk -v s="$sys" -v a="${best[nep 1 rank]}" -v b="${best[nep 2 ranks]}" -v c="${best[kk 1 thread]}" -v d="${best[kk 2 threads]}" \
    'BEGIN { printf "%-5s best: nep %d -> 2 ranks %d (%.2fx); kk %d -> 2 threads %d (%.2fx)\n", s, a, b, b / a, c, d, d / c }'
  unset best
done
