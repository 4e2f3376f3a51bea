#!/usr/bin/env bash
# 100k frames into one on-the-fly buffer: append throughput per 10k frames (from thermo's cpu
# column) and LAMMPS's RSS over time (sampled every 0.5 s from /proc). Usage:
# benchmarks/otf/load_100k.sh [OUTDIR] [STEPS]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/env.sh"
out=$(nep_outdir "${1:-/tmp/nep_otf_load}")
steps=${2:-100000}
sw=$(nep_lammps_potential Si.sw)
rm -f "$out/load.h5" "$out/rss.txt"
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive
(cd "$here" && "$LMP" -in in.load -var sw "$sw" -var out "$out" -var steps "$steps" -log "$out/load.log" -screen none) &
pid=$!
t0=$(date +%s.%N)
while kill -0 $pid 2>/dev/null; do
  rss=$(awk '/VmRSS/ {print $2}' /proc/$pid/status 2>/dev/null || true)
  [ -n "$rss" ] && echo "$(echo "$(date +%s.%N) - $t0" | bc) $rss" >> "$out/rss.txt"
  sleep 0.5
done
wait $pid
python3 - "$out" <<'PY'
import re, sys
out = sys.argv[1]
log = open(f"{out}/load.log").read()
rows = [l.split() for l in log.splitlines() if re.match(r"^\s+\d+\s+\S+\s+\d+\s*$", l)]
rows = [(int(a), float(b), int(float(c))) for a, b, c in rows]
print("frames   cpu_s   frames/s in the last interval")
for (s0, c0, f0), (s1, c1, f1) in zip(rows, rows[1:]):
    print(f"{f1:7d} {c1:7.1f}   {(f1 - f0) / (c1 - c0):8.0f}")
rss = [tuple(map(float, l.split())) for l in open(f"{out}/rss.txt")]
n = len(rss)
print(f"RSS (MB): first {rss[0][1]/1024:.0f}, at 25% {rss[n//4][1]/1024:.0f}, 50% {rss[n//2][1]/1024:.0f}, "
      f"75% {rss[3*n//4][1]/1024:.0f}, last {rss[-1][1]/1024:.0f}, max {max(r[1] for r in rss)/1024:.0f}")
PY
ls -la "$out/load.h5"
