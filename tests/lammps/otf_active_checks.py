#!/usr/bin/env python3
"""fix nep/train mode active end to end: a 216-atom Si box, Stillinger-Weber teacher, NEP student
(pair_style hybrid/overlay nep/gpu sw; the student starts with no model):
- the teacher is computed exactly on the steps the fix names (its "teacher" events and the steps
  it drove), read from the teacher's own state: `compute pair sw` changes only when sw computes;
- every buffered frame equals the teacher's energy, forces and virial on its step, recomputed by a
  LAMMPS rerun of the dumped trajectory with pair_style sw alone (1e-10);
- forces on student steps are the student's: rerun with pair_style nep/gpu and the model in use;
- a heating shock drives the deviation over the upper threshold: the teacher takes over and hands
  back to the student once a newer round is trusted;
- audits happen exactly on the trusted check steps whose draw of the (seed, audit, step) stream is
  below P (the stream re-implemented here from its definition: SplitMix64);
- thermo counters agree with the events; same seed: same buffer and model bytes when repeated
  and with 2 training threads; across write_restart/read_restart the same calls, frames and model
  (1e-10 / 1e-5); on 2 MPI ranks (400 steps) the same teacher calls, frames to 1e-5 and model to
  1e-5 (LAMMPS's force sums on 2 ranks differ at round-off, which MD's chaos grows to ~1e-6 in
  400 steps: bytes cannot agree); kill -9 leaves a readable buffer that reopens;
- bad input gets clear messages."""
import functools, json, os, signal, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402
from otf_common import arg_parser, box_data, launch_lmp, nep_in, prepare, read_buffer, rel, thermo_rows, training_team_runs  # noqa: E402

ap = arg_parser()
ap.add_argument("--mpi", action="store_true")
args = ap.parse_args()

NEP_IN = nep_in(epochs=10)
AUDIT = 0.3    # audit probability of the runs: enough audited frames (>= 5) to calibrate in 940 steps

BOX_DATA = box_data(3)
BOX = """units metal
boundary p p p
read_data box.data
velocity all create 1200 7 loop geom
timestep 0.001
"""


def deck(first=600, after=(100, 200, 40), fix_extra="", dump=True, head=None, threads=1):
    """The active run: `first` steps of NVT at 1000 K, then (if `after`) a heating shock to 2500 K
    and the runs `after` (a run boundary adopts the round in flight, as in passive mode)."""
    h = head if head is not None else BOX
    d = h + f"""plugin load {args.plugin}
pair_style hybrid/overlay nep/gpu cutoff 4.2 sw
pair_coeff * * nep/gpu none Si
pair_coeff * * sw Si.sw Si
compute tpe all pair sw
compute spe all pair nep/gpu
fix nvt all nvt temp 1000 1000 0.1
fix learn all nep/train every 10 buffer si.h5 model si.nep.txt input nep.in seed 7 train_every 5 &
    mode active teacher sw committee 3 threshold 0.15 0.6 adopt_after 50 50 audit {AUDIT} member_reset 6 first_round 5 threads {threads} keep_rounds yes {fix_extra}
thermo_style custom step temp pe c_tpe c_spe f_learn[1] f_learn[2] f_learn[7] f_learn[8] f_learn[11] f_learn[12] f_learn[13] f_learn[14] &
    f_learn[16] f_learn[17] f_learn[18]
thermo_modify format float %.17g
thermo 1
"""
    if dump:
        d += "write_data start.data nocoeff\n"
        d += "dump d all custom 1 traj.dump id type x y z fx fy fz\ndump_modify d format float %.17g sort id\n"
        d += "dump dv all custom 10 dev.dump id type x y z f_learn f_learn f_learn\ndump_modify dv format float %.17g sort id\n"
    d += f"run {first}\n"
    if after:
        d += "velocity all scale 2500\nunfix nvt\nfix nvt all nvt temp 2500 2500 0.1\n"
        d += "".join(f"run {n}\n" for n in after)
    return d


launch = functools.partial(launch_lmp, args.lmp, timeout=600)
run = lambda *a, **kw: launch(*a, **kw).finish()  # noqa: E731
read_buffer = functools.partial(read_buffer, args.frames)


def newdir(tag):
    """A run folder: the teacher, nep.in and (once written) the box's data file"""
    return prepare(harness.folder(tag), args.lmp, NEP_IN, *([BOX_FILE] if os.path.exists(BOX_FILE) else []))


def history(d):
    return [json.loads(l) for l in open(os.path.join(d, "si.nep.txt.history.jsonl"))]


def frames_close(a, b, tol=1e-10):
    """same frames up to round-off: positions (minimum image in the cubic box), forces, energy, virial"""
    if len(a) != len(b) or not a:
        return False, f"{len(a)} vs {len(b)} frames"
    worst = 0.0
    for x, y in zip(a, b):
        L = x["box"]
        dp = max(min(abs(u - v) % L, L - abs(u - v) % L) for r, s in zip(x["pos"], y["pos"]) for u, v in zip(r, s)) / L
        df = rel([v for r in x["force"] for v in r], [v for r in y["force"] for v in r])
        worst = max(worst, dp, df, abs(x["energy"] - y["energy"]) / abs(y["energy"]), rel(x["virial"], y["virial"]))
    return worst <= tol, f"max rel dev {worst:.1e}"


def model_numbers(path):
    return [float(l) for l in open(path).read().splitlines()[6:]]


def read_dump(path):
    """step -> (box line bounds, {id: (x, y, z, fx, fy, fz)})"""
    frames, lines, i = {}, open(path).read().splitlines(), 0
    while i < len(lines):
        step = int(lines[i + 1])
        n = int(lines[i + 3])
        atoms = {}
        for l in lines[i + 9:i + 9 + n]:
            t = l.split()
            atoms[int(t[0])] = [float(v) for v in t[2:8]]
        frames[step] = atoms
        i += 9 + n
    return frames


def rerun(d, style, coeff, tag):
    """Energies, virials (xx yy zz xy xz yz, eV) and forces of every dumped step with one pair style:
    started here, read by calling the returned function (the reruns of one run go side by side)."""
    text = f"""units metal
boundary p p p
read_data start.data
plugin load {args.plugin}
pair_style {style}
pair_coeff {coeff}
compute pv all pressure NULL virial
thermo_style custom step pe c_pv[1] c_pv[2] c_pv[3] c_pv[4] c_pv[5] c_pv[6] vol
thermo_modify format float %.17g
thermo 1
dump r all custom 1 rerun_{tag}.dump id type x y z fx fy fz
dump_modify r format float %.17g sort id
rerun traj.dump dump x y z box yes
"""
    started = launch(d, text, name=f"in.rerun_{tag}")
    return lambda: rerun_result(d, tag, *started.finish())


def rerun_result(d, tag, p, log):
    nktv2p = 1.6021765e6
    res = {}
    for r in thermo_rows(log):
        w = [r[f"c_pv[{k}]"] * r["Volume"] / nktv2p for k in range(1, 7)]
        res[int(r["Step"])] = dict(energy=r["PotEng"], virial=w)
    f = read_dump(os.path.join(d, f"rerun_{tag}.dump"))
    for s, atoms in f.items():
        if s in res:
            res[s]["force"] = [atoms[k][3:6] for k in sorted(atoms)]
    return p.returncode == 0, res


def mix64(z):
    M = (1 << 64) - 1
    z = (z + 0x9E3779B97F4A7C15) & M
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & M
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & M
    return z ^ (z >> 31)


def audit_uniform(seed, step):
    """the first uniform of stream (seed, Audit = 5, step), as docs/fix_nep_train.rst defines it"""
    M = (1 << 64) - 1
    state = mix64(mix64(mix64(seed) ^ 5) ^ step)
    state = (state + 0x9E3779B97F4A7C15) & M
    return (mix64(state) >> 11) * 2.0 ** -53


BOX_FILE = "/nonexistent"
b = newdir("box")
run(b, BOX_DATA, name="in.box")
BOX_FILE = os.path.join(b, "box.data")

# The runs that do not depend on each other start together (the fix's results may not depend on
# timing, so a loaded machine is no excuse for other bytes; most of each run's time is MD waiting for
# a training round, which leaves a core to the others): the main run, the rerun of section 2 (with 2
# training threads, or a plain repeat where a training team cannot run), the 1- and 2-rank runs of
# section 2 and the first half of the restart pair of section 3.
tag, kw = ("threads2", {"threads": 2}) if training_team_runs() else ("repeat", {})
d, e_re, r = newdir("main"), newdir(tag), newdir("restart")
t0 = time.time()
started = {"main": launch(d, deck()), "rerun": launch(e_re, deck(dump=False, **kw)),
           "first": launch(r, deck(after=(100,), dump=False) + "write_restart active.restart\n", name="in.first")}
# the controls, each in a run of its own: a budget (hard cap, with the heating shock's take-over
# inside it), a gap, an fmax that every frame exceeds, adopt_after 0 while the teacher drives
ctl_dirs = {name: newdir(name) for name in ("budget", "gap", "fmax", "adopt0", "rms")}
# (final_stages 3, fix_modify final_round 2 before the last run: one final round of 3 x 10 + 2 epochs; gap: stages 0 wins over 4)
budget_deck = deck(fix_extra="budget 160 final_stages 3", dump=False).replace("\nrun 40\n", "\nfix_modify learn final_round 2\nrun 40\n")
started["budget"] = launch(ctl_dirs["budget"], budget_deck)
gap_deck = deck(after=(), fix_extra="gap 50 final_round 2 final_stages 4", dump=False).replace("run 600", "fix_modify learn final_round 2 stages 0\nrun 600")
started["gap"] = launch(ctl_dirs["gap"], gap_deck)
started["fmax"] = launch(ctl_dirs["fmax"], deck(first=100, after=(), fix_extra="fmax 0.5", dump=False))
started["adopt0"] = launch(ctl_dirs["adopt0"], deck(fix_extra="adopt_after 0 50 first_round 1 handback 0.6", dump=False))
rms_deck = deck(after=(), fix_extra="deviation rms", dump=False).replace(
    "run 600\n", "dump dv all custom 10 dev.dump id type x y z f_learn f_learn f_learn\n"
    "dump_modify dv format float %.17g sort id\nrun 600\n")
started["rms"] = launch(ctl_dirs["rms"], rms_deck)
if args.mpi:
    # 400 steps of the 1000 K crystal: round-off of 2-rank force sums stays at round-off there (in the
    # 2500 K liquid, MD's chaos grows it to everything within a picosecond)
    one, e_mpi = newdir("mpi1"), newdir("mpi2")
    started["mpi1"] = launch(one, deck(first=400, after=(), dump=False))
    started["mpi2"] = launch(e_mpi, deck(first=400, after=(), dump=False), np=2)
    started["rms2"] = launch(newdir("rms2"), rms_deck, np=2)    # deviation rms on 2 ranks (section 1's rms run)

# the second half of the restart pair as soon as the first has written its restart file
p_first, _ = started["first"].finish()
cont = f"""read_restart active.restart
plugin load {args.plugin}
pair_style hybrid/overlay nep/gpu cutoff 4.2 sw
pair_coeff * * nep/gpu none Si
pair_coeff * * sw Si.sw Si
fix nvt all nvt temp 2500 2500 0.1
fix learn all nep/train every 10 buffer si.h5 model si.nep.txt input nep.in seed 7 train_every 5 &
    mode active teacher sw committee 3 threshold 0.15 0.6 adopt_after 50 50 audit {AUDIT} member_reset 6 first_round 5
run 200
run 40
"""
if p_first.returncode == 0:
    started["second"] = launch(r, cont, name="in.second")

# ---- 1. the main run
p, log = started["main"].finish()
p_main = p
check(p.returncode == 0, f"active run (216 Si atoms, sw teacher, 940 steps) completes ({time.time() - t0:.0f} s, "
      f"{len(started)} runs side by side)")
rows = {int(r["Step"]): r for r in thermo_rows(log)}
ev = history(d)
teacher_ev = [e for e in ev if e["event"] == "teacher"]
hand = [e for e in ev if e["event"] == "handover"]
last = rows[max(rows)]



def driven_steps(rows, hand):
    """the steps the teacher drove, and who drove each step's end (hand-overs take effect from the next step)"""
    driving, after, drv = set(), {0: "teacher"}, "teacher"
    switch = {e["step"]: e["to"] for e in hand}
    for s in sorted(rows):
        if s == 0:
            continue
        if drv == "teacher":
            driving.add(s)
        drv = switch.get(s, drv)
        after[s] = drv
    return driving, after


def setup_evaluations(after, first, runs):
    """runs whose setup force call the teacher made (it drove at the end of the step the run starts on)"""
    starts = [0] + [first + sum(runs[:k]) for k in range(len(runs))]
    return sum(after.get(s0) == "teacher" for s0 in starts)


# teacher computed on exactly the steps the fix names: its calls plus the steps it drove
driving, drv_after = driven_steps(rows, hand)
named = driving | {e["step"] for e in teacher_ev}
changed = {s for s in sorted(rows) if s > 0 and s - 1 in rows and rows[s]["c_tpe"] != rows[s - 1]["c_tpe"]}
check(named == changed, f"teacher computed on exactly the {len(named)} steps the fix names "
      f"({len(changed)} steps where sw's own energy changed; differ: {sorted(named ^ changed)[:8]})")
n_setup = setup_evaluations(drv_after, 600, (100, 200, 40))
check(int(last["f_learn[8]"]) == len(named) + n_setup,
      f"thermo teacher evaluations {last['f_learn[8]']:.0f} = {len(named)} steps + {n_setup} runs' set-up force calls")
student_steps = {s for s in rows if s > 0 and s not in driving}
s_changed = {s for s in sorted(rows) if s > 0 and s - 1 in rows and rows[s]["c_spe"] != rows[s - 1]["c_spe"]}
check(s_changed == student_steps, f"the student is computed on exactly the {len(student_steps)} steps it drives")

# handovers: over the upper threshold to the teacher, back to the student later
ups = [e for e in teacher_ev if e["reason"] == "upper"]
to_t = [e for e in hand if e["to"] == "teacher"]
to_s = [e for e in hand if e["to"] == "student"]
check(len(ups) >= 1 and len(to_t) == len(ups) and all(u["max_dev_eV_per_A"] >= 0.6 for u in ups),
      f"upper threshold: {len(ups)} takeover(s) by the teacher at deviation >= 0.6 eV/A "
      f"({[round(u['max_dev_eV_per_A'], 3) for u in ups]})")
check(len(to_s) >= 2 and any(s["step"] > to_t[0]["step"] for s in to_s) if to_t else False,
      f"the student drives again after the takeover (handovers to the student at {[e['step'] for e in to_s]})")
# lower threshold and trust: every 'lower' call had lo <= dev < hi; no call on trusted steps but audits
checks = {e["step"]: e for e in ev if e["event"] == "check"}
lows = [e for e in teacher_ev if e["reason"] == "lower"]
check(all(0.15 <= e["max_dev_eV_per_A"] < 0.6 for e in lows) and len(lows) > 0,
      f"{len(lows)} lower-threshold calls, each with 0.15 <= deviation < 0.6")

# audits follow the seed, whatever the deviation: exactly the check steps the student drove whose
# draw is below AUDIT are audited; the trusted ones among them are the "audit" calls
expect_audited = {s for s in checks if s not in driving and audit_uniform(7, s) < AUDIT}
got_audited = {e["step"] for e in teacher_ev if e.get("audited")}
expect_audit = {s for s in expect_audited if checks[s]["max_dev_eV_per_A"] < 0.15}
got_audit = {e["step"] for e in teacher_ev if e["reason"] == "audit"}
check(got_audited == expect_audited and got_audit == expect_audit and len(got_audit) > 0
      and len(expect_audited) > len(expect_audit),
      f"audited steps follow the seed whatever the deviation: {len(got_audited)} audited = the {len(expect_audited)} "
      f"predicted from the stream, {len(got_audit)} of them trusted")
check(int(last["f_learn[14]"]) == len(got_audit), f"thermo audits {last['f_learn[14]']:.0f} = {len(got_audit)}")
# the calibration, recomputed from the history: the median of true / predicted over audited frames
# only (1 until 5), and a trusted audit is a miss when its true error exceeds factor x LO
factor, pairs, misses, worst = 1.0, [], 0, 0.0
for e in teacher_ev:
    if e["reason"] == "audit" and e["true_max_err_eV_per_A"] > factor * 0.15:
        misses += 1
    if e.get("audited"):
        pairs.append(e["true_max_err_eV_per_A"] / e["max_dev_eV_per_A"])
        q = sorted(pairs)
        h = len(q) // 2
        factor = 1.0 if len(q) < 5 else (q[h] if len(q) % 2 else 0.5 * (q[h - 1] + q[h]))
    worst = max(worst, abs(e["calibration_factor"] - factor) / factor)
check(len(pairs) >= 5 and worst <= 1e-8 and abs(last["f_learn[13]"] - factor) <= 1e-8 * factor and factor != 1.0,
      f"calibration factor {last['f_learn[13]']:.4g} = the median over the {len(pairs)} audited frames recomputed "
      f"({factor:.4g}; after every call: {worst:.1e})")
check(int(last["f_learn[12]"]) == misses, f"audit misses {last['f_learn[12]']:.0f} = {misses} recomputed from the history")
n_a, z = len(got_audit), 1.96
c0 = (misses / n_a + z * z / (2 * n_a)) / (1 + z * z / n_a)
half = z * ((misses / n_a) * (1 - misses / n_a) / n_a + z * z / (4 * n_a * n_a)) ** 0.5 / (1 + z * z / n_a)
check(abs(last["f_learn[16]"] - max(0.0, c0 - half)) <= 1e-9 and abs(last["f_learn[17]"] - min(1.0, c0 + half)) <= 1e-9
      and int(last["f_learn[18]"]) == len(pairs),
      f"miss rate 95 % interval [{last['f_learn[16]']:.3f}, {last['f_learn[17]']:.3f}] (Wilson, {misses}/{n_a}); "
      f"{len(pairs)} calibration pairs")

# committee members re-initialised on the staggered schedule of member_reset 6 (the main run's), written
# out by hand for committee 3 (members 1, 2; offsets 0 and 3): member 2 on rounds 4, 10, 16, ...,
# member 1 on rounds 7, 13, 19, ...; a final round trains no members
round_ev = [e for e in ev if e["event"] == "round"]
schedule = {4: [2], 7: [1], 10: [2], 13: [1], 16: [2], 19: [1], 22: [2], 25: [1]}
bad = [(e["round"], e.get("members_reset")) for e in round_ev
       if e.get("members_reset") != ([] if e.get("final") else schedule.get(e["round"], []))]
check(not bad and max(e["round"] for e in round_ev) >= 4 and max(e["round"] for e in round_ev) <= 25,
      f"members re-initialised on the staggered rounds of member_reset 6 over {len(round_ev)} rounds "
      f"({[(e['round'], e['members_reset']) for e in round_ev if e.get('members_reset')]}; wrong: {bad})")

# buffered frames == the teacher recomputed on the same configurations
kept_steps = [e["step"] for e in teacher_ev if e["kept"]]
buf = read_buffer(d)
# every rerun of the main run's dumps starts here, side by side: the teacher; the student models of
# the first three rounds whose interval has student-driven steps; the committees of the first two
# rounds whose interval has check steps (each: the round's model and its two other members)
rounds = sorted((e["step"], e["round"]) for e in ev if e["event"] == "round")
traj = read_dump(os.path.join(d, "traj.dump"))
dev = read_dump(os.path.join(d, "dev.dump"))    # step -> {id: (x, y, z, sigma, sigma, sigma)}
call_steps = {e["step"] for e in teacher_ev}
student_runs, committee_runs = [], []
for k, (adopted, rnd) in enumerate(rounds):
    nxt = rounds[k + 1][0] if k + 1 < len(rounds) else max(rows) + 1
    steps = [s for s in sorted(student_steps) if adopted < s <= nxt and s not in call_steps and s in traj]
    if steps and len(student_runs) < 3:    # three models' intervals are enough
        student_runs.append((steps, rerun(d, "nep/gpu", f"* * si.nep.txt.round{rnd} Si", f"student{rnd}")))
    steps = [s for s in sorted(dev) if adopted < s <= nxt and s in traj]
    if steps and len(committee_runs) < 2:
        names = [f"si.nep.txt.round{rnd}"] + [f"si.nep.txt.round{rnd}.member{m}" for m in (1, 2)]
        committee_runs.append((steps, [rerun(d, "nep/gpu", f"* * {name} Si", f"committee{rnd}_{j}") for j, name in enumerate(names)]))
ok_t, ref_t = rerun(d, "sw", "* * Si.sw Si", "teacher")()
check(ok_t and len(buf) == len(kept_steps) == int(last["f_learn[1]"]),
      f"{len(buf)} buffered frames = {len(kept_steps)} kept teacher calls = thermo frames")
if ok_t and len(buf) == len(kept_steps) and buf:
    de = max(abs(b["energy"] - ref_t[s]["energy"]) / abs(ref_t[s]["energy"]) for b, s in zip(buf, kept_steps))
    df = max(rel([v for r in b["force"] for v in r], [v for r in ref_t[s]["force"] for v in r])
             for b, s in zip(buf, kept_steps))
    m6 = [0, 4, 8, 1, 2, 5]
    dw = max(rel([b["virial"][k] for k in m6], ref_t[s]["virial"]) for b, s in zip(buf, kept_steps))
    check(max(de, df, dw) <= 1e-10, f"buffered frames equal sw recomputed on those steps: E {de:.1e}, F {df:.1e}, W {dw:.1e}")
# the student's true error on a call it drove through (lower, audit), as the fix measured it (each
# rank its own atoms, from the committee's driving model): max over atoms of |F_student - F_teacher|
# and the RMS over components, recomputed from the dumped forces (the student's stay in the MD on
# such a step) and the buffered teacher frame
worst_e, n_e = 0.0, 0
for b, s in zip(buf, kept_steps):
    e = next(x for x in teacher_ev if x["step"] == s)
    if e["reason"] not in ("lower", "audit") or s not in traj:
        continue
    fs = [traj[s][k2][3:6] for k2 in sorted(traj[s])]
    d2 = [sum((a - c) ** 2 for a, c in zip(fa, fb)) for fa, fb in zip(fs, b["force"])]
    mx, rms = max(d2) ** 0.5, (sum(d2) / (3 * len(d2))) ** 0.5
    worst_e = max(worst_e, abs(e["true_max_err_eV_per_A"] - mx) / mx, abs(e["true_rmse_f_eV_per_A"] - rms) / rms)
    n_e += 1
check(n_e >= 5 and worst_e <= 1e-8, f"true error of {n_e} student-driven calls = the dumped student forces against the "
      f"buffered teacher frame ({worst_e:.1e})")
# forces on student-driven steps (no teacher call) are the student model's in use then: round k's
# model (kept as si.nep.txt.roundk) from the step after its adoption
compared, worst, ok_all, models = 0, 0.0, True, len(student_runs)
for steps, result in student_runs:
    ok_s, ref_s = result()
    ok_all = ok_all and ok_s
    for s in steps:
        worst = max(worst, rel([v for k2 in sorted(traj[s]) for v in traj[s][k2][3:6]], [v for r in ref_s[s]["force"] for v in r]))
        compared += 1
check(ok_all and compared > 0 and worst <= 1e-10,
      f"forces on {compared} student-driven steps equal the model of the round in use ({models} models, {worst:.1e})")
# the per-atom deviation (dumped f_learn on check steps) equals sigma_i recomputed from reruns of
# the committee in use (round k's model and members, kept as si.nep.txt.roundk[.memberj]):
# sigma_i = sqrt(mean_m |F_i^m - <F_i>|^2), DP-GEN's definition; 0 before the first committee
first_round = rounds[0][0] if rounds else max(rows)
zero_before = all(v[3] == 0.0 for s, atoms in dev.items() if s <= first_round for v in atoms.values())
check(zero_before and any(s <= first_round for s in dev), "per-atom deviation reads 0 before the first committee")
compared, worst, ok_all, used = 0, 0.0, True, len(committee_runs)
for steps, results in committee_runs:
    forces = []
    for result in results:
        ok_m, ref_m = result()
        ok_all = ok_all and ok_m and all("force" in ref_m.get(s, {}) for s in steps)
        forces.append(ref_m)
    if not ok_all:
        break
    for s in steps:
        sig = []
        for i in range(len(dev[s])):
            fm = [forces[j][s]["force"][i] for j in range(3)]
            mean = [sum(f[c] for f in fm) / 3 for c in range(3)]
            sig.append((sum((f[c] - mean[c]) ** 2 for f in fm for c in range(3)) / 3) ** 0.5)
        worst = max(worst, rel([dev[s][k2][3] for k2 in sorted(dev[s])], sig))
        compared += 1
check(ok_all and compared > 0 and worst <= 1e-9,
      f"per-atom deviation on {compared} check steps equals the committee recomputed by rerun ({used} committees, {worst:.1e})")
check(int(last["f_learn[11]"]) in (0, 1), "driver of the last step reported")

# ---- 1b. controls
# budget 160: a hard cap whatever drives: sw computed on exactly 160 steps, then never again
p, log_b = started["budget"].finish()
rows_b = {int(r["Step"]): r for r in thermo_rows(log_b)}
sw_steps = [s for s in sorted(rows_b) if s > 0 and s - 1 in rows_b and rows_b[s]["c_tpe"] != rows_b[s - 1]["c_tpe"]]
ev_b = history(ctl_dirs["budget"])
capped = [e for e in ev_b if e["event"] == "handover" and e.get("reason") == "budget"]
setups_b = setup_evaluations(driven_steps(rows_b, [e for e in ev_b if e["event"] == "handover"])[1], 600, (100, 200, 40))
check(p.returncode == 0 and len(sw_steps) + setups_b == 160 and int(rows_b[max(rows_b)]["f_learn[8]"]) == 160
      and len(capped) == 1,
      f"budget 160: the teacher computed on {len(sw_steps)} steps and {setups_b} set-up force call(s), thermo "
      f"{rows_b[max(rows_b)]['f_learn[8]']:.0f} evaluations, the last at step {sw_steps[-1] if sw_steps else None} of "
      f"{max(rows_b)}; {len(capped)} hand-back for the budget")
finals = [(e["step"], e["epochs"], e.get("final_stages")) for e in ev_b if e["event"] == "round" and e.get("final")]
check(finals == [(940, 32, 3)], f"final_stages 3, fix_modify final_round 2 before the last run: final rounds (step, epochs, stages) {finals}")
# gap 50: label and audit calls at least 50 steps apart, and some step that asked for one got none
p, _ = started["gap"].finish()
ev_g = history(ctl_dirs["gap"])
calls_g = sorted(e["step"] for e in ev_g if e["event"] == "teacher" and e["reason"] in ("lower", "audit"))
asked = [e["step"] for e in ev_g if e["event"] == "check" and e["driver"] == "student" and 0.15 <= e["max_dev_eV_per_A"] < 0.6]
held = [s for s in asked if s not in set(calls_g)]
spacing = min((b - a for a, b in zip(calls_g, calls_g[1:])), default=0)
check(p.returncode == 0 and len(calls_g) >= 2 and spacing >= 50 and held,
      f"gap 50: {len(calls_g)} label/audit calls, closest {spacing} steps apart; {len(held)} check steps over LO held back")
# final_round 2 (same run): after the round in flight, one more round of 2 epochs at the run's end,
# whose model is the one written (and differs from the round before it)
rounds_g = [e for e in ev_g if e["event"] == "round"]
fin = rounds_g[-1] if rounds_g else {}
gdir = ctl_dirs["gap"]
model_bytes = lambda name: open(os.path.join(gdir, name), "rb").read()
check(fin.get("final") is True and fin["step"] == 600 and fin["epochs"] == 2 and fin.get("final_stages") == 0 and len(rounds_g) >= 2
      and sum(e.get("final", False) for e in rounds_g) == 1
      and model_bytes("si.nep.txt") == model_bytes(f"si.nep.txt.round{fin['round']}")
      # a round that improves on its start writes another model; one that does not keeps the start's
      # function (its history says "reverted"; b1 re-solved and the scaler widened may change bytes)
      and (fin["reverted"] or model_bytes("si.nep.txt") != model_bytes(f"si.nep.txt.round{fin['round'] - 1}"))
      # the final round trains the driving model only: the members stay those of the round before
      and model_bytes("si.nep.txt.member1") == model_bytes(f"si.nep.txt.round{fin['round'] - 1}.member1")
      and not os.path.exists(os.path.join(gdir, f"si.nep.txt.round{fin['round']}.member1")),
      f"final_round 2: round {fin.get('round')} at step {fin.get('step')} ({fin.get('epochs')} epochs, final "
      f"{fin.get('final')}) wrote si.nep.txt ({'reverted: the function of' if fin.get('reverted') else 'unlike'} round "
      f"{fin.get('round', 1) - 1}); the members kept")
# fmax 0.5 eV/A: every teacher frame explodes: none buffered, each counted as rejected
p, log_f = started["fmax"].finish()
last_f = thermo_rows(log_f)[-1]
ev_f = [e for e in history(ctl_dirs["fmax"]) if e["event"] == "teacher"]
check(p.returncode == 0 and ev_f and not any(e["kept"] for e in ev_f) and int(last_f["f_learn[1]"]) == 0
      and int(last_f["f_learn[7]"]) == len(ev_f),
      f"fmax 0.5: {len(ev_f)} teacher frames, none buffered, {last_f['f_learn[7]']:.0f} rejected")
# adopt_after 0 (the default) while the teacher drives: each take-over's round starts and is adopted on
# the take-over step (first_round 1), and the student drives again from a later check step whose
# deviation is below handback (0.6 here), never on the take-over step itself
p, _ = started["adopt0"].finish()
ev_a = history(ctl_dirs["adopt0"])
hand_a = [e for e in ev_a if e["event"] == "handover"]
to_teacher = [e["step"] for e in hand_a if e["to"] == "teacher"]
at_once = {e["step"] for e in ev_a if e["event"] == "round" and e["step"] == e["started_step"] and not e.get("final")}
checks_a = {e["step"]: e["max_dev_eV_per_A"] for e in ev_a if e["event"] == "check"}
backs = [(t["step"], nxt["step"]) for t, nxt in zip(hand_a, hand_a[1:]) if t["to"] == "teacher" and nxt["to"] == "student"]
check(p.returncode == 0 and to_teacher and all(s in at_once for s in to_teacher) and backs
      and all(b > t and b % 10 == 0 and checks_a.get(b, 1.0) < 0.6 for t, b in backs)
      and any(b == t + 10 for t, b in backs),
      f"adopt_after 0: take-overs at {to_teacher}, each with a round adopted on its step; the student back at "
      f"{[b for _, b in backs]} (a later check below handback)")

# deviation rms: each check's deviation is the RMS over atoms of the dumped sigma_i (not the max), and
# the calibration and the misses pair it with the student's true force RMSE on audited frames
p, log_r = started["rms"].finish()
ev_r, dev_r = history(ctl_dirs["rms"]), read_dump(os.path.join(ctl_dirs["rms"], "dev.dump"))
rms_of = lambda s: (sum(v[3] ** 2 for v in dev_r[s].values()) / len(dev_r[s])) ** 0.5  # noqa: E731
chk_r = [(e["max_dev_eV_per_A"], rms_of(e["step"])) for e in ev_r if e["event"] == "check" and e["step"] in dev_r and e["max_dev_eV_per_A"] > 0]
factor, pairs, misses = 1.0, [], 0
for e in (e for e in ev_r if e["event"] == "teacher"):
    misses += e["reason"] == "audit" and e["true_rmse_f_eV_per_A"] > factor * 0.15
    if e.get("audited"):
        pairs.append(e["true_rmse_f_eV_per_A"] / e["max_dev_eV_per_A"])
        q, h = sorted(pairs), len(pairs) // 2
        factor = 1.0 if len(q) < 5 else (q[h] if len(q) % 2 else 0.5 * (q[h - 1] + q[h]))
last_r = thermo_rows(log_r)[-1]
check(p.returncode == 0 and ev_r[0].get("deviation") == "rms" and len(chk_r) > 20 and len(pairs) >= 5
      and max(abs(a - b) / b for a, b in chk_r) <= 1e-8 and abs(last_r["f_learn[13]"] - factor) <= 1e-8 * factor
      and int(last_r["f_learn[12]"]) == misses and any(max(v[3] for v in dev_r[s].values()) > 1.5 * rms_of(s) for s in dev_r),
      f"deviation rms: {len(chk_r)} check deviations = RMS of the dumped sigma_i; calibration {last_r['f_learn[13]']:.4g} "
      f"= median true RMSE / deviation over {len(pairs)} audits; {misses} misses")

# ---- 2. determinism: same seed, same bytes (repeat, training threads 2, 2 MPI ranks)
def same_outputs(a, b):
    return (open(os.path.join(a, "si.nep.txt"), "rb").read() == open(os.path.join(b, "si.nep.txt"), "rb").read()
            and read_buffer(a) == read_buffer(b))


# one rerun: with 2 training threads (the same bytes then also say the run repeats), or a plain
# repeat where a training team cannot run
p, _ = started["rerun"].finish()
check(p.returncode == 0 and same_outputs(d, e_re), f"{tag}: same buffer and model bytes as the main run")
if args.mpi:
    p1, _ = started["mpi1"].finish()
    p, _ = started["mpi2"].finish()
    e = e_mpi
    if p.returncode == 0 and p1.returncode == 0:
        calls = lambda h: [(x["step"], x["reason"]) for x in h if x["event"] == "teacher"]
        check(calls(history(e)) == calls(history(one)), f"2 MPI ranks: the same {len(calls(history(one)))} teacher calls (steps, reasons)")
        # 2-rank force sums differ from 1-rank ones at round-off (1e-16); 400 steps of MD grow that
        # to ~1e-6 in the positions (measured), so the frames agree to 1e-5, not to the bit
        ok_f, msg = frames_close(read_buffer(e), read_buffer(one), tol=1e-5)
        check(ok_f, f"2 MPI ranks: the same frames as 1 rank to 1e-5 ({msg})")
        # the first frame (step 10: ten steps of MD, before MD's chaos has grown anything) agrees at
        # round-off: the fix adds no rank dependence of its own beyond LAMMPS's own 2-rank sums
        ok_0, msg0 = frames_close(read_buffer(e)[:1], read_buffer(one)[:1], tol=1e-12)
        check(ok_0, f"2 MPI ranks: the first frame equals 1 rank's at round-off, 1e-12 ({msg0})")
        m1, m2 = model_numbers(os.path.join(one, "si.nep.txt")), model_numbers(os.path.join(e, "si.nep.txt"))
        dm = rel(m2, m1) if len(m1) == len(m2) else float("inf")
        check(dm <= 1e-5, f"2 MPI ranks: the final model equal to 1 rank's to {dm:.1e} (<= 1e-5)")
    else:
        check(False, "2 MPI ranks: run completes")
    p, h2 = started["rms2"].finish()[0], history(started["rms2"].d)
    dv = lambda h: [(x["step"], x["max_dev_eV_per_A"]) for x in h if x["event"] == "check" and 0 < x["step"] <= 300]  # noqa: E731
    d1, d2 = dv(ev_r), dv(h2)
    check(p.returncode == 0 and len(d1) > 10 and [s for s, _ in d1] == [s for s, _ in d2]
          and max(abs(a[1] - b[1]) / a[1] for a, b in zip(d1, d2)) <= 1e-6, f"deviation rms on 2 MPI ranks: {len(d1)} check deviations to step 300 equal 1 rank's to 1e-6")

# ---- 3. restart: the main run's runs (600, shock, 100, 200, 40) split at step 700 by write_restart /
# read_restart: same buffer and model as the main run (uninterrupted; its dumps change nothing)
u, p0, p = d, p_main, p_first
p2, log2 = started["second"].finish() if "second" in started else (p_first, "")
check(p0.returncode == 0 and p.returncode == 0 and p2.returncode == 0, "restart runs complete")
if p0.returncode == 0 and p2.returncode == 0:
    # LAMMPS re-neighbours after read_restart: force sums in another order, round-off differences
    calls = lambda h: [(x["step"], x["reason"]) for x in h if x["event"] == "teacher"]
    check(calls(history(r)) == calls(history(u)), f"restart: the same {len(calls(history(u)))} teacher calls as uninterrupted")
    ok_f, msg = frames_close(read_buffer(r), read_buffer(u))
    check(ok_f, f"restart: no frame lost or repeated, the same frames as uninterrupted ({msg})")
    m1, m2 = model_numbers(os.path.join(u, "si.nep.txt")), model_numbers(os.path.join(r, "si.nep.txt"))
    dm = rel(m2, m1) if len(m1) == len(m2) else float("inf")
    check(dm <= 1e-5, f"restart: the final model equal to the uninterrupted run's to {dm:.1e} (<= 1e-5)")

# ---- 4. kill -9 in the middle: the buffer stays readable and reopens
k = newdir("kill")
proc = launch(k, deck(first=3000, after=(), dump=False), name="in.kill").proc
# killed once two rounds have been adopted (frames buffered, training under way), at most 40 s in
t_kill = time.time()
while time.time() - t_kill < 40 and proc.poll() is None:
    try:
        if sum(e["event"] == "round" for e in history(k)) >= 2:
            break
    except (OSError, ValueError):    # no history yet, or a line being written
        pass
    time.sleep(0.2)
proc.send_signal(signal.SIGKILL)
proc.wait()
try:
    killed = read_buffer(k)
    check(len(killed) > 0, f"kill -9 mid-run: buffer readable with {len(killed)} frames")
    p, _ = run(k, deck(first=50, after=(), dump=False), name="in.reopen")
    again = read_buffer(k)
    check(p.returncode == 0 and len(again) >= len(killed) and again[:len(killed)] == killed,
          f"kill -9: reopened, the {len(killed)} frames intact ({len(again)} now)")
except subprocess.CalledProcessError as e:
    check(False, f"kill -9: buffer unreadable ({e.stderr})")

# ---- 5. bad input (each run in its own folder: a run that gets past parsing opens its buffer si.h5)
bad = [
    ("no teacher", deck(first=10, after=(), dump=False).replace("teacher sw ", ""), "mode active needs 'teacher STYLE'"),
    ("unknown teacher", deck(first=10, after=(), dump=False).replace("teacher sw", "teacher tersoff"),
     "teacher 'tersoff' is not a sub-style"),
    ("not hybrid", deck(first=10, after=(), dump=False).replace("pair_style hybrid/overlay nep/gpu cutoff 4.2 sw", "pair_style sw")
     .replace("pair_coeff * * nep/gpu none Si\n", "").replace("pair_coeff * * sw Si.sw Si", "pair_coeff * * Si.sw Si")
     .replace("compute tpe all pair sw\ncompute spe all pair nep/gpu\n", "").replace(" c_tpe c_spe", ""),
     "mode active needs pair_style hybrid/overlay"),
    ("active keyword, passive mode", deck(first=10, after=(), dump=False).replace("mode active ", ""), "needs 'mode active'"),
    ("bad threshold", deck(first=10, after=(), dump=False).replace("threshold 0.15 0.6", "threshold 0.6 0.15"), "needs 0 < LO < HI"),
    ("a third sub-style", deck(first=10, after=(), dump=False).replace("cutoff 4.2 sw", "cutoff 4.2 sw zero 4.0")
     .replace("pair_coeff * * sw Si.sw Si", "pair_coeff * * sw Si.sw Si\npair_coeff * * zero"), "has the sub-style zero besides"),
    ("budget spent before a student model", deck(first=60, after=(), dump=False, fix_extra="budget 20"),
     "is spent while the teacher drives and the student has no model yet"),
    ("fix_modify final_round -1", deck(first=10, after=(), dump=False) + "fix_modify learn final_round -1\n",
     "final_round E needs E >= 0"),
    ("final_round stages -1", deck(first=10, after=(), dump=False) + "fix_modify learn final_round 2 stages -1\n", "needs 0 <= S <= 1000"),
    ("member_reset -1", deck(first=10, after=(), dump=False).replace("member_reset 6", "member_reset -1"),
     "member_reset must be >= 0"),
    ("true units without audits", deck(first=10, after=(), dump=False).replace(
        f"threshold 0.15 0.6 adopt_after 50 50 audit {AUDIT}", "threshold 0.15 0.6 true adopt_after 50 50 audit 0"),
     "needs 'audit P' with P > 0"),
    ("no cutoff for a model-less nep", deck(first=10, after=(), dump=False).replace(" cutoff 4.2", ""), "needs 'pair_style nep/gpu cutoff R'"),
]
bad_runs = [launch(newdir(f"errors{i}"), text, name="in.bad", expect_ok=False) for i, (_, text, _) in enumerate(bad)]
for (name, _, msg), b in zip(bad, bad_runs):
    p, out = b.finish()
    check(p.returncode != 0 and msg in out, f"bad input ({name}): '{msg}'")
harness.finish()
