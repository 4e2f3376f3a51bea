#!/usr/bin/env bash
# Sanitizer runs of the test suite.
#
#   tools/sanitize.sh [asan] [CTEST ARGS]   AddressSanitizer + UndefinedBehaviorSanitizer (+ LeakSanitizer)
#   tools/sanitize.sh tsan [CTEST ARGS]     ThreadSanitizer, on a Serial-only Kokkos built with TSan
#
# asan: builds the core, the trainer, the LAMMPS plugin and every test into build-asan/ and runs the
# whole ctest suite there. The LAMMPS-level tests run the uninstrumented lmp (through Python and
# mpirun) with the instrumented plugin: the sanitizer runtimes are preloaded into those processes
# and leak checking is off there (LAMMPS, Open MPI and Python free nothing at exit); the unit tests
# and nep-train run with leak checking on (tools/lsan.supp: what Open MPI keeps until exit).
# LibTorch, HDF5, Open MPI and Kokkos are used uninstrumented.
#
# tsan: fix nep/train runs MD on the main thread and training rounds on a second one. With Kokkos
# 3.4 the Serial backend keeps process-wide reduction scratch, so the two threads must never both
# reduce through it; this mode shows they do not. Kokkos 3.4.01 itself is built Serial-only with
# -fsanitize=thread (cached: kokkos-3.4.01-serial-tsan), so its internals are watched too, and the
# core, the trainer and the tests are built against it into build-tsan/. It runs the tests where
# two threads meet (test_concurrency: MD-thread evaluations beside a round, a committee's models side
# by side; test_otf_buffer) with
# one OpenMP thread each (libgomp is not TSan-aware: its own barriers would read as races). TSan reports make a test fail (exit code 66). With NEP_TSAN_LAMMPS=<LAMMPS prefix>
# of a LAMMPS built without the KOKKOS package (tools/deps.sh --lammps 20250204), the plugin is
# built too and fix nep/train's LAMMPS-level tests (passive mode, kill -9) run with the TSan runtime
# preloaded into lmp (tools/tsan.supp: Open MPI's PMIx); their training-threads-2 runs are skipped there.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
mode=asan
case ${1:-} in asan|tsan) mode=$1; shift;; esac
"$here/deps.sh"
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false

if [ "$mode" = asan ]; then
  build=${NEP_ASAN_BUILD_DIR:-$NEP_REPO/build-asan}
  flags="-fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=undefined"
  preload="$(g++ -print-file-name=libasan.so):$(g++ -print-file-name=libubsan.so)"
  lmp_env="LD_PRELOAD=$preload;ASAN_OPTIONS=detect_leaks=0:abort_on_error=1;LSAN_OPTIONS=detect_leaks=0;UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
  # (re)configured every time, so a changed test environment reaches an existing build folder
  cmake -S "$NEP_REPO" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKokkos_DIR="$NEP_KOKKOS_DIR" \
    -DLAMMPS_DIR="$NEP_LAMMPS_DIR/lib/cmake/LAMMPS" -DNEP_BUILD_BENCHMARKS=OFF -DNEP_NATIVE=OFF -DNEP_TEST_TIMEOUT_FACTOR=3 \
    -DNEP_LMP_TEST_ENV="$lmp_env" \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined" \
    -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=address,undefined" >/dev/null
  cmake --build "$build" -j "${NEP_JOBS:-$(nproc)}"
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  export LSAN_OPTIONS=suppressions=$here/lsan.supp:fast_unwind_on_malloc=0
  cd "$build" && ctest --output-on-failure -j "${NEP_JOBS:-$(nproc)}" "$@"
  exit
fi

# ---- tsan ----
flags="-fsanitize=thread -fno-omit-frame-pointer -g"
kokkos=$LAMMPS_NEP_CACHE/kokkos-3.4.01-serial-tsan
if [ ! -f "$kokkos/.stamp" ]; then
  src=$LAMMPS_NEP_CACHE/src/kokkos-3.4.01
  [ -f "$src/CMakeLists.txt" ] || { echo "sanitize.sh: no Kokkos source in $src (run tools/deps.sh)" >&2; exit 1; }
  echo "[sanitize] building Kokkos 3.4.01 (Serial only, ThreadSanitizer) -> $kokkos (a few minutes)" >&2
  rm -rf "$LAMMPS_NEP_CACHE/build-kokkos-tsan"
  cmake -S "$src" -B "$LAMMPS_NEP_CACHE/build-kokkos-tsan" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_INSTALL_PREFIX="$kokkos" -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -DKokkos_ENABLE_SERIAL=ON \
    -DKokkos_ENABLE_OPENMP=OFF -DKokkos_ENABLE_TESTS=OFF -DCMAKE_CXX_FLAGS="$flags" >/dev/null
  cmake --build "$LAMMPS_NEP_CACHE/build-kokkos-tsan" -j "${NEP_JOBS:-$(nproc)}" >/dev/null
  cmake --install "$LAMMPS_NEP_CACHE/build-kokkos-tsan" >/dev/null
  rm -rf "$LAMMPS_NEP_CACHE/build-kokkos-tsan"
  touch "$kokkos/.stamp"
fi
build=${NEP_TSAN_BUILD_DIR:-$NEP_REPO/build-tsan}
plugin=(-DNEP_BUILD_PLUGIN=OFF)
tests=(-R "^(test_concurrency|test_otf_buffer)$")
lmp_env="TSAN_OPTIONS=halt_on_error=1:exitcode=66:suppressions=$here/tsan.supp"
if [ -n "${NEP_TSAN_LAMMPS:-}" ]; then
  # the TSan runtime goes into lmp alone, through a wrapper (preloaded into the test scripts'
  # Python, pyenv's shim crashes at start)
  mkdir -p "$build"
  printf '#!/bin/sh\nLD_PRELOAD=%s exec %s "$@"\n' "$(g++ -print-file-name=libtsan.so)" "$NEP_TSAN_LAMMPS/bin/lmp" > "$build/lmp-tsan"
  chmod +x "$build/lmp-tsan"
  plugin=(-DNEP_BUILD_PLUGIN=ON -DNEP_PLUGIN_KOKKOS=OFF -DLAMMPS_DIR="$NEP_TSAN_LAMMPS/lib/cmake/LAMMPS"
          -DNEP_LMP_BINARY="$build/lmp-tsan")
  tests=(-R "^(test_concurrency|test_otf_buffer|lmp_fix_nep_train|lmp_fix_nep_train_kill)$")
fi
cmake -S "$NEP_REPO" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKokkos_DIR="$kokkos/lib/cmake/Kokkos" \
  "${plugin[@]}" -DNEP_BUILD_BENCHMARKS=OFF -DNEP_NATIVE=OFF -DNEP_TEST_TIMEOUT_FACTOR=3 -DNEP_LMP_TEST_ENV="$lmp_env;NEP_TSAN=1" \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_C_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=thread" \
  -DCMAKE_SHARED_LINKER_FLAGS="-fsanitize=thread" >/dev/null
cmake --build "$build" -j "${NEP_JOBS:-$(nproc)}"
export TSAN_OPTIONS="halt_on_error=1:exitcode=66:second_deadlock_stack=1:suppressions=$here/tsan.supp" OMP_NUM_THREADS=1 NEP_TSAN=1
cd "$build" && ctest --output-on-failure -j 1 "${tests[@]}" "$@"
