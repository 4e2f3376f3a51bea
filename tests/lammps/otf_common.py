"""Shared by the fix nep/train test scripts: a run folder with the Stillinger-Weber teacher, the
64-atom Si box, number extraction, thermo rows of a LAMMPS log, lmp runs started in the background,
the buffer's frames. (Checks, folders and exit status: tests/harness.py.)"""
import argparse
import os
import re
import shutil
import subprocess

import harness


def arg_parser():
    """The options of every fix nep/train script: --lmp, --plugin, --frames (nep-frames, h5 -> xyz)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--lmp", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--frames", required=True, help="nep-frames (h5 -> xyz)")
    return ap


def nep_in(epochs):
    """The student of these scripts: a small Si NEP, `epochs` epochs a training round."""
    return f"type 1 Si\ncutoff 4.2 3.7\nn_max 4 4\nbasis_size 6 6\nl_max 4 2 0\nneuron 8\nbatch 2\nepoch {epochs}\n"


def prepare(d, lmp, nep_in, *files):
    """Fills the run folder d: LAMMPS's Si.sw (Stillinger & Weber, PRB 31, 5262 (1985)) as the
    teacher, nep.in, and copies of FILES; returns d."""
    shutil.copy(harness.lammps_potential(lmp, "Si.sw"), os.path.join(d, "Si.sw"))
    open(os.path.join(d, "nep.in"), "w").write(nep_in)
    for f in files:
        shutil.copy(f, d)
    return d


def si_box(units="metal", rattle=False):
    """Input lines creating the 64-atom diamond Si box (2x2x2 cells) at 1500 K, optionally rattled."""
    return (f"units {units}\nboundary p p p\nlattice diamond 5.431\nregion box block 0 2 0 2 0 2\n"
            "create_box 1 box\ncreate_atoms 1 box\nmass 1 28.0855\n"
            + ("displace_atoms all random 0.1 0.1 0.1 4242\n" if rattle else "")
            + "velocity all create 1500 7 loop geom\n")


def box_data(cells):
    """Input lines writing box.data: diamond Si of cells^3 conventional cells, rattled (seed 4242).
    Written once on 1 rank: create_atoms numbers atoms by rank, so a 2-rank run would otherwise hold
    the same atoms under other IDs."""
    return (f"units metal\nboundary p p p\nlattice diamond 5.431\nregion box block 0 {cells} 0 {cells} 0 {cells}\n"
            "create_box 1 box\ncreate_atoms 1 box\nmass 1 28.0855\n"
            "displace_atoms all random 0.05 0.05 0.05 4242 units box\nwrite_data box.data\n")


def active_box_deck(plugin, t_start, t_nvt, active, steps, thermo):
    """An active run on box.data (box_data): velocities at t_start K, NVT at t_nvt K, the nep/gpu
    student and the sw teacher under hybrid/overlay, fix nep/train sampling every 10 steps (train_every
    4, no held-out frames) in mode active with a committee of 3 and the further keywords `active`,
    the `thermo` lines, `steps` steps."""
    return f"""units metal
boundary p p p
read_data box.data
velocity all create {t_start} 7 loop geom
timestep 0.001
plugin load {plugin}
pair_style hybrid/overlay nep/gpu cutoff 4.2 sw
pair_coeff * * nep/gpu none Si
pair_coeff * * sw Si.sw Si
fix nvt all nvt temp {t_nvt} {t_nvt} 0.1
fix learn all nep/train every 10 buffer si.h5 model si.nep.txt input nep.in seed 7 train_every 4 heldout 0 &
    mode active teacher sw committee 3 {active}
{thermo}
run {steps}
"""


def numbers(text):
    """Every token of `text` that parses as a number (quotes and '=' split tokens), in order."""
    out = []
    for tok in text.replace('"', " ").replace("=", " ").split():
        try:
            out.append(float(tok))
        except ValueError:
            pass
    return out


def thermo_rows(log):
    """The thermo rows of a LAMMPS log text, each a dict keyed by its header's column names."""
    rows, keys, on = [], None, False
    for line in log.splitlines():
        if line.split()[:1] == ["Step"]:  # LAMMPS >= 2022 indents the thermo header
            on, keys = True, line.split()
            continue
        if on:
            if line.startswith("Loop time"):
                on = False
                continue
            parts = line.split()
            if len(parts) == len(keys) and re.match(r"^-?\d", parts[0]):  # skip messages between rows
                rows.append(dict(zip(keys, [float(x) for x in parts])))
    return rows


def training_team_runs():
    """False under ThreadSanitizer (tools/sanitize.sh tsan sets NEP_TSAN=1): a training thread's own
    OpenMP team (fix nep/train ... threads 2) is left out there, since libgomp is not
    TSan-instrumented and its barriers would read as races."""
    if os.environ.get("NEP_TSAN") == "1":
        harness.skip("training threads 2: libgomp's barriers are invisible to ThreadSanitizer")
        return False
    return True


class Launched:
    """An lmp run started by launch_lmp; finish() waits for it and returns (process, log + stdout +
    stderr). Runs that do not depend on each other go side by side: most of a fix nep/train run's
    time is MD waiting for a training round, which leaves a core to the others."""

    def __init__(self, d, name, proc, expect_ok, timeout):
        self.d, self.name, self.proc, self.expect_ok, self.timeout = d, name, proc, expect_ok, timeout

    def finish(self):
        try:
            self.proc.wait(timeout=self.timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        def read(suffix):
            path = os.path.join(self.d, self.name + suffix)
            return open(path).read() if os.path.exists(path) else ""
        log, out, err = read(".log"), read(".stdout"), read(".stderr")
        if self.expect_ok and self.proc.returncode != 0:
            print(out[-2000:], err[-2000:], log[-3000:])
        return self.proc, log + out + err


def launch_lmp(lmp, d, text, np=1, name="in.lmp", timeout=600, expect_ok=True, lmp_args=(), env_extra=None):
    """Writes the deck `text` to d/name and starts lmp on it (mpirun for np > 1); log, stdout and
    stderr go to d/name.log, .stdout, .stderr."""
    open(os.path.join(d, name), "w").write(text)
    cmd = harness.mpirun(np, [lmp, "-in", name, "-log", name + ".log", "-screen", "none"] + list(lmp_args))
    env = harness.env(**{"OMP_NUM_THREADS": "1", **(env_extra or {})})
    with open(os.path.join(d, name + ".stdout"), "w") as out, open(os.path.join(d, name + ".stderr"), "w") as err:
        proc = subprocess.Popen(cmd, cwd=d, env=env, stdout=out, stderr=err)
    return Launched(d, name, proc, expect_ok, timeout)


def read_buffer(frames_exe, d, name="si.h5"):
    """The frames of the buffer d/name (through nep-frames, h5 -> xyz), each a dict of energy, virial
    (9), box (the first lattice number), pos and force (per atom)."""
    xyz = os.path.join(d, name + ".xyz")
    subprocess.run([frames_exe, os.path.join(d, name), xyz], check=True, capture_output=True)
    out = []
    for fr in harness.xyz_frames(xyz):
        head, atoms = fr[1], [l.split() for l in fr[2:]]
        out.append(dict(energy=float(re.search(r"energy=(\S+)", head).group(1)),
                        virial=[float(v) for v in re.search(r'virial="([^"]+)"', head).group(1).split()],
                        box=float(re.search(r'Lattice="(\S+)', head).group(1)),
                        pos=[[float(v) for v in a[1:4]] for a in atoms], force=[[float(v) for v in a[4:7]] for a in atoms]))
    return out


def rel(a, b):
    """max |a - b| / max |b|: the deviation of a from b relative to b's largest value."""
    scale = max(max(abs(x) for x in b), 1e-300)
    return max(abs(x - y) for x, y in zip(a, b)) / scale
