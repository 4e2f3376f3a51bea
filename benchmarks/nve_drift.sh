#!/usr/bin/env bash
# NVE drift of pair_style nep/gpu for PbTe at 300 K, 1 fs (benchmarks/md/in.nve_drift).
# Usage: benchmarks/nve_drift.sh [nve_steps=10000]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../tools/env.sh"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} "$LMP" -k on t "${OMP_NUM_THREADS:-2}" -sf kk -in "$here/md/in.nve_drift" \
  -log "$work/log" -screen none -var plugin "$NEP_PLUGIN" -var potdir "$here/../potentials" \
  -var steps "${1:-10000}" -var out "$work/e.dat"
python3 - "$work/e.dat" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if l[0].isdigit()]
t = [int(r[0]) * 1e-3 for r in rows]            # ps
e = [float(r[1]) for r in rows]                  # eV/atom
T = sum(float(r[2]) for r in rows) / len(rows)
n = len(t); mt = sum(t) / n; me = sum(e) / n
slope = sum((a - mt) * (b - me) for a, b in zip(t, e)) / sum((a - mt) ** 2 for a in t)
print("DRIFT PbTe NEP4 512 atoms, <T> = %.1f K, %.1f ps NVE at 1 fs: %.3e eV/atom/ps (max |E-E0| %.2e eV/atom)"
      % (T, t[-1] - t[0], slope, max(abs(x - e[0]) for x in e)))
PY
