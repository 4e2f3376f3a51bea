#!/usr/bin/env bash
# CUDA build of LAMMPS 20220106 (KOKKOS + MANYBODY + PLUGIN, Kokkos 3.4.01 CUDA from
# tools/deps_cuda.sh) into the dependency cache, for `pair_style nep/gpu` with `-k on g 1 -sf kk`:
#   ${LAMMPS_NEP_CACHE:-~/.cache/lammps-nep}/lammps-20220106-k3.4.01-cuda-${NEP_CUDA_ARCH:-AMPERE80}
# No GPU is needed to build. About 35-42 minutes on 2 cores (all device code is compiled for sm_XX;
# Hopper runs it from the embedded compute_XX PTX; NEP_CUDA_ARCH=HOPPER90 adds sm_90 code). MPI is
# off (LAMMPS's STUBS): the device machines have no MPI and one GPU; the install then needs nothing
# but the CUDA runtime, libgomp and the CUDA Kokkos library next to it. LAMMPS's src/ is kept beside
# the install for the plugin build (tools/cuda_build.sh with NEP_CUDA_LAMMPS=1).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
nep_cuda_arch || exit 2
ARCH=$NEP_CUDA_ARCH SM=$NEP_CUDA_SM
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH" NVCC_WRAPPER_DEFAULT_COMPILER=g++
"$here/deps_cuda.sh"
# LAMMPS's device code: sm_XX, plus sm_90 for HOPPER90 (not the core's extra SASS of cuda_build.sh)
if [ -n "$NEP_CUDA_EXTRA" ]; then export NVCC_APPEND_FLAGS=$NEP_CUDA_EXTRA; else unset NVCC_APPEND_FLAGS; fi
kokkos=$LAMMPS_NEP_CACHE/kokkos-3.4.01-cuda-$ARCH
prefix=$LAMMPS_NEP_CACHE/lammps-20220106-k3.4.01-cuda-$ARCH
[ -f "$prefix/.stamp" ] && { echo "cuda_lammps: OK ($prefix, cached)"; exit 0; }
src=$(ls -d "$LAMMPS_NEP_CACHE"/src/lammps-20220106*/ 2>/dev/null | head -n1)
if [ -z "$src" ]; then  # deps.sh fetches the source with the CPU LAMMPS build
  "$here/deps.sh"
  src=$(ls -d "$LAMMPS_NEP_CACHE"/src/lammps-20220106*/ | head -n1)
fi
echo "[cuda_lammps] building LAMMPS (CUDA $ARCH) -> $prefix" >&2
lammps_install "${src%/}" "$LAMMPS_NEP_CACHE/build-lammps-cuda-$ARCH" "$prefix" "${NEP_LAMMPS_KOKKOS_ARGS[@]}" \
  -DCMAKE_CXX_COMPILER="$kokkos/bin/nvcc_wrapper" -DCMAKE_CXX_FLAGS="-arch=sm_$SM" \
  -DBUILD_MPI=OFF -DBUILD_OMP=OFF -DKokkos_DIR="$kokkos/lib/cmake/Kokkos"
echo "cuda_lammps: OK ($prefix)"
