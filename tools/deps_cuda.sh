#!/usr/bin/env bash
# Build Kokkos 3.4.01 with CUDA (+ Serial, shared) for nvcc 13 into the dependency cache:
#   ${LAMMPS_NEP_CACHE:-~/.cache/lammps-nep}/kokkos-3.4.01-cuda-${NEP_CUDA_ARCH:-AMPERE80}
# Kokkos 3.4 predates CUDA 13 and Hopper; cmake/kokkos-3.4.01-cuda13.patch (applied to a copy of
# the source) fixes the cudaMemPrefetchAsync signature, switches off half_t (which no longer
# compiles), and lets kernels built for an older architecture start on a newer GPU: AMPERE80
# code carries sm_80 SASS + compute_80 PTX, which Hopper (H100/H200) runs by JIT; HOPPER90 adds
# sm_90 SASS (tools/common.sh, nep_cuda_arch). The sm_XX also
# goes into CMAKE_CXX_FLAGS because 3.4's nvcc_wrapper otherwise tries sm_35, which nvcc 13
# rejects. Needs tools/deps.sh to have fetched the Kokkos source. No GPU is needed to build.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
nep_cuda_arch || exit 2
ARCH=$NEP_CUDA_ARCH SM=$NEP_CUDA_SM
if [ -n "$NEP_CUDA_EXTRA" ]; then export NVCC_APPEND_FLAGS=$NEP_CUDA_EXTRA; else unset NVCC_APPEND_FLAGS; fi
CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
export PATH="$CUDA_HOME/bin:$PATH"
prefix=$LAMMPS_NEP_CACHE/kokkos-3.4.01-cuda-$ARCH
[ -f "$prefix/.stamp" ] && exit 0
"$here/deps.sh" --no-lammps
src=$LAMMPS_NEP_CACHE/src/kokkos-3.4.01-cuda13
if [ ! -f "$src/.patched" ]; then
  rm -rf "$src" && cp -r "$LAMMPS_NEP_CACHE/src/kokkos-3.4.01" "$src"
  (cd "$src" && patch -p1 -s < "$NEP_REPO/cmake/kokkos-3.4.01-cuda13.patch")
  touch "$src/.patched"
fi
build=$LAMMPS_NEP_CACHE/build-kokkos-cuda-$ARCH
rm -rf "$build"
echo "[deps_cuda] building Kokkos 3.4.01 CUDA ($ARCH) -> $prefix" >&2
NVCC_WRAPPER_DEFAULT_COMPILER=g++ cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$prefix" -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON \
  -DCMAKE_CXX_COMPILER="$src/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS="-arch=sm_$SM" \
  -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_CUDA=ON -DKokkos_ENABLE_CUDA_LAMBDA=ON \
  -DKokkos_ARCH_$NEP_CUDA_KOKKOS_ARCH=ON -DKokkos_ENABLE_TESTS=OFF >/dev/null
NVCC_WRAPPER_DEFAULT_COMPILER=g++ cmake --build "$build" -j "${NEP_JOBS:-$(nproc)}" >/dev/null
cmake --install "$build" >/dev/null
rm -rf "$build"
touch "$prefix/.stamp"
