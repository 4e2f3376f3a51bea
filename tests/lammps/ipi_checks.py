#!/usr/bin/env python3
"""pair_style ipi end to end, with tests/ipi/lj_client.py (an i-PI client computing the same
Lennard-Jones as LAMMPS's pair_style lj/cut) as the external code:
- energy, forces and the whole pressure tensor equal lj/cut's (1e-10 relative) in a triclinic box,
  the client launched by the pair style (UNIX socket in a private folder) on 1, 2 and 4 MPI ranks,
  started by the user (unix NAME, inet PORT), and over 30 MD steps (the same trajectory);
- faults: a client that dies, hangs (timeout) or returns NaN once is restarted and the run ends as
  the fault-free one; a wrong atom count, a client that always dies, one that never connects and a
  launch command that fails stop LAMMPS with the reason;
- errors: per-atom energy or stress asked of it, an element-less pair_coeff, a client input whose
  species disagree with LAMMPS's atom order, a bad keyword;
- fix nep/train with it as the teacher: passive, the same buffer as with lj/cut teaching (1e-10);
  mode active under hybrid/overlay, teacher calls over the socket; LAMMPS killed with SIGKILL
  mid-run: the buffer readable and reopened intact, the launched client gone."""
import json
import math
import os
import random
import re
import signal
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness
from otf_common import arg_parser, launch_lmp, read_buffer, rel, thermo_rows

ap = arg_parser()
ap.add_argument("--python", default="", help="the python3 that runs the client (default: the first with numpy of "
                                             "/usr/bin/python3 and this one)")
args = ap.parse_args()
if not args.python:
    for py in ("/usr/bin/python3", sys.executable):
        if os.path.exists(py) and subprocess.run([py, "-c", "import numpy"], capture_output=True).returncode == 0:
            args.python = py
            break
CLIENT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "ipi", "lj_client.py")
PY = args.python

# the box is written once on one rank: create_atoms numbers atoms by rank, so runs on other rank
# counts would otherwise hold the same atoms under other IDs
MAKE_BOX = """units metal
boundary p p p
lattice fcc 5.26
region box prism 0 3 0 3 0 3 0.4 0.3 -0.2
create_box 1 box
create_atoms 1 box
mass 1 39.948
displace_atoms all random 0.1 0.1 0.1 4242 units box
velocity all create 300 7 loop geom
write_data box.data
"""
box_dir = harness.folder("box")
_p, _log = launch_lmp(args.lmp, box_dir, MAKE_BOX, name="in.box").finish()
BOX = f"units metal\nboundary p p p\nread_data {os.path.join(box_dir, 'box.data')}\n"
OUTPUT = """compute p all pressure NULL virial
thermo_style custom step pe c_p[1] c_p[2] c_p[3] c_p[4] c_p[5] c_p[6]
thermo_modify format float %.16g
thermo 10
dump d all custom 10 forces.dump id fx fy fz
dump_modify d format float %.16g sort id
"""


def client(extra=""):
    return f"{PY} {CLIENT} --needinit-every {extra}"


def deck(pair, steps=0, plugin=True):
    run = f"fix nve all nve\nrun {steps}\n" if steps else "run 0\n"
    return BOX + (f"plugin load {args.plugin}\n" if plugin else "") + pair + OUTPUT + run


def ipi(options="", extra_client=""):
    return f'pair_style ipi launch "{client(extra_client)} --unix {{name}}" {options}\npair_coeff * * Ar\n'


LJ = "pair_style lj/cut 8.5\npair_coeff * * 0.0104 3.40\n"


def start(tag, text, np=1, expect_ok=True, timeout=300):
    d = harness.folder(tag)
    return d, launch_lmp(args.lmp, d, text, np=np, expect_ok=expect_ok, timeout=timeout)


def forces(d):
    lines = open(os.path.join(d, "forces.dump")).read().splitlines()
    last = max(i for i, l in enumerate(lines) if l.startswith("ITEM: ATOMS"))
    return [float(v) for l in lines[last + 1:] for v in l.split()[1:]]


def values(log):
    rows = thermo_rows(log)
    return [v for r in rows for k, v in r.items() if k != "Step"]


def free_port():
    """a free port below Linux's ephemeral range (32768-60999): a port the kernel hands out by
    itself could be taken, between this check and LAMMPS's bind, by any outgoing connection (the
    MPI runs started beside it open some); one below the range only by an explicit bind"""
    rng = random.Random(os.getpid())
    for _ in range(200):
        port = rng.randrange(20000, 32000)
        with socket.socket() as s:
            try:
                s.bind(("127.0.0.1", port))
                return port
            except OSError:
                continue
    raise RuntimeError("no free port in 20000-32000")


# ---- runs that need nothing else, side by side
port = free_port()
name = "nep_test_%d" % os.getpid()
runs = {
    "ref": start("ref", deck(LJ, plugin=False)),
    "ref_md": start("ref_md", deck(LJ, steps=30, plugin=False)),
    "np1": start("np1", deck(ipi())),
    "np2": start("np2", deck(ipi()), np=2),
    "np4": start("np4", deck(ipi()), np=4),
    "md": start("md", deck(ipi(), steps=30)),
    "unix_user": start("unix_user", deck(f"pair_style ipi unix {name} wait 60\npair_coeff * * Ar\n")),
    "inet_user": start("inet_user", deck(f"pair_style ipi inet {port} wait 60\npair_coeff * * Ar\n")),
}
users = [subprocess.Popen(client(f"--unix {name}").split(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL),
         subprocess.Popen(client(f"--inet 127.0.0.1:{port}").split(), stdout=subprocess.DEVNULL,
                          stderr=subprocess.DEVNULL)]
done = {k: (d, h.finish()) for k, (d, h) in runs.items()}
for u in users:
    try:
        u.wait(timeout=30)
    except subprocess.TimeoutExpired:
        u.kill()

ref_d, (ref_p, ref_log) = done["ref"]
ref_v, ref_f = values(ref_log), forces(ref_d)
harness.check(ref_p.returncode == 0 and len(ref_v) == 7, "reference: lj/cut, triclinic 108-atom box")
for key, what in (("np1", "launched client, 1 rank"), ("np2", "2 ranks"), ("np4", "4 ranks"),
                  ("unix_user", "a client the user started, unix NAME"), ("inet_user", "inet PORT (127.0.0.1)")):
    d, (p, log) = done[key]
    ok = p.returncode == 0 and len(values(log)) == 7
    harness.check(ok and rel(values(log), ref_v) < 1e-10 and rel(forces(d), ref_f) < 1e-10,
                  f"{what}: energy, pressure tensor and forces equal lj/cut's "
                  f"({rel(values(log), ref_v) if ok else 'run failed'}, {rel(forces(d), ref_f) if ok else ''})")
d, (p, log) = done["md"]
rd, (rp, rlog) = done["ref_md"]
ok = p.returncode == 0 and rp.returncode == 0
harness.check(ok and len(values(log)) == len(values(rlog)) and rel(values(log), values(rlog)) < 1e-9
              and rel(forces(d), forces(rd)) < 1e-9, "30 NVE steps: the same trajectory as lj/cut's (thermo, forces)")
harness.check("no 'input FILE'" in log, "without 'input FILE' a warning says the atom order cannot be checked")

# ---- faults: the fault-free run's thermo is what a restarted client must reproduce
# (compute pair ipi: calls answered, seconds in calls, failed attempts, printed at the last step)
COUNTS = 'compute tp all pair ipi\nfix counts all print 30 "IPI_COUNTS $(c_tp[1]) $(c_tp[2]) $(c_tp[3])"\n'
md_v = values(log)
once = lambda tag: os.path.join(harness.folder(tag + "_mark"), "done")
fault_runs = {
    "die": start("die", deck(ipi("timeout 20", f"--die-at 2 --once {once('die')}") + COUNTS, steps=30)),
    "hang": start("hang", deck(ipi("timeout 3", f"--hang-at 2 --once {once('hang')}"), steps=30)),
    "nan": start("nan", deck(ipi("", f"--nan-at 2 --once {once('nan')}"), steps=30)),
    "count": start("count", deck(ipi("", "--count-off-at 1")), expect_ok=False),
    "always": start("always", deck(ipi("retries 1", "--die-at 1")), expect_ok=False),
    "absent": start("absent", deck("pair_style ipi unix nobody_listens_%d wait 2\npair_coeff * * Ar\n" % os.getpid()),
                    expect_ok=False),
    "bad_launch": start("bad_launch", deck('pair_style ipi launch "exit 3" log c.log\npair_coeff * * Ar\n'),
                        expect_ok=False),
}
fdone = {k: (d, h.finish()) for k, (d, h) in fault_runs.items()}
for key, what in (("die", "dies mid-call"), ("hang", "hangs (timeout 3 s)"), ("nan", "returns NaN")):
    d, (p, log) = fdone[key]
    harness.check(p.returncode == 0 and "call failed" in log and rel(values(log), md_v) < 1e-9,
                  f"a client that {what} once: restarted, the run ends as the fault-free one")
d, (p, log) = fdone["die"]
m = ([None] + list(re.finditer(r"^IPI_COUNTS (\S+) (\S+) (\S+)", log, re.M)))[-1]    # at step 30
harness.check(p.returncode == 0 and m and float(m.group(1)) == 31 and float(m.group(3)) == 1 and 0 < float(m.group(2)) < 300,
              "compute pair ipi: 31 calls answered (set-up + 30 steps), 1 failed attempt, the seconds in calls "
              f"({m.groups() if m else 'not printed'})")
expect = {"count": "returned forces on 107 atoms, LAMMPS has 108",
          "always": "the client failed 2 time(s)",
          "absent": "no client connected to UNIX socket /tmp/ipi_nobody_listens",
          "bad_launch": "ended (exit 3) before it connected"}
for key, msg in expect.items():
    d, (p, log) = fdone[key]
    harness.check(p.returncode != 0 and msg in log, f"{key}: LAMMPS stops with '{msg}'")
# LAMMPS's main exits on an error without destroying its objects: the socket file and the private
# folder of the auto socket (named in the log) are removed all the same
for key in expect:
    d, (p, log) = fdone[key]
    m = re.search(r"for a client at UNIX socket (/tmp/ipi_\S+) \(client name", log)
    sock = m.group(1) if m else None
    left = [q for q in ([sock, os.path.dirname(sock)] if key != "absent" else [sock]) if os.path.lexists(q)] if sock else []
    harness.check(sock is not None and not left, f"{key}: after the error, nothing left in /tmp ({sock}: {left})")

# ---- errors
pw = os.path.join(harness.folder("inputs"), "pw.in")
open(pw, "w").write("&SYSTEM\n nat = 108, ntyp = 2, ibrav = 0\n/\nATOMIC_SPECIES\nAr 39.9 Ar.UPF\nKr 83.8 Kr.UPF\n"
                    "ATOMIC_POSITIONS angstrom\n" + "Ar 0 0 0\n" * 5 + "Kr 1 1 1\n" + "Ar 0 0 0\n" * 102)
# the same atoms as LAMMPS's (108 Ar) in a pw.x input without nosym = .true.
pw_sym = os.path.join(harness.folder("inputs_sym"), "pw.in")
open(pw_sym, "w").write("&SYSTEM\n nat = 108, ntyp = 1, ibrav = 0\n/\nATOMIC_SPECIES\nAr 39.9 Ar.UPF\n"
                        "ATOMIC_POSITIONS angstrom\n" + "Ar 0 0 0\n" * 108)
errors = {
    "nosym": (deck(ipi(f"input {pw_sym}")), "no 'nosym = .true.' in &SYSTEM"),
    "pe/atom": (deck(ipi()).replace("run 0", "compute pa all pe/atom\ndump e all custom 1 e.dump c_pa\nrun 0"),
                "returns no per-atom energy or stress"),
    "element": (deck('pair_style ipi launch "true"\npair_coeff * * X1\n'), "'X1' (atom type 1) is not an element"),
    "species": (deck(ipi(f"input {pw}")), "pw.in:13: atom 6 of the client is Kr"),
    "keyword": (deck("pair_style ipi timeout -1\npair_coeff * * Ar\n"), "timeout must be positive"),
    "shrink-wrapped": (deck(ipi()).replace("boundary p p p", "boundary p p s"), "shrink-wrapped boundaries"),
}
eruns = {k: start("err_" + k.replace("/", "_"), t, expect_ok=False) for k, (t, _) in errors.items()}
for k, (d, h) in eruns.items():
    p, log = h.finish()
    harness.check(p.returncode != 0 and errors[k][1] in log, f"error ({k}): '{errors[k][1]}'")

# ---- fix nep/train: the ipi teacher labels as the lj/cut teacher does; mode active calls it
NEP_IN = "type 1 Ar\ncutoff 6 4\nn_max 4 4\nbasis_size 6 6\nl_max 4 0 0\nneuron 8\nbatch 2\nepoch 5\n"
def train_deck(pair, fix_extra=""):
    columns = "f_learn[1] f_learn[8]" if "mode active" in fix_extra else "f_learn[1]"
    return (BOX + f"plugin load {args.plugin}\n" + pair + "fix nve all nve\n"
            f"fix learn all nep/train every 5 buffer ar.h5 model ar.nep.txt input nep.in seed 3 train_every 4 {fix_extra}\n"
            f"thermo_style custom step pe {columns}\nthermo 10\nrun 40\n")
tr = {}
for tag, text in (("teach_lj", train_deck(LJ)), ("teach_ipi", train_deck(ipi())),
                  ("active", train_deck(f"pair_style hybrid/overlay nep/gpu cutoff 6 ipi launch \"{client()} --unix {{name}}\"\n"
                                        "pair_coeff * * nep/gpu none Ar\npair_coeff * * ipi Ar\n",
                                        "mode active teacher ipi committee 2 threshold 0.01 0.05 adopt_after 10 10"))):
    d = harness.folder(tag)
    open(os.path.join(d, "nep.in"), "w").write(NEP_IN)
    tr[tag] = (d, launch_lmp(args.lmp, d, text, timeout=300))
tr = {k: (d, h.finish()) for k, (d, h) in tr.items()}
(dl, (pl, _)), (di, (pi, _)) = tr["teach_lj"], tr["teach_ipi"]
if pl.returncode == 0 and pi.returncode == 0:
    bl, bi = read_buffer(args.frames, dl, "ar.h5"), read_buffer(args.frames, di, "ar.h5")
    worst = max(max(rel([x for a in fi["force"] for x in a], [x for a in fl["force"] for x in a]),
                    rel([fi["energy"]], [fl["energy"]]), rel(fi["virial"], fl["virial"])) for fl, fi in zip(bl, bi))
    harness.check(len(bl) == len(bi) == 8 and worst < 1e-10,
                  f"passive: the ipi teacher's buffer equals the lj/cut teacher's ({len(bi)} frames, {worst:.2g})")
else:
    harness.check(False, "passive fix nep/train runs with the lj/cut and the ipi teacher")
d, (p, log) = tr["active"]
rows = thermo_rows(log)
harness.check(p.returncode == 0 and rows and rows[-1]["f_learn[8]"] > 0 and rows[-1]["f_learn[1]"] > 0,
              "mode active under hybrid/overlay: the ipi teacher is called and its frames buffered")
# a client that dies on every third call of its life, with the student driving from the start (the
# active run's model and member as the start): every check step asks the teacher for labels (LO tiny,
# HI huge); each failed call is counted and the step goes on with the student
active_dir = tr["active"][0]
d = harness.folder("active_faults")
open(os.path.join(d, "nep.in"), "w").write(NEP_IN)
pair = (f"pair_style hybrid/overlay nep/gpu cutoff 6 ipi launch \"{client('--die-at 3')} --unix {{name}}\" timeout 20\n"
        "pair_coeff * * nep/gpu none Ar\npair_coeff * * ipi Ar\n")
text = train_deck(pair, f"mode active teacher ipi committee 2 threshold 1e-6 1e3 start {active_dir}/ar.nep.txt")
p, log = launch_lmp(args.lmp, d, text.replace("f_learn[8]", "f_learn[8] f_learn[15]"), timeout=300).finish()
rows = thermo_rows(log)
events = [json.loads(l) for l in open(os.path.join(d, "ar.nep.txt.history.jsonl"))] if p.returncode == 0 else []
failed_steps = {e["step"] for e in events if e["event"] == "teacher_failed"}
labelled = {e["step"] for e in events if e["event"] == "teacher"}
frames = read_buffer(args.frames, d, "ar.h5") if p.returncode == 0 else []
finite = all(math.isfinite(v) for fr in frames for v in [fr["energy"]] + fr["virial"] + [x for a in fr["force"] for x in a])
harness.check(p.returncode == 0 and rows and rows[-1]["f_learn[15]"] == len(failed_steps) > 0
              and not (failed_steps & labelled) and len(frames) == len(labelled) and finite,
              f"mode active, a client dying every third call: the run ends, {len(failed_steps)} failed calls counted "
              f"(thermo, history) and none labelled, {len(frames)} finite frames buffered")

# ---- kill -9 of LAMMPS while the ipi teacher labels (passive): buffer readable and reopened
# intact; the launched client (its own process group) sees the socket close and exits
d = harness.folder("kill_lammps")
open(os.path.join(d, "nep.in"), "w").write(NEP_IN)
h = launch_lmp(args.lmp, d, train_deck(ipi()).replace("run 40", "run 100000"), name="in.kill", timeout=300)
t_kill = time.time()
while time.time() - t_kill < 60 and h.proc.poll() is None:
    try:
        if sum(json.loads(l).get("event") == "round" for l in open(os.path.join(d, "ar.nep.txt.history.jsonl"))) >= 2:
            break
    except (OSError, ValueError):    # no history yet, or a line being written
        pass
    time.sleep(0.2)


def clients_of(folder):
    """pids of lj_client.py processes whose working folder is `folder`"""
    found = []
    for pid in filter(str.isdigit, os.listdir("/proc")):
        try:
            if CLIENT.encode() in open(f"/proc/{pid}/cmdline", "rb").read() and os.readlink(f"/proc/{pid}/cwd") == folder:
                found.append(int(pid))
        except OSError:
            pass
    return found


running_before = clients_of(os.path.realpath(d))
h.proc.send_signal(signal.SIGKILL)
h.proc.wait()
t_gone = time.time()
while clients_of(os.path.realpath(d)) and time.time() - t_gone < 20:
    time.sleep(0.2)
left = clients_of(os.path.realpath(d))
for pid in left:
    os.kill(pid, signal.SIGKILL)
harness.check(running_before and not left, f"kill -9 of LAMMPS: its launched client exits ({len(running_before)} "
              f"running before, {len(left)} left after 20 s)")
try:
    killed = read_buffer(args.frames, d, "ar.h5")
    finite = all(math.isfinite(v) for fr in killed for v in [fr["energy"]] + fr["virial"] + [x for a in fr["force"] for x in a])
    harness.check(len(killed) >= 8 and finite, f"kill -9 of LAMMPS mid-run: buffer readable, {len(killed)} finite frames")
    p, _ = launch_lmp(args.lmp, d, train_deck(ipi()).replace("run 40", "run 20"), name="in.reopen", timeout=300).finish()
    again = read_buffer(args.frames, d, "ar.h5")
    harness.check(p.returncode == 0 and len(again) > len(killed) and again[:len(killed)] == killed,
                  f"kill -9 of LAMMPS: the buffer reopened and appended to, the {len(killed)} frames intact ({len(again)} now)")
except subprocess.CalledProcessError as e:
    harness.check(False, f"kill -9 of LAMMPS: buffer unreadable ({e.stderr})")
harness.finish()
