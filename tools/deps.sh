#!/usr/bin/env bash
# Set up everything lammps-nep needs, idempotently.
#   - Debian packages (only those missing are installed)
#   - Kokkos 3.4.01 (Serial + OpenMP, shared) from Debian's trilinos source package
#   - LAMMPS 7Jan2022 (Debian 20220106 snapshot) with PLUGIN, KOKKOS (external), MANYBODY, KSPACE, MPI, OpenMP, shared
#   - with --lammps V (V = 20250204, 20260704; repeatable): that LAMMPS release instead, from Debian's
#     pinned tarball (tools/lammps_sources.sh), with PLUGIN, MANYBODY, KSPACE, MPI, OpenMP, shared, no KOKKOS
# Everything built goes to a version-keyed cache outside the repo:
#   ${LAMMPS_NEP_CACHE:-~/.cache/lammps-nep}/{kokkos-3.4.01-omp,lammps-20220106-k3.4.01-omp-ks,lammps-V-nokk-ks}
# A second call is a no-op (stamp files). Users with their own builds set Kokkos_DIR / LAMMPS_DIR and
# the corresponding step is skipped.
# Usage: tools/deps.sh [--no-lammps] [--lammps V]...   (tools/env.sh exports the resulting paths)
set -euo pipefail
. "$(cd "$(dirname "$0")" && pwd)/common.sh"   # lammps_install
CACHE=${LAMMPS_NEP_CACHE:-$HOME/.cache/lammps-nep}
JOBS=${NEP_JOBS:-$(nproc)}
KOKKOS_VER=3.4.01
LAMMPS_VER=20220106
KOKKOS_PREFIX=$CACHE/kokkos-$KOKKOS_VER-omp
want_lammps=1 versions=()
while [ $# -gt 0 ]; do
  case $1 in
    --no-lammps) want_lammps=0 ;;
    --lammps) [[ " $NEP_LAMMPS_NEWER 20220106 " == *" ${2:-none} "* ]] ||
                { echo "deps.sh: --lammps takes one of 20220106 $NEP_LAMMPS_NEWER" >&2; exit 2; }
              versions+=("$2"); shift ;;
    *) echo "deps.sh: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
[ ${#versions[@]} -gt 0 ] || versions=(20220106)
log() { echo "[deps] $*" >&2; }
# watch_build LOG WHAT &: every 60 s, "[deps] WHAT: n/m steps, about X min left" from ninja's [n/m]
# lines in LOG (time left extrapolated from the time so far); stop_watch ends it (also on exit)
watch_build() {
  local log=$1 what=$2 t0=$SECONDS nm n m
  trap 'kill $! 2>/dev/null; exit 0' TERM
  while true; do
    sleep 60 & wait $!
    nm=$(grep -ao '^\[[0-9]*/[0-9]*\]' "$log" 2>/dev/null | tail -n 1 | tr -d '[]') || true
    [ -n "$nm" ] || continue
    n=${nm%/*} m=${nm#*/}
    if [ "$n" -gt 0 ]; then log "$what: $n/$m steps, about $(( (SECONDS - t0) * (m - n) / n / 60 + 1 )) min left"; fi
  done
}
watcher=""
stop_watch() { if [ -n "$watcher" ]; then kill "$watcher" 2>/dev/null || true; wait "$watcher" 2>/dev/null || true; watcher=""; fi; }
trap stop_watch EXIT
mkdir -p "$CACHE/src"

# ---- 1. Debian packages -------------------------------------------------------------------------
PKGS=(g++ cmake ninja-build make dpkg-dev libopenmpi-dev openmpi-bin libgtest-dev libhdf5-dev libtorch-dev python3
      python3-matplotlib python3-numpy chromium   # nep-report's figures; chromium: its page-render test
      quantum-espresso quantum-espresso-data python3-ase   # pair_style ipi's clients: pw.x, ASE's SocketClient
      libopenblas0-serial)   # BLAS for pw.x: Si64 SCF 15 s instead of 85 s with the reference BLAS (no threads)
missing=()
for p in "${PKGS[@]}"; do grep -q 'ok installed' <<< "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" || missing+=("$p"); done
if [ ${#missing[@]} -gt 0 ]; then
  log "installing: ${missing[*]} (apt-get; a few minutes on a fresh machine)"
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

enable_deb_src() {
  local f=/etc/apt/sources.list.d/debian.sources
  if [ -f $f ] && ! grep -q '^Types:.*deb-src' $f; then
    log "enabling deb-src in $f"
    local SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
    $SUDO sed -i 's/^Types: deb$/Types: deb deb-src/' $f
    $SUDO apt-get update -qq
  fi
}

# fetch_source PKG VERSION: unpack bookworm's source package PKG (its upstream version starts with
# VERSION) into $CACHE/src and print its dir
fetch_source() {
  local pkg=$1 dir
  dir=$(ls -d "$CACHE/src/$pkg-$2"*/ 2>/dev/null | head -n1 || true)
  if [ -z "$dir" ]; then
    enable_deb_src
    log "apt-get source $pkg"
    (cd "$CACHE/src" && apt-get source -qq "$pkg" >/dev/null 2>&1) || { log "apt-get source $pkg failed"; exit 1; }
    dir=$(ls -d "$CACHE/src/$pkg-$2"*/ | head -n1)
  fi
  echo "${dir%/}"
}

# ---- 2. Kokkos ----------------------------------------------------------------------------------
if [ -z "${Kokkos_DIR:-}" ] && [ ! -f "$KOKKOS_PREFIX/.stamp" ]; then
  src=$CACHE/src/kokkos-$KOKKOS_VER
  if [ ! -f "$src/CMakeLists.txt" ]; then
    # keep only packages/kokkos of the (1.4 GB) trilinos source tree
    tri=$(fetch_source trilinos "")
    rm -rf "$src" && cp -r "$tri/packages/kokkos" "$src"
    rm -rf "$tri" "$CACHE"/src/trilinos_*
  fi
  grep -q "Kokkos_VERSION_PATCH 01" "$src/CMakeLists.txt" 2>/dev/null || log "warning: expected Kokkos $KOKKOS_VER in $src"
  klog=$KOKKOS_PREFIX.log
  log "building Kokkos $KOKKOS_VER -> $KOKKOS_PREFIX (about $(( 4 / JOBS + 1 )) min on $JOBS cores; log: $klog)"
  rm -rf "$CACHE/build-kokkos"
  watch_build "$klog" "Kokkos" & watcher=$!
  if ! { cmake -S "$src" -B "$CACHE/build-kokkos" -G Ninja -DCMAKE_BUILD_TYPE=Release \
           -DCMAKE_INSTALL_PREFIX="$KOKKOS_PREFIX" -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON \
           -DKokkos_ENABLE_SERIAL=ON -DKokkos_ENABLE_OPENMP=ON -DKokkos_ENABLE_TESTS=OFF &&
         cmake --build "$CACHE/build-kokkos" -j "$JOBS" && cmake --install "$CACHE/build-kokkos"; } > "$klog" 2>&1; then
    stop_watch
    tail -n 40 "$klog" >&2
    log "building Kokkos failed (log: $klog)"
    exit 1
  fi
  stop_watch
  rm -rf "$CACHE/build-kokkos"
  touch "$KOKKOS_PREFIX/.stamp"
fi
KOKKOS_DIR_USE=${Kokkos_DIR:-$KOKKOS_PREFIX/lib/cmake/Kokkos}

# ---- 3. LAMMPS ----------------------------------------------------------------------------------
[ $want_lammps = 1 ] && [ -z "${LAMMPS_DIR:-}" ] || exit 0
for v in "${versions[@]}"; do
  prefix=$(nep_lammps_prefix "$v")
  [ -f "$prefix/.stamp" ] && continue
  if [ "$v" = $LAMMPS_VER ]; then
    src=$(fetch_source lammps $LAMMPS_VER)
    log "building LAMMPS $v -> $prefix (about $(( 20 / JOBS )) min on $JOBS cores: 10 min measured on 2 free ones; log: $prefix.log)"
    args=("${NEP_LAMMPS_KOKKOS_ARGS[@]}" -DBUILD_MPI=ON -DBUILD_OMP=ON -DKokkos_DIR="$KOKKOS_DIR_USE")
  else
    src=$("$NEP_REPO/tools/lammps_sources.sh" "$v")
    log "building LAMMPS $v without KOKKOS -> $prefix (about $(( 14 / JOBS )) min on $JOBS cores: 6-7 min measured on 2 free ones; log: $prefix.log)"
    args=(-DPKG_KOKKOS=OFF -DBUILD_MPI=ON -DBUILD_OMP=ON)
  fi
  watch_build "$prefix.log" "LAMMPS $v" & watcher=$!
  status=0
  lammps_install "$src" "$CACHE/build-lammps-$v" "$prefix" "${args[@]}" || status=$?
  stop_watch
  [ $status = 0 ] || exit $status
  log "LAMMPS $v built"
done
exit 0
