#!/usr/bin/env bash
# nep-train on the GPUMD PbTe example (issue protocol): frames 0-19 train.xyz, 20-24 test.xyz,
# cutoff 8 4, n_max 6 6, basis_size 6 6, l_max 4 2 0, neuron 30, batch 4, 100 epochs, 1 thread,
# seeds 1 2 3. Prints per seed: s/epoch (training loop incl. validation every 10 epochs), peak RSS,
# final train/test RMSEs; NEP_TIMING=1 per-stage table for seed 1. Then the memory check: the same
# model on a 10x larger set (200 frames: the 20 training frames rattled by 0.05 A and labelled by
# potentials/PbTe_NEP4.txt through nep-predict) with the neighbour-list cache off (cache_mb 0),
# next to the 20-frame set with the cache off: peak RSS must follow the batch, not the data.
# Usage: benchmarks/train/bench_pbte.sh [BUILD_DIR] [EPOCHS]   (BENCH_MEMORY_ONLY=1: the memory part alone)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)
build=${1:-$repo/build}
epochs=${2:-100}
src=$repo/tests/data/train/PbTe_gpumd-example_25frames_EF_train.xyz
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
python3 - "$src" "$work" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines(True)
fr, i = [], 0
while i < len(lines):
    n = int(lines[i]); fr.append(lines[i:i + n + 2]); i += n + 2
open(sys.argv[2] + "/train.xyz", "w").write("".join(sum(fr[:20], [])))
open(sys.argv[2] + "/test.xyz", "w").write("".join(sum(fr[20:], [])))
PY
nep_in() {
  printf "type 2 Te Pb\ncutoff 8 4\nn_max 6 6\nbasis_size 6 6\nl_max 4 2 0\nneuron 30\nbatch 4\nepoch %s\n%b" "$1" "${2:-}"
}
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
if [ "${BENCH_MEMORY_ONLY:-0}" = 0 ]; then
echo "== nep-train PbTe, $epochs epochs, 1 thread ($(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2))"
printf "%-5s %10s %10s %12s %12s %12s %12s\n" seed s/epoch RSS_MB trainE_meV trainF_meV testE_meV testF_meV
for seed in 1 2 3; do
  d=$work/s$seed; mkdir -p "$d"; cp "$work"/train.xyz "$work"/test.xyz "$d"; nep_in "$epochs" > "$d/nep.in"
  if [ "$seed" = 1 ]; then timing=1; else timing=0; fi
  NEP_TIMING=$timing /usr/bin/time -f "%M" -o "$d/rss" "$build/nep-train" "$d" --seed "$seed" --threads 1 > "$d/log" 2> "$d/err"
  spe=$(grep -o '[0-9.]* s/epoch' "$d/log" | tail -1 | cut -d' ' -f1)
  last=$(tail -1 "$d/loss.out")
  read -r _ _ _ _ eT fT _ eX fX _ <<< "$last"
  awk -v s="$seed" -v t="$spe" -v r="$(tail -1 "$d/rss")" -v a="$eT" -v b="$fT" -v c="$eX" -v e="$fX" \
    'BEGIN { printf "%-5s %10s %10.0f %12.3f %12.1f %12.3f %12.1f\n", s, t, r / 1024, a * 1e3, b * 1e3, c * 1e3, e * 1e3 }' 
done
echo "-- per-stage timing, seed 1"
grep NEP_TIMING "$work/s1/err" || true
fi

echo "== memory: 20 vs 200 frames, cache_mb 0"
"$build/nep-predict" "$repo/tests/data/potentials/PbTe_NEP4.txt" "$work/train.xyz" "$work/labelled.xyz" > /dev/null
python3 - "$work" <<'PY'
import random, sys
w = sys.argv[1]
random.seed(7)
lines = open(w + "/train.xyz").read().splitlines(True)
fr, i = [], 0
while i < len(lines):
    n = int(lines[i]); fr.append(lines[i:i + n + 2]); i += n + 2
out = []
for copy in range(10):
    for f in fr:
        rows = [f[0], f[1]]
        for l in f[2:]:
            t = l.split()
            x = [float(v) + random.uniform(-0.05, 0.05) for v in t[1:4]]
            rows.append("%s %.8f %.8f %.8f %s\n" % (t[0], *x, " ".join(t[4:])))
        out += rows
open(w + "/rattled.xyz", "w").write("".join(out))
PY
"$build/nep-predict" "$repo/tests/data/potentials/PbTe_NEP4.txt" "$work/rattled.xyz" "$work/rattled_labelled.xyz" > /dev/null
python3 - "$work" <<'PY'
import sys
w = sys.argv[1]
# nep-predict writes energy= and forces columns; rename to a GPUMD training file (force, energy)
lines = open(w + "/rattled_labelled.xyz").read().splitlines(True)
out, i = [], 0
while i < len(lines):
    n = int(lines[i]); hdr = lines[i + 1]
    lat = hdr.split('Lattice="')[1].split('"')[0]
    e = hdr.split("energy=")[1].split()[0]
    out.append("%d\nLattice=\"%s\" energy=%s Properties=species:S:1:pos:R:3:force:R:3\n" % (n, lat, e))
    for l in lines[i + 2:i + 2 + n]:
        t = l.split()
        out.append(" ".join(t[0:4] + t[5:8]) + "\n")
    i += n + 2
open(w + "/big.xyz", "w").write("".join(out))
PY
# the same number of batches (100) from 20 and from 200 frames, and 10 batches from 20 frames:
# peak RSS follows the batch (and the number of batches the allocator has seen), not the data
for run in "small 2" "small 20" "big 2"; do
  read -r set ep <<< "$run"
  d=$work/mem_${set}_$ep; mkdir -p "$d"
  if [ $set = small ]; then cp "$work/train.xyz" "$d/train.xyz"; else cp "$work/big.xyz" "$d/train.xyz"; fi
  nep_in "$ep" "cache_mb 0\n" > "$d/nep.in"
  /usr/bin/time -f "%M" -o "$d/rss" "$build/nep-train" "$d" --seed 1 > "$d/log"
  n=$(grep -c Lattice "$d/train.xyz")
  echo "frames $n  epochs $ep  peak RSS $(($(tail -1 "$d/rss") / 1024)) MB  $(grep -o '[0-9.]* s/epoch' "$d/log" | tail -1)"
done
