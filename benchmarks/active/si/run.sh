#!/usr/bin/env bash
# Passive against active on-the-fly training of a Si NEP from Stillinger-Weber, measured in one
# invocation (issue #31): examples/otf-si's in.train (the teacher drives every step, a frame every
# 100) and examples/otf-si-active's in.active (the student drives, the teacher on demand), the same
# MD phases, both ending with the same final round inside the fix (`-var final E`: fix_modify
# final_round E before the last run). The run's own model (si.nep.txt) of each is scored on
# held-out teacher frames drawn per state (in.states: crystal 300, 900, 1500 K, liquid 2000 K;
# seeds none of the examples use), per state and overall; wall time and teacher evaluations.
# Trajectories: the active run's own MD (the in-run student driving) and the MD each run's final
# model drives (in.drive), against the passive (teacher-driven) run's, within the teacher's own
# spread over velocity seeds (score.py).
# Usage: benchmarks/active/si/run.sh OUTDIR [final_epochs=300] [final_stages=10]   (about 15 min on 2 cores)
# (final_stages S > 0: both final rounds retrain in arrival order, fix_modify final_round E stages S;
# 0: both continue the run's model)
# Other settings of the active side: SI_ACTIVE_VARS="-var NAME VALUE ..." (e.g. "-var hi 1.2").
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
source "$repo/tools/env.sh" > /dev/null
out=$(nep_outdir "${1:?usage: run.sh OUTDIR [final_epochs] [final_stages]}") final=${2:-300} stages=${3:-10}
: "${LMP:?no LAMMPS (run tools/deps.sh)}" "${NEP_PLUGIN:?no nepplugin.so (build first)}"
sw=$(nep_lammps_potential Si.sw)
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false OMP_NUM_THREADS=1
t0=$SECONDS
phase() { printf 'si compare [%4d s] %s\n' $((SECONDS - t0)) "$*"; }

mkdir -p "$out/states" "$out/passive" "$out/active"
phase "held-out frames per state (log: $out/states/log.lammps)"
rm -f "$out"/states/state_*.h5
(cd "$repo/examples/otf-si" && "$LMP" -in "$here/in.states" -var out "$out/states" -var sw "$sw" \
   -log "$out/states/log.lammps" -screen none)
for s in c300 c900 c1500 l2000; do nep-frames "$out/states/state_$s.h5" "$out/states/$s.xyz" > /dev/null; done

timed() {  # NAME DIR DECK [lmp args]: runs DECK from its example folder, records the wall seconds
  local name=$1 dir=$2 deck=$3; shift 3
  rm -f "$dir"/si.h5 "$dir"/history.jsonl
  local s; s=$(date +%s.%N)
  (cd "$(dirname "$deck")" && "$LMP" -in "$(basename "$deck")" -var out "$dir" -var sw "$sw" -var final "$final" -var stages "$stages" "$@" \
     -log "$dir/log.lammps" -screen none) || { echo "run.sh: the $name run failed (log: $dir/log.lammps)" >&2; exit 1; }
  echo "$(date +%s.%N) - $s" | bc > "$dir/wall_seconds"
}
phase "passive: examples/otf-si/in.train, final round $final epochs, $stages stages (log: $out/passive/log.lammps)"
timed passive "$out/passive" "$repo/examples/otf-si/in.train"
phase "active: examples/otf-si-active/in.active, final round $final epochs, $stages stages (log: $out/active/log.lammps)"
read -r -a active_vars <<< "${SI_ACTIVE_VARS:-}"
timed active "$out/active" "$repo/examples/otf-si-active/in.active" -var budget none "${active_vars[@]}"

# the teacher's own spread (SW from two other velocity seeds) and the trajectories the two runs'
# models give when they drive the same MD (the examples' seed), two at a time
drive() {  # NAME [lmp -var args]
  local d="$out/drive/$1"; shift
  mkdir -p "$d"
  "$LMP" -in "$here/in.drive" -var out "$d" -var sw "$sw" -var observables "$repo/examples/otf-si/observables.in" "$@" \
    -log "$d/log.lammps" -screen none || { echo "run.sh: in.drive failed (log: $d/log.lammps)" >&2; exit 1; }
}
phase "the same MD driven by SW from seeds 12345 and 777, and by each run's model (logs: $out/drive/*/log.lammps)"
drive sw_12345 -var seed 12345 & p1=$!; drive sw_777 -var seed 777 & p2=$!; wait $p1; wait $p2
drive passive_model -var pair nep/gpu -var coeff "$out/passive/si.nep.txt" & p1=$!
drive active_model -var pair nep/gpu -var coeff "$out/active/si.nep.txt" & p2=$!; wait $p1; wait $p2

phase "scoring both run's models per state"
for side in passive active; do
  for s in c300 c900 c1500 l2000; do
    nep-predict "$out/$side/si.nep.txt" "$out/states/$s.xyz" "$out/$side/pred_$s.xyz" --threads 2 > /dev/null
  done
done
python3 "$here/score.py" "$out"
