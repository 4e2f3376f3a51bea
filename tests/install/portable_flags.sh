#!/usr/bin/env bash
# A default build runs on any x86-64 (a cluster's login node builds, its compute nodes run): no
# -march=native unless NEP_NATIVE=ON asks for it (issue #17). Configures the core alone twice and
# reads the compile commands ninja would run.
# usage: portable_flags.sh REPO WORK_DIR KOKKOS_DIR
set -uo pipefail
repo=$1 work=$2 kokkos=$3
rm -rf "$work" && mkdir -p "$work"
failed=0
native_in() {  # NAME CMAKE_ARGS...: prints how many of nep_core's compile commands carry -march=native
  local name=$1
  shift
  cmake -S "$repo" -B "$work/$name" -G Ninja -DKokkos_DIR="$kokkos" -DNEP_BUILD_PLUGIN=OFF -DNEP_BUILD_TRAINER=OFF \
    -DNEP_BUILD_DATA=OFF -DNEP_BUILD_TESTS=OFF -DNEP_BUILD_BENCHMARKS=OFF "$@" > "$work/$name.log" 2>&1 ||
    { echo "FAIL $name: configure failed ($work/$name.log)" >&2; echo -1; return; }
  ninja -C "$work/$name" -t commands nep_core | grep -c -- '-march=native'
}
n=$(native_in default)
if [ "$n" = 0 ]; then echo "ok   default build: no -march=native"; else echo "FAIL default build: $n commands with -march=native"; failed=$((failed + 1)); fi
n=$(native_in native -DNEP_NATIVE=ON)
if [ "$n" -gt 0 ] 2>/dev/null; then echo "ok   NEP_NATIVE=ON: -march=native on $n commands"; else echo "FAIL NEP_NATIVE=ON: no -march=native"; failed=$((failed + 1)); fi
echo "build flags: $failed failed"
[ $failed = 0 ]
