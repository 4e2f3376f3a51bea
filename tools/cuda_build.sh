#!/usr/bin/env bash
# CUDA build of the core, nep-predict, nep-train, the tests and the benchmarks (no GPU needed to build):
# the compile check that keeps the GPU code from rotting, and what a device run executes.
#   tools/cuda_build.sh                            -> build-cuda/ (ctest there needs a GPU)
#   NEP_CUDA_ARCH=HOPPER90 tools/cuda_build.sh     -> build-cuda-hopper90/: sm_90 code in Kokkos and
#       LAMMPS too (own cache entries; default AMPERE80: sm_80 everywhere, sm_90 added for the core)
#   NEP_CUDA_LAMMPS=1 tools/cuda_build.sh           -> build-cuda-lammps/: the same plus nepplugin.so
#       for the CUDA LAMMPS of tools/cuda_lammps.sh (built first if missing: ~42 min on 2 cores)
#   NEP_CUDA_TARGETS="nep-predict test_physics ..." -> only those targets; NEP_CUDA_TRAINER=0: no trainer
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
nep_cuda_arch || exit 2
ARCH=$NEP_CUDA_ARCH SM=$NEP_CUDA_SM
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH" NVCC_WRAPPER_DEFAULT_COMPILER=g++
"$here/deps_cuda.sh"
# extra SASS for the GPU you run on (Kokkos 3.4 has no Hopper arch; sm_90 SASS avoids a PTX JIT
# there): through nvcc's own NVCC_APPEND_FLAGS, as nvcc_wrapper takes one -arch only
export NVCC_APPEND_FLAGS=$NEP_CUDA_CORE_EXTRA
kokkos=$LAMMPS_NEP_CACHE/kokkos-3.4.01-cuda-$ARCH
plugin=(-DNEP_BUILD_PLUGIN=OFF)
build=${NEP_CUDA_BUILD_DIR:-$NEP_REPO/build-cuda$NEP_CUDA_BUILD_SUFFIX}
if [ "${NEP_CUDA_LAMMPS:-0}" = 1 ]; then
  "$here/cuda_lammps.sh"
  plugin=(-DNEP_BUILD_PLUGIN=ON -DLAMMPS_DIR="$LAMMPS_NEP_CACHE/lammps-20220106-k3.4.01-cuda-$ARCH/lib/cmake/LAMMPS")
  build=${NEP_CUDA_BUILD_DIR:-$NEP_REPO/build-cuda-lammps$NEP_CUDA_BUILD_SUFFIX}
fi
# the trainer (nep-train --device cuda) needs a LibTorch: Torch_DIR, else Debian's libtorch-dev
# (found by CMake), else the CPU libraries of the Python torch (on the device machine);
# NEP_CUDA_TRAINER=0 skips it
trainer=(-DNEP_BUILD_TRAINER=ON)
if [ "${NEP_CUDA_TRAINER:-1}" = 0 ]; then
  trainer=(-DNEP_BUILD_TRAINER=OFF)
elif [ -n "${Torch_DIR:-}" ]; then
  trainer+=(-DTorch_DIR="$Torch_DIR")
elif [ ! -f /usr/lib/x86_64-linux-gnu/cmake/Torch/TorchConfig.cmake ]; then
  mapfile -t targs < <(python_torch_cmake_args)
  [ "${#targs[@]}" -gt 0 ] || { echo "cuda_build: no LibTorch for the trainer (NEP_CUDA_TRAINER=0 skips it)" >&2; exit 1; }
  trainer+=("${targs[@]}")
fi
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$NEP_REPO" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS="-arch=sm_$SM" \
    -DKokkos_DIR="$kokkos/lib/cmake/Kokkos" "${plugin[@]}" "${trainer[@]}" ${NEP_CUDA_CMAKE_ARGS:-} >/dev/null
fi
# NEP_CUDA_TARGETS: only these targets (CI: what a device run executes), else everything
read -ra targets <<< "${NEP_CUDA_TARGETS:-}"
cmake --build "$build" -j "${NEP_JOBS:-$(nproc)}" ${targets[@]:+--target "${targets[@]}"}
echo "cuda_build: OK ($build${NEP_CUDA_TARGETS:+: $NEP_CUDA_TARGETS})"
