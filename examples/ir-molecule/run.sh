#!/usr/bin/env bash
# examples/ir-molecule end to end: MD of one Si-F-C-H molecule with its NEP potential, its dipole
# from the matching NEP dipole model (compute nep/dipole) every 1 fs, LAMMPS's fix ave/correlate
# beside it, then nep-report's IR spectrum. Usage: examples/ir-molecule/run.sh OUTDIR
# (after a build; about 3 minutes on 2 cores). Leaves in OUTDIR: molecule.data, dipole.out,
# dipole.acf, ir.log, report/report.html (ir_spectrum.png).
# IR_VARS="-var steps 4000 -var equil 1000" passes other settings to in.ir.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/env.sh"
out=$(nep_outdir "${1:?usage: run.sh OUTDIR}")
: "${LMP:?no LAMMPS (run tools/deps.sh)}" "${NEP_PLUGIN:?no nepplugin.so (build first)}"
export OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
read -r -a vars <<< "${IR_VARS:-}"
cd "$out"
rm -f dipole.out dipole.acf
# the molecule's extended XYZ as a LAMMPS data file (types in the models' order Si F C H)
python3 - "$here/molecule.xyz" molecule.data <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
n = int(lines[0])
lat = [float(v) for v in lines[1].split('Lattice="')[1].split('"')[0].split()]
assert lat[1] == lat[2] == lat[3] == lat[5] == lat[6] == lat[7] == 0.0, "orthogonal box expected"
order = ["Si", "F", "C", "H"]
with open(sys.argv[2], "w") as f:
    f.write("one Si-F-C-H molecule (examples/ir-molecule/molecule.xyz)\n\n%d atoms\n4 atom types\n\n" % n)
    f.write("0 %r xlo xhi\n0 %r ylo yhi\n0 %r zlo zhi\n\nAtoms # atomic\n\n" % (lat[0], lat[4], lat[8]))
    for i, l in enumerate(lines[2:2 + n]):
        t = l.split()
        f.write("%d %d %s %s %s\n" % (i + 1, order.index(t[0]) + 1, t[1], t[2], t[3]))
PY
OMP_NUM_THREADS=${OMP_NUM_THREADS:-2} "$LMP" -in "$here/in.ir" -var pot "$here/../../potentials" "${vars[@]}" \
  -log ir.log -screen none
nep-report "$out" -o "$out/report" --title "IR spectrum from a NEP dipole model: $out" > report.log 2>&1 ||
  { echo "run.sh: nep-report failed (log: $out/report.log)" >&2; exit 1; }
echo "ir-molecule: $(grep -c -v '^#' dipole.out) dipole samples; report: $out/report/report.html"
