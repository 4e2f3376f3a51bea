#!/usr/bin/env bash
# Checks of the set-up helpers in tools/common.sh that choose how the GPU builds are made:
# nep_cuda_arch (architecture names -> Kokkos option, -arch, extra SASS, build folder) and
# torch_cmake_args (LibTorch CPU libraries named directly; C++20 only where the headers demand it);
# and where nep_lammps_potential finds LAMMPS's potential files.
set -u
. "$(dirname "$0")/../../tools/common.sh"
fails=0
check() {  # check WHAT GOT WANT
  if [ "$2" != "$3" ]; then echo "FAIL $1: got '$2', want '$3'"; fails=$((fails + 1)); else echo "ok   $1"; fi
}
unset NEP_CUDA_GENCODE
NEP_CUDA_ARCH=HOPPER90; nep_cuda_arch
check "HOPPER90 Kokkos option" "$NEP_CUDA_KOKKOS_ARCH" AMPERE80
check "HOPPER90 -arch" "$NEP_CUDA_SM" 80
check "HOPPER90 extra SASS" "$NEP_CUDA_EXTRA" "-gencode arch=compute_90,code=sm_90"
check "HOPPER90 build folder" "$NEP_CUDA_BUILD_SUFFIX" -hopper90
NEP_CUDA_ARCH=""; nep_cuda_arch
check "default arch" "$NEP_CUDA_ARCH" AMPERE80
check "AMPERE80 extra SASS (Kokkos, LAMMPS)" "$NEP_CUDA_EXTRA" ""
check "AMPERE80 core extra SASS" "$NEP_CUDA_CORE_EXTRA" "-gencode arch=compute_90,code=sm_90"
check "AMPERE80 build folder" "$NEP_CUDA_BUILD_SUFFIX" ""
NEP_CUDA_ARCH=AMPERE86; nep_cuda_arch
check "AMPERE86 -arch" "$NEP_CUDA_SM" 86
msg=$(NEP_CUDA_ARCH=BLACKWELL100 nep_cuda_arch 2>&1)
check "unknown arch refused" "$?" 2
case $msg in *"use HOPPER90"*) echo "ok   unknown arch message";; *) echo "FAIL unknown arch message: $msg"; fails=$((fails + 1));; esac
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/old/c10/macros" "$t/new/c10/macros" "$t/new/api"
echo '#error C++17 or later compatible compiler is required to use PyTorch.' > "$t/old/c10/macros/Macros.h"
echo '#error C++20 or later compatible compiler is required to use ATen.' > "$t/new/c10/macros/Macros.h"
mapfile -t a < <(torch_cmake_args "/x/libtorch_cpu.so;/x/libc10.so" "$t/old")
check "LibTorch libraries" "${a[0]}" "-DNEP_TORCH_LIBRARIES=/x/libtorch_cpu.so;/x/libc10.so"
check "C++17 LibTorch: no extra flag" "${a[2]}" "-DNEP_TORCH_CXX_FLAGS="
mapfile -t a < <(torch_cmake_args "/x/libtorch_cpu.so" "$t/new/api;$t/new")
check "C++20 LibTorch: -std=c++20" "${a[2]}" "-DNEP_TORCH_CXX_FLAGS=-std=c++20"
# nep_lammps_potential (and tests/harness.py's lammps_potential, which must find the same file): a
# LAMMPS prefix of lammps_install's layout, LAMMPS's own layout, LAMMPS_POTENTIALS first, a clear miss
mkdir -p "$t/kk/bin" "$t/kk/share/lammps-src/potentials" "$t/own/bin" "$t/own/share/lammps/potentials" "$t/mine"
touch "$t/kk/bin/lmp" "$t/own/bin/lmp" "$t/kk/share/lammps-src/potentials/Si.sw" "$t/own/share/lammps/potentials/Si.sw" "$t/mine/Si.sw"
py_potential() {  # LMP NAME: what tests/harness.py finds
  python3 -c 'import sys; sys.path.insert(0, sys.argv[1]); import harness; print(harness.lammps_potential(sys.argv[2], sys.argv[3]))' \
    "$(dirname "$0")/.." "$1" "$2" 2>&1
}
check "potential in share/lammps-src" "$(LMP=$t/kk/bin/lmp nep_lammps_potential Si.sw)" "$t/kk/share/lammps-src/potentials/Si.sw"
check "potential in share/lammps" "$(LMP=$t/own/bin/lmp nep_lammps_potential Si.sw)" "$t/own/share/lammps/potentials/Si.sw"
check "LAMMPS_POTENTIALS first" "$(LAMMPS_POTENTIALS=$t/mine LMP=$t/kk/bin/lmp nep_lammps_potential Si.sw)" "$t/mine/Si.sw"
check "harness: share/lammps-src" "$(py_potential "$t/kk/bin/lmp" Si.sw)" "$t/kk/share/lammps-src/potentials/Si.sw"
check "harness: share/lammps" "$(py_potential "$t/own/bin/lmp" Si.sw)" "$t/own/share/lammps/potentials/Si.sw"
check "harness: LAMMPS_POTENTIALS first" "$(LAMMPS_POTENTIALS=$t/mine py_potential "$t/kk/bin/lmp" Si.sw)" "$t/mine/Si.sw"
msg=$(LMP=$t/kk/bin/lmp nep_lammps_potential Nope.sw 2>&1)
check "missing potential refused" "$?" 1
case $msg in *"Nope.sw not found in $t/kk/share/lammps-src/potentials"*"LAMMPS_POTENTIALS"*) echo "ok   missing potential message";;
  *) echo "FAIL missing potential message: $msg"; fails=$((fails + 1));; esac
case $(py_potential "$t/kk/bin/lmp" Nope.sw) in *"FileNotFoundError: LAMMPS potential Nope.sw not found in $t/kk/share/lammps-src/potentials"*)
  echo "ok   harness: missing potential message";; *) echo "FAIL harness: missing potential message"; fails=$((fails + 1));; esac
[ "$fails" = 0 ] && echo "tool_checks: all passed" || { echo "tool_checks: $fails failed"; exit 1; }
