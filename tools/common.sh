# Shared settings for the tools/ scripts (sourced, not run).
NEP_REPO=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
LAMMPS_NEP_CACHE=${LAMMPS_NEP_CACHE:-$HOME/.cache/lammps-nep}
NEP_KOKKOS_PREFIX=$LAMMPS_NEP_CACHE/kokkos-3.4.01-omp
# LAMMPS builds are keyed by version and package set (-ks: KSPACE, for the charge models' ewald/pppm)
NEP_LAMMPS_PREFIX=$LAMMPS_NEP_CACHE/lammps-20220106-k3.4.01-omp-ks
NEP_BUILD_DIR=${NEP_BUILD_DIR:-$NEP_REPO/build}
NEP_KOKKOS_DIR=${Kokkos_DIR:-$NEP_KOKKOS_PREFIX/lib/cmake/Kokkos}
NEP_LAMMPS_DIR=${LAMMPS_DIR:-$NEP_LAMMPS_PREFIX}   # a LAMMPS install prefix (bin/lmp, lib/cmake/LAMMPS)
# LAMMPS releases of the version matrix besides 7Jan2022 (built without KOKKOS by tools/deps.sh --lammps V)
NEP_LAMMPS_NEWER="20250204 20260704"

# nep_lammps_prefix VERSION: the cached LAMMPS install of that release (yyyymmdd)
nep_lammps_prefix() {
  case $1 in
    20220106) echo "$NEP_LAMMPS_PREFIX" ;;
    *) echo "$LAMMPS_NEP_CACHE/lammps-$1-nokk-ks" ;;
  esac
}

# nep_outdir DIR: makes DIR (and its parents) and prints its absolute path
nep_outdir() { mkdir -p "$1" && (cd "$1" && pwd); }

# nep_lammps_potential NAME: the path of LAMMPS's potential file NAME (e.g. Si.sw): in
# $LAMMPS_POTENTIALS when set, else in the potentials folder of the LAMMPS that runs ($LMP, else
# $NEP_LAMMPS_DIR/bin/lmp): share/lammps-src/potentials (kept there by lammps_install) or
# share/lammps/potentials (LAMMPS's own install). Status 1, with the folders searched, when none has
# it. tests/harness.py's lammps_potential looks in the same places.
nep_lammps_potential() {
  local lmp prefix d
  lmp=$(command -v "${LMP:-$NEP_LAMMPS_DIR/bin/lmp}" || echo "${LMP:-$NEP_LAMMPS_DIR/bin/lmp}")
  prefix=$(dirname "$(dirname "$(readlink -f "$lmp")")")
  for d in ${LAMMPS_POTENTIALS:+"$LAMMPS_POTENTIALS"} "$prefix/share/lammps-src/potentials" "$prefix/share/lammps/potentials"; do
    if [ -f "$d/$1" ]; then echo "$d/$1"; return 0; fi
  done
  echo "nep_lammps_potential: $1 not found in ${LAMMPS_POTENTIALS:+$LAMMPS_POTENTIALS, }$prefix/share/lammps-src/potentials" \
       "or $prefix/share/lammps/potentials (set LAMMPS_POTENTIALS to the folder that holds it)" >&2
  return 1
}

# nep_build: configure (once) and build lammps-nep into $NEP_BUILD_DIR. These scripts build for the
# machine they run on: -DNEP_NATIVE=ON (-march=native; CMake's own default is a portable build),
# NEP_NATIVE=OFF in the environment for a build that runs on any x86-64.
nep_build() {
  if [ ! -f "$NEP_BUILD_DIR/build.ninja" ]; then
    cmake -S "$NEP_REPO" -B "$NEP_BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DNEP_NATIVE="${NEP_NATIVE:-ON}" \
      -DKokkos_DIR="$NEP_KOKKOS_DIR" -DLAMMPS_DIR="$NEP_LAMMPS_DIR/lib/cmake/LAMMPS" "$@" >/dev/null
  fi
  cmake --build "$NEP_BUILD_DIR" -j "${NEP_JOBS:-$(nproc)}"
}

# lammps_install SRC BUILD PREFIX [CMAKE_ARGS...]: configure, build and install LAMMPS (PLUGIN,
# MANYBODY, KSPACE, shared libs; further packages such as KOKKOS through CMAKE_ARGS) from its source tree SRC
# through BUILD into PREFIX; keep LAMMPS's src/ (and potentials/) beside the install for the plugin
# build; remove BUILD and stamp PREFIX. Compiler output goes to PREFIX.log, whose end is shown if the
# build fails.
# the 7Jan2022 builds (CPU and CUDA): exceptions (an option until 2Aug2023), KOKKOS on our own Kokkos
NEP_LAMMPS_KOKKOS_ARGS=(-DLAMMPS_EXCEPTIONS=ON -DPKG_KOKKOS=ON -DEXTERNAL_KOKKOS=ON)
lammps_install() {
  local src=$1 build=$2 prefix=$3 log=$3.log
  shift 3
  rm -rf "$build"
  if ! { cmake -S "$src/cmake" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
           -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -DPKG_PLUGIN=ON -DPKG_MANYBODY=ON -DPKG_KSPACE=ON \
           -DBUILD_DOC=OFF -DBUILD_TOOLS=OFF "$@" &&
         cmake --build "$build" -j "${NEP_JOBS:-$(nproc)}" && cmake --install "$build"; } > "$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "lammps_install: building LAMMPS into $prefix failed (log: $log)" >&2
    return 1
  fi
  mkdir -p "$prefix/share/lammps-src"
  cp -r "$src/src" "$prefix/share/lammps-src/"
  cp -r "$src/potentials" "$prefix/share/lammps-src/" 2>/dev/null || true
  rm -rf "$build"
  touch "$prefix/.stamp"
}

# torch_cmake_args LIBS INCLUDES: CMake arguments that link the trainer against LibTorch's CPU
# libraries named directly (LIBS, INCLUDES: ;-separated), bypassing find_package(Torch), whose files
# in a CUDA LibTorch want the CUDA toolkit's extras (cuDNN, NVTX, ...) that Adam on the host never
# uses. The one file that includes LibTorch gets -std=c++20 where the headers demand it (PyTorch 2.12+).
torch_cmake_args() {
  local std="" inc
  for inc in ${2//;/ }; do
    grep -rqs --include='*.h' "C++20 or later" "$inc/c10/macros" "$inc/ATen" "$inc/torch/all.h" && std=-std=c++20
  done
  printf '%s\n' "-DNEP_TORCH_LIBRARIES=$1" "-DNEP_TORCH_INCLUDE_DIRS=$2" "-DNEP_TORCH_CXX_FLAGS=$std"
}

# python_torch_cmake_args: torch_cmake_args for the LibTorch inside python3's torch package (the
# device machine's); fails (status 1, reason on stderr) without one, or when it uses the old C++ ABI
python_torch_cmake_args() {
  local info tdir abi tver
  info=$(python3 -c 'import os, torch; print(os.path.dirname(torch.__file__), int(torch._C._GLIBCXX_USE_CXX11_ABI), torch.__version__)' 2>/dev/null) ||
    { echo "python3 has no torch" >&2; return 1; }
  read -r tdir abi tver <<< "$info"
  [ "$abi" = 1 ] || { echo "torch $tver uses the old C++ ABI; this build uses the new one" >&2; return 1; }
  echo "LibTorch CPU libraries of Python torch $tver ($tdir)" >&2
  torch_cmake_args "$tdir/lib/libtorch_cpu.so;$tdir/lib/libc10.so" "$tdir/include;$tdir/include/torch/csrc/api/include"
}

# nep_cuda_arch: from NEP_CUDA_ARCH (default AMPERE80) set NEP_CUDA_KOKKOS_ARCH (Kokkos 3.4's
# architecture option), NEP_CUDA_SM (the -arch=sm_XX of every compile: SASS + that PTX) and
# NEP_CUDA_EXTRA (more SASS, through nvcc's NVCC_APPEND_FLAGS: nvcc_wrapper takes one -arch only).
# Kokkos 3.4 predates Hopper: HOPPER90 (H100/H200) builds Kokkos's AMPERE80 code paths for sm_80
# and sm_90 everywhere (Kokkos, LAMMPS, the core), so nothing waits for a PTX JIT on the GPU.
# The default AMPERE80 adds sm_90 SASS to the core alone (LAMMPS and Kokkos then JIT on Hopper).
nep_cuda_arch() {
  NEP_CUDA_ARCH=${NEP_CUDA_ARCH:-AMPERE80}
  local hopper="-gencode arch=compute_90,code=sm_90"
  case $NEP_CUDA_ARCH in
    HOPPER90) NEP_CUDA_KOKKOS_ARCH=AMPERE80 NEP_CUDA_SM=80 NEP_CUDA_EXTRA=$hopper ;;
    AMPERE80|AMPERE86|VOLTA70|TURING75)
      NEP_CUDA_KOKKOS_ARCH=$NEP_CUDA_ARCH NEP_CUDA_SM=${NEP_CUDA_ARCH//[!0-9]/} NEP_CUDA_EXTRA="" ;;
    *) echo "NEP_CUDA_ARCH=$NEP_CUDA_ARCH: use HOPPER90, AMPERE80, AMPERE86, TURING75 or VOLTA70" >&2; return 2 ;;
  esac
  NEP_CUDA_CORE_EXTRA=${NEP_CUDA_GENCODE:-$hopper}  # the core's extra SASS (default: sm_90)
  NEP_CUDA_BUILD_SUFFIX=""  # build folders: build-cuda[-lammps] for AMPERE80, else -<arch> added
  [ "$NEP_CUDA_ARCH" = AMPERE80 ] || NEP_CUDA_BUILD_SUFFIX=-$(echo "$NEP_CUDA_ARCH" | tr A-Z a-z)
}
