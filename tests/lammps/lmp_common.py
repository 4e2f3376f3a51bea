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


def installed_packages(lmp):
    """The packages 'lmp -h' lists as installed (e.g. {'KOKKOS', 'MANYBODY', 'PLUGIN'})."""
    out = subprocess.run(shlex.split(lmp) + ["-h"], capture_output=True, text=True, timeout=60).stdout
    section = out.split("Installed packages:", 1)[-1].split("List of individual style options", 1)[0]
    return set(section.split())


def max_rel(xs, refs):
    """max |x - ref| / max(|ref|, max |refs|): the fixtures README's relative deviation."""
    scale = max(abs(r) for r in refs) or 1.0
    return max(abs(x - r) / max(abs(r), scale) for x, r in zip(xs, refs))


def run_checks(checks, only=""):
    """Run each check (a function returning a message; one starting with 'skipped' is a skip) whose
    name contains ONLY; print one line each and 'N passed, M failed'; return the exit status."""
    passed = failed = 0
    for check in checks:
        if only and only not in check.__name__:
            continue
        try:
            msg = check()
            skipped = msg.startswith("skipped")
            print("%s %s: %s" % ("skip" if skipped else "ok  ", check.__name__, msg), flush=True)
            passed += not skipped
        except Exception as exc:
            print("FAIL %s: %s" % (check.__name__, exc), flush=True)
            failed += 1
    print("%d passed, %d failed" % (passed, failed))
    return 0 if failed == 0 else 1
