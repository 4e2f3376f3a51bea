#!/usr/bin/env bash
# examples/otf-si-active end to end: active learning with a Stillinger-Weber teacher (in.active),
# scored on the same independent held-out teacher frames as examples/otf-si (its in.test), summary.
# Usage: examples/otf-si-active/run.sh OUTDIR   (after tools/test.sh or tools/quickstart.sh built things)
# Leaves OUTDIR/si.nep.txt (the run's own model: the fix's final round at the end of the run,
# `fix_modify learn final_round 300` in in.active), OUTDIR/si.h5 (the teacher's frames),
# OUTDIR/history.jsonl (every check, teacher call and round), OUTDIR/summary.json.
# Short variant for tests: OTF_SI_ACTIVE_QUICK=1; other settings: OTF_SI_ACTIVE_VARS="-var NAME VALUE ...".
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/env.sh"
out=$(nep_outdir "${1:?usage: run.sh OUTDIR}")
: "${LMP:?no LAMMPS (run tools/deps.sh)}" "${NEP_PLUGIN:?no nepplugin.so (build first)}"
sw=$(nep_lammps_potential Si.sw)   # the teacher: Si.sw from the LAMMPS installation's potentials folder
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false OMP_NUM_THREADS=1
if [ "${OTF_SI_ACTIVE_QUICK:-0}" = 1 ]; then
  heat=1000 melt=300 hold=300 time_hint="a few minutes"
  act_vars=(-var heat $heat -var melt $melt -var hold $hold -var epochs 5 -var train_every 5 -var final 5 -var stages 2)
  test_vars=(-var crystal 300 -var melt 300 -var hold 300)
else
  act_vars=() test_vars=() time_hint="about 20 min on 2 cores"
fi
# extra `-var NAME VALUE` pairs for in.active (e.g. OTF_SI_ACTIVE_VARS="-var gap 60 -var hi 3.0")
read -r -a extra <<< "${OTF_SI_ACTIVE_VARS:-}"
act_vars+=("${extra[@]}")
rm -f "$out"/si.h5 "$out"/test.h5 "$out"/history.jsonl
start=$(date +%s.%N)
t0=$SECONDS
phase() { printf 'otf-si-active [%4d s] %s\n' $((SECONDS - t0)) "$*"; }
cd "$here"
steps=$((${heat:-10000} + ${melt:-3000} + ${hold:-7000}))
phase "student-driven MD with a committee, teacher on demand ($steps steps, $time_hint; each round is listed as it ends; log: $out/active.log)"
"$LMP" -in in.active -var out "$out" -var sw "$sw" "${act_vars[@]}" -log "$out/active.log" -screen none &
lmp=$!
# progress from the fix's history file (flushed per line): each round with the MD step reached and
# the teacher evaluations so far; tail stops when LAMMPS exits
tail -s 1 -n +1 -F --pid=$lmp "$out/history.jsonl" 2>/dev/null | python3 -u -c 'import json, sys
evals = 0
for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == "teacher":
        evals = e.get("teacher_evaluations", evals)
    elif e.get("event") == "round":
        print("round %d done at step %d of %s: %d frames, %d teacher evaluations so far; train F %.1f meV/A"
              % (e["round"], e["step"], sys.argv[1], e["frames"], evals, e["train_rmse_f_meV_per_A"]))' "$steps" |
  while read -r line; do phase "  $line"; done &
wait $lmp || { phase "the active run failed (log: $out/active.log)"; exit 1; }
grep -E "^ACTIVE" "$out/active.log"
active_end=$(date +%s.%N)
phase "held-out teacher frames of examples/otf-si (about 1 min; log: $out/test.log)"
cd "$here/../otf-si"
"$LMP" -in in.test -var out "$out" -var sw "$sw" "${test_vars[@]}" -log "$out/test.log" -screen none
nep-frames "$out/test.h5" "$out/test.xyz" >/dev/null
nep-predict "$out/si.nep.txt" "$out/test.xyz" "$out/test_pred.xyz" --threads 2 >/dev/null
python3 "$here/summary.py" "$out" "$(echo "$active_end - $start" | bc)"
phase "summary done; report (nep-report $out -o $out/report)"
nep-report "$out" -o "$out/report" > "$out/report.log" 2>&1 || { echo "run.sh: nep-report failed (log: $out/report.log)" >&2; exit 1; }
phase "done: $out/report/report.html"
