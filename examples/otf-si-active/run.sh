#!/usr/bin/env bash
# examples/otf-si-active end to end: active learning with a Stillinger-Weber teacher (in.active),
# scored on the same independent held-out teacher frames as examples/otf-si (its in.test), summary.
# Usage: examples/otf-si-active/run.sh OUTDIR   (after tools/test.sh or tools/quickstart.sh built things)
# Leaves OUTDIR/si.nep.txt (the model that drove the MD at the end), OUTDIR/si.h5 (the teacher's
# frames), OUTDIR/history.jsonl (every check, teacher call and round), OUTDIR/summary.json.
# Short variant for tests: OTF_SI_ACTIVE_QUICK=1.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=$(mkdir -p "${1:?usage: run.sh OUTDIR}" && cd "$1" && pwd)
source "$here/../../tools/env.sh"
: "${LMP:?no LAMMPS (run tools/deps.sh)}" "${NEP_PLUGIN:?no nepplugin.so (build first)}"
sw=""
for d in "${LAMMPS_POTENTIALS:-}" "$(dirname "$LMP")/../share/lammps-src/potentials" "$(dirname "$LMP")/../share/lammps/potentials"; do
  if [ -n "$d" ] && [ -f "$d/Si.sw" ]; then sw="$d/Si.sw"; break; fi
done
[ -n "$sw" ] || { echo "run.sh: Si.sw not found in the LAMMPS potentials folder (set LAMMPS_POTENTIALS)" >&2; exit 1; }
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false OMP_NUM_THREADS=1
if [ "${OTF_SI_ACTIVE_QUICK:-0}" = 1 ]; then
  act_vars=(-var heat 1000 -var melt 300 -var hold 300 -var epochs 5 -var train_every 5)
  test_vars=(-var crystal 300 -var melt 300 -var hold 300)
else
  act_vars=() test_vars=()
fi
rm -f "$out"/si.h5 "$out"/test.h5 "$out"/history.jsonl
start=$(date +%s.%N)
cd "$here"
echo "otf-si-active: student-driven MD with a committee, teacher on demand (log: $out/active.log)"
"$LMP" -in in.active -var out "$out" -var sw "$sw" "${act_vars[@]}" -log "$out/active.log" -screen none
grep -E "^ACTIVE" "$out/active.log"
active_end=$(date +%s.%N)
echo "otf-si-active: held-out teacher frames of examples/otf-si (log: $out/test.log)"
cd "$here/../otf-si"
"$LMP" -in in.test -var out "$out" -var sw "$sw" "${test_vars[@]}" -log "$out/test.log" -screen none
nep-frames "$out/test.h5" "$out/test.xyz" >/dev/null
nep-predict "$out/si.nep.txt" "$out/test.xyz" "$out/test_pred.xyz" --threads 2 >/dev/null
python3 "$here/summary.py" "$out" "$(echo "$active_end - $start" | bc)"
