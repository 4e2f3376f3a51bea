"""What both Si examples' summary.py read (examples/otf-si, examples/otf-si-active): the energies and
forces of an extended XYZ (the held-out teacher frames of in.test, nep-predict's predictions, the
buffer), and the RMSE of predicted against teacher force components."""
import math
import re


def read_xyz(path, force_col):
    """(energies, natoms, forces) of an extended XYZ; force_col = index of fx among the atom columns."""
    lines = open(path).read().splitlines()
    es, ns, fs, i = [], [], [], 0
    while i < len(lines):
        if not lines[i].strip():
            i += 1
            continue
        n = int(lines[i])
        es.append(float(re.search(r"energy=(\S+)", lines[i + 1]).group(1)))
        ns.append(n)
        for l in lines[i + 2:i + 2 + n]:
            t = l.split()
            fs.extend(float(x) for x in t[force_col:force_col + 3])
        i += n + 2
    return es, ns, fs


def force_rmse(pred_f, ref_f):
    """sqrt(mean (pred - ref)^2) over every force component"""
    return math.sqrt(sum((a - b) ** 2 for a, b in zip(pred_f, ref_f)) / len(ref_f))
