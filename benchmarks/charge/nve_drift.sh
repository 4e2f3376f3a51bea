#!/usr/bin/env bash
# NVE energy drift of a trained qNEP model with LAMMPS's PPPM (docs/benchmarks.md "Charge models"):
# GPUMD's PbTe nep4_charge2 on 512 atoms of rocksalt PbTe at 300 K (in.nve_pbte), 2 MPI ranks.
# Usage: benchmarks/charge/nve_drift.sh [STEPS=10000] [DT_PS=0.001] [PPPM_ACCURACY=1e-6]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/env.sh"
: "${LMP:?no LAMMPS (run tools/deps.sh)}" "${NEP_PLUGIN:?no nepplugin.so (build first)}"
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
steps=${1:-10000} dt=${2:-0.001} acc=${3:-1e-6}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
as_root=; [ "$(id -u)" = 0 ] && as_root=--allow-run-as-root
(cd "$here" && mpirun $as_root -np 2 "$LMP" -in in.nve_pbte -var steps "$steps" -var dt "$dt" -var acc "$acc" \
   -var out "$work/e.dat" -log "$work/log" -screen none)
python3 - "$work/e.dat" "$dt" "$acc" <<'PY'
import sys
path, dt, acc = sys.argv[1], float(sys.argv[2]), sys.argv[3]
rows = [l.split() for l in open(path) if l[0].isdigit()]
t = [int(r[0]) * dt for r in rows]               # ps
e = [float(r[1]) for r in rows]                  # eV/atom
T = sum(float(r[2]) for r in rows) / len(rows)
n = len(t); mt = sum(t) / n; me = sum(e) / n
slope = sum((a - mt) * (b - me) for a, b in zip(t, e)) / sum((a - mt) ** 2 for a in t)
print("DRIFT PbTe qNEP (GPUMD's nep4_charge2, pppm %s) 512 atoms, <T> = %.1f K, %.1f ps NVE at %g fs: %.3e eV/atom/ps "
      "(max |E-E0| %.2e eV/atom)" % (acc, T, t[-1] - t[0], dt * 1000, slope, max(abs(x - e[0]) for x in e)))
PY
