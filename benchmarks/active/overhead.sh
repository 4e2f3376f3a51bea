#!/usr/bin/env bash
# Cost of fix nep/train mode active on steps without a teacher call: the committee evaluation on
# check steps (M models through the fix's own neighbour list, ghost forces folded, deviation),
# against one force evaluation of the student. Same 512-atom Si crystal at 1000 K, 1 rank, 1 thread:
#   A: pair_style nep/gpu MODEL alone, N steps
#   B: hybrid/overlay nep/gpu MODEL + sw, fix nep/train mode active with thresholds no deviation
#      reaches and no audits (the teacher is never computed), committee MODEL + MODEL.member1..,
#      a check every E steps
# overhead per check step = (loop B - loop A) / (N / E); student evaluation = loop A / N.
# Usage: benchmarks/active/overhead.sh MODEL [N] [E]   (MODEL: e.g. OUTDIR/si.nep.txt of examples/otf-si-active)
set -euo pipefail
model=$(cd "$(dirname "${1:?usage: overhead.sh MODEL [N] [E]}")" && pwd)/$(basename "$1")
n=${2:-2000} e=${3:-10}
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../tools/env.sh"
sw=$(nep_lammps_potential Si.sw)
work=$(mktemp -d)
members=$(ls "$model".member* 2>/dev/null | wc -l)
cat > "$work/nep.in" <<EOI
type 1 Si
cutoff 3.8 3.8
n_max 6 6
basis_size 8 8
l_max 4 2 0
neuron 30
EOI
common="units metal
atom_style atomic
boundary p p p
lattice diamond 5.431
region box block 0 4 0 4 0 4
create_box 1 box
create_atoms 1 box
mass 1 28.0855
timestep 0.001
velocity all create 1000 4928459 loop geom
plugin load $NEP_PLUGIN
fix md all nvt temp 1000 1000 0.1
thermo 1000"
printf '%s\npair_style nep/gpu\npair_coeff * * %s Si\nrun 100\nrun %s\n' "$common" "$model" "$n" > "$work/in.a"
printf '%s\npair_style hybrid/overlay nep/gpu cutoff 3.8 sw\npair_coeff * * nep/gpu %s Si\npair_coeff * * sw %s Si\n%s\nrun 100\nrun %s\n' \
  "$common" "$model" "$sw" \
  "fix learn all nep/train every $e buffer $work/b.h5 model $work/b.nep.txt input $work/nep.in start $model train_every 1000000000 mode active teacher sw committee $((members + 1)) threshold 1e6 1e7 history none" \
  "$n" > "$work/in.b"
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
loop() { grep "Loop time" "$1" | tail -n 1 | awk '{print $4}'; }
ta=() tb=()
for k in 1 2 3; do    # interleaved, best of three
  "$LMP" -in "$work/in.a" -log "$work/a.log" -screen none; ta+=("$(loop "$work/a.log")")
  "$LMP" -in "$work/in.b" -log "$work/b.log" -screen none; tb+=("$(loop "$work/b.log")")
done
python3 - "$n" "$e" "$((members + 1))" "${ta[*]}" "${tb[*]}" <<'EOP'
import sys
n, e, m = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3])
ta, tb = min(map(float, sys.argv[4].split())), min(map(float, sys.argv[5].split()))
student = ta / n
per_check = (tb - ta) / (n / e)
print(f"512 Si atoms, {n} steps, check every {e}, committee of {m}: student alone {1e3*student:.2f} ms/step; "
      f"with the fix {1e3*tb/n:.2f} ms/step")
print(f"overhead per check step {1e3*per_check:.2f} ms = {per_check/student:.2f} student evaluations "
      f"({per_check/student/m:.2f} per committee model); per MD step {per_check/e/student:.3f} student evaluations")
EOP
rm -rf "$work"
