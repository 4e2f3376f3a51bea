#!/usr/bin/env bash
# cmake --install of a build tree, then what a user of the install does, with the install alone:
#   - bin/nep-predict (no LD_LIBRARY_PATH: its RUNPATH finds Kokkos) on a diamond Si cell;
#   - a project of its own (tests/install/consumer) configured with find_package(lammps_nep) from
#     the install only, built, run: the same energy per atom as nep-predict's, to 1e-10 relative;
#   - the installed programs and plugin find every library they need without LD_LIBRARY_PATH (ldd);
#   - with --lmp: LAMMPS with the installed nepplugin.so: a deck without plugin load through
#     LAMMPS_PLUGIN_PATH (LAMMPS >= 4May2022, --plugin-path-works), else with plugin load; the same
#     energy per atom.
# usage: install_checks.sh BUILD_DIR WORK_DIR MODEL [--lmp LMP [--plugin-path-works]] [--flags CXXFLAGS]
set -euo pipefail
build=$1 work=$2 model=$3
shift 3
lmp="" plugin_path=0
while [ $# -gt 0 ]; do
  case $1 in
    --lmp) lmp=$2; shift ;;
    --plugin-path-works) plugin_path=1 ;;
    --flags) consumer_flags=$2; shift ;;   # the build's own compile/link flags (sanitizer builds)
    *) echo "install_checks: unknown option $1" >&2; exit 2 ;;
  esac
  shift
done
here=$(cd "$(dirname "$0")" && pwd)
fail() { echo "FAIL $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work"
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" > "$work/install.log" || fail "cmake --install (log: $work/install.log)"
want=(bin/nep-predict include/nep/calculator.hpp lib/cmake/lammps_nep/lammps_nepConfig.cmake lib/libnep_core.a)
for program in nep-frames nep-train; do   # those this build has, with their library's headers
  [ -x "$build/$program" ] && want+=("bin/$program")
done
[ -x "$build/nep-frames" ] && want+=(include/nep/data/frame_store.hpp)
[ -x "$build/nep-train" ] && want+=(include/nep/train/trainer.hpp include/nep/train/config.hpp)
[ -f "$build/nepplugin.so" ] && want+=(lib/lammps-nep/plugins/nepplugin.so)
[ -f "$build/nepplugin_train.so" ] && want+=(lib/lammps-nep/plugins/nepplugin_train.so)
for f in "${want[@]}"; do
  [ -e "$prefix/$f" ] || fail "the install has no $f"
done
echo "ok   installed: $(cd "$prefix" && find bin lib include -maxdepth 3 -type f | grep -v '^include/nep/' | sort | tr '\n' ' ')"

for f in "${want[@]}"; do
  case $f in bin/nep-report|include/*|lib/cmake/*|*.a) continue ;; esac
  # its own (NEEDED) libraries; those of liblammps are LAMMPS's to find, and loaded before the plugin
  needed=$(readelf -d "$prefix/$f" | sed -n 's/.*(NEEDED).*\[\(.*\)\]$/\1/p')
  for lib in $needed; do
    ! grep -q "^[[:space:]]*$lib => not found" <<< "$(env -u LD_LIBRARY_PATH ldd "$prefix/$f")" ||
      fail "installed $f does not find $lib without LD_LIBRARY_PATH"
  done
done
echo "ok   installed programs and plugin find their libraries without LD_LIBRARY_PATH (RUNPATH)"

# 1. nep-predict from the install on a diamond Si cell (8 atoms, a = 5.431 A)
a=5.431
{ echo 8; echo "Lattice=\"$a 0 0 0 $a 0 0 0 $a\" Properties=species:S:1:pos:R:3 pbc=\"T T T\""
  for b in "0 0 0" "0 .5 .5" ".5 0 .5" ".5 .5 0" ".25 .25 .25" ".25 .75 .75" ".75 .25 .75" ".75 .75 .25"; do
    echo "Si $(echo "$b" | awk -v a=$a '{ printf "%.10f %.10f %.10f", $1 * a, $2 * a, $3 * a }')"
  done; } > "$work/si.xyz"
env -u LD_LIBRARY_PATH "$prefix/bin/nep-predict" "$model" "$work/si.xyz" "$work/si_pred.xyz" > "$work/predict.log" 2>&1 ||
  fail "installed nep-predict: $(tail -n 5 "$work/predict.log")"
e_predict=$(sed -n 2p "$work/si_pred.xyz" | grep -o 'energy=[^ ]*' | cut -d= -f2)
e_predict=$(awk -v e="$e_predict" 'BEGIN { printf "%.12f", e / 8 }')
echo "ok   installed nep-predict: $e_predict eV/atom"

same() {  # WHAT VALUE: VALUE equals nep-predict's energy per atom to 1e-10 relative
  awk -v x="$2" -v r="$e_predict" 'BEGIN { d = x - r; if (d < 0) d = -d; exit !(r < 0 && d <= 1e-10 * -r) }' ||
    fail "$1: $2 eV/atom, nep-predict $e_predict"
  echo "ok   $1: $2 eV/atom"
}

# 2. a consumer project against the install alone (Kokkos_DIR comes from the package)
if ! { env -u Kokkos_DIR cmake -S "$here/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" \
           -DCMAKE_CXX_FLAGS="${consumer_flags:-}" -DCMAKE_EXE_LINKER_FLAGS="${consumer_flags:-}" &&
       cmake --build "$work/consumer"; } > "$work/consumer.log" 2>&1; then
  fail "consumer project: $(tail -n 20 "$work/consumer.log")"
fi
sed -n "s/^-- lammps_nep: /ok   consumer project configured: /p" "$work/consumer.log"
out=$(env -u LD_LIBRARY_PATH "$work/consumer/nep_consumer" "$model") || fail "nep_consumer: $out"
same "consumer project (find_package(lammps_nep), lammps_nep::nep_core)" "$(echo "$out" | awk '/energy per atom/ { print $4 }')"

# 3. LAMMPS with the installed plugin
if [ -n "$lmp" ]; then
  plugins=$prefix/lib/lammps-nep/plugins
  load="plugin load $plugins/nepplugin.so" env_path=()
  if [ $plugin_path = 1 ]; then load="" env_path=(LAMMPS_PLUGIN_PATH="$plugins"); fi
  printf '%s\n' "$load" "units metal" "lattice diamond $a" "region b block 0 1 0 1 0 1" "create_box 1 b" \
    "create_atoms 1 box" "mass 1 28.0855" "pair_style nep" "pair_coeff * * $model Si" "run 0" \
    'print "PE_PER_ATOM $(pe/atoms:%.12f)"' > "$work/in.si"
  out=$(cd "$work" && env -u LAMMPS_PLUGIN_PATH OMP_NUM_THREADS=1 "${env_path[@]}" \
        "$lmp" -in in.si -log none 2>&1) || fail "lmp with the installed plugin: $(echo "$out" | tail -n 15)"
  how="plugin load"; [ $plugin_path = 1 ] && how="LAMMPS_PLUGIN_PATH, no plugin load"
  same "LAMMPS, installed nepplugin.so ($how)" "$(echo "$out" | awk '/^PE_PER_ATOM/ { print $2 }')"
  if [ -f "$plugins/nepplugin_train.so" ]; then
    # fix nep/train from the installed nepplugin_train.so: its own keyword error means it loaded
    echo "fix t all nep/train bogus 1" >> "$work/in.si"
    out=$(cd "$work" && env -u LAMMPS_PLUGIN_PATH OMP_NUM_THREADS=1 "${env_path[@]}" "$lmp" -in in.si -log none 2>&1) &&
      fail "lmp accepted 'fix nep/train bogus 1'"
    # (a here-string, not echo | grep -q: under pipefail grep's early exit can kill echo with SIGPIPE)
    grep -q "unknown keyword 'bogus'" <<< "$out" || fail "fix nep/train from the install: $(echo "$out" | grep -m1 ERROR || echo "$out" | tail -n 5)"
    echo "ok   fix nep/train loads the installed nepplugin_train.so ($how)"
  fi
fi
echo "install checks: 0 failed"
