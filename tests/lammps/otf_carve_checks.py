#!/usr/bin/env python3
"""fix nep/train ... carve CORE K on a 1728-atom Si box (Stillinger-Weber teacher), each carved frame
checked against the LAMMPS dump of its step, re-derived here from the rule (docs/fix_nep_train.rst,
"Carved regions"):
- passive (the teacher drives, no committee): the centres are the atoms of largest teacher force,
  ties by ID, each more than 2 CORE from the centres before; a region holds exactly the atoms within
  CORE + 2 rc of its centre (minimum image), in ID order, their displacement and teacher force to
  round-off, force weight 1 within CORE and 0 beyond; no energy or virial; rounds train on them;
- the same frames on 2 MPI ranks (regions gathered from both ranks);
- active (the student drives, committee 3): on every teacher call with a committee, the history's
  carved_centres are chosen by the committee's per-atom deviation (dumped on the step), and the
  teacher is computed near the centres only: the labelled forces equal those of a rerun of the
  whole system with sw alone (1e-10), while atoms far from every centre got no teacher force;
- a box too small for a region gives whole frames and a warning; bad values are errors."""
import json, math, os, re, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402
from otf_common import arg_parser, box_data, launch_lmp, nep_in, prepare  # noqa: E402

ap = arg_parser()
ap.add_argument("--mpi", action="store_true")
args = ap.parse_args()

NEP_IN = nep_in(epochs=4)
RC = 4.2                    # nep_in's largest cutoff
CORE, K = 2.6, 3
OUTER = CORE + 2 * RC       # 11.0 A: fits the 32.6 A box

BOX_DATA = box_data(6)
HEAD = f"""units metal
boundary p p p
read_data box.data
velocity all create 1500 7 loop geom
timestep 0.001
plugin load {args.plugin}
"""


def passive_deck(steps=60):
    return HEAD + f"""pair_style sw
pair_coeff * * Si.sw Si
fix nvt all nvt temp 1500 1500 0.1
fix learn all nep/train every 10 buffer si.h5 model si.nep.txt input nep.in seed 7 train_every 6 carve {CORE} {K}
dump d all custom 10 traj.dump id type x y z fx fy fz
dump_modify d format float %.17g sort id
thermo 10
run {steps}
"""


def active_deck(steps=300):
    return HEAD + f"""pair_style hybrid/overlay nep/gpu cutoff {RC} sw
pair_coeff * * nep/gpu none Si
pair_coeff * * sw Si.sw Si
fix nvt all nvt temp 1500 1500 0.1
fix learn all nep/train every 10 buffer si.h5 model si.nep.txt input nep.in seed 7 train_every 6 carve {CORE} 2 &
    mode active teacher sw committee 3 threshold 0.5 5 adopt_after 20 20 audit 0.5
dump dv all custom 10 dev.dump id type x y z f_learn f_learn f_learn
dump_modify dv format float %.17g sort id
dump d all custom 10 traj.dump id type x y z
dump_modify d format float %.17g sort id
thermo 10
run {steps}
"""


RERUN = f"""units metal
boundary p p p
read_data box.data
pair_style sw
pair_coeff * * Si.sw Si
dump r all custom 1 rerun.dump id type x y z fx fy fz
dump_modify r format float %.17g sort id
rerun traj.dump dump x y z box yes
"""


def folder(tag):
    d = prepare(harness.folder(tag), args.lmp, NEP_IN)
    if os.path.exists(BOX):
        subprocess.run(["cp", BOX, d], check=True)
    return d


def read_dump(path):
    """step -> (box lengths, {id: [x, y, z, a, b, c]})"""
    out, lines, i = {}, open(path).read().splitlines(), 0
    while i < len(lines):
        step, n = int(lines[i + 1]), int(lines[i + 3])
        L = [float(lines[i + 5 + k].split()[1]) - float(lines[i + 5 + k].split()[0]) for k in range(3)]
        out[step] = (L, {int(t[0]): [float(v) for v in t[2:8]] for t in (l.split() for l in lines[i + 9:i + 9 + n])})
        i += 9 + n
    return out


def read_frames(d):
    """The buffer's frames (nep-frames h5 -> xyz): header text, positions, forces, force weights."""
    xyz = os.path.join(d, "si.h5.xyz")
    subprocess.run([args.frames, os.path.join(d, "si.h5"), xyz], check=True, capture_output=True)
    out = []
    for fr in harness.xyz_frames(xyz):
        head = fr[1]
        props = re.search(r"Properties=(\S+)", head).group(1).split(":")
        cols, at = {}, 0
        for k in range(0, len(props), 3):
            cols[props[k]] = (at, int(props[k + 2]))
            at += int(props[k + 2])
        rows = [l.split()[1:] for l in fr[2:]]   # after the species column
        def col(name):
            a, w = cols[name]
            return [[float(v) for v in r[a - 1:a - 1 + w]] for r in rows]
        out.append(dict(head=head, pos=col("pos"), force=col("force"),
                        weight=[w[0] for w in col("force_weight")] if "force_weight" in cols else None))
    return out


def min_image(d, L):
    return [x - L[k] * round(x / L[k]) for k, x in enumerate(d)]


def expected_regions(L, atoms, key, k_max):
    """The centres (IDs) by the rule, and each region's (ID, displacement) rows in ID order"""
    ranked = sorted(atoms, key=lambda t: (-key[t], t))[:8 * k_max]
    centres = []
    for t in ranked:
        if len(centres) == k_max:
            break
        if all(sum(v * v for v in min_image([a - b for a, b in zip(atoms[t][:3], atoms[c][:3])], L)) > 4 * CORE * CORE
               for c in centres):
            centres.append(t)
    regions = []
    for c in centres:
        rows = []
        for t in sorted(atoms):
            dv = min_image([a - b for a, b in zip(atoms[t][:3], atoms[c][:3])], L)
            if sum(v * v for v in dv) < OUTER * OUTER:
                rows.append((t, dv))
        regions.append(rows)
    return centres, regions


def region_matches(fr, rows, atoms):
    """worst |displacement| difference (A), worst force deviation relative to the largest, and
    whether the weights are 1 exactly within CORE"""
    if len(fr["pos"]) != len(rows):
        return None, None, f"{len(fr['pos'])} atoms, expected {len(rows)}"
    half = OUTER + 0.5
    dpos = max(abs(p - half - v) for q, (t, dv) in zip(fr["pos"], rows) for p, v in zip(q, dv))
    fref = [v for t, _ in rows for v in atoms[t][3:6]]
    fgot = [v for f in fr["force"] for v in f]
    dfor = max(abs(a - b) for a, b in zip(fgot, fref)) / max(abs(v) for v in fref)
    wants = [1.0 if sum(v * v for v in dv) <= CORE * CORE else 0.0 for _, dv in rows]
    return dpos, dfor, "" if fr["weight"] == wants else "force weights differ from the CORE rule"


# ---- the box, written once on 1 rank (atom IDs independent of the rank count)
BOX = "/nonexistent"
box_run = launch_lmp(args.lmp, harness.folder("box"), BOX_DATA, name="in.box", timeout=120)
proc, _ = box_run.finish()
BOX = os.path.join(box_run.d, "box.data")
if not check(proc.returncode == 0 and os.path.exists(BOX), "the 1728-atom box is written"):
    harness.finish()

runs = {"p1": launch_lmp(args.lmp, folder("p1"), passive_deck(), timeout=900)}
if args.mpi:
    runs["p2"] = launch_lmp(args.lmp, folder("p2"), passive_deck(), np=2, timeout=900)
runs["a1"] = launch_lmp(args.lmp, folder("a1"), active_deck(), timeout=900)
small = folder("small")
runs["small"] = launch_lmp(args.lmp, small, passive_deck(20).replace("read_data box.data", """lattice diamond 5.431
region box block 0 2 0 2 0 2
create_box 1 box
create_atoms 1 box
mass 1 28.0855"""), timeout=300)
bad = {}
for tag, value in (("core0", "0 3"), ("k0", "2.6 0"), ("k_missing", "2.6"), ("word", "2.6 none")):
    bad[tag] = launch_lmp(args.lmp, folder("bad_" + tag), passive_deck(0).replace(f"carve {CORE} {K}", "carve " + value),
                          timeout=120, expect_ok=False)
res = {k: r.finish() for k, r in runs.items()}
for tag, r in bad.items():
    proc, text = r.finish()
    check(proc.returncode != 0 and "Illegal fix nep/train command" in text and "carve" in text,
          f"carve {tag}: a clear error naming carve")

# ---- passive, 1 rank: every frame against the dump of its step
proc, log = res["p1"]
d1 = runs["p1"].d
if check(proc.returncode == 0, "passive carve run (1 rank) finishes"):
    dump = read_dump(os.path.join(d1, "traj.dump"))
    frames = read_frames(d1)
    steps = sorted(s for s in dump if s > 0)    # passive mode samples steps 10, 20, ...
    check(len(frames) == K * len(steps), f"{K} regions per teacher call: {len(frames)} frames for {len(steps)} calls")
    worst_p = worst_f = 0.0
    problems = []
    for n, step in enumerate(steps):
        L, atoms = dump[step]
        key = {t: math.sqrt(sum(v * v for v in a[3:6])) for t, a in atoms.items()}
        _, regions = expected_regions(L, atoms, key, K)
        for r, rows in enumerate(regions):
            if K * n + r >= len(frames):
                problems.append(f"step {step}: region {r} missing")
                continue
            fr = frames[K * n + r]
            dp, df, why = region_matches(fr, rows, atoms)
            if why:
                problems.append(f"step {step} region {r}: {why}")
            if dp is not None:
                worst_p, worst_f = max(worst_p, dp), max(worst_f, df)
            if "energy=" in fr["head"] or "virial=" in fr["head"] or 'pbc="F F F"' not in fr["head"]:
                problems.append(f"step {step} region {r}: energy/virial or periodic ({fr['head'][:120]})")
    check(not problems and worst_p < 1e-9 and worst_f < 1e-12,
          f"each region: the atoms within CORE + 2 rc of the centres chosen by teacher force, in ID order; "
          f"displacements to {worst_p:.1e} A, teacher forces to {worst_f:.1e}, weights by the CORE rule"
          + (f"; {problems[:3]}" if problems else ""))
    sizes = [len(f["pos"]) for f in frames]
    labelled = [sum(1 for w in f["weight"] or [] if w > 0) for f in frames]
    check(max(sizes) < 400 and min(labelled) >= 4,
          f"regions of {min(sizes)}-{max(sizes)} of 1728 atoms, {min(labelled)}-{max(labelled)} labelled")
    rounds = [json.loads(l) for l in open(os.path.join(d1, "si.nep.txt.history.jsonl")) if '"event":"round"' in l]
    check(len(rounds) >= 2 and all(0 < r["train_rmse_f_meV_per_A"] < 1e4 and r["train_rmse_e_meV_per_atom"] == 0
                                   and r["heldout_rmse_f_meV_per_A"] > 0 for r in rounds)
          and os.path.exists(os.path.join(d1, "si.nep.txt")),
          f"{len(rounds)} rounds train on the regions: force errors over the labelled atoms "
          f"({', '.join('%.0f' % r['train_rmse_f_meV_per_A'] for r in rounds)} meV/A), no energy term, a model written")

# ---- 2 ranks: the same regions
if args.mpi:
    proc, _ = res["p2"]
    if check(proc.returncode == 0, "passive carve run (2 ranks) finishes") and res["p1"][0].returncode == 0:
        a, b = read_frames(d1), read_frames(runs["p2"].d)
        same = len(a) == len(b) and all(len(x["pos"]) == len(y["pos"]) and x["weight"] == y["weight"] for x, y in zip(a, b))
        dev = max((abs(u - v) for x, y in zip(a, b) for key in ("pos", "force") for r, s in zip(x[key], y[key])
                   for u, v in zip(r, s)), default=1.0) if same else 1.0
        check(same and dev < 1e-6, f"2 ranks: the same {len(b)} regions, atoms and weights; positions and forces to {dev:.1e}")

# ---- active: centres by the committee's deviation
proc, log = res["a1"]
da = runs["a1"].d
if check(proc.returncode == 0, "active carve run finishes"):
    dev = read_dump(os.path.join(da, "dev.dump"))
    events = [json.loads(l) for l in open(os.path.join(da, "si.nep.txt.history.jsonl"))]
    calls = [e for e in events if e.get("event") == "teacher" and e["max_dev_eV_per_A"] > 0]
    wrong = []
    for e in calls:
        L, atoms = dev[e["step"]]
        key = {t: a[3] for t, a in atoms.items()}
        centres, _ = expected_regions(L, atoms, key, 2)
        if e.get("carved_centres") != centres:
            wrong.append((e["step"], e.get("carved_centres"), centres))
    check(len(calls) >= 3 and not wrong,
          f"{len(calls)} teacher calls with a committee: carved_centres are the atoms of largest deviation "
          f"(2 CORE apart){'; ' + str(wrong[:2]) if wrong else ''}")
    # the labels against the whole system's sw forces (a rerun of the dumped steps)
    rr = launch_lmp(args.lmp, da, RERUN, name="in.rerun", timeout=300)
    rproc, _ = rr.finish()
    frames = read_frames(da)
    kept = [e for e in events if e.get("event") == "teacher" and e["kept"]]
    if check(rproc.returncode == 0 and sum(len(e.get("carved_centres", [])) for e in kept) == len(frames),
             f"active: {len(frames)} regions for {len(kept)} kept teacher calls (the history names their centres)"):
        whole = read_dump(os.path.join(da, "rerun.dump"))
        traj = read_dump(os.path.join(da, "traj.dump"))
        worst, zeros, n = 0.0, 0, 0
        student_calls = 0
        for e in kept:
            L, pos = traj[e["step"]]
            fw = whole[e["step"]][1]
            student_calls += e["driver"] == "student"
            for c in e["carved_centres"]:
                fr = frames[n]
                n += 1
                rows = [t for t in sorted(pos) if sum(v * v for v in min_image(
                    [a - b for a, b in zip(pos[t][:3], pos[c][:3])], L)) < OUTER * OUTER]
                if len(rows) != len(fr["pos"]):
                    worst = 1.0
                    continue
                for t, f, w in zip(rows, fr["force"], fr["weight"]):
                    if w > 0:
                        worst = max(worst, max(abs(a - b) for a, b in zip(f, fw[t][3:6])) / max(abs(v) for v in fw[t][3:6]))
                    elif e["driver"] == "student" and f == [0.0, 0.0, 0.0]:
                        zeros += 1
        check(worst < 1e-10 and student_calls >= 3 and zeros > 0,
              f"labelled forces = the whole system's sw forces to {worst:.1e} on {len(kept)} calls; on the "
              f"{student_calls} student-driven ones the teacher skipped far atoms ({zeros} masked atoms without force)")

# ---- a box too small for a region
proc, log = res["small"]
if check(proc.returncode == 0, "carve on a 64-atom box runs"):
    frames = read_frames(small)
    check("does not fit the periodic box" in log and frames and all(len(f["pos"]) == 64 for f in frames),
          f"a region wider than the box: whole frames ({len(frames)} of 64 atoms) and a warning")

harness.finish()
