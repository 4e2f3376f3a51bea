#!/usr/bin/env python3
"""fix nep/train mode active with `probe P` on a 216-atom Si box (Stillinger-Weber teacher,
committee 3), checked from the history and the thermo output:
- probes happen only while the teacher drives, once a committee exists, every P steps and never on a
  check step;
- a probe hands the MD back (a handover to the student on its own step) exactly when its deviation
  is below LO and a round was adopted since the teacher took over;
- teacher evaluations = the steps the teacher drove (the setup step included) + the calls made while
  the student drove, as the fix counts them (thermo), with and without probes;
- without probes every hand-back is on a check step and a take-over costs at least a check
  interval of teacher steps; with probe 1 some take-overs cost fewer;
- with --mpi, on 2 ranks the probes (every rank evaluates the committee and reduces) finish and give
  1 rank's steps and deviations to 1e-6 up to step 100."""
import json, os, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402
from otf_common import active_box_deck, arg_parser, box_data, launch_lmp, nep_in, prepare, thermo_rows  # noqa: E402

ap = arg_parser()
ap.add_argument("--mpi", action="store_true")
args = ap.parse_args()
LO, HI, STEPS = 0.5, 1.5, 400
EVERY = 10  # active_box_deck samples (checks) every 10 steps

DECK = lambda probe: active_box_deck(args.plugin, 1500, 1500, f"threshold {LO} {HI} probe {probe}", STEPS,
                                     f"thermo_style custom step temp f_learn[8]\nthermo {STEPS}")


def run(probe, np=1):
    d = prepare(harness.folder(f"probe{probe}_np{np}"), args.lmp, nep_in(epochs=10))
    launch_lmp(args.lmp, d, box_data(3), name="in.box").finish()
    proc, log = launch_lmp(args.lmp, d, DECK(probe), np=np).finish()
    if not check(proc.returncode == 0, f"active run with probe {probe} on {np} rank(s) finishes"):
        return [], None
    rows = thermo_rows(log)
    return [json.loads(l) for l in open(os.path.join(d, "si.nep.txt.history.jsonl"))], rows[-1]["f_learn[8]"]


def driving_spans(events):
    """(take-over step, hand-back step or None) of each period the teacher drove; the run starts
    with the teacher driving (take-over step -1: it also computed the setup step 0)"""
    spans, start, driving = [], -1, True
    for e in events:
        if e["event"] == "handover" and e["to"] == "student":
            spans.append((start, e["step"]))
            driving = False
        elif e["event"] == "handover" and e["to"] == "teacher":
            start, driving = e["step"], True
    if driving:
        spans.append((start, None))
    return spans


def evaluations(events, spans):
    """the setup step + the steps the teacher drove + the calls while the student drove (lower, audit, and
    upper: the take-over's own step)"""
    driven = sum((h if h is not None else STEPS) - t for t, h in spans)
    calls = sum(1 for e in events if e["event"] == "teacher" and e["reason"] != "driving")
    return driven + calls


def check_probes(events, probe):
    rounds = [e["step"] for e in events if e["event"] == "round"]
    spans = driving_spans(events)
    handed = {e["step"] for e in events if e["event"] == "handover" and e["to"] == "student"}
    wrong, back, kept_driving = [], 0, 0
    for e in [e for e in events if e["event"] == "probe"]:
        s = e["step"]
        span = [(t, h) for t, h in spans if t < s and (h is None or s <= h)]
        if not span or s % EVERY == 0 or s % probe or not rounds or rounds[0] >= s:
            wrong.append((s, "probe outside a teacher-driven period with a committee, or on a check step"))
            continue
        t = span[0][0]
        due = e["max_dev_eV_per_A"] < LO and any(t <= r < s for r in rounds)
        if due != (s in handed):
            wrong.append((s, e["max_dev_eV_per_A"], due))
        back += due
        kept_driving += not due
    check(not wrong and back >= 1 and kept_driving >= 1,
          f"probe {probe}: {back} probes handed back (deviation < {LO}, a round since the take-over), {kept_driving} "
          f"kept the teacher driving, all between check steps; wrong: {wrong[:3]}")
    return spans


events1, evals1 = run(1)
if events1:
    spans1 = check_probes(events1, 1)
    check(evaluations(events1, spans1) == evals1,
          f"probe 1: {evals1:.0f} teacher evaluations = setup + teacher-driven steps + student-driven calls "
          f"({evaluations(events1, spans1)})")
    short = [h - t for t, h in spans1[1:] if h is not None and h - t < EVERY]
    check(len(short) >= 1, f"probe 1: {len(short)} take-overs handed back within a check interval "
          f"(teacher steps {sorted(short)[:8]})")
if events1 and args.mpi:
    events2, _ = run(1, np=2)
    early = lambda ev: [(e["step"], e["max_dev_eV_per_A"]) for e in ev if e["event"] == "probe" and e["step"] <= 100]
    a, b = early(events1), early(events2)
    worst = max([abs(x[1] - y[1]) / x[1] for x, y in zip(a, b)], default=0.0)
    check(events2 and len(a) >= 3 and [x[0] for x in a] == [y[0] for y in b] and worst < 1e-6,
          f"2 ranks: {len(b)} probes to step 100 at 1 rank's steps, deviations to {worst:.1e}")
events0, evals0 = run(0)
if events0:
    spans0 = driving_spans(events0)
    check(not [e for e in events0 if e["event"] == "probe"] and
          all(e["step"] % EVERY == 0 for e in events0 if e["event"] == "handover"),
          "probe 0: no probes; every hand-over on a check step")
    takeovers = [h - t for t, h in spans0[1:] if h is not None]
    check(len(takeovers) >= 1 and min(takeovers) >= EVERY and evaluations(events0, spans0) == evals0,
          f"probe 0: {len(takeovers)} take-overs of >= {EVERY} teacher steps ({sorted(takeovers)[:5]}); "
          f"{evals0:.0f} teacher evaluations = setup + teacher-driven steps + student-driven calls")
harness.finish()
