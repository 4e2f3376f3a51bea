#!/usr/bin/env bash
# Set up (if needed), build, and run the main job: today, LAMMPS MD of the shipped PbTe example
# with pair_style nep/gpu (examples/pbte), then nep-predict on a reference structure.
# Usage: tools/quickstart.sh [OUTDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
"$here/deps.sh"
nep_build
source "$here/env.sh"
out=$(mkdir -p "${1:-$NEP_BUILD_DIR/quickstart}" && cd "${1:-$NEP_BUILD_DIR/quickstart}" && pwd)
echo "quickstart: LAMMPS MD, 512-atom PbTe, pair_style nep/gpu (log: $out/pbte.log)"
(cd "$NEP_REPO/examples/pbte" && "$LMP" -in in.pbte -log "$out/pbte.log" -screen none -k on t "$(nproc)" -sf kk)
grep SUMMARY "$out/pbte.log" | tail -n 1
data=$NEP_REPO/tests/data
nep-predict "$data/potentials/PbTe_NEP4.txt" "$data/reference/PbTe_NEP4__rocksalt_216_rattled.xyz" "$out/PbTe_predicted.xyz"
