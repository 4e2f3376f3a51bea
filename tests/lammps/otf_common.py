"""Shared by the fix nep/train test scripts: the Stillinger-Weber teacher, the 64-atom Si box, number
extraction, thermo rows of a LAMMPS log, lmp runs started in the background, the scripts' folders."""
import os
import re
import shutil
import subprocess
import tempfile

# Stillinger-Weber silicon (Stillinger & Weber, PRB 31, 5262 (1985)), in LAMMPS's sw format
SI_SW = "Si Si Si 2.1683 2.0951 1.80 21.0 1.20 -0.333333333333 7.049556277 0.6022245584 4.0 0.0 0.0\n"


def si_box(units="metal", rattle=False):
    """Input lines creating the 64-atom diamond Si box (2x2x2 cells) at 1500 K, optionally rattled."""
    return (f"units {units}\nboundary p p p\nlattice diamond 5.431\nregion box block 0 2 0 2 0 2\n"
            "create_box 1 box\ncreate_atoms 1 box\nmass 1 28.0855\n"
            + ("displace_atoms all random 0.1 0.1 0.1 4242\n" if rattle else "")
            + "velocity all create 1500 7 loop geom\n")


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
        print("skip training threads 2: libgomp's barriers are invisible to ThreadSanitizer", flush=True)
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
    cmd = [lmp, "-in", name, "-log", name + ".log", "-screen", "none"] + list(lmp_args)
    if np > 1:
        cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(np)] + cmd
    env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_PROC_BIND="false", OMP_NUM_THREADS="1", **(env_extra or {}))
    with open(os.path.join(d, name + ".stdout"), "w") as out, open(os.path.join(d, name + ".stderr"), "w") as err:
        proc = subprocess.Popen(cmd, cwd=d, env=env, stdout=out, stderr=err)
    return Launched(d, name, proc, expect_ok, timeout)


class Folders:
    """The temporary folders of a test script: removed at the end when every check passed, named
    (kept for a look) otherwise."""

    def __init__(self, prefix):
        self.prefix, self.made = prefix, []

    def new(self, tag):
        d = tempfile.mkdtemp(prefix=f"{self.prefix}_{tag}_")
        self.made.append(d)
        return d

    def finish(self, failures):
        if failures:
            print("folders kept: " + " ".join(self.made))
        else:
            for d in self.made:
                shutil.rmtree(d, ignore_errors=True)
