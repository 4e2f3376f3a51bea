#!/usr/bin/env bash
# examples/otf-si end to end: on-the-fly NEP training from a Stillinger-Weber teacher (in.train),
# independent held-out teacher frames (in.test), teacher vs student MD (in.compare), summary.
# Usage: examples/otf-si/run.sh OUTDIR     (after tools/test.sh or tools/quickstart.sh built things)
# Leaves OUTDIR/si.nep.txt (the trained model), OUTDIR/si.h5 (the buffer), OUTDIR/summary.json and
# OUTDIR/report/report.html (nep-report: training history, RDFs, NVE energy, held-out parity).
# Short variant for tests: OTF_SI_QUICK=1. Each phase is printed with the time elapsed so far.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/env.sh"
out=$(nep_outdir "${1:?usage: run.sh OUTDIR}")
: "${LMP:?no LAMMPS (run tools/deps.sh)}" "${NEP_PLUGIN:?no nepplugin.so (build first)}"
sw=$(nep_lammps_potential Si.sw)   # the teacher: Si.sw from the LAMMPS installation's potentials folder
# one MPI rank for MD, the second core for the training thread; passive OpenMP waiting
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false OMP_NUM_THREADS=1
if [ "${OTF_SI_QUICK:-0}" = 1 ]; then
  train_vars=(-var heat 1000 -var melt 500 -var hold 500 -var every 50 -var rounds_every 10 -var epochs 2)
  test_vars=(-var crystal 300 -var melt 300 -var hold 300)
  cmp_vars=(-var equil 100 -var steps 200 -var nve 200)
  rounds="4 rounds, seconds" test_time="seconds" cmp_time="seconds"
else
  train_vars=() test_vars=() cmp_vars=()
  rounds="10 rounds, about 5 min on 2 cores" test_time="about 20 s" cmp_time="about 1 min"  # docs/benchmarks.md §7
fi
rm -f "$out/si.h5" "$out/test.h5" "$out"/*.history.jsonl
start=$(date +%s.%N)
t0=$SECONDS
phase() { printf 'otf-si [%4d s] %s\n' $((SECONDS - t0)) "$*"; }
cd "$here"
phase "training on the fly ($rounds; each round is listed as it ends; log: $out/train.log)"
"$LMP" -in in.train -var out "$out" -var sw "$sw" "${train_vars[@]}" -log "$out/train.log" -screen none &
lmp=$!
# each round as it ends, from the fix's history file (flushed per line; the LAMMPS log is buffered);
# tail stops when LAMMPS exits
tail -s 1 -n +1 -F --pid=$lmp "$out/si.nep.txt.history.jsonl" 2>/dev/null | python3 -u -c 'import json, sys
for line in sys.stdin:
    e = json.loads(line)
    if e.get("event") == "round":
        print("round %d done at step %d: %d frames; train F %.1f, held-out F %.1f meV/A; %.1f s training, MD waited %.1f s"
              % (e["round"], e["step"], e["frames"], e["train_rmse_f_meV_per_A"], e["heldout_rmse_f_meV_per_A"],
                 e["train_seconds"], e["md_wait_seconds"]), flush=True)' |
  while read -r line; do phase "  $line"; done &
wait $lmp || { phase "training failed (log: $out/train.log)"; exit 1; }
wait
grep -E "^TRAIN" "$out/train.log" | tail -n 1
phase "held-out teacher frames ($test_time; log: $out/test.log)"
"$LMP" -in in.test -var out "$out" -var sw "$sw" "${test_vars[@]}" -log "$out/test.log" -screen none
nep-frames "$out/test.h5" "$out/test.xyz" >/dev/null
nep-predict "$out/si.nep.txt" "$out/test.xyz" "$out/test_pred.xyz" --threads 2 >/dev/null
phase "teacher and student MD on the 1500 K liquid ($cmp_time; logs: $out/compare_*.log)"
# on LAMMPS's KOKKOS package (2 threads) when this LAMMPS has it, else the plain styles
packages=$("$LMP" -h | sed -n '/^Installed packages:/,/^List of individual style options/p')
kk=(); case $packages in *KOKKOS*) kk=(-k on t 2 -sf kk) ;; esac
for who in teacher student; do
  nve=(); [ $who = teacher ] && nve=(-var nve 0)
  OMP_NUM_THREADS=2 "$LMP" "${kk[@]}" -in in.compare -var who $who -var out "$out" -var sw "$sw" "${cmp_vars[@]}" \
    "${nve[@]}" -log "$out/compare_$who.log" -screen none
done
end=$(date +%s.%N)
phase "summary"
python3 "$here/summary.py" "$out" "$(echo "$end - $start" | bc)"
phase "report (nep-report)"
nep-report "$out" -o "$out/report" --quiet --title "examples/otf-si: on-the-fly NEP for Si"
phase "done: $out/report/report.html"
