#!/usr/bin/env bash
# qNEP MD speed against the plain NEP of the same size, and the kspace share (docs/benchmarks.md
# "Charge models"). Usage: benchmarks/charge/bench_qnep.sh [N_CELLS...]   (default: 6 10)
# Each size and case: `run 100` after 10 warm-up steps on 1 MPI rank x 1 OpenMP thread and on
# 2 ranks; prints atom-steps/s (atoms x steps / loop time) and the timer shares LAMMPS reports
# (Pair: NEP stage 1 and real space; Modify: the charge forces' stage 2 in fix NEP_CHARGE; Kspace).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/env.sh"
: "${LMP:?no LAMMPS (run tools/deps.sh)}" "${NEP_PLUGIN:?no nepplugin.so (build first)}"
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
sizes=("${@:-6 10}")
read -r -a sizes <<< "${sizes[*]}"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
as_root=; [ "$(id -u)" = 0 ] && as_root=--allow-run-as-root
printf '%-6s %-8s %6s %5s %14s %7s %7s %7s\n' cells case atoms ranks atom-steps/s pair% modify% kspace%
for n in "${sizes[@]}"; do
  for case in plain pppm charge3 builtin; do
    # the built-in sum costs atoms x k-vectors: only the smaller box
    [ "$case" = builtin ] && [ "$n" -gt 6 ] && continue
    for np in 1 2; do
      log=$work/$n-$case-$np.log
      if [ $np = 1 ]; then run=("$LMP"); else run=(mpirun $as_root -np $np "$LMP"); fi
      (cd "$here" && "${run[@]}" -in in.qnep -var n "$n" -var case "$case" -log "$log" -screen none)
      python3 - "$log" "$n" "$case" "$np" <<'PY'
import re, sys
log, n, case, np_ = sys.argv[1:]
text = open(log).read()
loops = re.findall(r"Loop time of (\S+) on \d+ procs for (\d+) steps with (\d+) atoms", text)
t, steps, atoms = float(loops[-1][0]), int(loops[-1][1]), int(loops[-1][2])
tail = text[text.rfind("Loop time"):]
share = {}
for name in ("Pair", "Modify", "Kspace"):
    m = re.search(r"^%s\s*\|.*\|\s*(\S+)\s*$" % name, tail, re.M)
    share[name] = float(m.group(1)) if m else 0.0
print("%-6s %-8s %6d %5s %14.4g %7.1f %7.1f %7.1f" % (n, case, atoms, np_, atoms * steps / t, share["Pair"],
                                                      share["Modify"], share["Kspace"]))
PY
    done
  done
done
