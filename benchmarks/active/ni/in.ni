# fcc Ni (256 atoms) heated through its melting point, 300 -> 2500 K, with LAMMPS's SNAP model
# Ni_Zuo_JPCA2020.quadratic as the teacher (benchmarks/active/ni/run.sh). mode:
#   passive  SNAP drives every step; fix nep/train keeps a frame every `every` steps and trains
#   active   the NEP student drives once a committee trusts it; SNAP only when the fix asks
#   test     held-out SNAP frames: another velocity seed and a fresh crystal, every 100 steps, no training
variable        plugin getenv NEP_PLUGIN
variable        snap_plugin index snapplugin.so
variable        potdir index .
variable        out index .
variable        steps index 10000
variable        every index 50
variable        final index 0                      # epochs of the fix's final round at the run's end (0: none)
variable        stages index 0                     # > 0: that final round retrains in arrival order (final_stages)
units           metal
atom_style      atomic
boundary        p p p
lattice         fcc 3.52
region          box block 0 4 0 4 0 4
create_box      1 box
create_atoms    1 box
mass            1 58.6934
timestep        0.001
plugin          load ${plugin}
plugin          load ${snap_plugin}
if "${mode} == active" then &
  "pair_style hybrid/overlay nep/gpu cutoff 4.2 snap" &
  "pair_coeff * * nep/gpu none Ni" &
  "pair_coeff * * snap ${potdir}/Ni_Zuo_JPCA2020.quadratic.snapcoeff ${potdir}/Ni_Zuo_JPCA2020.quadratic.snapparam Ni" &
else &
  "pair_style snap" &
  "pair_coeff * * ${potdir}/Ni_Zuo_JPCA2020.quadratic.snapcoeff ${potdir}/Ni_Zuo_JPCA2020.quadratic.snapparam Ni"
if "${mode} == test" then "velocity all create 300 771 loop geom" else "velocity all create 300 4928459 loop geom"
if "${mode} == passive" then &
  "fix learn all nep/train every ${every} buffer ${out}/ni.h5 model ${out}/ni.nep.txt input nep.in seed 7 train_every 20 epochs 20 heldout 0.05 capacity 2000 threads 2"
if "${mode} == active" then &
  "fix learn all nep/train every 10 buffer ${out}/ni.h5 model ${out}/ni.nep.txt input nep.in seed 7 train_every 10 epochs 5 min_updates 300 heldout 0.05 capacity 2000 threads 2 mode active teacher snap committee 4 threshold 0.8 3.0 handback 1.5 probe 1 adopt_after 20 500 gap 50 first_round 2 audit 0.02 history ${out}/history.jsonl"
if "${mode} == test" then &
  "fix learn all nep/train every 100 buffer ${out}/test.h5 model ${out}/unused.nep.txt input nep.in seed 11 train_every 1000000000 heldout 0"
thermo          1000
fix             md all nvt temp 300 2500 0.1
if "${mode} != test" then "fix_modify learn final_round ${final} stages ${stages}"
run             ${steps}
if "${mode} == active" then "print 'ACTIVE frames $(f_learn[1]) rounds $(f_learn[2]) teacher_evaluations $(f_learn[8])'" &
else "print 'FRAMES $(f_learn[1])'"
