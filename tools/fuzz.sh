#!/usr/bin/env bash
# libFuzzer runs of the readers of user-supplied files (issue #7): nep.txt, nep.in, extended XYZ,
# the HDF5 frame store. Built with clang, ASan + UBSan, into build-fuzz/ (tests/fuzz/).
#   tools/fuzz.sh [SECONDS]   run every target SECONDS (default 600) from seed corpora (tests/data,
#                             tests/fuzz/seeds) after replaying tests/fuzz/regressions/; prints
#                             executions per target and stops at the first finding (input saved
#                             in build-fuzz/findings/).
#   NEP_FUZZ_TARGETS="fuzz_xyz fuzz_model" to run a subset; NEP_JOBS targets run at once (default: cores).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
seconds=${1:-600}
build=${NEP_FUZZ_BUILD_DIR:-$NEP_REPO/build-fuzz}
src=$NEP_REPO/tests/fuzz
targets=${NEP_FUZZ_TARGETS:-"fuzz_model fuzz_nep_in fuzz_xyz fuzz_frame_store"}
jobs=${NEP_JOBS:-$(nproc)}
# clang and its libFuzzer runtime come from Debian (clang, libclang-rt-14-dev)
if ! command -v clang++ >/dev/null || ! ls /usr/lib/llvm-*/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1; then
  echo "[fuzz] installing clang libclang-rt-14-dev" >&2
  SUDO=; [ "$(id -u)" = 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends clang libclang-rt-14-dev >/dev/null
fi

if [ ! -f "$build/build.ninja" ]; then
  CC=clang CXX=clang++ cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug >/dev/null
fi
cmake --build "$build" -j "$jobs"

# seed corpora: small real files from tests/data plus our own seeds
corpus=$build/corpus
rm -rf "$corpus" && mkdir -p "$corpus"/{fuzz_model,fuzz_nep_in,fuzz_xyz,fuzz_frame_store} "$build/findings"
for f in PbTe_NEP3.txt PbTe_NEP4.txt Si_2022_NEP4_3body.txt Si_2022_NEP4_5body.txt nep_water.txt; do
  cp "$NEP_REPO/tests/data/potentials/$f" "$corpus/fuzz_model/"
done
cp "$src"/seeds/model/* "$corpus/fuzz_model/"
cp "$src"/seeds/nep_in/* "$corpus/fuzz_nep_in/"
cp "$src"/seeds/xyz/* "$corpus/fuzz_xyz/"
find "$NEP_REPO/tests/data/train" "$NEP_REPO/tests/data/reference" -name '*.xyz' -size -20k -exec cp {} "$corpus/fuzz_xyz/" \;
printf '\x01\x03\x02\x01\x02\x00\x05\x07' > "$corpus/fuzz_frame_store/structured"
printf '\x00\x02\x10\x00\x20\xff' > "$corpus/fuzz_frame_store/bytes"
declare -A dict=([fuzz_model]=model.dict [fuzz_nep_in]=nep_in.dict [fuzz_xyz]=xyz.dict)
declare -A maxlen=([fuzz_model]=131072 [fuzz_nep_in]=4096 [fuzz_xyz]=32768 [fuzz_frame_store]=4096)

export LSAN_OPTIONS=suppressions=$src/lsan.supp ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1

# findings that became regression inputs must stay fixed
for t in $targets; do
  reg=$src/regressions/$t
  if [ -d "$reg" ] && [ -n "$(ls -A "$reg")" ]; then
    "$build/$t" -timeout=20 "$reg"/* >"$build/$t.replay.log" 2>&1 || { cat "$build/$t.replay.log"; echo "fuzz.sh: $t regression input fails"; exit 1; }
    echo "$t: $(ls "$reg" | wc -l) regression input(s) pass"
  fi
done

run_one() {
  local t=$1
  local d=()
  [ -n "${dict[$t]:-}" ] && d=(-dict="$src/dict/${dict[$t]}")
  mkdir -p "$build/work/$t"
  "$build/$t" "$build/work/$t" "$corpus/$t" "${d[@]}" -max_total_time="$seconds" -max_len="${maxlen[$t]}" \
    -rss_limit_mb=2048 -timeout=20 -print_final_stats=1 -artifact_prefix="$build/findings/$t-" \
    >"$build/$t.log" 2>&1
}
status=0
running=0
declare -A pid
for t in $targets; do
  run_one "$t" & pid[$t]=$!
  running=$((running + 1))
  if [ "$running" -ge "$jobs" ]; then wait -n || true; running=$((running - 1)); fi
done
for t in $targets; do
  if wait "${pid[$t]}"; then r=ok; else r=FINDING; status=1; fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$build/$t.log" | grep -o '[0-9]*$' || echo "?")
  cov=$(grep -o 'cov: [0-9]*' "$build/$t.log" | tail -1 || true)
  printf '%-18s %s  %s executions in %s s  %s\n' "$t" "$r" "$runs" "$seconds" "$cov"
  [ "$r" = ok ] || { grep -m1 -B2 -A25 'ERROR\|property violated\|uncaught\|terminate' "$build/$t.log" || tail -40 "$build/$t.log"; }
done
exit $status
