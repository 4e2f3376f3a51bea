#!/usr/bin/env python3
"""compare_models.py A.txt B.txt TOL: the two nep.txt files have the same header lines and every
parameter agrees to TOL relative (|a - b| <= TOL * max(|a|, 1e-3 * max_all |a|)). Prints the worst;
exits 0 when they agree, else 1. (train_checks.py calls compare() itself.)"""
import sys


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


def compare(a_path, b_path, tol):
    """(agree, what was found)"""
    ha, na = split(open(a_path).read().split("\n"))
    hb, nb = split(open(b_path).read().split("\n"))
    if ha != hb or len(na) != len(nb):
        return False, "headers or parameter counts differ"
    big = max(abs(x) for x in na)
    worst = max(abs(x - y) / max(abs(x), 1e-3 * big) for x, y in zip(na, nb))
    return worst <= tol, "%d parameters, max relative deviation %.3e (tol %.1e)" % (len(na), worst, tol)


if __name__ == "__main__":
    ok, what = compare(sys.argv[1], sys.argv[2], float(sys.argv[3]))
    print(what + (": agree" if ok else ": DIFFER"))
    sys.exit(0 if ok else 1)
