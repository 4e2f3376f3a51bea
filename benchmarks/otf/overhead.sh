#!/usr/bin/env bash
# Sampling + buffering overhead of fix nep/train on MD (training off), 512-atom Si, SW teacher,
# 1 MPI rank, 1 thread, 5000 steps. Runs without and with the fix interleaved (the VM's speed
# drifts), REPEATS times each, for every 20 and every 100, and prints the best loop times and the
# fix's own time (LAMMPS's Modify section minus the baseline's, median), as a share of the step
# time. Usage: benchmarks/otf/overhead.sh [OUTDIR] [REPEATS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/env.sh"
out=$(nep_outdir "${1:-/tmp/nep_otf_overhead}")
reps=${2:-5}
sw=$(nep_lammps_potential Si.sw)
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
for every in 20 100; do
  for k in $(seq "$reps"); do
    for fx in 0 1; do
      rm -f "$out/overhead.h5"
      (cd "$here" && "$LMP" -in in.overhead -var fix $fx -var every $every -var sw "$sw" -var out "$out" \
        -log "$out/log.$every.$fx.$k" -screen none)
    done
  done
  python3 - "$out" "$every" "$reps" <<'PY'
import re, statistics, sys
out, every, reps = sys.argv[1], sys.argv[2], int(sys.argv[3])
def parse(fx):
    loops, mods = [], []
    for k in range(1, reps + 1):
        log = open(f"{out}/log.{every}.{fx}.{k}").read()
        loops.append(float(re.findall(r"Loop time of (\S+)", log)[-1]))
        mods.append(float(re.findall(r"^Modify\s+\|\s+(\S+)", log, re.M)[-1]))
    return min(loops), statistics.median(mods)
l0, m0 = parse(0)
l1, m1 = parse(1)
print(f"every {every}: best loop time without fix {l0:.3f} s, with {l1:.3f} s ({100*(l1/l0-1):+.1f} %); "
      f"fix's own time {m1-m0:.3f} s = {100*(m1-m0)/l0:.1f} % of the step time, "
      f"{1e3*(m1-m0)/(5000/int(every)):.2f} ms per sampled frame")
PY
done
