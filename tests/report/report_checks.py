#!/usr/bin/env python3
"""nep-report end to end (docs/nep_report.md). Each case writes or makes a training folder, runs
nep-report on it, and checks that the report and every expected panel exist and that the numbers
printed in the panels (report.json lists each panel's text; report.html prints it too) equal values
this script recomputes itself from the folder's files:
  --case gpumd      GPUMD `nep` layouts written here: 12-column virials with -1e6 for unlabelled
                    frames and the training rows in GPUMD's batch order; and the older 2-column virials
  --case nep-train  nep-train run here on 8 + 2 PbTe frames (a few epochs)
  --case fix        a fix nep/train history (restart, repeated round, teacher/check events) with the
                    otf-si example's rdf, NVE log and held-out predictions; and one without teacher events
  --case errors     bad files are named with file:line, and nep-report exits 1
  --case example    the report examples/otf-si/run.sh wrote into --folder: the fix's history, RDF,
                    NVE and held-out panels, buffer and round numbers equal to its history file
Runs with any Python 3 (no numpy): the metrics here are the test's own."""
import argparse
import json
import math
import os
import re
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # tests/: harness
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpumd_folder  # noqa: E402
import otf_folder  # noqa: E402
from report_test_lib import check_figures_present, check_parity, close_to_printed, manifest, rmse, rows, run_report  # noqa: E402
import harness  # noqa: E402
from harness import check  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--case", required=True, choices=("gpumd", "nep-train", "fix", "errors", "example"))
ap.add_argument("--report", required=True, help="the nep-report launcher")
ap.add_argument("--data", required=True, help="tests/data")
ap.add_argument("--train", help="nep-train (case nep-train)")
ap.add_argument("--folder", help="run.sh's OUTDIR (case example)")
args = ap.parse_args()
EFV = os.path.join(args.data, "train/PbTe_gpumd-example_25frames_PbTe_NEP4-NEP_CPU-double-labels_EFV_train.xyz")
EF = os.path.join(args.data, "train/PbTe_gpumd-example_25frames_EF_train.xyz")
PBTE = os.path.join(args.data, "potentials/PbTe_NEP4.txt")
TRAINING_FIGURES = ["loss.png", "parity_energy.png", "parity_force.png", "parity_virial.png",
                    "force_error_distribution.png", "force_rmse_per_element.png"]


def virial_rows(path):
    """(pred, ref) of the labelled frames, either layout, pooled."""
    r = rows(path)
    if r and len(r[0]) == 2:
        nc = len(r) // 6
        r = [[r[c * nc + n][0] for c in range(6)] + [r[c * nc + n][1] for c in range(6)] for n in range(nc)]
    r = [x for x in r if not all(v == -1e6 for v in x[6:])]
    return [v for x in r for v in x[:6]], [v for x in r for v in x[6:]]


def check_training_numbers(d, out, species, model_lines, dim, neurons):
    """Every number in the training panels against the .out files; species: set -> species of each force row."""
    man = manifest(out)
    figs = check_figures_present(out, man, TRAINING_FIGURES)
    for s in ("train", "test"):
        e = rows(os.path.join(d, f"energy_{s}.out"))
        check_parity(figs["parity_energy.png"], s, [x[0] for x in e], [x[1] for x in e])
        f = rows(os.path.join(d, f"force_{s}.out"))
        fp, fr = [v for x in f for v in x[:3]], [v for x in f for v in x[3:]]
        check_parity(figs["parity_force.png"], s, fp, fr)
        vp, vr = virial_rows(os.path.join(d, f"virial_{s}.out"))
        check_parity(figs["parity_virial.png"], s, vp, vr)
        # force error distribution: mean and max of |F_pred - F_ref| per atom (meV/A)
        norms = [1000 * math.sqrt(sum((x[k] - x[k + 3]) ** 2 for k in range(3))) for x in f]
        m = re.search(r"mean \|ΔF\| (\S+) meV/Å, max (\S+) meV/Å", figs["force_error_distribution.png"].get(s, ""))
        check(m is not None and close_to_printed(m.group(1), sum(norms) / len(norms)) and close_to_printed(m.group(2), max(norms)),
              f"force error distribution {s}: mean/max printed {m.groups() if m else None} == "
              f"{sum(norms) / len(norms):.6g}/{max(norms):.6g}")
        # force RMSE per element
        text = figs["force_rmse_per_element.png"].get(s, "")
        for el in sorted(set(species[s])):
            idx = [k for k, sp in enumerate(species[s]) if sp == el]
            want = 1000 * rmse([v for k in idx for v in f[k][:3]], [v for k in idx for v in f[k][3:]])
            m = re.search(rf"\b{el} (\S+?)(,|$)", text)
            check(m is not None and close_to_printed(m.group(1), want),
                  f"force RMSE of {el} ({s}): printed {m.group(1) if m else None} == recomputed {want:.6g}")
    # loss curves: the last value of each curve
    last = rows(os.path.join(d, "loss.out"))[-1]
    loss = figs["loss.png"]
    check(close_to_printed(re.search(r"last: (\S+)", loss["total"]).group(1), last[1]), "loss panel: last total loss")
    for q, col in (("energy", 4), ("force", 5), ("virial", 6)):
        got = re.findall(r"(train|test) last: ([^\s,]+)", loss.get(q, ""))
        want = {"train": 1000 * last[col], "test": 1000 * last[col + 3]}
        check(len(got) == 2 and all(close_to_printed(v, want[s]) for s, v in got),
              f"loss panel {q}: last train/test RMSE {got} == {want}")
    # model table
    table = {t["title"]: dict(t["rows"]) for s in man["sections"] for t in s["tables"]}
    model = table.get("model (nep.txt)", {})
    check(model.get("descriptor length") == str(dim) and model.get("hidden neurons") == str(neurons),
          f"model table: descriptor length {model.get('descriptor length')} (want {dim}), neurons {model.get('hidden neurons')}")
    check(model.get("numbers in the file", "").startswith(f"{model_lines} = "),
          f"model table: numbers in the file {model.get('numbers in the file')!r} (want {model_lines})")
    return figs


def case_gpumd(tmp):
    for name, batch, old in (("gpumd_batch_order", 5, False), ("gpumd_old_virial_layout", 1000, True)):
        d, out = os.path.join(tmp, name), os.path.join(tmp, name + "_report")
        written = gpumd_folder.write(d, EFV, EF, PBTE, batch=batch, old_virial=old)
        run_report(args.report, d, out)
        species = {s: written[s]["species"] for s in ("train", "test")}
        # PbTe_NEP4.txt: 3081 lines, 6 header lines; descriptor 42, 30 neurons (tests/data README table)
        check_training_numbers(d, out, species, 3081 - 6, 42, 30)
        html = open(os.path.join(out, "report.html")).read()
        check("GPUMD nep" in html and "generation" in json.dumps(manifest(out)), f"{name}: recognised as GPUMD output")
    # the reorder case must really be out of file order (else the order matching is untested)
    order = gpumd_folder.batch_order(gpumd_folder.read_frames(os.path.join(tmp, "gpumd_batch_order", "train.xyz")), 5)
    check(order != sorted(order), f"GPUMD batch order differs from file order ({order[:6]}...)")


NEP_IN = """type 2 Te Pb
cutoff 5 4
n_max 4 4
basis_size 4 4
l_max 4 2 0
neuron 8
lambda_v 0.1
batch 4
epoch 6
print_interval 2
"""


def xyz_species(path):
    sp = []
    for fr in gpumd_folder.read_frames(path):
        sp += fr[0]
    return sp


def case_nep_train(tmp):
    d, out = os.path.join(tmp, "pbte"), os.path.join(tmp, "pbte_report")
    os.makedirs(d)
    frames = gpumd_folder.read_frames(EFV)
    open(os.path.join(d, "train.xyz"), "w").write("".join(f[4] for f in frames[:8]))
    open(os.path.join(d, "test.xyz"), "w").write("".join(f[4] for f in frames[8:10]))
    open(os.path.join(d, "nep.in"), "w").write(NEP_IN)
    p = harness.run([args.train, d, "--threads", "2"])
    check(p.returncode == 0, f"nep-train exits 0 ({p.stderr[-300:]})")
    check("ETA" in p.stdout, "nep-train prints progress lines with an ETA")
    run_report(args.report, d, out)
    species = {s: xyz_species(os.path.join(d, f"{s}.xyz")) for s in ("train", "test")}
    lines = open(os.path.join(d, "nep.txt")).read().splitlines()
    header = next(k for k, l in enumerate(lines) if l.startswith("ANN")) + 1
    # nep.in above: descriptor (4 + 1) radial + (4 + 1) x (4 three-body + 1 four-body) angular = 30
    figs = check_training_numbers(d, out, species, len(lines) - header, 30, 8)
    lr = rows(os.path.join(d, "lr.out"))
    check(len(lr) == 3 and [x[0] for x in lr] == [2, 4, 6], f"lr.out: epochs 2 4 6 ({lr})")
    m = re.search(r"last: (\S+)", figs["loss.png"].get("learning rate", ""))
    check(m is not None and close_to_printed(m.group(1), lr[-1][1]), "loss figure: learning-rate panel, last value")
    check("nep-train" in open(os.path.join(out, "report.html")).read(), "recognised as nep-train output")


def case_fix(tmp):
    d, out = os.path.join(tmp, "otf"), os.path.join(tmp, "otf_report")
    w = otf_folder.write(d, os.path.join(args.data, "potentials/Si_2022_NEP4_3body.txt"), EFV, active=True)
    with open(os.path.join(d, "unused.nep.txt.history.jsonl"), "w") as f:  # as in.test's buffering-only fix leaves
        f.write('{"event":"start","step":0,"natoms":8}\n{"event":"start","step":300,"natoms":8}\n')
    run_report(args.report, d, out)
    man = manifest(out)
    check([s["title"] for s in man["sections"]] == ["fix nep/train: si.history.jsonl", "Molecular dynamics and held-out frames"],
          f"sections: the history without rounds is left out ({[s['title'] for s in man['sections']]})")
    figs = check_figures_present(out, man, ["fix_buffer.png", "fix_rmse.png", "fix_timing.png", "fix_teacher_calls.png",
                                            "fix_deviation_vs_error.png", "fix_calibration.png", "rdf.png", "nve_energy.png",
                                            "heldout_parity_energy.png", "heldout_parity_force.png"])
    rounds = {}
    for e in w["events"]:
        if e["event"] == "round":
            rounds[e["round"]] = e   # the last line of a round counts
    r = [rounds[k] for k in sorted(rounds)]
    last = r[-1]
    check(figs["fix_buffer.png"]["buffer"] == f"after round {last['round']}: {last['frames']} frames "
          f"({last['n_train']} training, {last['n_heldout']} held out)", f"buffer panel: {figs['fix_buffer.png']}")
    f_note = figs["fix_rmse.png"]["force (meV/Å)"]
    for short, key in (("train", "train_rmse_f_meV_per_A"), ("held-out", "heldout_rmse_f_meV_per_A"),
                       ("new", "fresh_rmse_f_meV_per_A")):
        m = re.search(rf"\b{short} ([0-9.eE+-]+)", f_note)
        check(m is not None and close_to_printed(m.group(1), last[key]), f"RMSE panel: last {short} force RMSE in {f_note!r}")
    t = re.search(r"(\d+) rounds: training (\S+) s, MD waiting (\S+) s", figs["fix_timing.png"]["timing"])
    check(t is not None and int(t.group(1)) == len(r) and close_to_printed(t.group(2), sum(e["train_seconds"] for e in r))
          and close_to_printed(t.group(3), sum(e["md_wait_seconds"] for e in r)),
          f"timing panel: rounds and sums over the last line of each round ({figs['fix_timing.png']})")
    teacher = [e for e in w["events"] if e["event"] == "teacher"]
    counts = {k: sum(1 for e in teacher if e["reason"] == k) for k in ("audit", "lower", "upper")}
    check(figs["fix_teacher_calls.png"]["teacher"] == f"{len(teacher)} teacher calls: " +
          ", ".join(f"{k} {v}" for k, v in counts.items()) + f"; {teacher[-1]['teacher_evaluations']} teacher evaluations",
          f"teacher panel: {figs['fix_teacher_calls.png']}")
    x = [e["max_dev_eV_per_A"] for e in teacher]
    y = [e["true_max_err_eV_per_A"] for e in teacher]
    mx, my = sum(x) / len(x), sum(y) / len(y)
    pearson = sum((a - mx) * (b - my) for a, b in zip(x, y)) / math.sqrt(
        sum((a - mx) ** 2 for a in x) * sum((b - my) ** 2 for b in y))
    check(figs["fix_deviation_vs_error.png"]["deviation"] == f"{len(teacher)} teacher calls, Pearson r = {pearson:.3f}",
          f"deviation panel: {figs['fix_deviation_vs_error.png']} (r = {pearson:.5f})")
    # calibration: audited calls, prediction = the factor the previous call left x deviation
    factor, under, n_aud = 1.0, 0, 0
    for e in teacher:
        if e["audited"]:
            n_aud += 1
            under += e["true_max_err_eV_per_A"] > factor * e["max_dev_eV_per_A"]
        factor = e["calibration_factor"]
    p, z = under / n_aud, 1.96
    c = (p + z * z / (2 * n_aud)) / (1 + z * z / n_aud)
    half = z * math.sqrt(p * (1 - p) / n_aud + z * z / (4 * n_aud * n_aud)) / (1 + z * z / n_aud)
    want = (f"{n_aud} audited frames; true error above the prediction in {under} "
            f"(95 % interval {max(0, c - half):.2f}-{min(1, c + half):.2f}); factor now {factor:.3g}")
    check(figs["fix_calibration.png"]["calibration"] == want, f"calibration panel: {figs['fix_calibration.png']} == {want!r}")
    gt, gs = w["rdf"]["teacher"], w["rdf"]["student"]
    l1 = sum(abs(a - b) for a, b in zip(gt, gs)) / sum(gt)
    m = re.search(r"L1 difference student vs teacher: (\S+)", figs["rdf.png"].get("rdf", ""))
    check(m is not None and close_to_printed(m.group(1), l1, sig=3), f"rdf panel: L1 difference {m and m.group(1)} == {l1:.5g}")
    steps, etot, natoms, dt = w["nve"]
    ts = [(s - steps[0]) * dt for s in steps]
    es = [1000 * e / natoms for e in etot]
    mt, me = sum(ts) / len(ts), sum(es) / len(es)
    slope = sum((a - mt) * (b - me) for a, b in zip(ts, es)) / sum((a - mt) ** 2 for a in ts)
    m = re.search(r"student: drift (\S+) meV/atom/ps", figs["nve_energy.png"].get("student", ""))
    check(m is not None and close_to_printed(m.group(1), slope), f"NVE panel: drift {m and m.group(1)} == {slope:.6g}")
    check("teacher" not in figs["nve_energy.png"], "NVE panel: the teacher's 0-step NVE is not plotted")
    for q in ("energy", "force"):
        check_parity(figs[f"heldout_parity_{q}.png"], "held-out", *w["heldout"][q])
    tables = {t["title"]: dict(t["rows"]) for s in man["sections"] for t in s["tables"]}
    check(tables.get("run", {}).get("starts (1 + restarts)") == 2 and tables["run"].get("rounds") == len(r),
          f"run table: 2 starts, {len(r)} rounds ({tables.get('run')})")
    check("nep.in" in tables and "model" in tables and "summary.json" in tables, "nep.in, model and summary.json tables shown")
    # without active learning: no teacher panels
    d2, out2 = os.path.join(tmp, "otf_passive"), os.path.join(tmp, "otf_passive_report")
    otf_folder.write(d2, os.path.join(args.data, "potentials/Si_2022_NEP4_3body.txt"), EFV, active=False)
    run_report(args.report, d2, out2)
    files = set(os.listdir(out2))
    check("fix_rmse.png" in files and "fix_teacher_calls.png" not in files and "fix_deviation_vs_error.png" not in files,
          "without teacher events: no teacher panels")


def case_errors(tmp):
    def expect(folder, pattern, what):
        p = run_report(args.report, folder, folder + "_report", expect_ok=False)
        check(p.returncode == 1 and re.search(pattern, p.stderr) is not None, f"{what}: exit 1 and {pattern!r} ({p.stderr.strip()[-200:]})")

    d = os.path.join(tmp, "bad_loss")
    gpumd_folder.write(d, EFV, EF, PBTE)
    with open(os.path.join(d, "loss.out"), "w") as f:
        f.write("100 1 2 3 4 5 6\n")
    expect(d, r"bad_loss/loss\.out:1: 7 columns; expected 6 or 10", "loss.out with 7 columns")
    d = os.path.join(tmp, "bad_force")
    gpumd_folder.write(d, EFV, EF, PBTE)
    lines = open(os.path.join(d, "force_train.out")).read().splitlines(True)
    lines[2] = "0.1 0.2 abc 0.1 0.2 0.3\n"
    open(os.path.join(d, "force_train.out"), "w").writelines(lines)
    expect(d, r"force_train\.out:3: 'abc' is not a number", "force_train.out with a bad number")
    d = os.path.join(tmp, "bad_history")
    os.makedirs(d)
    with open(os.path.join(d, "m.history.jsonl"), "w") as f:
        f.write('{"event":"start","step":0}\n{"event":"round","round":1,\n')
    expect(d, r"m\.history\.jsonl:2: not a JSON object", "history with a truncated line")
    with open(os.path.join(d, "m.history.jsonl"), "w") as f:
        f.write('{"event":"start","step":0}\n{"event":"round","step":10}\n')
    expect(d, r"m\.history\.jsonl:2: round event without round", "history round without its number")
    d = os.path.join(tmp, "empty")
    os.makedirs(d)
    expect(d, r"nothing to report", "an empty folder")


def case_example(tmp):
    d = args.folder
    out = os.path.join(d, "report")
    histories = [p for p in os.listdir(d) if p.endswith("history.jsonl")]
    check("si.nep.txt.history.jsonl" in histories, f"the fix wrote its history ({histories})")
    if "si.nep.txt.history.jsonl" not in histories:
        return
    events = [json.loads(l) for l in open(os.path.join(d, "si.nep.txt.history.jsonl")) if l.strip()]
    rounds = {}
    for e in events:
        if e["event"] == "round":
            rounds[e["round"]] = e
    last = rounds[max(rounds)]
    man = manifest(out)
    figs = check_figures_present(out, man, ["fix_buffer.png", "fix_rmse.png", "fix_timing.png", "rdf.png",
                                            "nve_energy.png", "heldout_parity_energy.png", "heldout_parity_force.png"])
    check(figs["fix_buffer.png"]["buffer"] == f"after round {last['round']}: {last['frames']} frames "
          f"({last['n_train']} training, {last['n_heldout']} held out)", f"buffer panel from the history: {figs['fix_buffer.png']}")
    m = re.search(r"\btrain ([0-9.eE+-]+)", figs["fix_rmse.png"]["force (meV/Å)"])
    check(m is not None and close_to_printed(m.group(1), last["train_rmse_f_meV_per_A"]),
          f"RMSE panel: last training force RMSE {m and m.group(1)} == history {last['train_rmse_f_meV_per_A']}")
    check(not any("unused" in s["title"] for s in man["sections"]), "in.test's buffering-only history is left out")


{"gpumd": case_gpumd, "nep-train": case_nep_train, "fix": case_fix, "errors": case_errors,
 "example": case_example}[args.case](harness.folder(args.case))
harness.finish()
