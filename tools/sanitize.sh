#!/usr/bin/env bash
# Build the core, the trainer, the LAMMPS plugin and every test with AddressSanitizer +
# UndefinedBehaviorSanitizer (LeakSanitizer is part of ASan on Linux) into build-asan/ and run the
# whole ctest suite there. Arguments go to ctest (e.g. -R test_frame_store).
# The LAMMPS-level tests run Debian's uninstrumented lmp (through Python and mpirun) with the
# instrumented plugin: the sanitizer runtimes are preloaded into those processes and leak checking
# is off there (LAMMPS, Open MPI and Python free nothing at exit); the unit tests and nep-train run
# with leak checking on (tools/lsan.supp: what Open MPI keeps until exit). LibTorch, HDF5, Open MPI
# and Kokkos are used uninstrumented.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
"$here/deps.sh"
build=${NEP_ASAN_BUILD_DIR:-$NEP_REPO/build-asan}
flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
preload="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libubsan.so)"
lmp_env="LD_PRELOAD=$preload;ASAN_OPTIONS=detect_leaks=0:abort_on_error=1;LSAN_OPTIONS=detect_leaks=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
# (re)configured every time, so a changed test environment reaches an existing build folder
cmake -S "$NEP_REPO" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKokkos_DIR="$NEP_KOKKOS_DIR" \
  -DLAMMPS_DIR="$NEP_LAMMPS_DIR/lib/cmake/LAMMPS" -DNEP_BUILD_BENCHMARKS=OFF -DNEP_NATIVE=OFF \
  -DNEP_LMP_TEST_ENV="$lmp_env" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
cmake --build "$build" -j "${NEP_JOBS:-$(nproc)}"
export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$here/lsan.supp:fast_unwind_on_malloc=0
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
cd "$build" && ctest --output-on-failure -j "${NEP_JOBS:-$(nproc)}" "$@"
