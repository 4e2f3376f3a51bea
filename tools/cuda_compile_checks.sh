#!/usr/bin/env bash
# The CUDA compile checks of CI (no GPU needed), so GPU code cannot rot silently:
#   1. what a device run executes (benchmarks/gpu/stage_cuda_build.sh: the core, nep-predict, nep-frames, the
#      trainer's CUDA kernels, the device tests, bench_core) built with nvcc into build-cuda/ (no
#      trainer's LibTorch side: it compiles once, in 3, against the kernels built here);
#   2. every plugin source, fix nep/train included, as the CUDA LAMMPS (Serial + CUDA Kokkos, STUBS
#      MPI) compiles it (tools/cuda_plugin_compile_check.sh);
#   3. the device run's own build of nep-train (prebuilt CUDA core + LibTorch's CPU libraries named
#      directly), here with Debian's LibTorch, into build-train/; it must start.
# Needs LAMMPS 7Jan2022's sources in the cache (tools/deps.sh). Prints one line per step with the
# seconds since the start; exit status non-zero at the first failure. Skipped (exit 0) without nvcc.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
cd "$here/.."
if [ ! -x "${CUDA_HOME:-/usr/local/cuda}/bin/nvcc" ]; then
  echo "cuda checks: no nvcc at ${CUDA_HOME:-/usr/local/cuda}: skipped"
  exit 0
fi
start=$SECONDS
export NEP_CUDA_BUILD_DIR=build-cuda NEP_CUDA_TRAINER=0
export NEP_CUDA_TARGETS="nep-predict nep-frames nep_train_kernels test_reference test_physics test_descriptor test_device_gradient bench_core"
bash tools/cuda_build.sh | tail -n 1
echo "cuda checks: CUDA build finished at $((SECONDS - start)) s"
bash tools/cuda_plugin_compile_check.sh | tail -n 1
echo "cuda checks: plugin compile check finished at $((SECONDS - start)) s"
bash benchmarks/gpu/stage_cuda_build.sh > /dev/null
L=/usr/lib/x86_64-linux-gnu
OUT=$(mktemp -d) NEP_TRAIN_BUILD_ONLY=1 NEP_TRAIN_BUILD_DIR=build-train \
  NEP_TORCH_LIBS="$L/libtorch_cpu.so;$L/libc10.so" NEP_TORCH_INCLUDES="/usr/include;/usr/include/torch/csrc/api/include" \
  bash benchmarks/gpu/gpu_train_speed.sh
./build-train/nep-train --help > /dev/null 2>&1 || { echo "cuda checks: the device build's nep-train does not start"; exit 1; }
echo "cuda checks: device build of nep-train finished at $((SECONDS - start)) s"
