#!/usr/bin/env bash
# Compile check (compile only: no link, no run, no GPU) of every plugin source, fix nep/train
# included, as the CUDA LAMMPS of tools/cuda_lammps.sh builds it: nvcc_wrapper with the CUDA Kokkos
# 3.4.01 of tools/deps_cuda.sh (Serial + CUDA, no OpenMP; C++17 as nvcc 13 needs), LAMMPS 7Jan2022's src/ and src/KOKKOS,
# and LAMMPS's STUBS mpi.h (that LAMMPS has no MPI). Linking needs the CUDA LAMMPS itself (about
# 40 minutes to build: NEP_CUDA_LAMMPS=1 tools/cuda_build.sh); this check keeps the sources honest
# on every CI run.
# Usage: tools/cuda_plugin_compile_check.sh [FILE...]   (default: lammps_plugin/*.cpp)
# Objects and logs go to build-cuda-plugin-check/; the exit status is non-zero when any file fails.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
nep_cuda_arch || exit 2
export PATH="${CUDA_HOME:-/usr/local/cuda}/bin:$PATH" NVCC_WRAPPER_DEFAULT_COMPILER=g++
"$here/deps_cuda.sh" > /dev/null
kokkos=$LAMMPS_NEP_CACHE/kokkos-3.4.01-cuda-$NEP_CUDA_ARCH
src=$(ls -d "$LAMMPS_NEP_CACHE"/src/lammps-20220106*/ 2>/dev/null | head -n1)
if [ -z "$src" ]; then "$here/deps.sh" > /dev/null; src=$(ls -d "$LAMMPS_NEP_CACHE"/src/lammps-20220106*/ | head -n1); fi
lmp=${src%/}/src
out=$NEP_REPO/build-cuda-plugin-check
mkdir -p "$out"
grep -q '^#define KOKKOS_ENABLE_CUDA$' "$kokkos/include/KokkosCore_config.h" ||
  { echo "cuda_plugin_compile_check: $kokkos is not a CUDA Kokkos" >&2; exit 1; }
if grep -q '^#define KOKKOS_ENABLE_OPENMP$' "$kokkos/include/KokkosCore_config.h"; then
  echo "cuda_plugin_compile_check: $kokkos has OpenMP; this check is for the Serial + CUDA build" >&2; exit 1
fi
cd "$NEP_REPO"
flags=(-std=c++17 -O0 -arch=sm_$NEP_CUDA_SM --expt-extended-lambda --expt-relaxed-constexpr
       -I"$kokkos/include" -I"$NEP_REPO/include" -isystem /usr/include/hdf5/serial
       -DLMP_KOKKOS -DLMP_KOKKOS_GPU -DLAMMPS_SMALLBIG -DLAMMPS_LIB_NO_MPI -DLMP_PLUGIN -DNEP_PLUGIN_KOKKOS
       -DNEP_PLUGIN_TRAIN -DNEP_LAMMPS_VERSION=20210929
       -I"$lmp/STUBS" -I"$lmp" -I"$lmp/KOKKOS" -I"$NEP_REPO/lammps_plugin")
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(lammps_plugin/*.cpp)
nfail=0
for f in "${files[@]}"; do
  name=$(echo "$f" | tr / _) t0=$SECONDS
  if "$kokkos/bin/nvcc_wrapper" "${flags[@]}" -c "$f" -o "$out/$name.o" > "$out/$name.log" 2>&1; then
    echo "ok    $f ($((SECONDS - t0)) s)"
  else
    echo "FAIL  $f (log: $out/$name.log)"; grep -m 5 'error' "$out/$name.log" | sed 's/^/        /'
    nfail=$((nfail + 1))
  fi
done
[ $nfail = 0 ] || { echo "cuda_plugin_compile_check: $nfail of ${#files[@]} files failed"; exit 1; }
echo "cuda_plugin_compile_check: ${#files[@]} plugin files compile (CUDA Kokkos $NEP_CUDA_ARCH, LAMMPS 7Jan2022, STUBS MPI)"
