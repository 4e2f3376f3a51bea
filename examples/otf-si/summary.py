#!/usr/bin/env python3
"""Summary of examples/otf-si: reads what run.sh left in OUTDIR and writes OUTDIR/summary.json.

heldout_force_rmse_meV_per_A  force RMSE of the student on the held-out teacher frames of
                              in.test (independent trajectories, never buffered for training)
relative_force_error          that RMSE divided by the RMS teacher force on the same frames
energy_rmse_meV_per_atom      RMSE of the per-atom energy on the same frames (no offset removed)
rdf_l1_difference             integral |g_teacher(r) - g_student(r)| dr / integral g_teacher(r) dr, 0-5 A,
                              1500 K liquid (in.compare)
teacher/student_atom_steps_per_s  atoms x steps / loop time of the in.compare production runs
student_nve_drift_meV_per_atom_per_ps  slope of the student's total energy in NVE (linear fit)
frames_in_buffer, training_rounds, wall_seconds (run.sh's whole run)
trajectory_windows            per 1000 MD steps of the training run (observables.in): mean temperature,
                              potential energy per atom, first g(r) peak; benchmarks/active/si judges an
                              active run's against a teacher-driven run's (observables.py tolerances)
"""
import json, math, os, re, sys

from heldout import force_rmse, read_xyz
from observables import windows

out = sys.argv[1]
wall = float(sys.argv[2]) if len(sys.argv) > 2 else float("nan")


def loop_after(log, marker):
    """(seconds, steps, atoms) of the first 'Loop time' after a PHASE marker."""
    k = log.index(f"PHASE {marker}")
    m = re.search(r"Loop time of (\S+) on \d+ procs for (\d+) steps with (\d+) atoms", log[k:])
    return float(m.group(1)), int(m.group(2)), int(m.group(3))


def rdf(path):
    rows = [l.split() for l in open(path) if l.strip() and not l.startswith("#")]
    rows = [r for r in rows if len(r) >= 3]   # bin rows: index r g(r) coord(r)
    return [float(r[1]) for r in rows], [float(r[2]) for r in rows]


ref_e, ns, ref_f = read_xyz(os.path.join(out, "test.xyz"), 4)      # species pos force
pred_e, _, pred_f = read_xyz(os.path.join(out, "test_pred.xyz"), 5)  # species pos energies forces virials
f_rmse = force_rmse(pred_f, ref_f)
f_rms = math.sqrt(sum(b * b for b in ref_f) / len(ref_f))
e_rmse = math.sqrt(sum(((a - b) / n) ** 2 for a, b, n in zip(pred_e, ref_e, ns)) / len(ns))

r, g_t = rdf(os.path.join(out, "rdf_teacher.txt"))
_, g_s = rdf(os.path.join(out, "rdf_student.txt"))
dr = r[1] - r[0]
rdf_l1 = sum(abs(a - b) for a, b in zip(g_t, g_s)) * dr / (sum(g_t) * dr)

teacher_log = open(os.path.join(out, "compare_teacher.log")).read()
student_log = open(os.path.join(out, "compare_student.log")).read()
ts, tn, ta = loop_after(teacher_log, "teacher_md")
ss, sn, sa = loop_after(student_log, "student_md")

# NVE drift: least-squares slope of etotal(t), per atom, meV/ps (timestep 1 fs)
k = student_log.index("PHASE student_nve")
rows = []
for line in student_log[k:].splitlines():
    p = line.split()
    if len(p) == 4 and re.match(r"^\d+$", p[0]):
        rows.append((int(p[0]), float(p[3])))
t0 = rows[0][0]
ts_ps = [(s - t0) * 1e-3 for s, _ in rows]
es = [e for _, e in rows]
mt, me = sum(ts_ps) / len(ts_ps), sum(es) / len(es)
slope = sum((t - mt) * (e - me) for t, e in zip(ts_ps, es)) / sum((t - mt) ** 2 for t in ts_ps)

train_log = open(os.path.join(out, "train.log")).read()
m = re.search(r"^TRAIN frames (\S+) rounds (\S+) train_F (\S+) heldout_F (\S+) heldout_E (\S+) fresh_F (\S+)", train_log, re.M)
summary = {
    "heldout_force_rmse_meV_per_A": 1e3 * f_rmse,
    "relative_force_error": f_rmse / f_rms,
    "energy_rmse_meV_per_atom": 1e3 * e_rmse,
    "rdf_l1_difference": rdf_l1,
    "teacher_atom_steps_per_s": ta * tn / ts,
    "student_atom_steps_per_s": sa * sn / ss,
    "student_nve_drift_meV_per_atom_per_ps": 1e3 * slope / sa,
    "frames_in_buffer": int(float(m.group(1))),
    "training_rounds": int(float(m.group(2))),
    "buffer_heldout_force_rmse_meV_per_A": float(m.group(4)),
    "test_frames": len(ns),
    "teacher_rms_force_eV_per_A": f_rms,
    "wall_seconds": wall,
}
if os.path.exists(os.path.join(out, "window.dat")):
    summary["trajectory_windows"] = [{k: w[k] for k in ("end_step", "temp_K", "pe_eV_per_atom", "first_peak_A") if k in w}
                                     for w in windows(out, 512)]
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=2)
print("otf-si summary (" + os.path.join(out, "summary.json") + ")")
for key, v in summary.items():
    if key == "trajectory_windows":
        v = f"{len(v)} windows"
    print(f"  {key:40s} {v:.4g}" if isinstance(v, float) else f"  {key:40s} {v}")
