#!/usr/bin/env bash
# Set up (if needed), build, and run the main job: today, nep-predict on a shipped PbTe structure
# (energies, forces and virials of a NEP4 model), with a short summary.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
"$here/deps.sh"
nep_build
out=${1:-$NEP_BUILD_DIR/quickstart}
mkdir -p "$out"
data=$NEP_REPO/tests/data
"$NEP_BUILD_DIR/nep-predict" "$data/potentials/PbTe_NEP4.txt" "$data/reference/PbTe_NEP4__rocksalt_216_rattled.xyz" \
  "$out/PbTe_predicted.xyz" --threads "$(nproc)"
awk 'NR==2 { for (i = 1; i <= NF; ++i) if ($i ~ /^energy=/) { split($i, a, "="); e = a[2] } }
     NR==1 { n = $1 }
     END { printf "quickstart: %d atoms, E = %.6f eV (%.6f eV/atom); result in %s\n", n, e, e / n, FILENAME }' \
  "$out/PbTe_predicted.xyz"
