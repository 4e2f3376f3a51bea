#!/usr/bin/env python3
"""Summary of examples/otf-si-dft: reads what run.sh left in OUTDIR and writes OUTDIR/summary.json.

teacher_evaluations           pw.x computations in the active run (the fix's count: calls and the
                              steps the teacher drove; pair_style ipi's own count of answered calls too)
teacher_seconds               seconds spent in those pw.x calls (compute pair ipi: wall clock on rank 0,
                              socket and restarts included)
md_steps                      MD steps of the active run (LAMMPS's loop counts)
heldout_force_rmse_meV_per_A  the run's own model (si.nep.txt, written by the fix's final round on the DFT
                              frames at the end of the run) on the held-out DFT frames: NVT MD driven by
                              that model at 300/700/1100/1500 K, two trajectories each from other seeds,
                              4 frames each, labelled by plain pw.x
heldout_force_rmse_by_state   the same per temperature
heldout_energy_rmse_meV_per_atom      its energy error on them
final_round_seconds           the fix's final round (inside the run's wall time)
wall_seconds                  the active run (MD, committee, DFT, training, the final round)
aimd_seconds_per_step         in.aimd: pw.x driving every step of the same MD (loop time / steps)
aimd_extrapolated_seconds     that times md_steps: what DFT driving the whole run would cost
speedup                       aimd_extrapolated_seconds / wall_seconds
"""
import json, math, os, re, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "otf-si"))
from heldout import force_rmse, read_xyz  # noqa: E402  (examples/otf-si/heldout.py)

out = sys.argv[1]
wall = float(sys.argv[2]) if len(sys.argv) > 2 else float("nan")
path = lambda name: os.path.join(out, name)


def tags(xyz):
    return re.findall(r"config_type=(\S+)", open(xyz).read())


ref_e, ref_n, ref_f = read_xyz(path("heldout.xyz"), 4)
pred_e, _, pred_f = read_xyz(path("heldout_pred.xyz"), 5)
states = [re.match(r"heldout_(\d+K)", t).group(1) for t in tags(path("heldout.xyz"))]    # heldout_<T>K_s<k>_<step>
by_state, k = {}, 0
for s, n in zip(states, ref_n):
    by_state.setdefault(s, ([], []))
    by_state[s][0].extend(pred_f[k:k + 3 * n])
    by_state[s][1].extend(ref_f[k:k + 3 * n])
    k += 3 * n
e_rmse = math.sqrt(sum(((a - b) / n) ** 2 for a, b, n in zip(pred_e, ref_e, ref_n)) / len(ref_e))
f_rms = math.sqrt(sum(b * b for b in ref_f) / len(ref_f))

log = open(path("active.log")).read()
md_steps = sum(int(m) for m in re.findall(r"Loop time of \S+ on \d+ procs for (\d+) steps", log))
vals = dict(zip(*[iter(re.search(r"^ACTIVE (.*)$", log, re.M).group(1).split())] * 2))
events = [json.loads(l) for l in open(path("history.jsonl"))]
reasons = {}
for e in events:
    if e["event"] == "teacher":
        reasons[e["reason"]] = reasons.get(e["reason"], 0) + 1
aimd = open(path("aimd.log")).read()
loop = re.search(r"Loop time of (\S+) on \d+ procs for (\d+) steps", aimd)
aimd_step = float(loop.group(1)) / int(loop.group(2))
subprocess.run(["nep-frames", path("si.h5"), path("si_buffer.xyz")], check=True, capture_output=True)
_, buf_n, buf_f = read_xyz(path("si_buffer.xyz"), 4)

summary = {
    "teacher_evaluations": int(float(vals["teacher_evaluations"])),
    "teacher_calls_answered": int(float(vals["dft_calls"])),
    "teacher_seconds": float(vals["dft_seconds"]),
    "teacher_failed": int(float(vals["teacher_failed"])),
    "teacher_failed_attempts": int(float(vals["dft_failed_attempts"])),
    "md_steps": md_steps,
    "heldout_force_rmse_meV_per_A": 1e3 * force_rmse(pred_f, ref_f),
    "heldout_force_rmse_by_state": {s: 1e3 * force_rmse(p, r) for s, (p, r) in by_state.items()},
    "heldout_energy_rmse_meV_per_atom": 1e3 * e_rmse,
    "heldout_frames": len(ref_e),
    "heldout_rms_force_eV_per_A": f_rms,
    "frames_in_buffer": len(buf_n),
    "training_rounds": int(float(vals["rounds"])),
    "final_round_seconds": sum(e["train_seconds"] for e in events if e["event"] == "round" and e.get("final")),
    "audits": int(float(vals["audits"])),
    "audit_misses": int(float(vals["audit_misses"])),
    "calibration_factor": float(vals["calibration"]),
    "calls_by_reason": reasons,
    "handovers_to_teacher": sum(1 for e in events if e["event"] == "handover" and e["to"] == "teacher"),
    "max_buffered_force_eV_per_A": max(abs(v) for v in buf_f) if buf_f else 0.0,
    "wall_seconds": wall,
    "aimd_steps_measured": int(loop.group(2)),
    "aimd_seconds_per_step": aimd_step,
    "aimd_extrapolated_seconds": aimd_step * md_steps,
    "speedup": aimd_step * md_steps / wall,
}
json.dump(summary, open(path("summary.json"), "w"), indent=2)
print("otf-si-dft summary (" + path("summary.json") + ")")
for key, v in summary.items():
    if isinstance(v, dict):
        v = ", ".join(f"{a}: {b:.4g}" if isinstance(b, float) else f"{a}: {b}" for a, b in v.items())
        print(f"  {key:40s} {v}")
    else:
        print(f"  {key:40s} {v:.4g}" if isinstance(v, float) else f"  {key:40s} {v}")
