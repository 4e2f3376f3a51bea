#!/usr/bin/env python3
"""fix nep/train end to end on a 64-atom Si box with a Stillinger-Weber teacher:
- buffered frames equal what LAMMPS reports for the teacher on the same steps (dump forces minus a
  fix addforce the buffer must exclude, thermo pe, and the virial from compute pressure), 1e-10;
- the written nep.txt loads in pair_style nep/gpu in the same deck, and deploy yes pushes each
  round's model into a nep style under pair_style hybrid/scaled;
- same seed: same buffer and same nep.txt bytes when repeated and with threads 2; mpirun -np 2
  gives the 1-rank buffer (1e-10) and a model equal to 1e-10;
- write_restart/read_restart continues the buffer with no duplicate or lost frame (equal to an
  uninterrupted run), and drops frames written after the restart point;
- kill -9 in the middle of a run leaves a readable buffer whose frames all survive a reopen;
- a full disk (file-size limit) stops the run with a clear error and loses no earlier frame;
- bad input gets a clear message (missing keyword, element, units, unwritable buffer, NaN teacher)."""
import filecmp, functools, os, re, shutil, signal, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
import lmp_common  # noqa: E402
from harness import check  # noqa: E402
from otf_common import (arg_parser, launch_lmp, nep_in, numbers, prepare, read_buffer, rel, si_box,  # noqa: E402
                        thermo_rows, training_team_runs)

ap = arg_parser()
ap.add_argument("--mpi", action="store_true")
args = ap.parse_args()

NEP_IN = nep_in(epochs=4)
NKTV2P = 1.6021765e6  # metal units: bar per eV/A^3 (LAMMPS force.cpp)


def deck(fix_args="", steps=60, extra_before="", extra_after="", restart_in=None, units="metal", every=10,
         buffer="si.h5", thermo=True, integrate="fix nve all nve"):
    head = f"read_restart {restart_in}\n" if restart_in else si_box(units, rattle=True)
    th = ("thermo_style custom step pe f_learn[1] f_learn[2] f_learn[3] f_learn[4] f_learn[5] f_learn[6] f_learn[7]\n"
          "thermo_modify format float %.17g\nthermo 10\n") if thermo else ""
    return f"""{head}plugin load {args.plugin}
pair_style sw
pair_coeff * * Si.sw Si
{integrate}
{extra_before}
fix learn all nep/train every {every} buffer {buffer} model si.nep.txt input nep.in seed 7 train_every 3 {fix_args}
{th}run {steps}
{extra_after}"""


launch = functools.partial(launch_lmp, args.lmp, timeout=300)
run = lambda *a, **kw: launch(*a, **kw).finish()  # noqa: E731
newdir = lambda tag: prepare(harness.folder(tag), args.lmp, NEP_IN)  # noqa: E731
read_buffer = functools.partial(read_buffer, args.frames)


def flat(frames, key):
    return [v for f in frames for row in (f[key] if isinstance(f[key][0], list) else [f[key]]) for v in row]


def frames_close(a, b, tol=1e-10):
    if len(a) != len(b) or not a:
        return False, f"{len(a)} vs {len(b)} frames"
    dev = max(rel(flat(a, k), flat(b, k)) for k in ("force", "virial", "pos"))
    dev = max(dev, rel([f["energy"] for f in a], [f["energy"] for f in b]))
    return dev <= tol, f"max rel dev {dev:.1e}"


# ---- 1. teacher labels: buffer == LAMMPS's own numbers on the same steps
def start_labels(tag, lmp_args=()):
    """the labels run (teacher plain or through KOKKOS); check_labels reads it"""
    d = newdir("labels" + tag)
    return tag, d, launch(d, deck(extra_before="fix push all addforce 0.5 -0.25 0.125\n"
                         "compute vir all pressure NULL virial\n"
                         "dump dd all custom 10 dump.si id x y z fx fy fz\n"
                         "dump_modify dd sort id format float %.17g\n", steps=80,
                         extra_after="variable v equal vol\nprint \"VOL ${v}\"\n").replace(
        "thermo_style custom step pe", "thermo_style custom step pe c_vir[1] c_vir[2] c_vir[3] c_vir[4] c_vir[5] c_vir[6]"), lmp_args=lmp_args)


def check_labels(started):
    """buffer == LAMMPS's own numbers on the same steps"""
    tag, d, handle = started
    suffix = " [KOKKOS teacher]" if tag else ""
    p, log = handle.finish()
    check(p.returncode == 0, "short on-the-fly run (64 Si atoms, sw teacher) completes" + suffix)
    buf = read_buffer(d)
    check(len(buf) == 8, f"8 frames sampled in 80 steps with every 10 (got {len(buf)})" + suffix)
    rows = [r for r in thermo_rows(log) if r["Step"] > 0]
    vol = float(re.search(r"^VOL (\S+)", log, re.M).group(1))
    dump = {}
    blocks = open(os.path.join(d, "dump.si")).read().split("ITEM: TIMESTEP\n")[1:]
    for blk in blocks:
        ls = blk.splitlines()
        step = int(ls[0])
        atoms = [l.split() for l in ls[ls.index("ITEM: ATOMS id x y z fx fy fz") + 1:]]
        dump[step] = [[float(v) - (0.5, -0.25, 0.125)[k] for k, v in enumerate(a[4:7])] for a in atoms]
    e_dev = rel([f["energy"] for f in buf], [r["PotEng"] for r in rows])
    f_dev = rel(flat(buf, "force"), [v for s in sorted(dump) if s > 0 for a in dump[s] for v in a])
    vref = []
    for r in rows:  # pressure (bar) -> virial (eV): W = p V / nktv2p; rows xx yy zz xy xz yz
        c = [r[f"c_vir[{k}]"] * vol / NKTV2P for k in range(1, 7)]
        vref += [c[0], c[3], c[4], c[3], c[1], c[5], c[4], c[5], c[2]]
    v_dev = rel(flat(buf, "virial"), vref)
    check(e_dev < 1e-10, f"buffer energies equal thermo pe (max rel dev {e_dev:.1e})" + suffix)
    check(f_dev < 1e-10, f"buffer forces equal dumped forces minus fix addforce's (max rel dev {f_dev:.1e})" + suffix)
    check(v_dev < 1e-9, f"buffer virials equal compute pressure NULL virial x V (max rel dev {v_dev:.1e})" + suffix)
    check(os.path.exists(os.path.join(d, "si.nep.txt")), "rounds wrote si.nep.txt" + suffix)
    last = thermo_rows(log)[-1]
    check(last["f_learn[1]"] == 8 and last["f_learn[2]"] >= 1, f"f_learn[1] frames = 8, f_learn[2] rounds >= 1 ({last})" + suffix)
    check(last["f_learn[3]"] > 0 and last["f_learn[6]"] > 0, "train force RMSE and fresh-frame force RMSE reported" + suffix)

    return d


def start_errors():
    """every bad-input run, started together (section 6 reads them), each in its own folder: a run that gets past
    parsing opens its buffer si.h5, which another run must not find in use"""
    cases = [
        ("missing input", deck().replace(" input nep.in", ""), "keyword 'input' is required"),
        ("element not in nep.in", deck(fix_args="elements C"), "element 'C' (atom type 1) is not in nep.in"),
        ("non-metal units", deck(units="real"), "units metal"),
        ("unwritable buffer", deck(buffer="/nonexistent/dir/si.h5"), "/nonexistent/dir/si.h5: cannot create"),
        ("bad nep.in line", deck().replace("input nep.in", "input bad.in"), "bad.in:2:"),
        ("unknown keyword", deck(fix_args="foo 1"), "unknown keyword 'foo'"),
        ("bad select", deck(fix_args="select maybe"), "select must be 'every' or 'error X'"),
        ("bad heldout", deck(fix_args="heldout 1.5"), "heldout must be in [0, 1)"),
        ("bad min_updates", deck(fix_args="min_updates -5"), "min_updates must be >= 0"),
    ]
    # a teacher producing NaN: a second atom on top of the first (lj/cut at r = 0), no integration
    nan_deck = deck(every=5, steps=10, integrate="", extra_before="").replace(
        "create_atoms 1 box\n", "create_atoms 1 box\ncreate_atoms 1 single 0 0 0 units box\n").replace(
        "displace_atoms all random 0.1 0.1 0.1 4242\n", "").replace("pair_style sw\npair_coeff * * Si.sw Si",
                                                                  "pair_style lj/cut 3.0\npair_coeff * * 1.0 2.0")
    runs = []
    for i, (what, text, msg) in enumerate(cases):
        ed = newdir(f"errors{i}")
        open(os.path.join(ed, "bad.in"), "w").write("type 1 Si\nneuron ten\n")
        runs.append((what, msg, launch(ed, text, name="in.err", expect_ok=False)))
    # an ERROR while a round runs (fix halt ... error hard at step 46, the 20 000-epoch first round still
    # training): the ERROR ends the run with exit status 1, not a crash of the training thread
    # when LAMMPS or the core finalises Kokkos, and the buffer stays readable
    halt_deck = deck(fix_args="epochs 20000", steps=100,
                     extra_before="variable s equal step\nfix halt all halt 1 v_s > 45 error hard")
    return (runs, launch(newdir("errors_nan"), nan_deck, name="in.nan", expect_ok=False),
            launch(newdir("errors_halt"), halt_deck, name="in.halt", expect_ok=False))


# The runs that need no other run's output start together here (sections 1, 2's first run, 3, 4's
# uninterrupted run and first half, 5b's reference, 6); each section reads its own when it comes.
labels = [start_labels("")]
# the teacher on LAMMPS's KOKKOS package (sw/kk, forces synced from the Kokkos views)
if "KOKKOS" in lmp_common.installed_packages(args.lmp):
    labels.append(start_labels("_kk", ("-k", "on", "t", "1", "-sf", "kk")))
else:
    print("skip KOKKOS teacher: this LAMMPS has no KOKKOS package", flush=True)
d2 = newdir("deploy")
deploy_first = launch(d2, deck(extra_after="unfix learn\nthermo_style one\npair_style nep/gpu\npair_coeff * * si.nep.txt Si\nrun 10\n"))
team = training_team_runs()
det_runs = {}
for tag, fargs, np in (("a", "", 1), ("b", "", 1)) + ((("t2", "threads 2", 1),) if team else ()) + ((("mpi", "", 2),) if args.mpi else ()):
    dd = newdir("det" + tag)
    det_runs[tag] = (dd, fargs, np, launch(dd, deck(fix_args=fargs, steps=90, thermo=False), np=np))
full = newdir("full")
full_run = launch(full, deck(steps=40, thermo=False, extra_after="run 50\n"))
rs = newdir("restart")
restart_a = launch(rs, deck(steps=40, thermo=False, extra_after="write_restart r.restart\n"), name="in.a")
ref = newdir("full_ref")
full_deck = deck(steps=400, every=1, thermo=False, fix_args="train_every 1000000")
ref_run = launch(ref, full_deck, name="in.ref")
error_runs = start_errors()

for started in labels:
    check_labels(started)

# ---- 2. the trained model deploys: pair_style nep/gpu in the same deck; deploy yes under hybrid/scaled
p, log = deploy_first.finish()
check(p.returncode == 0 and "si.nep.txt" in log and "nep/gpu" in log, "si.nep.txt loads in pair_style nep/gpu in the same deck")
shutil.copy(os.path.join(d2, "si.nep.txt"), os.path.join(d2, "start.nep.txt"))
text = deck(fix_args="deploy yes", steps=40, buffer="si2.h5").replace(
    "pair_style sw\npair_coeff * * Si.sw Si",
    "variable wt equal 1.0\nvariable ws equal 0.0\npair_style hybrid/scaled v_wt sw v_ws nep/gpu\n"
    "pair_coeff * * sw Si.sw Si\npair_coeff * * nep/gpu start.nep.txt Si")
p, log = run(d2, text, name="in.deploy")
n_dep = len(re.findall(r"deployed round \d+ model into 1 nep pair style", log))
check(p.returncode == 0 and n_dep >= 1, f"deploy yes pushes each round's model into nep/gpu under hybrid/scaled ({n_dep} deployments)")
# a model swap that fails (NEP_FAULT: the evaluator's allocation for the new model throws, call 2;
# call 1 is pair_coeff) keeps the previous model and warns; the run goes on
p, log = run(d2, text, name="in.deploy_fail", env_extra={"NEP_FAULT": "pair:create_core:2"}, expect_ok=False)
n_skip = log.count("deploy skipped for a nep pair style")
check(p.returncode == 0 and n_skip == 1 and "std::bad_alloc" in log,
      f"a failed model swap keeps the previous model with a warning and the run continues ({n_skip} skipped)")
# ... and when restoring the previous model fails too, the pair style stops the run with the reason
# at its next force call (nep/gpu alone here: hybrid/scaled skips a sub-style whose weight is 0)
self_deck = deck(fix_args="deploy yes", steps=40, buffer="si_self.h5").replace(
    "pair_style sw\npair_coeff * * Si.sw Si", "pair_style nep/gpu\npair_coeff * * start.nep.txt Si")
p, log = run(d2, self_deck + "run 10\n", name="in.deploy_fail2",
             env_extra={"NEP_FAULT": "pair:create_core:2,pair:create_core:3"}, expect_ok=False)
check(p.returncode != 0 and "has no usable model: the model swap failed" in log and "terminate called" not in log,
      "a failed swap whose rollback fails too stops the run with a clear error (no std::terminate)")

# ---- selection: with a start model every sampled frame is first scored on it; select error X keeps
# only frames whose force RMSE exceeds X (eV/A)
selection = [(x, expect_kept, launch(d2, deck(fix_args=f"start si.nep.txt select error {x}", steps=40, buffer=f"sel{x}.h5"),
                                     name=f"in.sel{x}")) for x, expect_kept in (("1e9", 0), ("0", 4))]
for x, expect_kept, handle in selection:
    p, log = handle.finish()
    rows = thermo_rows(log)
    check(p.returncode == 0 and rows[-1]["f_learn[1]"] == expect_kept and rows[-1]["f_learn[7]"] == 4 - expect_kept
          and rows[-1]["f_learn[6]"] > 0,
          f"select error {x}: {expect_kept} of 4 frames buffered, the rest counted as rejected, fresh-frame RMSE reported")

# ---- 3. determinism: repeat, threads 2, and 2 MPI ranks
runs = {}
for tag, (dd, fargs, np, handle) in det_runs.items():
    p, _ = handle.finish()
    runs[tag] = dd
    check(p.returncode == 0, f"determinism run {tag} ({fargs or 'threads 1'}, {np} rank(s)) completes")
same = lambda a, b, f: filecmp.cmp(os.path.join(runs[a], f), os.path.join(runs[b], f), shallow=False)
check(same("a", "b", "si.nep.txt"), "same seed, repeated: same nep.txt bytes")
ba, bb = read_buffer(runs["a"]), read_buffer(runs["b"])
check(ba == bb and len(ba) == 9, f"same seed, repeated: identical buffer ({len(ba)} frames)")
if team:
    check(same("a", "t2", "si.nep.txt"), "training threads 1 vs 2: same nep.txt bytes")
if args.mpi:
    ok, msg = frames_close(read_buffer(runs["mpi"]), ba)
    check(ok, f"mpirun -np 2 buffer equals 1 rank ({msg})")
    ma, mb = (numbers(open(os.path.join(runs[t], "si.nep.txt")).read()) for t in ("a", "mpi"))
    dev = rel(mb, ma) if len(ma) == len(mb) and ma else 1.0
    check(dev < 1e-8, f"mpirun -np 2 model equals 1 rank (max rel dev {dev:.1e})")

# ---- 4. restart: no duplicate or lost frames
p, _ = full_run.finish()
p1, _ = restart_a.finish()
p2, log2 = run(rs, deck(steps=50, thermo=False, restart_in="r.restart"), name="in.b")
check(p1.returncode == 0 and p2.returncode == 0, "write_restart / read_restart decks run")
ok, msg = frames_close(read_buffer(rs), read_buffer(full))
check(ok, f"restarted buffer equals the uninterrupted run's ({len(read_buffer(rs))} frames, {msg})")
# a buffer that ran past the restart point: the newer frames are dropped and sampled again
p3, log3 = run(rs, deck(steps=50, thermo=False, restart_in="r.restart"), name="in.c")
ok, msg = frames_close(read_buffer(rs), read_buffer(full))
check(p3.returncode == 0 and "dropped 5 frames" in log3 and ok, f"restart from an earlier point drops the 5 newer frames ({msg})")

# ---- 5. kill -9 mid-run: flushed frames readable, reopen appends after them
kd = newdir("kill")
open(os.path.join(kd, "in.kill"), "w").write(deck(steps=2000000, every=1, thermo=False, fix_args="train_every 1000000"))
env = harness.env(OMP_NUM_THREADS="1")
proc = subprocess.Popen([args.lmp, "-in", "in.kill", "-log", "none", "-screen", "none"], cwd=kd, env=env)
t0 = time.time()
while time.time() - t0 < 60 and (not os.path.exists(os.path.join(kd, "si.h5")) or os.path.getsize(os.path.join(kd, "si.h5")) < 400000):
    time.sleep(0.05)
time.sleep(0.3)
proc.send_signal(signal.SIGKILL)
proc.wait()
def check_reopen_appends(d, kept, what):
    """A 30-step run (every 10) on the left-over buffer keeps its frames and appends 3."""
    p, _ = run(d, deck(steps=30, thermo=False), name="in.reopen")
    again = read_buffer(d)
    check(p.returncode == 0 and len(again) == len(kept) + 3 and again[:len(kept)] == kept,
          f"{what}: reopened, the {len(kept)} frames intact and 3 appended ({len(again)})")


try:
    killed = read_buffer(kd)
    check(len(killed) > 10, f"kill -9 mid-run: buffer readable with {len(killed)} complete frames")
    check_reopen_appends(kd, killed, "kill -9")
except subprocess.CalledProcessError as e:
    check(False, f"kill -9 mid-run: buffer unreadable ({e.stderr})")

# ---- 5b. disk full while buffering (RLIMIT_FSIZE with SIGXFSZ ignored: write() fails with
# EFBIG, as it fails with ENOSPC on a full disk): a clear error, every earlier frame intact
def file_size_limit(nbytes):
    def apply():
        import resource
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
        resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
    return apply


fd = newdir("full")
ref_run.finish()
open(os.path.join(fd, "in.full"), "w").write(full_deck)
# PMIX_MCA_gds=hash: Open MPI's singleton start-up would otherwise need a shared-memory file larger than the limit
env = harness.env(OMP_NUM_THREADS="1", PMIX_MCA_gds="hash")
p = harness.run([args.lmp, "-in", "in.full", "-log", "none"], cwd=fd, env=env, timeout=300,
                preexec_fn=file_size_limit(1000000))
out = p.stdout + p.stderr
msg = re.search(r"fix nep/train: step \d+: \S*si.h5: no room for the next frame \(File too large\); the frames written before this one are intact", out)
check(p.returncode > 0 and msg is not None, f"disk full: run stops with a clear error (exit {p.returncode}: {msg.group(0) if msg else out[-300:]})")
try:
    kept, whole = read_buffer(fd), read_buffer(ref)
    ok, diff = frames_close(kept, whole[:len(kept)], tol=0.0)
    check(50 < len(kept) < len(whole) and ok, f"disk full: the {len(kept)} frames before the failed one are intact ({diff})")
    check_reopen_appends(fd, kept, "disk full, then room again")
except subprocess.CalledProcessError as e:
    check(False, f"disk full: buffer unreadable ({e.stderr})")

# ---- 6. errors (started at the beginning)
bad_runs, nan_run, halt_run = error_runs
for what, msg, handle in bad_runs:
    p, log = handle.finish()
    check(p.returncode != 0 and msg in log, f"error '{what}': message contains '{msg}'")
p, log = halt_run.finish()
check(p.returncode == 1 and "Fix halt condition" in log and "round 1 started" in log and len(read_buffer(halt_run.d)) >= 3,
      f"an ERROR while a round runs: exit status {p.returncode} (1: no crash of the training thread), the ERROR in "
      "the log, the buffer's frames readable")
p, log = nan_run.finish()
rows = thermo_rows(log)
check(p.returncode == 0 and "non-finite" in log and rows and rows[-1]["f_learn[1]"] == 0 and rows[-1]["f_learn[7]"] == 2,
      "NaN teacher forces: frames rejected with a warning, run continues, nothing buffered")
harness.finish()
