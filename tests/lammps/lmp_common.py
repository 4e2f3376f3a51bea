"""Helpers shared by the LAMMPS-level test scripts: common options, running lmp, deviations."""
import os
import shlex
import subprocess


def add_common_args(ap):
    ap.add_argument("--lmp", required=True)
    ap.add_argument("--plugin", required=True)
    ap.add_argument("--data", required=True)
    ap.add_argument("--style", default="nep")
    ap.add_argument("--lmp-args", default="")


def lmp_command(lmp, deck_path, log_path, lmp_args=""):
    return shlex.split(lmp) + ["-in", deck_path, "-log", log_path, "-screen", "none"] + shlex.split(lmp_args)


def run_lmp(lmp, deck_path, log_path, lmp_args="", np=1, cwd=None):
    """Run lmp on a deck (under mpirun when np > 1) with passive OpenMP waiting; returns the
    CompletedProcess and the command."""
    cmd = lmp_command(lmp, deck_path, log_path, lmp_args)
    if np > 1:
        cmd = ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(np)] + cmd
    env = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_PROC_BIND="false")
    return subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300, cwd=cwd), cmd


def max_rel(xs, refs):
    """max |x - ref| / max(|ref|, max |refs|): the fixtures README's relative deviation."""
    scale = max(abs(r) for r in refs) or 1.0
    return max(abs(x - r) / max(abs(r), scale) for x, r in zip(xs, refs))
