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
Prints counts. Usage: otf_kill_trials.py --lmp LMP --plugin PLUGIN --frames nep-frames
--predict nep-predict [--trials 20] [--seed 1]"""
import argparse, os, random, re, shutil, signal, subprocess, sys, tempfile, time

from otf_common import SI_SW, numbers, si_box

ap = argparse.ArgumentParser()
ap.add_argument("--lmp", required=True)
ap.add_argument("--plugin", required=True)
ap.add_argument("--frames", required=True)
ap.add_argument("--predict", required=True)
ap.add_argument("--trials", type=int, default=20)
ap.add_argument("--seed", type=int, default=1)
args = ap.parse_args()

NEP_IN = "type 1 Si\ncutoff 4.2 3.7\nn_max 4 4\nbasis_size 6 6\nl_max 4 2 0\nneuron 8\nbatch 2\nepoch 3\n"
STEPS = 400
FIX = "fix learn all nep/train every 5 buffer si.h5 model si.nep.txt input nep.in seed 3 train_every 10\n"
COMMON = f"plugin load {args.plugin}\npair_style sw\npair_coeff * * Si.sw Si\n"
FRESH = f"""{si_box()}{COMMON}fix nve all nve
{FIX}restart 20 r.a r.b
run {STEPS}
"""
RESUME = lambda f: f"read_restart {f}\n{COMMON}fix nve all nve\n{FIX}run {STEPS} upto\n"
ENV = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_NUM_THREADS="1")


def setup(d):
    os.makedirs(d, exist_ok=True)
    open(os.path.join(d, "Si.sw"), "w").write(SI_SW)
    open(os.path.join(d, "nep.in"), "w").write(NEP_IN)
    open(os.path.join(d, "in.fresh"), "w").write(FRESH)


def lmp(d, deck, name):
    open(os.path.join(d, name), "w").write(deck)
    return subprocess.run([args.lmp, "-in", name, "-log", name + ".log", "-screen", "none"], cwd=d, env=ENV,
                          capture_output=True, text=True, timeout=600)


def frames(d):
    """Buffer frames as lists of lines (exact text of nep-frames' shortest round-trip numbers)."""
    xyz = os.path.join(d, "si.h5.xyz")
    subprocess.run([args.frames, os.path.join(d, "si.h5"), xyz], check=True, capture_output=True)
    lines = open(xyz).read().splitlines()
    out, i = [], 0
    while i < len(lines):
        n = int(lines[i])
        out.append(lines[i:i + n + 2])
        i += n + 2
    return out


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


base = tempfile.mkdtemp(prefix="otf_kill_")
ref = os.path.join(base, "ref")
setup(ref)
t0 = time.time()
p = lmp(ref, FRESH, "in.fresh")
t_ref = time.time() - t0
if p.returncode:
    print(p.stderr[-2000:])
    sys.exit("reference run failed")
ref_frames = frames(ref)
first = ref_frames[0]
open(os.path.join(base, "one.xyz"), "w").write("\n".join(first) + "\n")
print(f"reference: {len(ref_frames)} frames in {t_ref:.1f} s")

rng = random.Random(args.seed)
counts = dict(trials=0, killed_mid_run=0, buffer_ok=0, model_present=0, model_ok=0, resumed_exact=0)
failures = []
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
    if not ok:
        failures.append(f"trial {t}: buffer unreadable or differs ({len(got)} frames)")
    # 2. the model file is never half-written
    model = os.path.join(d, "si.nep.txt")
    if os.path.exists(model):
        counts["model_present"] += 1
        r = subprocess.run([args.predict, model, os.path.join(base, "one.xyz"), os.path.join(d, "p.xyz")],
                           capture_output=True, text=True)
        counts["model_ok"] += r.returncode == 0
        if r.returncode:
            failures.append(f"trial {t}: si.nep.txt does not load: {r.stderr.strip()[-300:]}")
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
    if not exact:
        n = len(frames(d)) if resumed else -1
        failures.append(f"trial {t}: resumed buffer differs from the reference (resumed={resumed}, {n} frames)")
    print(f"trial {t}: killed={killed} after {time.time() - start:.2f} s, {len(got)} frames intact, "
          f"model {'ok' if os.path.exists(model) else 'absent'}, resumed {'= reference (1e-9)' if exact else 'DIFFERS'}",
          flush=True)

print(" ".join(f"{k}={v}" for k, v in counts.items()))
for f in failures:
    print("  FAILED: " + f)
print(f"{counts['trials'] - len(set(f.split(':')[0] for f in failures))} passed, {len(failures)} failed")
if not failures:
    shutil.rmtree(base, ignore_errors=True)
else:
    print("kept " + base)
sys.exit(1 if failures else 0)
