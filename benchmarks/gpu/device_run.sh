#!/usr/bin/env bash
# The one prepared device command: gpu_checks_and_speed.sh (GPU correctness tests, core speed,
# LAMMPS MD with nep/gpu and the plugin's fixtures through LAMMPS when staged), then
# gpu_train_speed.sh (nep-train built there, --device cuda against --device cpu), inside one call of
# the device tool (at most 600 s a call). Each part gets a share of BUDGET seconds; a part that runs out is stopped and what
# it wrote under $OUT comes back all the same. Prepare here, then run there:
#   NEP_CUDA_LAMMPS=1 benchmarks/gpu/stage_cuda_build.sh   # .device/ (~52 MB; without LAMMPS ~41 MB)
#   device tool: command "bash benchmarks/gpu/device_run.sh", carry [".device"], timeout_s 600
# Dry run of the whole on a CPU build (Kokkos OpenMP; small sizes, the CPU LAMMPS of tools/deps.sh):
#   DRY_RUN=build benchmarks/gpu/device_run.sh
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export OUT=${OUT:-/tmp/nep-gpu-out}
mkdir -p "$OUT"
BUDGET=${BUDGET:-570}
TRAIN_SHARE=${TRAIN_SHARE:-200}  # nep-train's build (~1-2 min on 16 cores) and its four runs
run_env=() train_env=()
if [ -n "${DRY_RUN:-}" ]; then
  . "$here/../../tools/common.sh"
  b=$(cd "$DRY_RUN" && pwd)
  d=$(mktemp -d)
  trap 'rm -rf "$d"' EXIT
  mkdir -p "$d/bin" "$d/lmp/bin"
  ln -s "$b"/tests/test_{reference,physics,descriptor,device_gradient} "$b/benchmarks/bench_core" "$b/nep-predict" "$d/bin/"
  ln -s "$NEP_LAMMPS_PREFIX/bin/lmp" "$d/lmp/bin/"
  ln -s "$NEP_LAMMPS_PREFIX/lib" "$d/lmp/lib"
  ln -s "$b"/nepplugin*.so "$d/lmp/"
  run_env=(BIN="$d/bin" LIBDIR="$NEP_KOKKOS_PREFIX/lib" BACKEND=openmp SIZES="${SIZES:-4:2}" LMP_DIR="$d/lmp"
           LMP_KOKKOS="t 2" LMP_SIZES="${LMP_SIZES:-3}" LMP_STEPS="${LMP_STEPS:-20}")
  train_env=(BIN="$b" DEVICE=kokkos EPOCHS="${EPOCHS:-4}")
fi
start=$(date +%s)
timeout --signal=TERM --kill-after=5 $((BUDGET - TRAIN_SHARE)) env "${run_env[@]}" bash "$here/gpu_checks_and_speed.sh"
echo "device_run: gpu_checks_and_speed.sh rc=$? after $(($(date +%s) - start)) s"
left=$((BUDGET - ($(date +%s) - start)))
timeout --signal=TERM --kill-after=5 "$left" env "${train_env[@]}" bash "$here/gpu_train_speed.sh"
echo "device_run: gpu_train_speed.sh rc=$? after $(($(date +%s) - start)) s"
