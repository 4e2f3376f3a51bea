#!/usr/bin/env bash
# Build the core and the unit tests with AddressSanitizer + UndefinedBehaviorSanitizer (and
# LeakSanitizer, part of ASan on Linux) into build-asan/ and run them.
# Not covered: the LAMMPS-level tests (they load the plugin into an uninstrumented lmp) and the
# Kokkos library itself (uninstrumented; its allocations are still checked at our boundaries).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
"$here/deps.sh" --no-lammps
build=${NEP_ASAN_BUILD_DIR:-$NEP_REPO/build-asan}
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
if [ ! -f "$build/build.ninja" ]; then
  cmake -S "$NEP_REPO" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKokkos_DIR="$NEP_KOKKOS_DIR" \
    -DNEP_BUILD_PLUGIN=OFF -DNEP_BUILD_BENCHMARKS=OFF -DNEP_NATIVE=OFF \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
fi
cmake --build "$build" -j "${NEP_JOBS:-$(nproc)}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
cd "$build" && ctest --output-on-failure -j "${NEP_JOBS:-$(nproc)}" "$@"
