#!/usr/bin/env bash
# Stage the CUDA build for a device run: binaries and the CUDA Kokkos library into .device/
# (git-ignored through .git/info/exclude; carried with `carry: [".device"]`).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../../tools/common.sh"
"$here/../../tools/cuda_build.sh" >/dev/null
cd "$NEP_REPO"
grep -qx '/.device/' .git/info/exclude 2>/dev/null || echo '/.device/' >> .git/info/exclude
rm -rf .device && mkdir -p .device/bin .device/lib
cp build-cuda/tests/test_reference build-cuda/tests/test_physics build-cuda/tests/test_descriptor build-cuda/benchmarks/bench_core build-cuda/nep-predict .device/bin/
cp -a "$LAMMPS_NEP_CACHE"/kokkos-3.4.01-cuda-${NEP_CUDA_ARCH:-AMPERE80}/lib/*.so* .device/lib/
du -sh .device
