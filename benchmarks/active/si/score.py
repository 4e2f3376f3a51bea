#!/usr/bin/env python3
"""Scores of benchmarks/active/si/run.sh: per-state and overall held-out force RMSE of the passive
and the active run's own model, teacher evaluations, wall seconds, and the trajectory observables
of the active (student-driven) run against the passive (teacher-driven) run's, per window of 1000
steps (mean potential energy per atom, g(r)), and the same for the MD that each run's final model
drives (OUTDIR/drive/*_model, in.drive). Tolerance per window: the larger of the fixed ones in
examples/otf-si/observables.py (5 meV/atom, g(r) L1 0.05) and the teacher's own spread in that
phase (heating, melt, hold): the largest difference between the passive run and SW from two other
velocity seeds (OUTDIR/drive/sw_*). Every window is judged. Writes OUTDIR/compare.json."""
import json, os, re, sys

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "..", "..", "examples", "otf-si"))
from heldout import read_xyz  # noqa: E402  (examples/otf-si/heldout.py)
import observables  # noqa: E402  (examples/otf-si/observables.py)

out = sys.argv[1]
states = ["c300", "c900", "c1500", "l2000"]
res = {}
for side in ("passive", "active"):
    log = open(os.path.join(out, side, "log.lammps")).read()
    steps = sum(int(m) for m in re.findall(r"Loop time of \S+ on \d+ procs for (\d+) steps", log))
    if side == "passive":
        evals = steps + len(re.findall(r"Loop time of", log))    # every step and each run's set-up force call
    else:
        evals = int(float(re.search(r"^ACTIVE frames \S+ rounds \S+ teacher_evaluations (\S+)", log, re.M).group(1)))
    per, se, n = {}, 0.0, 0
    for s in states:
        ref = read_xyz(os.path.join(out, "states", f"{s}.xyz"), 4)[2]
        pred = read_xyz(os.path.join(out, side, f"pred_{s}.xyz"), 5)[2]
        d = sum((a - b) ** 2 for a, b in zip(pred, ref))
        per[s] = 1e3 * (d / len(ref)) ** 0.5
        se, n = se + d, n + len(ref)
    res[side] = {"heldout_force_rmse_meV_per_A": 1e3 * (se / n) ** 0.5, "per_state_meV_per_A": per,
                 "teacher_evaluations": evals, "md_steps": steps,
                 "wall_seconds": float(open(os.path.join(out, side, "wall_seconds")).read())}
p, a = res["passive"], res["active"]
res["ratio_active_over_passive"] = {s: a["per_state_meV_per_A"][s] / p["per_state_meV_per_A"][s] for s in states}
res["ratio_active_over_passive"]["overall"] = a["heldout_force_rmse_meV_per_A"] / p["heldout_force_rmse_meV_per_A"]
# observables: windows of 1000 steps; the phases end at 10000 (heat), 13000 (melt), 20000 (hold)
natoms = 512
phases = [("heat", 1000, 10000), ("melt", 11000, 13000), ("hold", 14000, 20000)]
path = lambda *a: os.path.join(out, *a)
win = {side: observables.windows(path(side), natoms) for side in ("passive", "active")}
teacher = [win["passive"]] + [observables.windows(path("drive", d), natoms) for d in ("sw_12345", "sw_777")]
spread = observables.spread(teacher, phases)
res["teacher_spread"] = spread
res["observables"] = observables.compare(win["passive"], win["active"], spread=spread, phases=phases)
res["observables"]["noise_floor_rdf_l1_teacher_hold"] = observables.noise_floor(
    win["passive"], list(range(15000, 20001, 1000)))
res["observables_final_models"] = {
    side: observables.compare(win["passive"], observables.windows(path("drive", side + "_model"), natoms),
                              spread=spread, phases=phases) for side in ("passive", "active")}
json.dump(res, open(os.path.join(out, "compare.json"), "w"), indent=2)
print(f"{'':10s} {'passive':>10s} {'active':>10s} {'ratio':>7s}")
for s in states + ["overall"]:
    pv = p["per_state_meV_per_A"].get(s, p["heldout_force_rmse_meV_per_A"])
    av = a["per_state_meV_per_A"].get(s, a["heldout_force_rmse_meV_per_A"])
    print(f"{s:10s} {pv:10.1f} {av:10.1f} {av / pv:7.2f}   (force RMSE, meV/A)")
for k in ("teacher_evaluations", "md_steps", "wall_seconds"):
    print(f"{k:20s} passive {p[k]:.6g}  active {a[k]:.6g}")
print("teacher's own spread (SW, 3 velocity seeds), largest |dPE| meV/atom / g(r) L1 per phase:",
      ", ".join(f"{k} {v['pe_meV_per_atom']:.1f} / {v['rdf_l1']:.3f}" for k, v in spread.items()))
print(f"{'window':>8s} {'T passive':>9s} {'T active':>9s} {'dPE meV/at':>10s} {'g(r) L1':>8s} {'tolerances':>14s}")
for w in res["observables"]["windows"]:
    print(f"{w['end_step']:8d} {w['temp_K'][0]:9.0f} {w['temp_K'][1]:9.0f} {w['pe_diff_meV_per_atom']:10.2f} "
          f"{w['rdf_l1']:8.3f} {w['pe_tolerance_meV_per_atom']:7.1f} {w['rdf_l1_tolerance']:6.3f}{'' if w['within'] else '  OUT'}")
print("the active run's own trajectory (in-run student driving) within tolerance in every window:",
      res["observables"]["all_judged_within"])
for side, c in res["observables_final_models"].items():
    out_w = [w["end_step"] for w in c["windows"] if not w["within"]]
    worst = max(c["windows"], key=lambda w: abs(w["pe_diff_meV_per_atom"]))
    print(f"the MD driven by the {side} run's final model within tolerance in every window: {c['all_judged_within']}"
          f" (largest |dPE| {abs(worst['pe_diff_meV_per_atom']):.1f} meV/atom at {worst['end_step']}; "
          f"max g(r) L1 {max(w['rdf_l1'] for w in c['windows']):.3f}{'; out: ' + str(out_w) if out_w else ''})")
