#!/usr/bin/env bash
# Learning Ni from a large MD through carved regions (issue #31, item 5): in.ni_carve (fcc Ni,
# cells^3 x 4 atoms, 300 -> 3000 K, the student driving, SNAP on the 8 most uncertain atoms'
# regions), its own model scored on the held-out SNAP frames of benchmarks/active/ni/run.sh
# (OUTDIR_OF_RUN_SH/test.xyz: 256-atom frames, the 256-atom benchmark's held-out set).
# Usage: benchmarks/active/ni/carve.sh OUTDIR TEST_XYZ [cells=30] [steps=3000] [NAME VALUE ...]
# (NAME VALUE pairs: more index variables of in.ni_carve, e.g. thot 3000 budget 150 carve 4)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../tools/env.sh" > /dev/null
out=$(nep_outdir "${1:?usage: carve.sh OUTDIR TEST_XYZ [cells] [steps]}")
test_xyz=$(cd "$(dirname "${2:?test.xyz of run.sh}")" && pwd)/$(basename "$2")
cells=${3:-30} steps=${4:-3000}
extra=()
if [ $# -gt 4 ]; then shift 4; while [ $# -ge 2 ]; do extra+=(-var "$1" "$2"); shift 2; done; fi
snap=$("$here/../snap_plugin.sh")
coeff=$(nep_lammps_potential Ni_Zuo_JPCA2020.quadratic.snapcoeff)
cp "$here/nep.in" "$out/"
cd "$out"
rm -f ni.h5 history.jsonl
t0=$(date +%s%N)
OMP_NUM_THREADS=1 /usr/bin/time -f "%M" -o rss "$LMP" -in "$here/in.ni_carve" -var snap_plugin "$snap" \
  -var potdir "$(dirname "$coeff")" -var out . -var cells "$cells" -var steps "$steps" "${extra[@]}" -log log.lammps -screen none
wall=$(( ($(date +%s%N) - t0) / 1000000 ))
nep-predict ni.nep.txt "$test_xyz" pred.xyz --threads 2 > /dev/null
nep-frames ni.h5 buffer.xyz > /dev/null
python3 - "$wall" "$test_xyz" <<'PY'
import json, math, re, sys
wall, test = float(sys.argv[1]) / 1000, sys.argv[2]
def forces(path, col):
    lines, f, i = open(path).read().splitlines(), [], 0
    while i < len(lines):
        n = int(lines[i]); f += [float(x) for l in lines[i + 2:i + 2 + n] for x in l.split()[col:col + 3]]; i += n + 2
    return f
ref, pred = forces(test, 4), forces("pred.xyz", 5)
log = open("log.lammps").read()
m = re.search(r"^ACTIVE frames (\S+) rounds (\S+) teacher_evaluations (\S+)", log, re.M)
ev = [json.loads(l) for l in open("history.jsonl")]
calls = [e for e in ev if e.get("event") == "teacher"]
lines, i, atoms, labelled = open("buffer.xyz").read().splitlines(), 0, 0, 0
while i < len(lines):
    n = int(lines[i]); atoms += n
    labelled += sum(1 for l in lines[i + 2:i + 2 + n] if float(l.split()[7]) > 0); i += n + 2
natoms = int(re.search(r"Created (\d+) atoms", log).group(1))
s = {"atoms": natoms, "md_steps": int(re.findall(r"for (\d+) steps", log)[-1]),
     "heldout_force_rmse_meV_per_A": round(1e3 * math.sqrt(sum((a - b) ** 2 for a, b in zip(pred, ref)) / len(ref)), 1),
     "teacher_evaluations": float(m.group(3)), "frames": float(m.group(1)), "rounds": float(m.group(2)),
     "teacher_calls_by_driver": {d: sum(1 for e in calls if e["driver"] == d) for d in ("teacher", "student")},
     "buffered_atoms": atoms, "labelled_atoms": labelled, "wall_seconds": round(wall, 1),
     "peak_rss_MB": round(float(open("rss").read().split()[-1]) / 1024)}
json.dump(s, open("summary.json", "w"), indent=2)
print(json.dumps(s, indent=2))
PY
