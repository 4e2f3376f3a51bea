#!/usr/bin/env bash
# Set up (if needed), build and run every test. Exit status is non-zero on any failure.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/common.sh"
"$here/deps.sh"
nep_build
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
cd "$NEP_BUILD_DIR"
ctest --output-on-failure -j "${NEP_JOBS:-$(nproc)}" "$@"
