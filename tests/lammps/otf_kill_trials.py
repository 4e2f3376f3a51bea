#!/usr/bin/env python3
"""kill -9 of an on-the-fly training run at random moments (issue #7's fault test).

A reference run (64 Si atoms, SW teacher, fix nep/train every 5 steps with training rounds, restart
files every 20 steps alternating r.a/r.b) is run once uninterrupted. Each trial runs the same deck,
kills LAMMPS with SIGKILL at a random moment after both restart files exist, then checks:
  1. the buffer is readable and its frames equal the reference's first frames (every flushed frame
     survived, none is corrupt);
  2. si.nep.txt, if present, is a complete model (nep-predict loads it);
  3. resuming from the newest readable restart file (read_restart + the same fix + run ... upto)
     ends with the reference's buffer: same frame count, values to 1e-9 (LAMMPS's re-neighbouring
     after read_restart changes the last bits of later forces): no frame lost, none duplicated.
Prints counts and 'N passed, M failed'. Usage: otf_kill_trials.py --lmp LMP --plugin PLUGIN --frames nep-frames
--predict nep-predict [--trials 20] [--seed 1]"""
import os, random, signal, subprocess, sys, time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402
from otf_common import arg_parser, nep_in, numbers, prepare, si_box  # noqa: E402

ap = arg_parser()
ap.add_argument("--predict", required=True)
ap.add_argument("--trials", type=int, default=20)
ap.add_argument("--seed", type=int, default=1)
args = ap.parse_args()

NEP_IN = nep_in(epochs=3)
STEPS = 400
FIX = "fix learn all nep/train every 5 buffer si.h5 model si.nep.txt input nep.in seed 3 train_every 10\n"
COMMON = f"plugin load {args.plugin}\npair_style sw\npair_coeff * * Si.sw Si\n"
FRESH = f"""{si_box()}{COMMON}fix nve all nve
{FIX}restart 20 r.a r.b
run {STEPS}
"""
RESUME = lambda f: f"read_restart {f}\n{COMMON}fix nve all nve\n{FIX}run {STEPS} upto\n"
ENV = harness.env(OMP_NUM_THREADS="1")


def setup(d):
    os.makedirs(d, exist_ok=True)
    prepare(d, args.lmp, NEP_IN)
    open(os.path.join(d, "in.fresh"), "w").write(FRESH)


def lmp(d, deck, name):
    open(os.path.join(d, name), "w").write(deck)
    return harness.run([args.lmp, "-in", name, "-log", name + ".log", "-screen", "none"], cwd=d, env=ENV)


def frames(d):
    """Buffer frames as lists of lines (exact text of nep-frames' shortest round-trip numbers)."""
    xyz = os.path.join(d, "si.h5.xyz")
    subprocess.run([args.frames, os.path.join(d, "si.h5"), xyz], check=True, capture_output=True)
    return harness.xyz_frames(xyz)


def close(a, b, tol=1e-9):
    """Same frame count, numbers equal to tol relative: LAMMPS rebuilds neighbour lists after
    read_restart, so forces after the restart point can differ in the last bits."""
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        nx, ny = numbers(" ".join(x)), numbers(" ".join(y))
        if len(nx) != len(ny) or any(abs(u - v) > tol * max(1.0, abs(v)) for u, v in zip(nx, ny)):
            return False
    return True


base = harness.folder("trials")
ref = os.path.join(base, "ref")
setup(ref)
t0 = time.time()
p = lmp(ref, FRESH, "in.fresh")
t_ref = time.time() - t0
if not check(p.returncode == 0, f"reference run completes ({t_ref:.1f} s)"):
    print(p.stderr[-2000:])
    harness.finish()
ref_frames = frames(ref)
first = ref_frames[0]
open(os.path.join(base, "one.xyz"), "w").write("\n".join(first) + "\n")
print(f"reference: {len(ref_frames)} frames in {t_ref:.1f} s")

rng = random.Random(args.seed)
counts = dict(trials=0, killed_mid_run=0, buffer_ok=0, model_present=0, model_ok=0, resumed_exact=0)
for t in range(args.trials):
    d = os.path.join(base, f"t{t}")
    setup(d)
    proc = subprocess.Popen([args.lmp, "-in", "in.fresh", "-log", "none", "-screen", "none"], cwd=d, env=ENV)
    start = time.time()
    while not os.path.exists(os.path.join(d, "r.b")) and proc.poll() is None and time.time() - start < 60:
        time.sleep(0.01)
    time.sleep(rng.uniform(0.0, 0.8 * max(0.2, t_ref - (time.time() - start))))
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    counts["trials"] += 1
    killed = proc.returncode == -signal.SIGKILL
    counts["killed_mid_run"] += killed
    # 1. buffer readable, frames equal the reference's first ones
    try:
        got = frames(d)
        ok = got == ref_frames[:len(got)]
    except subprocess.CalledProcessError as e:
        got, ok = [], False
    counts["buffer_ok"] += ok
    check(ok, f"trial {t}: killed={killed} after {time.time() - start:.2f} s: the buffer is readable, "
          f"its {len(got)} frames equal the reference's first")
    # 2. the model file is never half-written
    model = os.path.join(d, "si.nep.txt")
    if os.path.exists(model):
        counts["model_present"] += 1
        r = harness.run([args.predict, model, os.path.join(base, "one.xyz"), os.path.join(d, "p.xyz")])
        counts["model_ok"] += r.returncode == 0
        check(r.returncode == 0, f"trial {t}: si.nep.txt loads in nep-predict" + (f": {r.stderr.strip()[-300:]}" if r.returncode else ""))
    # 3. resume from the newest readable restart file, finish, compare with the reference
    resumed = False
    for f in sorted((f for f in ("r.a", "r.b") if os.path.exists(os.path.join(d, f))),
                    key=lambda f: os.path.getmtime(os.path.join(d, f)), reverse=True):
        r = lmp(d, RESUME(f), "in.resume")
        if r.returncode == 0:
            resumed = True
            break
    exact = resumed and close(frames(d), ref_frames)
    counts["resumed_exact"] += exact
    check(exact, f"trial {t}: resumed from the newest restart file, the buffer equals the reference's to 1e-9 "
          f"(resumed={resumed}, {len(frames(d)) if resumed else -1} frames)")

print(" ".join(f"{k}={v}" for k, v in counts.items()))
harness.finish()
