#!/usr/bin/env python3
"""Checks of examples/otf-si/observables.py's trajectory criterion on made-up windows: the teacher's
spread is the largest difference between any two seeds within a phase; a window's tolerances are
the larger of the fixed ones and its phase's spread; a window just beyond them is out."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "otf-si"))
import observables as o  # noqa: E402

fails = 0


def check(what, ok):
    global fails
    print(("ok   " if ok else "FAIL ") + what)
    fails += 0 if ok else 1


def run(pe, g):
    """windows at steps 1000, 2000, 3000 with mean PE per atom pe[k] (eV) and g(r) g[k]"""
    return [{"end_step": 1000 * (k + 1), "temp_K": 300.0, "pe_eV_per_atom": pe[k], "r": [1.0, 2.0, 3.0],
             "g": g[k], "first_peak_A": 2.0} for k in range(3)]


G = [1.0, 2.0, 1.0]
a = run([-4.000, -3.900, -3.800], [G, G, G])
b = run([-4.002, -3.930, -3.810], [G, G, [1.0, 2.0, 1.2]])      # hold: g differs by 0.2 / 4 = 0.05
c = run([-4.001, -3.880, -3.795], [G, G, [1.0, 1.9, 1.0]])      # hold: 0.1 / 4 = 0.025 from a
phases = [("heat", 1000, 1000), ("melt", 2000, 2000), ("hold", 3000, 3000)]
s = o.spread([a, b, c], phases)
check("heat spread: the largest |dPE| over the three pairs (2 meV/atom)", abs(s["heat"]["pe_meV_per_atom"] - 2.0) < 1e-9)
check("melt spread: b against c, 50 meV/atom", abs(s["melt"]["pe_meV_per_atom"] - 50.0) < 1e-9)
check("hold spread: |dPE| 15 meV/atom (b-c), g(r) L1 0.3 / 3.9 (b against c)",
      abs(s["hold"]["pe_meV_per_atom"] - 15.0) < 1e-9 and abs(s["hold"]["rdf_l1"] - 0.3 / 3.9) < 1e-12)
check("three pairs counted per phase", all(v["windows"] == 3 for v in s.values()))

inside = run([-4.0049, -3.851, -3.786], [G, G, [1.0, 2.0, 1.29]])   # 4.9, 49, 14 meV/atom; L1 0.0725
res = o.compare(a, inside, spread=s, phases=phases)
check("within: the fixed 5 meV/atom in the heat, the spread (50, 15 meV/atom; L1 0.077) after",
      res["all_judged_within"] and [round(w["pe_tolerance_meV_per_atom"], 6) for w in res["windows"]] == [5.0, 50.0, 15.0])
out = run([-4.0051, -3.849, -3.786], [G, G, [1.0, 2.0, 1.29]])
res = o.compare(a, out, spread=s, phases=phases)
check("5.1 meV/atom in the heat and 51 in the melt are out",
      [w["within"] for w in res["windows"]] == [False, False, True] and not res["all_judged_within"])
far = run([-4.0, -3.9, -3.8], [G, G, [1.0, 2.0, 1.31]])             # L1 0.0775 > 0.3 / 3.9
check("a g(r) L1 beyond the hold's spread is out", not o.compare(a, far, spread=s, phases=phases)["all_judged_within"])
check("without a spread the fixed tolerances judge (49 meV/atom out)",
      not o.compare(a, inside)["all_judged_within"])
check("a skipped window is reported, not judged",
      o.compare(a, out, skip=(1000, 2000), spread=s, phases=phases)["all_judged_within"])
sys.exit(1 if fails else 0)
