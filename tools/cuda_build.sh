#!/usr/bin/env bash
# CUDA build of the core, nep-predict, the tests and the benchmarks (no GPU needed to build):
# the compile check that keeps the GPU code from rotting, and what a device run executes.
#   NEP_CUDA_ARCH=AMPERE80 tools/cuda_build.sh      -> build-cuda/ (ctest there needs a GPU)
# The LAMMPS plugin is not part of this build (it needs a CUDA build of LAMMPS).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
ARCH=${NEP_CUDA_ARCH:-AMPERE80}
SM=$(echo "$ARCH" | tr -dc 0-9)
# extra SASS for the GPU you run on (Kokkos 3.4 has no Hopper arch; sm_90 SASS avoids a PTX JIT
# there). nvcc_wrapper accepts one -arch only, so the extra target goes through nvcc's own
# NVCC_APPEND_FLAGS.
export NVCC_APPEND_FLAGS="${NEP_CUDA_GENCODE:--gencode arch=compute_90,code=sm_90}"
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH" NVCC_WRAPPER_DEFAULT_COMPILER=g++
"$here/deps_cuda.sh"
kokkos=$LAMMPS_NEP_CACHE/kokkos-3.4.01-cuda-$ARCH
build=${NEP_CUDA_BUILD_DIR:-$NEP_REPO/build-cuda}
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$NEP_REPO" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS="-arch=sm_$SM" \
    -DKokkos_DIR="$kokkos/lib/cmake/Kokkos" \
    -DNEP_BUILD_PLUGIN=OFF -DNEP_BUILD_TRAINER=OFF >/dev/null  # trainer: CPU only so far
fi
cmake --build "$build" -j "${NEP_JOBS:-$(nproc)}"
echo "cuda_build: OK ($build)"
