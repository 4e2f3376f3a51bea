"""Readers of LAMMPS outputs that an on-the-fly run leaves beside the model (examples/otf-si):
  rdf_NAME.txt   `fix ave/time ... c_rdf[*] ... mode vector` of `compute rdf` (one pair):
                 '#' comments, then blocks of "step nrows" and nrows lines "row r g(r) coord(r)";
                 the last block is used.
  *.log          a LAMMPS log with a `print "PHASE NAME"` marker: the thermo table after it (header
                 line starting with Step, rows until "Loop time ... with N atoms")."""
import re

import numpy as np

from .errors import ReportError, parse_floats


def read_blocks(path, width, what):
    """The blocks of a LAMMPS fix ave/time (mode vector) or fix ave/correlate file: '#' comments,
    then blocks of "step nrows" and nrows rows of `width` numbers (`what` names them in errors)."""
    blocks, cur, left = [], None, 0
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            t = line.split()
            if not t or t[0].startswith("#"):
                continue
            if left == 0:
                if len(t) != 2:
                    raise ReportError(path, "expected a block header 'step nrows'", lineno)
                left = int(parse_floats(path, lineno, t)[1])
                cur = []
                blocks.append(cur)
                continue
            v = parse_floats(path, lineno, t)
            if len(v) < width:
                raise ReportError(path, f"expected '{what}'", lineno)
            cur.append(v)
            left -= 1
    if not blocks or not blocks[-1]:
        raise ReportError(path, "no rows")
    return blocks


def read_rdf(path):
    """(r, g) of the last block."""
    a = np.array(read_blocks(path, 3, "row r g(r) ...")[-1])
    return a[:, 1], a[:, 2]


_LOOP = re.compile(r"Loop time of \S+ on \d+ procs for (\d+) steps with (\d+) atoms")
_TIMESTEP = re.compile(r"^\s*timestep\s+(\S+)", re.M)


class ThermoTrace:
    def __init__(self, columns, rows, natoms, timestep):
        self.columns, self.rows, self.natoms, self.timestep = columns, rows, natoms, timestep

    def col(self, name):
        return self.rows[:, self.columns.index(name)]


def read_thermo_after(path, marker):
    """The thermo table printed after the last line that is exactly `marker`, or None if there is none."""
    with open(path, errors="replace") as f:
        lines = f.read().splitlines()
    at = [k for k, l in enumerate(lines) if l.strip() == marker]
    if not at:
        return None
    head = "\n".join(lines[:at[-1]])
    ts = _TIMESTEP.findall(head)
    timestep = float(ts[-1]) if ts else 0.001  # LAMMPS's metal default
    k = at[-1] + 1
    while k < len(lines) and not (lines[k].split() and lines[k].split()[0] == "Step"):
        k += 1
    if k == len(lines):
        return None
    columns = lines[k].split()
    rows, natoms = [], None
    for j in range(k + 1, len(lines)):
        t = lines[j].split()
        if len(t) == len(columns):
            try:
                rows.append([float(x) for x in t])
                continue
            except ValueError:
                pass
        m = _LOOP.search(lines[j])
        if m:
            natoms = int(m.group(2))
        break
    if natoms is None:
        raise ReportError(path, f"no 'Loop time ... with N atoms' line after the thermo table of {marker}")
    return ThermoTrace(columns, np.array(rows), natoms, timestep)


def phase_markers(path):
    """Names NAME of the `PHASE NAME` lines in a log."""
    with open(path, errors="replace") as f:
        return sorted({l.split()[1] for l in f if l.startswith("PHASE ") and len(l.split()) == 2})
