#!/usr/bin/env python3
"""Summary of examples/otf-si-active: reads what run.sh left in OUTDIR and writes OUTDIR/summary.json.

teacher_evaluations           Stillinger-Weber computations in the active run (the fix's count; also
                              recounted from history.jsonl: teacher calls + steps the teacher drove)
md_steps                      MD steps of the active run (LAMMPS's loop counts)
teacher_fraction              teacher_evaluations / md_steps
heldout_force_rmse_meV_per_A  the run's own final model (si.nep.txt, written by the fix's final round at
                              the end of the run) on examples/otf-si's independent held-out frames
relative_force_error          that RMSE over the RMS teacher force on those frames
frames_in_buffer, training_rounds, audits, audit_misses, calibration_factor, handovers_to_teacher,
calls_by_reason               from the log and history.jsonl
max_buffered_force_eV_per_A   the largest force in the buffer (frames above fmax = 20 are never buffered)
wall_seconds                  the active run (MD, committee, teacher calls, training, the final round)
trajectory_windows            per 1000 MD steps of the student-driven run (../otf-si/observables.in): mean
                              temperature, potential energy per atom of the driving model, first g(r) peak;
                              benchmarks/active/si judges them against a teacher-driven run's
"""
import json, math, os, re, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "otf-si"))
from heldout import force_rmse, read_xyz  # noqa: E402  (examples/otf-si/heldout.py)
from observables import windows  # noqa: E402  (examples/otf-si/observables.py)

out = sys.argv[1]
wall = float(sys.argv[2]) if len(sys.argv) > 2 else float("nan")
_, _, ref_f = read_xyz(os.path.join(out, "test.xyz"), 4)
f_rmse = force_rmse(read_xyz(os.path.join(out, "test_pred.xyz"), 5)[2], ref_f)
f_rms = math.sqrt(sum(b * b for b in ref_f) / len(ref_f))

log = open(os.path.join(out, "active.log")).read()
md_steps = sum(int(m) for m in re.findall(r"Loop time of \S+ on \d+ procs for (\d+) steps", log))
m = re.search(r"^ACTIVE frames (\S+) rounds (\S+) teacher_evaluations (\S+) audits (\S+) audit_misses (\S+) "
              r"calibration (\S+)", log, re.M)
events = [json.loads(l) for l in open(os.path.join(out, "history.jsonl"))]
teacher = [e for e in events if e["event"] == "teacher"]
hand = [e for e in events if e["event"] == "handover"]
# recount: steps the teacher drove (from step 1 to the first handover, then between handovers), the
# runs whose set-up force call it made (it drove at the end of the step a run starts on), + calls
drove, prev, driver = 0, 0, "teacher"
for e in sorted(hand, key=lambda e: e["step"]):
    if driver == "teacher":
        drove += e["step"] - prev
    prev, driver = e["step"], e["to"]
if driver == "teacher":
    drove += md_steps - prev
runs = [int(m) for m in re.findall(r"Loop time of \S+ on \d+ procs for (\d+) steps", log)]
for s0 in [sum(runs[:k]) for k in range(len(runs))]:
    at = [e["to"] for e in sorted(hand, key=lambda e: e["step"]) if e["step"] <= s0]
    drove += (at[-1] if at else "teacher") == "teacher"
calls = sum(1 for e in teacher if e["reason"] != "driving")
reasons = {}
for e in teacher:
    reasons[e["reason"]] = reasons.get(e["reason"], 0) + 1

buf_xyz = os.path.join(out, "si_buffer.xyz")
subprocess.run(["nep-frames", os.path.join(out, "si.h5"), buf_xyz], check=True, capture_output=True)
_, _, buf_f = read_xyz(buf_xyz, 4)

summary = {
    "teacher_evaluations": int(float(m.group(3))),
    "teacher_evaluations_from_history": drove + calls,
    "md_steps": md_steps,
    "teacher_fraction": float(m.group(3)) / md_steps,
    "heldout_force_rmse_meV_per_A": 1e3 * f_rmse,
    "relative_force_error": f_rmse / f_rms,
    "frames_in_buffer": int(float(m.group(1))),
    "training_rounds": int(float(m.group(2))),
    "audits": int(float(m.group(4))),
    "audit_misses": int(float(m.group(5))),
    "calibration_factor": float(m.group(6)),
    "handovers_to_teacher": sum(1 for e in hand if e["to"] == "teacher"),
    "calls_by_reason": reasons,
    "max_buffered_force_eV_per_A": max(abs(v) for v in buf_f) if buf_f else 0.0,
    "test_frames": len(ref_f) // (3 * 512) if ref_f else 0,
    "wall_seconds": wall,
}
if os.path.exists(os.path.join(out, "window.dat")):
    summary["trajectory_windows"] = [{k: w[k] for k in ("end_step", "temp_K", "pe_eV_per_atom", "first_peak_A") if k in w}
                                     for w in windows(out, 512)]
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=2)
print("otf-si-active summary (" + os.path.join(out, "summary.json") + ")")
for key, v in summary.items():
    if key == "trajectory_windows":
        v = f"{len(v)} windows"
    print(f"  {key:40s} {v:.4g}" if isinstance(v, float) else f"  {key:40s} {v}")
