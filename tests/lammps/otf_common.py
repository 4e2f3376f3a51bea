"""Shared by the fix nep/train test scripts: the Stillinger-Weber teacher, the 64-atom Si box, number
extraction, thermo rows of a LAMMPS log."""
import os
import re

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
