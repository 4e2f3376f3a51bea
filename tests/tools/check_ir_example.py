#!/usr/bin/env python3
"""examples/ir-molecule's output folder: the dipole series, LAMMPS's autocorrelation of the same compute
agreeing with it at lag 0 (mean |mu|^2 over the samples), and the report's spectrum figure.
usage: check_ir_example.py OUTDIR --samples N"""
import argparse
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("outdir")
    ap.add_argument("--samples", type=int, required=True)
    a = ap.parse_args()
    rows = [[float(v) for v in l.split()] for l in open(os.path.join(a.outdir, "dipole.out")) if not l.startswith("#")]
    harness.check(len(rows) == a.samples, "dipole.out has %d samples (expected %d)" % (len(rows), a.samples))
    harness.check(all(len(r) == 4 for r in rows), "dipole.out rows are 'time mu_x mu_y mu_z'")
    mean_sq = sum(r[1] ** 2 + r[2] ** 2 + r[3] ** 2 for r in rows) / len(rows)
    acf = [l.split() for l in open(os.path.join(a.outdir, "dipole.acf")) if l.strip() and not l.startswith("#")]
    last_block = max(i for i, r in enumerate(acf) if len(r) == 2)  # "step nrows" of the run's last output
    lag0 = acf[last_block + 1]
    c0 = float(lag0[3]) + float(lag0[4]) + float(lag0[5])
    harness.check(abs(c0 - mean_sq) <= 2e-5 * mean_sq,  # fix ave/correlate prints 6 digits
                  "fix ave/correlate at lag 0 (%.10g) = mean |mu|^2 of dipole.out (%.10g)" % (c0, mean_sq))
    rep = json.load(open(os.path.join(a.outdir, "report", "report.json")))
    figs = {f["file"]: f for s in rep["sections"] for f in s["figures"]}
    harness.check("ir_spectrum.png" in figs and "strongest peak" in json.dumps(figs["ir_spectrum.png"]),
                  "report has the IR spectrum with its peak")
    harness.check("dipole_acf.png" in figs, "report has the autocorrelation figure")
    harness.finish()


if __name__ == "__main__":
    main()
