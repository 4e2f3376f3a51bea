#!/usr/bin/env bash
# Stage the CUDA build for a device run (benchmarks/gpu/device_run.sh): binaries and the CUDA Kokkos library into .device/, and
# what benchmarks/gpu/gpu_train_speed.sh needs to build nep-train there
# (git-ignored by .gitignore; carried with `carry: [".device"]`, 64 MiB at most).
# With NEP_CUDA_LAMMPS=1 also the CUDA LAMMPS (tools/cuda_lammps.sh) and its nepplugin.so, stripped
# and xz-compressed into .device/lammps.tar.xz (liblammps.so is ~80 MB raw).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../tools/common.sh"
# one CUDA build: build-cuda-lammps/ holds the same binaries as build-cuda/ plus nepplugin.so
"$here/../../tools/cuda_build.sh" >/dev/null
nep_cuda_arch
bdir=build-cuda
[ "${NEP_CUDA_LAMMPS:-0}" = 1 ] && bdir=build-cuda-lammps
bdir=${NEP_CUDA_BUILD_DIR:-$bdir$NEP_CUDA_BUILD_SUFFIX}
cd "$NEP_REPO"
rm -rf .device && mkdir -p .device/bin .device/lib
cp $bdir/tests/test_reference $bdir/tests/test_physics $bdir/tests/test_descriptor $bdir/tests/test_device_gradient \
  $bdir/benchmarks/bench_core $bdir/nep-predict .device/bin/
kokkos=$LAMMPS_NEP_CACHE/kokkos-3.4.01-cuda-$NEP_CUDA_ARCH
cp -a "$kokkos"/lib/*.so* .device/lib/
# for gpu_train_speed.sh (nep-train built on the device against its Python torch): the CUDA core (and its data library
# and the trainer's CUDA kernels, libnep_train_kernels.a), the CUDA Kokkos install (headers, CMake
# files, nvcc_wrapper) and libhdf5 with the libraries it needs that are not the C runtime
cp $bdir/libnep_core.a $bdir/libnep_data.a $bdir/libnep_train_kernels.a .device/lib/
cp -a "$kokkos" .device/kokkos
# (compressed, own folder: only nep-train's runs put it on LD_LIBRARY_PATH, not Python's)
mkdir -p .device/hdf5lib
hdf5=$(ldd $bdir/nep-frames | awk '$1 ~ /^libhdf5/ { print $3 }')
cp -L "$hdf5" .device/hdf5lib/
ldd "$hdf5" | awk '$3 ~ /^\// { print $3 }' |
  grep -Ev '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libz)\.so' |
  while read -r lib; do cp -L "$lib" .device/hdf5lib/; done
tar -C .device -cJf .device/hdf5lib.tar.xz hdf5lib && rm -rf .device/hdf5lib  # 20 MB raw
if [ "${NEP_CUDA_LAMMPS:-0}" = 1 ]; then
  lmp_prefix=$LAMMPS_NEP_CACHE/lammps-20220106-k3.4.01-cuda-$NEP_CUDA_ARCH
  t=$(mktemp -d)
  mkdir -p "$t/bin" "$t/lib"
  cp "$lmp_prefix/bin/lmp" "$t/bin/"
  cp -a "$lmp_prefix"/lib/liblammps.so* "$t/lib/"
  cp $bdir/nepplugin.so "$t/"
  # fix nep/train's library (loaded by nepplugin.so when a deck uses the fix), when built
  plugin_files=(nepplugin.so)
  [ -f "$bdir/nepplugin_train.so" ] && cp "$bdir/nepplugin_train.so" "$t/" && plugin_files+=(nepplugin_train.so)
  # libraries of Debian's LAMMPS build the device image may lack (libjpeg, libpng, ...); not the C
  # runtime, zlib, CUDA or Kokkos (staged above)
  ldd "$lmp_prefix/lib/liblammps.so.0" | awk '$3 ~ /^\// { print $3 }' |
    grep -Ev '/(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s|libz|libcudart|libkokkos[a-z]*)\.so' |
    while read -r lib; do cp -L "$lib" "$t/lib/"; done
  strip --strip-unneeded "$t/bin/lmp" "$t"/lib/liblammps.so.* "${plugin_files[@]/#/$t/}" 2>/dev/null || true
  tar -C "$t" -cJf .device/lammps.tar.xz bin lib "${plugin_files[@]}"
  rm -rf "$t"
fi
du -sh .device
