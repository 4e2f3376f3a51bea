#!/usr/bin/env bash
# Cost of fix nep/train mode active as the system grows (issue #31, "scale"): per check step (the
# committee on every rank's own atoms, deviation reduced) and per teacher call (the teacher, the
# student's true error measured by each rank on its atoms, the frame gathered to rank 0, checked
# and appended to the HDF5 buffer), and the peak memory, for diamond Si of 8 L^3 atoms on 1 and 2
# MPI ranks (1 thread each). Three runs per size and rank count, S steps each, a check every E steps:
#   A: pair_style nep/gpu MODEL alone                        -> student time per step, memory
#   B: hybrid/overlay nep/gpu + sw, fix nep/train mode active, committee MODEL + MODEL.member*,
#      thresholds no deviation reaches, no audits            -> memory with the committee
#   C: B with audit 1 (the teacher is called on every check step, the frame buffered)
#   D: C with carve 2.6 4 (the regions around the 4 most uncertain atoms buffered, not the frame)
# B and C run with NEP_TIMING=1: the fix's stages are timed where they run (otf_committee,
# otf_teacher, otf_student_error, otf_gather_frame, otf_check_buffer_frame; the slowest rank's),
# which a difference of loop times cannot resolve on a VM whose step times vary by 10-30 %.
# No round runs (train_every above the frames).
# Usage: benchmarks/active/scale/run.sh MODEL [OUTDIR] ["L ..." (16 32 50)] ["ranks" (1 2)] [S (10)] [E (5)]
#   L 16, 32, 50: 32 768, 262 144, 1 000 000 atoms. MODEL: e.g. OUTDIR/si.nep.txt of examples/otf-si-active
set -euo pipefail
model=$(cd "$(dirname "${1:?usage: run.sh MODEL [OUTDIR] [sizes] [ranks] [S] [E]}")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
source "$here/../../../tools/env.sh" > /dev/null
out=$(nep_outdir "${2:-$(mktemp -d)}")
sizes=${3:-"16 32 50"} ranks_list=${4:-"1 2"} steps=${5:-10} every=${6:-5}
members=$(ls "$model".member* 2>/dev/null | wc -l)
[ "$members" -ge 1 ] || { echo "run.sh: no committee members $model.member1.. next to the model" >&2; exit 1; }
sw=$(nep_lammps_potential Si.sw)
cp "$here/../../../examples/otf-si-active/nep.in" "$out/nep.in"   # the architecture of MODEL (otf-si-active's)
export OMP_NUM_THREADS=1 OMP_WAIT_POLICY=passive OMP_PROC_BIND=false
deck() {  # KIND L PLUGIN -> the input deck on stdout
  local kind=$1 l=$2 plugin=$3
  cat <<EOD
units metal
atom_style atomic
boundary p p p
lattice diamond 5.431
region box block 0 $l 0 $l 0 $l
create_box 1 box
create_atoms 1 box
mass 1 28.0855
timestep 0.001
velocity all create 1000 4928459 loop geom
plugin load $plugin
fix md all nve
thermo $steps
EOD
  if [ "$kind" = A ]; then
    printf 'pair_style nep/gpu\npair_coeff * * %s Si\n' "$model"
  else
    local audit=0 carve=""; [ "$kind" != B ] && audit=1; [ "$kind" = D ] && carve="carve 2.6 4"
    printf 'pair_style hybrid/overlay nep/gpu cutoff 3.8 sw\npair_coeff * * nep/gpu %s Si\npair_coeff * * sw %s Si\n' "$model" "$sw"
    printf 'fix learn all nep/train every %s buffer %s/%s.h5 model %s/%s.nep.txt input %s/nep.in start %s train_every 1000000000 mode active teacher sw committee %s threshold 1e6 1e7 audit %s history none %s\n' \
      "$every" "$out" "$kind$l" "$out" "$kind$l" "$out" "$model" $((members + 1)) "$audit" "$carve"
  fi
  echo "run $steps"
}
one() {  # KIND L RANKS: runs it, leaving OUTDIR/KIND_L_RANKS.{log,rss,stderr}
  local kind=$1 l=$2 r=$3 tag=$1_$2_$3
  rm -f "$out/$kind$l.h5"
  deck "$kind" "$l" "$NEP_PLUGIN" > "$out/in.$tag"
  local cmd=("$LMP" -in "$out/in.$tag" -log "$out/$tag.log" -screen none)
  [ "$r" -gt 1 ] && cmd=(mpirun --allow-run-as-root --oversubscribe -np "$r" "${cmd[@]}")
  NEP_TIMING=$([ "$kind" = A ] && echo 0 || echo 1) /usr/bin/time -f "%M" -o "$out/$tag.rss" "${cmd[@]}" 2> "$out/$tag.stderr" ||
    { echo "run.sh: $tag failed (log: $out/$tag.log)" >&2; exit 1; }
  echo "atoms $((8 * l * l * l)), $r rank(s): $kind done" >&2
}
for l in $sizes; do
  for r in $ranks_list; do
    for kind in A B C D; do one "$kind" "$l" "$r"; done
  done
done
python3 "$here/score.py" "$out" "$steps" "$every" "$sizes" "$ranks_list"
