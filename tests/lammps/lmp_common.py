"""Helpers shared by the LAMMPS-level test scripts: common options, running lmp, deviations.
(Checks, folders and exit status: tests/harness.py.)"""
import shlex

import harness


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
    cmd = harness.mpirun(np, lmp_command(lmp, deck_path, log_path, lmp_args))
    return harness.run(cmd, env=harness.env(), timeout=300, cwd=cwd), cmd


def installed_packages(lmp):
    """The packages 'lmp -h' lists as installed (e.g. {'KOKKOS', 'MANYBODY', 'PLUGIN'})."""
    p = harness.run(shlex.split(lmp) + ["-h"], timeout=60)
    if p.returncode != 0:
        raise RuntimeError("%s -h: exit %d\n%s" % (lmp, p.returncode, p.stderr[-1500:]))
    out = p.stdout
    section = out.split("Installed packages:", 1)[-1].split("List of individual style options", 1)[0]
    return set(section.split())


def max_rel(xs, refs):
    """max |x - ref| / max(|ref|, max |refs|): the fixtures README's relative deviation."""
    scale = max(abs(r) for r in refs) or 1.0
    return max(abs(x - r) / max(abs(r), scale) for x, r in zip(xs, refs))

