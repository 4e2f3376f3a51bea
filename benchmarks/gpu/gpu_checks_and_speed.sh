#!/usr/bin/env bash
# GPU correctness checks and speed: the first part of benchmarks/gpu/device_run.sh (the device tool
# runs it in a copy of the repo; results go to $OUT). Needs the CUDA build (tools/cuda_build.sh)
# staged by benchmarks/gpu/stage_cuda_build.sh into .device/.
# Also runs on a CPU build as a dry run (bench with the OpenMP backend, small sizes):
#   BIN=<dir with the 4 binaries> LIBDIR=<its Kokkos lib dir> BACKEND=openmp SIZES="4:2" benchmarks/gpu/gpu_checks_and_speed.sh
#   1. correctness on the GPU: the NEP_CPU fixture comparisons and physics checks (Device backend)
#   2. core speed (energy + forces + virial; host neighbour build included, kernels timed apart
#      with NEP_TIMING) for PbTe NEP4, Si 5-body and C at ~10k, ~100k and ~1M atoms
#   3. when stage_cuda_build.sh staged the CUDA LAMMPS (.device/lammps.tar.xz), or LMP_DIR names one:
#      LAMMPS MD with `pair_style nep/gpu` (-k on g 1 -sf kk, NVT, data resident on the GPU) for PbTe NEP4 at
#      110,592 and 884,736 atoms, double and float: atom-steps/s into lammps.txt; then the plugin's
#      NEP_CPU fixture comparison through that LAMMPS on the GPU (lmp_reference.py)
set -uo pipefail
OUT=${OUT:-/tmp/nep-gpu-out}
mkdir -p "$OUT"
BIN=${BIN:-.device/bin}
cuda=${CUDA_HOME:-/usr/local/cuda}
export LD_LIBRARY_PATH="${LIBDIR:-$PWD/.device/lib}:${LD_LIBRARY_PATH:-}:$cuda/lib64:$cuda/lib"
export NEP_TEST_DATA_DIR="$PWD/tests/data"
# the binaries were built on another system image: say at once if one misses a library there
{
  nvidia-smi -L 2>/dev/null || echo "no nvidia-smi"; date; uname -r; ldd --version | head -n 1
  for b in "$BIN"/*; do
    miss=$(ldd "$b" 2>&1 | grep "not found")
    [ -z "$miss" ] || echo "MISSING for $b: $miss"
  done
} > "$OUT/machine.txt" 2>&1
grep MISSING "$OUT/machine.txt"
{
  echo "== test_device_gradient"; timeout 100 "$BIN/test_device_gradient" 2>&1 | grep -v "^\[ *\(RUN\|OK\) *\]" | head -n 100
  echo "== test_reference"; timeout 300 "$BIN/test_reference" 2>&1 | grep -v "^\[ *\(RUN\|OK\) *\]" | head -n 300
  echo "== test_physics"; timeout 200 "$BIN/test_physics" 2>&1 | grep -v "^\[ *\(RUN\|OK\) *\]" | head -n 300
  echo "== test_descriptor"; timeout 100 "$BIN/test_descriptor" 2>&1 | grep -v "^\[ *\(RUN\|OK\) *\]" | head -n 100
} > "$OUT/tests.log" 2>&1
backend=${BACKEND:-device}
{
  for prec in double float; do
    # "cells-per-edge:timed-steps": 11 -> 10648, 23 -> 97336, 50 -> 1000000 atoms (PbTe; same counts for Si, C)
    for sz in ${SIZES:-11:10 23:5 50:2}; do
      set -- ${sz/:/ }
      for model in PbTe_NEP4 Si_5body C_2022_NEP4; do
        echo "== $model $prec cells=$1"
        NEP_TIMING=1 timeout 150 "$BIN/bench_core" tests/data "$2" "$prec" "$model" "$backend" "$1" 2>&1
      done
    done
  done
} > "$OUT/bench.txt" 2>&1
grep -E "PASSED|FAILED|tests ran" "$OUT/tests.log"
grep -E "^(PbTe|Si_|C_20)" "$OUT/bench.txt"
# LAMMPS: the staged tarball, or LMP_DIR (bin/lmp, lib/, nepplugin.so; a CPU build for a dry run)
LMP_TARBALL=${LMP_TARBALL:-.device/lammps.tar.xz}
lmpd=${LMP_DIR:-}
if [ -z "$lmpd" ] && [ -f "$LMP_TARBALL" ]; then
  lmpd=$(mktemp -d)
  tar -xJf "$LMP_TARBALL" -C "$lmpd"
fi
if [ -n "$lmpd" ]; then
  export LD_LIBRARY_PATH="$lmpd/lib:$LD_LIBRARY_PATH:${CUDA_HOME:-/usr/local/cuda}/lib64"
  lmp_backend=${LMP_KOKKOS:-g 1}   # dry run on a CPU build: LMP_KOKKOS="t 2"
  # LAMMPS's kernels carry sm_80 code: a Hopper GPU JIT-compiles their PTX on first use, during the
  # deck's warm-up run (the timed run is the second); keep the JIT results for the later runs
  export CUDA_CACHE_MAXSIZE=${CUDA_CACHE_MAXSIZE:-4294967296}
  {
    for prec in double float; do
      for n in ${LMP_SIZES:-24 48}; do  # 8 n^3 atoms
        log="$OUT/lmp_pbte_${prec}_$n.log"
        timeout 240 "$lmpd/bin/lmp" -k on $lmp_backend -sf kk -in benchmarks/md/in.bench -log "$log" -screen none \
          -var system pbte -var n "$n" -var steps "${LMP_STEPS:-200}" -var style nep/gpu -var prec "$prec" \
          -var plugin "$lmpd/nepplugin.so" -var potdir "$PWD/potentials"
        echo "rc=$? $prec n=$n"
        awk -v p="$prec" '/^Loop time of/ { t = $4; s = $9; a = $12 }
          /^Pair  *\|/ { pair = $NF }
          END { printf "LMP pbte %s atoms %d steps %d  %.3e atom-steps/s  pair %s%%\n", p, a, s, a * s / t, pair }' "$log"
      done
    done
    echo "== lmp_reference.py (NEP_CPU fixtures through LAMMPS, nep/gpu on the GPU)"
    kk="-k on $lmp_backend -sf kk -pk kokkos neigh full newton off"
    timeout 150 python3 tests/lammps/lmp_reference.py --lmp "$lmpd/bin/lmp" --plugin "$lmpd/nepplugin.so" \
      --data tests/data --style nep/gpu --newton off --lmp-args "$kk" 2>&1 | tail -n 20
    echo "== the same in float (tolerance 1e-5)"
    timeout 150 python3 tests/lammps/lmp_reference.py --lmp "$lmpd/bin/lmp" --plugin "$lmpd/nepplugin.so" \
      --data tests/data --style nep/gpu --newton off --precision float --tol 1e-5 --lmp-args "$kk" 2>&1 | tail -n 20
  } > "$OUT/lammps.txt" 2>&1
  grep -E "^LMP|rc=|passed|failed|FAIL" "$OUT/lammps.txt"
fi
