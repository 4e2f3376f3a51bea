#!/usr/bin/env bash
# examples/otf-si-dft end to end: Quantum ESPRESSO teaches a Si NEP in fix nep/train mode active
# (in.active, ending with the fix's own final round on the DFT frames: the run's model is the
# product), held-out DFT frames of other MD states (in.heldout + plain pw.x), the cost of DFT driving
# every step of the same MD (in.aimd, measured on a few hundred steps and extrapolated), summary.json
# and the report.
# Usage: examples/otf-si-dft/run.sh OUTDIR   (after tools/deps.sh installed pw.x and a build exists)
# Leaves in OUTDIR: si.h5 (the DFT frames), si.nep.txt (the run's model, after its final round),
# history.jsonl, heldout.xyz (the held-out DFT frames), summary.json, report/report.html; the logs
# (active.log, pw.log, aimd.log, ...).
# Settings: OTF_SI_DFT_VARS="-var budget 100 -var gap 200" (in.active's variables),
# OTF_SI_DFT_AIMD_STEPS (default 60: about 16 min of pw.x), OTF_SI_DFT_PW_RANKS (pw.x's MPI ranks, default 2),
# OTF_SI_DFT_FINAL_EPOCHS (the final round's epochs, default 300), OTF_SI_DFT_QUICK=1 (a short smoke version, minutes).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/env.sh"
out=$(nep_outdir "${1:?usage: run.sh OUTDIR}")
: "${LMP:?no LAMMPS (run tools/deps.sh)}" "${NEP_PLUGIN:?no nepplugin.so (build first)}"
command -v pw.x > /dev/null && [ -f /usr/share/espresso/pseudo/Si.pbe-rrkj.UPF ] ||
  { echo "run.sh: needs pw.x and Si.pbe-rrkj.UPF (Debian's quantum-espresso, quantum-espresso-data: tools/deps.sh installs them)" >&2; exit 1; }
# passive OpenMP waiting (docs/benchmarks.md): the training thread shares the cores with pw.x
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false OMP_NUM_THREADS=1
aimd_steps=${OTF_SI_DFT_AIMD_STEPS:-60} final_epochs=${OTF_SI_DFT_FINAL_EPOCHS:-300}
temps=(300 700 1100 1500) heat=20000
if [ "${OTF_SI_DFT_QUICK:-0}" = 1 ]; then
  heat=100 act_vars=(-var hold 50 -var budget 14 -var gap 20 -var min_updates 50)
  aimd_steps=${OTF_SI_DFT_AIMD_STEPS:-3} final_epochs=${OTF_SI_DFT_FINAL_EPOCHS:-5} temps=(1500)
else
  act_vars=()
fi
act_vars+=(-var heat $heat -var final "$final_epochs")
read -r -a extra <<< "${OTF_SI_DFT_VARS:-}"
act_vars+=("${extra[@]}")
cd "$out"
rm -rf si.h5 history.jsonl heldout_*.dump heldout.xyz labels pw_tmp final si.final.nep.txt
python3 "$here/pwx.py" setup "$out"    # si64.data, and pw.x's input written from it (same atoms, same order)
# the teacher's command: pw.x on both cores (a training round takes seconds; pw.x minutes a step otherwise)
ranks=${OTF_SI_DFT_PW_RANKS:-2} as_root=
[ "$(id -u)" = 0 ] && as_root=--allow-run-as-root
printf '#!/bin/sh\n# pw.x on %s MPI ranks (written by examples/otf-si-dft/run.sh)\nexec mpirun %s -np %s pw.x "$@"\n' \
  "$ranks" "$as_root" "$ranks" > pw.sh
t0=$SECONDS
phase() { printf 'otf-si-dft [%5d s] %s\n' $((SECONDS - t0)) "$*"; }
start=$(date +%s.%N)
phase "active learning: the NEP drives, pw.x is called when the committee asks (log: $out/active.log, pw.x: $out/pw.log)"
"$LMP" -in "$here/in.active" -var here "$here" "${act_vars[@]}" -log active.log -screen none &
lmp=$!
# progress from the fix's history file (flushed per line)
tail -s 2 -n +1 -F --pid=$lmp history.jsonl 2>/dev/null | python3 -u -c 'import json, sys
for line in sys.stdin:
    try:
        e = json.loads(line)
    except ValueError:
        continue
    if e.get("event") == "round":
        print("round %d done at step %d: %d frames; train F %.1f meV/A" % (e["round"], e["step"], e["frames"], e["train_rmse_f_meV_per_A"]))
    elif e.get("event") == "teacher" and e.get("reason") != "driving":
        print("DFT call %d at step %d (%s, deviation %.2f eV/A)" % (e["teacher_evaluations"], e["step"], e["reason"], e["max_dev_eV_per_A"]))' |
  while read -r line; do phase "  $line"; done &
wait $lmp || { phase "the active run failed (log: $out/active.log)"; exit 1; }
grep -E "^ACTIVE" active.log
active_end=$(date +%s.%N)
# two trajectories per temperature (velocity seeds 1000 + T and 2000 + T), 4 frames each: the four
# 1500 K frames of one trajectory alone move the figure by ~10 meV/A (docs/benchmarks_log.md §27)
phase "held-out states: the run's NEP drives NVT MD at ${temps[*]} K (2 trajectories each, own seeds), 4 frames each, labelled by plain pw.x"
dumps=()
for T in "${temps[@]}"; do
  for k in 1 2; do
    "$LMP" -in "$here/in.heldout" -var T "$T" -var seed $((k * 1000 + T)) -var name "heldout_${T}K_s$k" \
      -log "heldout_${T}K_s$k.log" -screen none
    dumps+=("heldout_${T}K_s$k.dump")
  done
done
python3 "$here/pwx.py" label heldout.xyz 2 "${dumps[@]}"
nep-predict si.nep.txt heldout.xyz heldout_pred.xyz --threads 2 > /dev/null
phase "the cost side by side: pw.x driving every step of the same MD for $aimd_steps steps (log: $out/aimd.log)"
"$LMP" -in "$here/in.aimd" -var steps "$aimd_steps" -var heat $heat -log aimd.log -screen none
python3 "$here/summary.py" "$out" "$(echo "$active_end - $start" | bc)"
phase "report (nep-report $out -o $out/report)"
nep-report "$out" -o "$out/report" > report.log 2>&1 || { echo "run.sh: nep-report failed (log: $out/report.log)" >&2; exit 1; }
phase "done: $out/report/report.html"
