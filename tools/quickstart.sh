#!/usr/bin/env bash
# Set up (if needed), build, and run the main job: on-the-fly training of a Si NEP inside LAMMPS
# (examples/otf-si/run.sh): teacher MD + fix nep/train, held-out test, teacher vs student MD, summary.json.
# Usage: tools/quickstart.sh [OUTDIR]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
"$here/deps.sh"
nep_build
source "$here/env.sh"
out=$(nep_outdir "${1:-$NEP_BUILD_DIR/quickstart}")
echo "quickstart: the main job, examples/otf-si: a 512-atom Si NEP trained on the fly inside LAMMPS from a"
echo "Stillinger-Weber teacher (fix nep/train), then deployed with pair_style nep/gpu and compared (into $out)"
"$NEP_REPO/examples/otf-si/run.sh" "$out"
