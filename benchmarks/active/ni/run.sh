#!/usr/bin/env bash
# Passive vs active on-the-fly training with an expensive teacher (issues #18, #31): LAMMPS's SNAP
# model Ni_Zuo_JPCA2020.quadratic (pair_style snap as a plugin: ../snap_plugin.sh) teaches a Ni NEP
# while 256-atom fcc Ni is heated 300 -> 2500 K (in.ni). Same MD steps in both, measured in this one
# invocation; both end with the same final round inside the fix (fix_modify final_round
# NI_FINAL_EPOCHS, default 300, in arrival order in NI_FINAL_STAGES stages, default 0: fix_modify
# final_round E stages S; counted in each run's wall time), and each run's own model is scored
# on independent SNAP frames (mode test): held-out force RMSE, wall time, teacher evaluations.
# Usage: benchmarks/active/ni/run.sh OUTDIR [steps=10000]
# The held-out frames (test.xyz) are kept in OUTDIR if present; both training runs always run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../tools/env.sh" > /dev/null
out=$(nep_outdir "${1:?usage: run.sh OUTDIR [steps]}") steps=${2:-10000}
snap=$("$here/../snap_plugin.sh")
coeff=$(nep_lammps_potential Ni_Zuo_JPCA2020.quadratic.snapcoeff)
pot=$(dirname "$coeff")   # in.ni reads the model's .snapcoeff and .snapparam there
cp "$here/nep.in" "$out/"
cd "$out"
lmp_run() {  # MODE DIR [extra lmp args]: runs in.ni in DIR, prints the wall time in ms
  local mode=$1 dir=$2; shift 2
  mkdir -p "$dir" && cp nep.in "$dir/"
  local t0; t0=$(date +%s%N)
  (cd "$dir" && OMP_NUM_THREADS=1 "$LMP" -in "$here/in.ni" -var mode "$mode" -var snap_plugin "$snap" -var potdir "$pot" \
     -var out . -log log.lammps -screen none "$@") || { echo "run.sh: $mode run failed (log: $dir/log.lammps)" >&2; exit 1; }
  echo $(( ($(date +%s%N) - t0) / 1000000 ))  # ms
}
if [ ! -f test.xyz ]; then
  echo "held-out SNAP frames (3000 steps)..." >&2
  lmp_run test test -var steps 3000 > /dev/null
  nep-frames test/test.h5 test.xyz > /dev/null
fi
epochs=${NI_FINAL_EPOCHS:-300} stages=${NI_FINAL_STAGES:-0}
echo "passive: SNAP drives $steps steps, final round $epochs epochs, $stages stages..." >&2
t_passive=$(lmp_run passive passive -var steps "$steps" -var final "$epochs" -var stages "$stages")
echo "active: the student drives, SNAP on demand, $steps steps, final round $epochs epochs, $stages stages..." >&2
t_active=$(lmp_run active active -var steps "$steps" -var final "$epochs" -var stages "$stages")
for m in passive active; do nep-predict "$m/ni.nep.txt" test.xyz "pred_$m.xyz" --threads 2 > /dev/null; done
python3 - "$t_passive" "$t_active" "$steps" "$epochs" "$stages" <<'PY'
import json, math, re, sys
t_p, t_a, steps, epochs, stages = float(sys.argv[1]) / 1000, float(sys.argv[2]) / 1000, int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
def forces(path, col):
    lines, f, i = open(path).read().splitlines(), [], 0
    while i < len(lines):
        n = int(lines[i]); f += [float(x) for l in lines[i + 2:i + 2 + n] for x in l.split()[col:col + 3]]; i += n + 2
    return f
ref = forces("test.xyz", 4)
rmse = lambda m: 1000 * math.sqrt(sum((a - b) ** 2 for a, b in zip(forces("pred_%s.xyz" % m, 5), ref)) / len(ref))
act = open("active/log.lammps").read()
m = re.search(r"^ACTIVE frames (\S+) rounds (\S+) teacher_evaluations (\S+)", act, re.M)
pas = re.search(r"^FRAMES (\S+)", open("passive/log.lammps").read(), re.M)
s = {"md_steps": steps, "test_frames": len(ref) // 768, "final_round_epochs": epochs, "final_stages": stages,
     "passive": {"wall_seconds": round(t_p, 1), "teacher_evaluations": steps + 1, "frames": float(pas.group(1)),
                 "heldout_force_rmse_meV_per_A": round(rmse("passive"), 1)},
     "active": {"wall_seconds": round(t_a, 1), "teacher_evaluations": float(m.group(3)), "frames": float(m.group(1)),
                "rounds": float(m.group(2)), "heldout_force_rmse_meV_per_A": round(rmse("active"), 1)}}
s["wall_ratio_passive_over_active"] = round(t_p / t_a, 2)
s["rmse_ratio_active_over_passive"] = round(s["active"]["heldout_force_rmse_meV_per_A"] /
                                            s["passive"]["heldout_force_rmse_meV_per_A"], 2)
json.dump(s, open("summary.json", "w"), indent=2)
print(json.dumps(s, indent=2))
PY
