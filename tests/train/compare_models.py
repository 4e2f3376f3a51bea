#!/usr/bin/env python3
"""compare_models.py A.txt B.txt TOL: the two nep.txt files have the same header lines and every
parameter agrees to TOL relative (|a - b| <= TOL * max(|a|, 1e-3 * max_all |a|)). Prints the worst."""
import sys

a_lines = open(sys.argv[1]).read().split("\n")
b_lines = open(sys.argv[2]).read().split("\n")
tol = float(sys.argv[3])


def split(lines):
    head, nums = [], []
    for l in lines:
        t = l.split()
        if len(t) == 1:
            try:
                nums.append(float(t[0]))
                continue
            except ValueError:
                pass
        if t:
            head.append(l)
    return head, nums


ha, na = split(a_lines)
hb, nb = split(b_lines)
if ha != hb or len(na) != len(nb):
    print("headers or parameter counts differ: 1 failed")
    sys.exit(1)
big = max(abs(x) for x in na)
worst = max(abs(x - y) / max(abs(x), 1e-3 * big) for x, y in zip(na, nb))
ok = worst <= tol
print("%d parameters, max relative deviation %.3e (tol %.1e): %s" % (len(na), worst, tol, "0 failed" if ok else "1 failed"))
sys.exit(0 if ok else 1)
