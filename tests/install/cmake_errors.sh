#!/usr/bin/env bash
# Configuring the plugin against a LAMMPS it cannot use stops with a message that says what to do:
# LAMMPS not found; a static liblammps; a liblammps without the PLUGIN package (stand-ins: CMake
# package files of a LAMMPS of our own making, the second pointing at a shared library that has no
# plugin_load, the C library's libm); a LAMMPS source folder without lammpsplugin.h.
# usage: cmake_errors.sh REPO WORK_DIR KOKKOS_DIR LAMMPS_DIR(a real one, lib/cmake/LAMMPS)
set -uo pipefail
repo=$1 work=$2 kokkos=$3 lammps=$4
rm -rf "$work" && mkdir -p "$work"
failed=0
expect() {  # NAME MESSAGE CMAKE_ARGS...: configuring must fail with MESSAGE
  local name=$1 want=$2 out
  shift 2
  out=$(cmake -S "$repo" -B "$work/$name" -G Ninja -DKokkos_DIR="$kokkos" -DNEP_BUILD_TRAINER=OFF -DNEP_BUILD_DATA=OFF \
        -DNEP_BUILD_TESTS=OFF -DNEP_BUILD_BENCHMARKS=OFF "$@" 2>&1)
  if [ $? -ne 0 ] && grep -qF "$want" <<< "$(tr -s ' \n' ' ' <<< "$out")"; then
    echo "ok   $name: $want"
  else
    echo "FAIL $name: no '$want' in:"; echo "$out" | tail -n 15; failed=$((failed + 1))
  fi
}
fake() {  # DIR TYPE LIBRARY: a LAMMPSConfig.cmake whose LAMMPS::lammps is an imported TYPE library
  mkdir -p "$1"
  printf 'add_library(LAMMPS::lammps %s IMPORTED)\nset_target_properties(LAMMPS::lammps PROPERTIES IMPORTED_LOCATION "%s")\n' \
    "$2" "$3" > "$1/LAMMPSConfig.cmake"
  printf 'set(PACKAGE_VERSION 20250204)\nset(PACKAGE_VERSION_COMPATIBLE TRUE)\n' > "$1/LAMMPSConfigVersion.cmake"
}
libm=$(gcc -print-file-name=libm.so.6)
fake "$work/static/lib/cmake/LAMMPS" STATIC /usr/lib/x86_64-linux-gnu/libm.a
fake "$work/noplugin/lib/cmake/LAMMPS" SHARED "$libm"
expect not_found "LAMMPS not found" -DLAMMPS_DIR="$work/nowhere"
expect static "the plugin needs LAMMPS built with -D BUILD_SHARED_LIBS=on" -DLAMMPS_DIR="$work/static/lib/cmake/LAMMPS"
expect no_plugin_package "was built without the PLUGIN package" -DLAMMPS_DIR="$work/noplugin/lib/cmake/LAMMPS"
expect no_lammps_source "has no lammpsplugin.h" -DLAMMPS_DIR="$lammps" -DNEP_LAMMPS_SOURCE_DIR="$work/nowhere"
echo "cmake errors: $failed failed"
[ $failed = 0 ]
