#!/usr/bin/env python3
"""An example deck (examples/pbte, examples/si) run briefly, with assertions a wrong result breaks:

- the perfect crystal's potential energy per atom that the deck prints (LAMMPS + plugin, with the
  deck's own lattice) equals nep-predict's on the same crystal built here, to 1e-10 relative: the
  plugin's neighbour lists, type mapping and reductions against the standalone path;
- NVE energy conservation: max |E_tot(t) - E_tot(0)| per atom over the deck's NVE run (thermo
  every step) below --drift-max (eV/atom), and it shrinks like dt^2 (velocity Verlet's error):
  the same physical time at dt/2 must give at least 2.5x less (4x ideally). Forces that are not
  the energy's gradient break this: their energy error grows with time, whatever dt;
- the printed SUMMARY numbers are finite.

usage: check_example.py --lmp LMP --predict NEP_PREDICT --example DIR --deck in.pbte
                        --crystal pbte|si [--steps 20] [--drift-max 2e-5]
"""
import argparse
import math
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

CRYSTALS = {
    # a, basis (fractional), element per basis atom, model file (relative to the repository)
    "pbte": (6.77, [(0, 0, 0), (.5, .5, 0), (.5, 0, .5), (0, .5, .5), (.5, 0, 0), (0, .5, 0), (0, 0, .5), (.5, .5, .5)],
             ["Pb"] * 4 + ["Te"] * 4, "potentials/PbTe_NEP4.txt"),
    "si": (5.431, [(0, 0, 0), (0, .5, .5), (.5, 0, .5), (.5, .5, 0),
                   (.25, .25, .25), (.25, .75, .75), (.75, .25, .75), (.75, .75, .25)],
           ["Si"] * 8, "potentials/Si_2022_NEP4_5body.txt"),
}


def crystal_xyz(kind, n, path):
    a, basis, els, _ = CRYSTALS[kind]
    atoms = [(el, ((i + b[0]) * a, (j + b[1]) * a, (k + b[2]) * a))
             for i in range(n) for j in range(n) for k in range(n) for b, el in zip(basis, els)]
    L = n * a
    with open(path, "w") as fh:
        fh.write("%d\nLattice=\"%r 0 0 0 %r 0 0 0 %r\" Properties=species:S:1:pos:R:3 pbc=\"T T T\"\n" % (len(atoms), L, L, L))
        for el, x in atoms:
            fh.write("%s %r %r %r\n" % (el, *x))
    return len(atoms)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lmp", required=True)
    ap.add_argument("--predict", required=True)
    ap.add_argument("--example", required=True)
    ap.add_argument("--deck", required=True)
    ap.add_argument("--crystal", required=True, choices=sorted(CRYSTALS))
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--drift-max", type=float, default=2e-5)
    ap.add_argument("--lmp-args", default="")
    args = ap.parse_args()
    repo = os.path.abspath(os.path.join(args.example, "..", ".."))

    def run(work, dt, steps):
        log = os.path.join(work, "log.%g" % dt)
        cmd = [args.lmp, "-in", args.deck, "-var", "steps", str(steps), "-var", "thermo", "1", "-var", "dt", str(dt),
               "-log", log, "-screen", "none"] + args.lmp_args.split()
        res = harness.run(cmd, cwd=args.example, timeout=600)
        text = open(log).read() if os.path.exists(log) else ""
        if res.returncode != 0:
            raise RuntimeError("lmp exit %d:\n%s\n%s" % (res.returncode, res.stderr[-2000:], text[-2000:]))
        return text

    def nve_error(text, natoms, steps):
        """max |E_tot(t) - E_tot(0)| per atom over the last thermo block (the NVE run)"""
        lines = text.splitlines()
        head = max(i for i, l in enumerate(lines) if l.split()[:1] == ["Step"] and "TotEng" in l.split())
        cols = lines[head].split()
        rows = []
        for l in lines[head + 1:]:
            p = l.split()
            if len(p) != len(cols) or not re.match(r"^\d+$", p[0]):
                break
            rows.append([float(v) for v in p])
        k = cols.index("TotEng")
        check(len(rows) == steps + 1, "NVE run: %d thermo rows (expected %d)" % (len(rows), steps + 1))
        return max(abs(r[k] - rows[0][k]) for r in rows) / natoms

    work = harness.folder("runs")
    try:
        text = run(work, 0.001, args.steps)
        text_half = run(work, 0.0005, 2 * args.steps)
    except RuntimeError as e:
        check(False, str(e))
        harness.finish()
    summary = next((l for l in text.splitlines() if l.startswith("SUMMARY")), None)
    if not check(summary is not None, "the deck prints its SUMMARY line"):
        harness.finish()
    nums = [float(v) for v in re.findall(r"[-+]?\d+\.?\d*(?:[eE][-+]?\d+)?", summary.split(":", 1)[1])]
    check(all(math.isfinite(v) for v in nums), "SUMMARY numbers are finite: " + summary)
    natoms = int(nums[0])
    pe0 = float(re.search(r"crystal PE = (\S+)", summary).group(1))
    # the same crystal through nep-predict
    n = round((natoms / 8) ** (1 / 3))
    xyz, out = os.path.join(work, "crystal.xyz"), os.path.join(work, "crystal_pred.xyz")
    crystal_xyz(args.crystal, n, xyz)
    model = os.path.join(repo, CRYSTALS[args.crystal][3])
    subprocess.run([args.predict, model, xyz, out], check=True, capture_output=True)
    e_pred = float(re.search(r"energy=(\S+)", open(out).read().splitlines()[1]).group(1)) / natoms
    dev = abs(pe0 - e_pred) / abs(e_pred)
    check(dev <= 1e-10, "crystal PE/atom: LAMMPS %.12f vs nep-predict %.12f eV (rel dev %.1e)" % (pe0, e_pred, dev))
    err = nve_error(text, natoms, args.steps)
    err_half = nve_error(text_half, natoms, 2 * args.steps)
    check(err <= args.drift_max, "NVE: max |E_tot(t) - E_tot(0)| = %.2e eV/atom over %d steps of 1 fs (bound %.0e)"
          % (err, args.steps, args.drift_max))
    check(err_half > 0 and err / err_half >= 2.5, "NVE error shrinks like dt^2: %.2e (1 fs) / %.2e (0.5 fs) = %.2f (>= 2.5)"
          % (err, err_half, err / max(err_half, 1e-300)))
    harness.finish()


if __name__ == "__main__":
    main()
