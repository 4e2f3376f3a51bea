"""Extended XYZ (GPUMD train.xyz / test.xyz): per frame the species, energy, forces and whether a
virial (or stress) label is present. Keys are case-insensitive, as in GPUMD."""
import re

import numpy as np

from .errors import ReportError

_PAIR = re.compile(r'(\w+)\s*=\s*("([^"]*)"|\S+)')


class Frame:
    def __init__(self, species, energy, forces, has_virial):
        self.species, self.energy, self.forces, self.has_virial = species, energy, forces, has_virial


def _columns(props, path, lineno):
    """Properties=name:T:n:... -> (species column, force column or None)."""
    parts = props.split(":")
    if len(parts) % 3:
        raise ReportError(path, "Properties must be name:type:count triples", lineno)
    col, species, force = 0, None, None
    for k in range(0, len(parts), 3):
        name = parts[k].lower()
        try:
            n = int(parts[k + 2])
        except ValueError:
            raise ReportError(path, f"Properties count '{parts[k + 2]}' is not an integer", lineno) from None
        if name == "species":
            species = col
        elif name in ("force", "forces"):
            force = col
        col += n
    if species is None:
        raise ReportError(path, "Properties has no species", lineno)
    return species, force


def read_xyz(path):
    frames = []
    with open(path) as f:
        lines = f.read().splitlines()
    i = 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        try:
            n = int(lines[i].split()[0])
        except ValueError:
            raise ReportError(path, "expected the number of atoms", i + 1) from None
        if i + 2 + n > len(lines):
            raise ReportError(path, f"frame of {n} atoms ends early", i + 1)
        info = {m.group(1).lower(): (m.group(3) if m.group(3) is not None else m.group(2))
                for m in _PAIR.finditer(lines[i + 1])}
        if "properties" not in info:
            raise ReportError(path, "no Properties= on the comment line", i + 2)
        sc, fc = _columns(info["properties"], path, i + 2)
        energy = float(info["energy"]) if "energy" in info else None
        species, forces = [], []
        for k in range(n):
            t = lines[i + 2 + k].split()
            if len(t) <= sc or (fc is not None and len(t) < fc + 3):
                raise ReportError(path, "too few columns for Properties", i + 3 + k)
            species.append(t[sc])
            if fc is not None:
                forces.append([float(x) for x in t[fc:fc + 3]])
        frames.append(Frame(species, energy, np.array(forces) if fc is not None else None,
                            "virial" in info or "stress" in info))
        i += n + 2
    return frames
