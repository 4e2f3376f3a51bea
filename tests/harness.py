"""The harness of the Python test scripts (tests/*/*.py): checks, their summary and exit status, the
scripts' temporary folders, running a command, and the files the scripts share with the shell
set-up (LAMMPS's potential files, extended-XYZ frames). A script:

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    import harness
    d = harness.folder("case")                        # removed at the end if every check passed
    p = harness.run([exe, d], timeout=60)              # output captured as text
    harness.check(p.returncode == 0, "exe runs")       # 'ok   exe runs' or 'FAIL exe runs'
    harness.finish()                                   # 'N passed, M failed'; exit 1 if any failed

The exit status is the verdict: 0 only from finish() after at least one check and no failure; a
script stopped by an exception exits 1 with its folders kept (their names printed)."""
import atexit
import os
import shutil
import subprocess
import sys
import tempfile

_state = {"passed": 0, "failures": [], "folders": [], "finished": False}


def check(cond, what):
    """Records one check and prints 'ok   WHAT' or 'FAIL WHAT'; returns bool(cond)."""
    ok = bool(cond)
    print(("ok   " if ok else "FAIL ") + what, flush=True)
    if ok:
        _state["passed"] += 1
    else:
        _state["failures"].append(what)
    return ok


def skip(what):
    """A check that does not apply here: printed, counted neither way."""
    print("skip " + what, flush=True)


def failed():
    """The number of failed checks so far."""
    return len(_state["failures"])


def run_checks(checks, only=""):
    """Checks written as functions (each returns its message, one starting with 'skipped' for a skip,
    or raises to fail) whose name contains ONLY: one line each, as check() prints."""
    for fn in checks:
        if only and only not in fn.__name__:
            continue
        try:
            msg = fn()
        except Exception as exc:  # a failed check: named, counted, the next one runs
            check(False, "%s: %s" % (fn.__name__, exc))
            continue
        if msg.startswith("skipped"):
            skip("%s: %s" % (fn.__name__, msg))
        else:
            check(True, "%s: %s" % (fn.__name__, msg))


def finish():
    """Prints 'N passed, M failed' and each failed check, removes the folders when none failed (names
    them otherwise) and exits: 0 when at least one check passed and none failed, else 1."""
    passed, failures = _state["passed"], _state["failures"]
    _state["finished"] = True
    if passed + len(failures) == 0:
        failures.append("no check ran")
    print("%d passed, %d failed" % (passed, len(failures)), flush=True)
    for what in failures:
        print("  FAILED: " + (what.splitlines() or [""])[0][:200])
    if failures:
        _name_kept_folders()
    else:
        for d in _state["folders"]:
            shutil.rmtree(d, ignore_errors=True)
    sys.exit(1 if failures else 0)


def _name_kept_folders():
    if _state["folders"]:
        print("folders kept: " + " ".join(_state["folders"]), flush=True)


@atexit.register
def _stopped_early():
    if not _state["finished"] and (_state["folders"] or _state["passed"] or _state["failures"]):
        print("stopped before finish() after %d passed and %d failed checks" % (_state["passed"], failed()))
        _name_kept_folders()


def folder(tag):
    """A new temporary folder (/tmp/SCRIPT_TAG_xxxx): removed by finish() when every check passed."""
    script = os.path.splitext(os.path.basename(sys.argv[0]))[0] or "test"
    d = tempfile.mkdtemp(prefix="%s_%s_" % (script, tag))
    _state["folders"].append(d)
    return d


def env(**extra):
    """os.environ with passive, unbound OpenMP threads (spinning threads starve the other runs on a
    small machine) and EXTRA."""
    e = dict(os.environ, OMP_WAIT_POLICY="passive", OMP_PROC_BIND="false")
    e.update(extra)
    return e


def mpirun(np, cmd):
    """cmd, under mpirun with np ranks when np > 1."""
    return cmd if np <= 1 else ["mpirun", "--oversubscribe", "--allow-run-as-root", "-np", str(np)] + list(cmd)


def run(cmd, timeout=None, **kw):
    """subprocess.run with the output captured as text. Past TIMEOUT seconds the command is killed and
    TimeoutError raised, naming the command and the end of its output (a hang is never read as an
    exit status: a check of a run that must fail cannot pass on one that hung)."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except subprocess.TimeoutExpired as exc:
        out = "".join(b.decode(errors="replace") if isinstance(b, bytes) else (b or "") for b in (exc.stdout, exc.stderr))
        raise TimeoutError("%s: killed after %s s; its output ends:\n%s" % (" ".join(map(str, cmd)), timeout, out[-2000:])) from None


def lammps_potential(lmp, name):
    """The path of LAMMPS's potential file NAME (e.g. Si.sw), found as tools/common.sh's
    nep_lammps_potential finds it: in $LAMMPS_POTENTIALS, else in the potentials folder of the LAMMPS
    whose lmp is LMP (share/lammps-src/potentials, where tools/common.sh's lammps_install keeps it, or
    share/lammps/potentials, LAMMPS's own install)."""
    exe = shutil.which(lmp) or lmp
    prefix = os.path.dirname(os.path.dirname(os.path.realpath(exe)))
    places = [os.environ.get("LAMMPS_POTENTIALS", ""), os.path.join(prefix, "share", "lammps-src", "potentials"),
              os.path.join(prefix, "share", "lammps", "potentials")]
    for d in places:
        if d and os.path.isfile(os.path.join(d, name)):
            return os.path.join(d, name)
    raise FileNotFoundError("LAMMPS potential %s not found in %s (set LAMMPS_POTENTIALS to the folder that holds it)"
                            % (name, ", ".join(d for d in places if d)))


def xyz_frames(path, keepends=False):
    """The frames of an extended XYZ file, each as its lines (count, comment, one per atom)."""
    lines = open(path).read().splitlines(keepends)
    out, i = [], 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        n = int(lines[i])
        out.append(lines[i:i + n + 2])
        i += n + 2
    return out
