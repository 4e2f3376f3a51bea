#!/usr/bin/env python3
"""fix nep/train mode active with `threshold LO HI grade` on a 216-atom Si box (Stillinger-Weber
teacher, committee 3), checked from the history against quantities recomputed here:
- each committee round's reference deviation equals the new committee's deviation on its training
  frames (the buffer's first n_train frames, written by nep-frames), max over atoms (and, in a short
  second run with `deviation rms`, the RMS over atoms), maximised over frames, computed from
  nep-predict's forces of the round's model and members (keep_rounds yes);
- every check step after the first round logs grade = deviation / the reference of the latest round
  adopted before it;
- every teacher call while the student drives agrees with the grade: lower for LO <= grade < HI,
  upper for grade >= HI; no call on a trusted step (grade < LO); trusted and lower steps both occur."""
import json, math, os, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402
from otf_common import active_box_deck, arg_parser, box_data, launch_lmp, nep_in, prepare  # noqa: E402

args = arg_parser().parse_args()
PREDICT = os.path.join(os.path.dirname(os.path.abspath(args.frames)), "nep-predict")
LO, HI = 1.2, 4.0

DECK = lambda deviation, steps: active_box_deck(
    args.plugin, 1200, 1000, f"threshold {LO} {HI} grade deviation {deviation} adopt_after 20 20 first_round 5 keep_rounds yes",
    steps, "thermo 50")


def run(deviation, steps):
    d = prepare(harness.folder("grade_" + deviation), args.lmp, nep_in(epochs=10))
    launch_lmp(args.lmp, d, box_data(3), name="in.box").finish()
    proc, log = launch_lmp(args.lmp, d, DECK(deviation, steps)).finish()
    ok = check(proc.returncode == 0, f"active run with threshold {LO} {HI} grade, deviation {deviation}, finishes")
    return d, ([json.loads(l) for l in open(os.path.join(d, "si.nep.txt.history.jsonl"))] if ok else [])


def read_xyz(path):
    """frames of nep-predict's xyz: per frame the per-atom forces (species, pos 3, energies 1, forces 3, ...)"""
    lines, out, i = open(path).read().splitlines(), [], 0
    while i < len(lines) and lines[i].strip():
        n = int(lines[i])
        out.append([[float(v) for v in l.split()[5:8]] for l in lines[i + 2:i + 2 + n]])
        i += n + 2
    return out


def deviation(forces, rms):
    """max_i sigma_i or sqrt(mean_i sigma_i^2), sigma_i^2 = (1/M) sum_m |F_i^m - <F_i>|^2"""
    m, n, s2 = len(forces), len(forces[0]), []
    for i in range(n):
        acc = 0.0
        for c in range(3):
            mean = sum(f[i][c] for f in forces) / m
            acc += sum((f[i][c] - mean) ** 2 for f in forces) / m
        s2.append(acc)
    return math.sqrt(sum(s2) / n) if rms else math.sqrt(max(s2))


def check_references(d, events, rms):
    """the reference of each committee round, recomputed from the buffer and the round's models"""
    subprocess.run([args.frames, os.path.join(d, "si.h5"), os.path.join(d, "buffer.xyz")], check=True, capture_output=True)
    buffer_lines = open(os.path.join(d, "buffer.xyz")).read().splitlines()
    worst, checked = 0.0, 0
    for r in [e for e in events if e["event"] == "round"]:
        n, k, i = r["n_train"], r["round"], 0
        for _ in range(n):    # the first n frames: the training frames when the round started (arrival order)
            i += int(buffer_lines[i]) + 2
        open(os.path.join(d, "train.xyz"), "w").write("\n".join(buffer_lines[:i]) + "\n")
        forces = []
        for model in [f"si.nep.txt.round{k}"] + [f"si.nep.txt.round{k}.member{j}" for j in (1, 2)]:
            subprocess.run([PREDICT, os.path.join(d, model), os.path.join(d, "train.xyz"), os.path.join(d, "pred.xyz")],
                           check=True, capture_output=True)
            forces.append(read_xyz(os.path.join(d, "pred.xyz")))
        ref = max(deviation([f[j] for f in forces], rms) for j in range(n))
        worst = max(worst, abs(r["reference_deviation_eV_per_A"] - ref) / ref)
        checked += 1
    check(checked >= 2 and worst < 1e-6, f"the reference of {checked} rounds = the committee's largest "
          f"{'RMS' if rms else 'max'} deviation on its training frames ({worst:.1e})")


d_rms, events = run("rms", 200)
if events:
    check_references(d_rms, events, True)
d, events = run("max", 500)
if not events:
    harness.finish()
check_references(d, events, False)

# ---- grades and decisions, in the order the history records them
ref, wrong_grade, wrong_call, trusted, lower, seen = None, [], [], 0, 0, 0
for e in events:
    if e["event"] == "round":
        ref = e["reference_deviation_eV_per_A"]
    elif e["event"] == "check" and ref is not None:
        seen += 1
        g = e["max_dev_eV_per_A"] / ref
        if abs(e.get("grade", -1.0) - g) > 1e-8 * g:
            wrong_grade.append((e["step"], e.get("grade"), g))
    elif e["event"] == "teacher" and ref is not None and e["reason"] in ("lower", "upper"):
        g = e["max_dev_eV_per_A"] / ref
        lower += e["reason"] == "lower"
        if (e["reason"] == "lower" and not LO <= g < HI) or (e["reason"] == "upper" and g < HI):
            wrong_call.append((e["step"], e["reason"], g))
called = {e["step"] for e in events if e["event"] == "teacher"}
ref = None
for e in events:
    if e["event"] == "round":
        ref = e["reference_deviation_eV_per_A"]
    elif e["event"] == "check" and ref is not None and e["driver"] == "student" and e["max_dev_eV_per_A"] / ref < LO:
        trusted += 1
        if e["step"] in called:
            wrong_call.append((e["step"], "trusted", e["max_dev_eV_per_A"] / ref))
check(seen >= 10 and not wrong_grade, f"{seen} checks log grade = deviation / reference; wrong: {wrong_grade[:3]}")
check(not wrong_call and trusted >= 2 and lower >= 2,
      f"teacher calls follow the grade ({lower} lower calls at {LO} <= grade < {HI}, {trusted} trusted checks "
      f"without a call); wrong: {wrong_call[:3]}")
harness.finish()
