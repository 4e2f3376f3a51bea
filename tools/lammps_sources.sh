#!/usr/bin/env bash
# Fetch, verify and unpack pinned sources that the LAMMPS version matrix needs, from Debian's archive,
# through a private apt configuration (the system's apt configuration is left untouched):
#   tools/lammps_sources.sh 20250204         LAMMPS 4Feb2025 (trixie: lammps 20250204+dfsg.1-2)
#   tools/lammps_sources.sh 20260704         LAMMPS 4Jul2026 (sid:    lammps 20260704+dfsg-2)
#   tools/lammps_sources.sh kokkos5-headers  Kokkos 5.2.2 headers (sid: libkokkos-dev 5.2.2-2), for
#                                            compile checks only: its libraries need glibc >= 2.38
# and print the resulting folder: ${LAMMPS_NEP_CACHE:-~/.cache/lammps-nep}/src/lammps-VERSION (a
# LAMMPS tree with cmake/, src/, potentials/) or .../kokkos-5.2.2-headers (include/kokkos/).
# Debian serves these tarballs but not their .dsc files, so `apt-get source --download-only` ends with
# an error after the download: the tarball's pinned sha256 decides. A second call is a no-op (.stamp).
# LAMMPS 7Jan2022 comes through tools/deps.sh (bookworm's own source package).
set -euo pipefail
CACHE=${LAMMPS_NEP_CACHE:-$HOME/.cache/lammps-nep}
# the archive /etc/apt/sources.list.d/debian.sources names (override for a mirror)
ARCHIVE=${NEP_DEBIAN_ARCHIVE:-http://deb.debian.org/debian}
KEYRING=/usr/share/keyrings/debian-archive-keyring.gpg   # bookworm's; it holds trixie's and sid's keys
APTDIR=$CACHE/apt
log() { echo "[lammps_sources] $*" >&2; }

# ---- pinned versions: Debian version, suite, file, sha256 (from the archive's signed index, 2026-12-01)
case ${1:-} in
  20250204) kind=lammps deb_ver=20250204+dfsg.1-2 suite=trixie file=lammps_20250204+dfsg.1.orig.tar.xz
            sha=3671165bd52fad36734e0a9136c5bc5ecb225e03988f8c89aa13366a8b53b1c7 ;;
  20260704) kind=lammps deb_ver=20260704+dfsg-2 suite=sid file=lammps_20260704+dfsg.orig.tar.gz
            sha=cddbc45a047416bd48a4a0b87f24a5b61b3446982b74d18cafe619c22b17eb62 ;;
  kokkos5-headers) kind=kokkos deb_ver=5.2.2-2 suite=sid file=libkokkos-dev_5.2.2-2_amd64.deb
            sha=4a8f580267c100400c53cad45b5b7962cf0343df0fe7b1ab00ffcbd0f929d1a7 ;;
  *) echo "usage: $0 20250204|20260704|kokkos5-headers" >&2; exit 2 ;;
esac
if [ $kind = lammps ]; then
  dest=$CACHE/src/lammps-$1 what="LAMMPS $1 (Debian $suite lammps $deb_ver)"
else
  dest=$CACHE/src/kokkos-${deb_ver%-*}-headers what="Kokkos headers (Debian $suite libkokkos-dev $deb_ver)"
fi
# what is unpacked: LAMMPS's CMake build and install read cmake/, src/, lib/, potentials/, bench/ and
# doc/lammps.1; the stamp records file and members, so a changed list unpacks again
members=(cmake src potentials lib bench doc/lammps.1)
stamp="$file ${members[*]}"
[ $kind = kokkos ] && stamp=$file
[ "$(cat "$dest/.stamp" 2>/dev/null)" = "$stamp" ] && { echo "$dest"; exit 0; }

unavailable() {  # REASON: stop, saying what is missing and how to build against one's own LAMMPS
  log "$what: $1."
  if [ $kind = lammps ]; then
    log "To test against a LAMMPS of your own instead: configure lammps-nep with"
    log "  -DLAMMPS_DIR=<LAMMPS install prefix>/lib/cmake/LAMMPS -DNEP_LAMMPS_SOURCE_DIR=<LAMMPS source>/src"
    log "(LAMMPS built with PKG_PLUGIN=on, BUILD_SHARED_LIBS=on), or put that release's source tree at $dest"
    log "and write the line '$stamp' into $dest/.stamp."
  else
    log "The Kokkos 5 compile check needs Kokkos >= 5.1 headers: unpack them so that $dest/include/kokkos/"
    log "holds Kokkos_Core.hpp and KokkosCore_config.h, and write the line '$stamp' into $dest/.stamp."
  fi
  exit 1
}

# ---- private apt configuration: its own sources, lists, cache and (empty) dpkg status ------------
private_apt() {
  mkdir -p "$APTDIR"/{sources.list.d,preferences.d,lists/partial,archives/partial}
  : > "$APTDIR/status"
  cat > "$APTDIR/sources.list.d/lammps-nep.sources" <<EOF
Types: deb-src
URIs: $ARCHIVE
Suites: trixie sid
Components: main
Signed-By: $KEYRING

Types: deb
URIs: $ARCHIVE
Suites: sid
Components: main
Architectures: amd64
Signed-By: $KEYRING
EOF
  cat > "$APTDIR/apt.conf" <<EOF
Dir::Etc::SourceList "$APTDIR/sources.list";
Dir::Etc::SourceParts "$APTDIR/sources.list.d";
Dir::Etc::Preferences "$APTDIR/preferences";
Dir::Etc::PreferencesParts "$APTDIR/preferences.d";
Dir::State::Lists "$APTDIR/lists";
Dir::State::status "$APTDIR/status";
Dir::Cache "$APTDIR";
Dir::Cache::Archives "$APTDIR/archives";
Dir::Cache::pkgcache "";
Dir::Cache::srcpkgcache "";
Acquire::Languages "none";
APT::Sandbox::User "root";
EOF
  export APT_CONFIG=$APTDIR/apt.conf
  # refresh the indexes once a day at most
  if [ -z "$(find "$APTDIR/lists" -maxdepth 1 -name '*_InRelease' -mmin -1440 2>/dev/null)" ]; then
    log "apt-get update (private configuration $APT_CONFIG)"
    apt-get update -qq >&2 || unavailable "apt-get update against $ARCHIVE failed"
  fi
}

mkdir -p "$CACHE/src"
cd "$CACHE/src"
have_file() { [ -f "$file" ] && echo "$sha  $file" | sha256sum -c --status; }
if ! have_file; then
  private_apt
  rm -f "$file"
  start=$(date +%s)
  if [ $kind = lammps ]; then
    # the archive's signed index must still list the pinned version with the pinned checksum
    index=$(apt-cache showsrc lammps 2>/dev/null || true)
    grep -q " $sha [0-9]* $file\$" <<< "$index" ||
      unavailable "the archive's $suite index no longer lists $file with sha256 $sha"
    log "downloading $file"
    # exits non-zero after the download: the .dsc is not served (404)
    apt-get source --download-only -qq "lammps=$deb_ver" >&2 2>/dev/null || true
    rm -f lammps_"$deb_ver".dsc lammps_"$deb_ver".debian.tar.*
  else
    index=$(apt-cache show "libkokkos-dev=$deb_ver" 2>/dev/null || true)
    grep -q "^SHA256: $sha\$" <<< "$index" ||
      unavailable "the archive's $suite index no longer lists libkokkos-dev $deb_ver with sha256 $sha"
    log "downloading $file"
    apt-get download -qq "libkokkos-dev=$deb_ver" >&2 || true
  fi
  [ -f "$file" ] || unavailable "$file could not be downloaded from $ARCHIVE"
  have_file || { rm -f "$file"; unavailable "$file from $ARCHIVE does not have the pinned sha256 $sha"; }
  log "downloaded $file ($(du -m "$file" | cut -f1) MB) in $(( $(date +%s) - start )) s"
fi

# ---- unpack ------------------------------------------------------------------------------------
start=$(date +%s)
rm -rf "$dest" "$dest.tmp"
mkdir -p "$dest.tmp"
if [ $kind = lammps ]; then
  # 4Feb2025's tarball holds one top folder lammps-*/, 4Jul2026's holds the tree itself
  first=$(tar -tf "$file" 2>/dev/null | head -n1 || true)
  top=(--strip-components=0) pre=""
  [[ $first == lammps*/* ]] && top=(--strip-components=1) pre="*/"
  tar -xf "$file" -C "$dest.tmp" "${top[@]}" --wildcards --no-wildcards-match-slash "${members[@]/#/$pre}"
  [ -f "$dest.tmp/cmake/CMakeLists.txt" ] && [ -f "$dest.tmp/src/lammpsplugin.h" ] ||
    unavailable "$file does not unpack to a LAMMPS tree with cmake/CMakeLists.txt and src/lammpsplugin.h"
else
  dpkg -x "$file" "$dest.tmp/deb"
  mv "$dest.tmp/deb/usr/include" "$dest.tmp/include" && rm -rf "$dest.tmp/deb"
  [ -f "$dest.tmp/include/kokkos/KokkosCore_config.h" ] || unavailable "$file holds no KokkosCore_config.h"
fi
rm -f "$file"  # the unpacked tree is what the cache keeps
echo "$stamp" > "$dest.tmp/.stamp"
mv "$dest.tmp" "$dest"
log "unpacked into $dest in $(( $(date +%s) - start )) s"
echo "$dest"
