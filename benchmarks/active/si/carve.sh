#!/usr/bin/env bash
# Carved regions against whole frames (issue #31, scale), measured in one invocation: the active
# example (examples/otf-si-active/in.active, its defaults) on its own 512-atom box buffering whole
# frames, and on a 4096-atom box (-var cells 8) buffering the regions around the 4 most uncertain
# atoms of each teacher call (-var carve "2.6 4": labels within 2.6 A of a centre, regions of
# 2.6 + 2 x 3.8 A). Same MD phases and final round; each run's own model scored on the held-out
# frames per state of benchmarks/active/si (in.states); teacher evaluations, buffered frames and
# labelled atoms, wall time. Writes OUTDIR/carve.json.
# Usage: benchmarks/active/si/carve.sh OUTDIR [final_epochs=300]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
source "$repo/tools/env.sh" > /dev/null
out=$(nep_outdir "${1:?usage: carve.sh OUTDIR [final_epochs]}") final=${2:-300}
: "${LMP:?no LAMMPS (run tools/deps.sh)}" "${NEP_PLUGIN:?no nepplugin.so (build first)}"
sw=$(nep_lammps_potential Si.sw)
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false OMP_NUM_THREADS=1
mkdir -p "$out/states" "$out/whole512" "$out/carved4096"
if [ ! -f "$out/states/l2000.xyz" ]; then
  (cd "$repo/examples/otf-si" && "$LMP" -in "$here/in.states" -var out "$out/states" -var sw "$sw" \
     -log "$out/states/log.lammps" -screen none)
  for s in c300 c900 c1500 l2000; do nep-frames "$out/states/state_$s.h5" "$out/states/$s.xyz" > /dev/null; done
fi
timed() {  # DIR [lmp args]: the active example in DIR, its wall seconds recorded
  local dir=$1; shift
  rm -f "$dir"/si.h5 "$dir"/history.jsonl
  local s; s=$(date +%s.%N)
  (cd "$repo/examples/otf-si-active" && "$LMP" -in in.active -var out "$dir" -var sw "$sw" -var final "$final" "$@" \
     -log "$dir/log.lammps" -screen none) || { echo "carve.sh: run failed (log: $dir/log.lammps)" >&2; exit 1; }
  echo "$(date +%s.%N) - $s" | bc > "$dir/wall_seconds"
}
echo "carve.sh: 512 atoms, whole frames (log: $out/whole512/log.lammps)" >&2
timed "$out/whole512"
echo "carve.sh: 4096 atoms, carve 2.6 4 (log: $out/carved4096/log.lammps)" >&2
timed "$out/carved4096" -var cells 8 -var carve "2.6 4"
for side in whole512 carved4096; do
  for s in c300 c900 c1500 l2000; do
    nep-predict "$out/$side/si.nep.txt" "$out/states/$s.xyz" "$out/$side/pred_$s.xyz" --threads 2 > /dev/null
  done
  nep-frames "$out/$side/si.h5" "$out/$side/buffer.xyz" > /dev/null
done
python3 - "$out" "$repo/examples/otf-si" <<'PY'
import json, os, re, sys
out = sys.argv[1]
sys.path.insert(0, sys.argv[2])
from heldout import read_xyz  # examples/otf-si/heldout.py
res = {}
for side in ("whole512", "carved4096"):
    log = open(os.path.join(out, side, "log.lammps")).read()
    m = re.search(r"^ACTIVE frames (\S+) rounds \S+ teacher_evaluations (\S+)", log, re.M)
    per, se, n = {}, 0.0, 0
    for s in ("c300", "c900", "c1500", "l2000"):
        ref = read_xyz(os.path.join(out, "states", f"{s}.xyz"), 4)[2]
        pred = read_xyz(os.path.join(out, side, f"pred_{s}.xyz"), 5)[2]
        d = sum((a - b) ** 2 for a, b in zip(pred, ref))
        per[s], se, n = 1e3 * (d / len(ref)) ** 0.5, se + d, n + len(ref)
    # buffered atoms and labelled atoms (force weight > 0; a whole frame labels every atom)
    atoms = labelled = 0
    lines, i = open(os.path.join(out, side, "buffer.xyz")).read().splitlines(), 0
    while i < len(lines):
        k = int(lines[i]); atoms += k
        props = re.search(r"Properties=(\S+)", lines[i + 1]).group(1).split(":")
        if "force_weight" in props:
            col = sum(int(props[j + 2]) for j in range(0, props.index("force_weight"), 3))
            labelled += sum(1 for l in lines[i + 2:i + 2 + k] if float(l.split()[col]) > 0)
        else:
            labelled += k
        i += k + 2
    res[side] = {"heldout_force_rmse_meV_per_A": 1e3 * (se / n) ** 0.5, "per_state_meV_per_A": per,
                 "teacher_evaluations": float(m.group(2)), "buffered_frames": float(m.group(1)),
                 "buffered_atoms": atoms, "labelled_atoms": labelled,
                 "buffer_MB": os.path.getsize(os.path.join(out, side, "si.h5")) / 2**20,
                 "wall_seconds": float(open(os.path.join(out, side, "wall_seconds")).read())}
json.dump(res, open(os.path.join(out, "carve.json"), "w"), indent=2)
print(f"{'':12s} {'whole512':>10s} {'carved4096':>10s}")
for s in ("c300", "c900", "c1500", "l2000"):
    print(f"{s:12s} {res['whole512']['per_state_meV_per_A'][s]:10.1f} {res['carved4096']['per_state_meV_per_A'][s]:10.1f}   (force RMSE, meV/A)")
for k in ("heldout_force_rmse_meV_per_A", "teacher_evaluations", "buffered_frames", "buffered_atoms", "labelled_atoms",
          "buffer_MB", "wall_seconds"):
    print(f"{k:30s} {res['whole512'][k]:10.6g} {res['carved4096'][k]:10.6g}")
PY
