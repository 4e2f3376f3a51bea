#!/usr/bin/env bash
# Passive vs active on-the-fly training with an expensive teacher (issue #18): LAMMPS's SNAP model
# Ni_Zuo_JPCA2020.quadratic (pair_style snap as a plugin: ../snap_plugin.sh) teaches a Ni NEP while
# 256-atom fcc Ni is heated 300 -> 2500 K (in.ni). Same MD steps in both; held-out force RMSE on
# independent SNAP frames (mode test), wall time, teacher evaluations. The active run ends with a
# closing training pass (nep-train on the teacher's frames it buffered, fine-tuning its last
# student; NI_FINAL_EPOCHS, default 300): its wall time counts in the active figure.
# Usage: benchmarks/active/ni/run.sh OUTDIR [steps=10000]
# Phases already done in OUTDIR are kept: the held-out frames (test.xyz) and the passive run
# (passive/wall_ms beside its model), so the active side can be measured again alone.
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
if [ ! -f passive/wall_ms ]; then
  echo "passive: SNAP drives $steps steps..." >&2
  t=$(lmp_run passive passive -var steps "$steps") && echo "$t" > passive/wall_ms
fi
echo "active: the student drives, SNAP on demand, $steps steps..." >&2
t_active=$(lmp_run active active -var steps "$steps")
# closing pass: the run's last student fine-tuned on every teacher frame it buffered
epochs=${NI_FINAL_EPOCHS:-300}
echo "closing pass: nep-train, $epochs epochs on active/ni.h5..." >&2
rm -rf final && mkdir final && cp active/ni.h5 final/train.h5
{ grep -v -e '^#' -e '^epoch' -e '^lr' nep.in; echo "lr 0.002"; echo "epoch $epochs"; echo "cache_mb 4096"
  echo "fine_tune $out/active/ni.nep.txt"; } > final/nep.in
t0=$(date +%s%N)
OMP_NUM_THREADS=2 OMP_WAIT_POLICY=passive nep-train final --threads 2 > final/train.log 2>&1 ||
  { echo "run.sh: nep-train failed (log: final/train.log)" >&2; exit 1; }
t_final=$(( ($(date +%s%N) - t0) / 1000000 ))
for m in passive active final; do
  model=$m/ni.nep.txt; [ "$m" = final ] && model=final/nep.txt
  nep-predict "$model" test.xyz "pred_$m.xyz" --threads 2 > /dev/null
done
python3 - "$(cat passive/wall_ms)" "$t_active" "$steps" "$t_final" "$epochs" <<'PY'
import json, math, re, sys
t_p, t_a, steps = float(sys.argv[1]) / 1000, float(sys.argv[2]) / 1000, int(sys.argv[3])
t_f, epochs = float(sys.argv[4]) / 1000, int(sys.argv[5])
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
s = {"md_steps": steps, "test_frames": len(ref) // 768,
     "passive": {"wall_seconds": round(t_p, 1), "teacher_evaluations": steps, "frames": float(pas.group(1)),
                 "heldout_force_rmse_meV_per_A": round(rmse("passive"), 1)},
     "active": {"wall_seconds": round(t_a, 1), "teacher_evaluations": float(m.group(3)), "frames": float(m.group(1)),
                "rounds": float(m.group(2)), "heldout_force_rmse_meV_per_A": round(rmse("active"), 1)},
     "active_with_closing_pass": {"closing_epochs": epochs, "closing_seconds": round(t_f, 1),
                                  "wall_seconds": round(t_a + t_f, 1),
                                  "heldout_force_rmse_meV_per_A": round(rmse("final"), 1)}}
p_rmse = s["passive"]["heldout_force_rmse_meV_per_A"]
s["wall_ratio_passive_over_active"] = round(t_p / t_a, 2)
s["rmse_ratio_active_over_passive"] = round(s["active"]["heldout_force_rmse_meV_per_A"] / p_rmse, 2)
s["wall_ratio_passive_over_active_with_closing_pass"] = round(t_p / (t_a + t_f), 2)
s["rmse_ratio_active_with_closing_pass_over_passive"] = round(s["active_with_closing_pass"]["heldout_force_rmse_meV_per_A"] / p_rmse, 2)
json.dump(s, open("summary.json", "w"), indent=2)
print(json.dumps(s, indent=2))
PY
