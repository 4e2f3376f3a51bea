"""Shared helpers of the nep-report tests. Everything here is written for the tests, independently of
tools/report/nep_report (whose numbers the tests check): plain-Python readers of the .out files,
the metrics, a PNG decoder, running nep-report and checking its figures. (Checks, folders and exit
status: tests/harness.py.)"""
import json
import math
import os
import re
import struct
import sys
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402


# ---- plain readers and metrics (the test's own) ------------------------------------------------
def rows(path):
    return [[float(x) for x in l.split()] for l in open(path) if l.strip()]


def rmse(p, r):
    return math.sqrt(sum((a - b) ** 2 for a, b in zip(p, r)) / len(p))


def mae(p, r):
    return sum(abs(a - b) for a, b in zip(p, r)) / len(p)


def r2(p, r):
    m = sum(r) / len(r)
    return 1 - sum((a - b) ** 2 for a, b in zip(p, r)) / sum((b - m) ** 2 for b in r)


def close_to_printed(printed, value, sig=4):
    """printed (a string of `sig` significant digits) is value rounded: within half its last digit
    (plus a hair for the binary representation)."""
    x = float(printed)
    if value == 0:
        return x == 0
    last = 10 ** (math.floor(math.log10(abs(value))) - (sig - 1))
    return abs(x - value) <= 0.5 * last * (1 + 1e-6) + 1e-12 * abs(value)


def parity_numbers(text):
    """(RMSE, MAE, R2) strings from a parity annotation 'set: RMSE x unit\\nMAE y unit, R² z'."""
    m = re.search(r"RMSE (\S+) \S+\nMAE (\S+) \S+, R² (\S+)", text)
    return m.groups() if m else None


def check_parity(ann, label, pred, ref, scale=1000.0):
    got = parity_numbers(ann.get(label, ""))
    check(got is not None, f"{label}: RMSE/MAE/R² printed ({ann.get(label)!r})")
    if got is None:
        return
    e_rmse, e_mae, e_r2 = scale * rmse(pred, ref), scale * mae(pred, ref), r2(pred, ref)
    check(close_to_printed(got[0], e_rmse), f"{label}: RMSE {got[0]} == recomputed {e_rmse:.6g}")
    check(close_to_printed(got[1], e_mae), f"{label}: MAE {got[1]} == recomputed {e_mae:.6g}")
    check(abs(float(got[2]) - e_r2) <= 0.5e-5 * (1 + 1e-6), f"{label}: R² {got[2]} == recomputed {e_r2:.7f}")


# ---- PNG (8-bit greyscale/RGB/RGBA, not interlaced: what matplotlib and Chromium write) ---------
def read_png(path):
    """(width, height, channels, rows of bytes)."""
    data = open(path, "rb").read()
    if data[:8] != b"\x89PNG\r\n\x1a\n":
        raise ValueError(f"{path}: not a PNG")
    pos, idat, w = 8, b"", None
    while pos < len(data):
        n, kind = struct.unpack(">I4s", data[pos:pos + 8])
        body = data[pos + 8:pos + 8 + n]
        if kind == b"IHDR":
            w, h, depth, colour, _, _, interlace = struct.unpack(">IIBBBBB", body)
            if depth != 8 or interlace or colour not in (0, 2, 6):
                raise ValueError(f"{path}: unsupported PNG (depth {depth}, colour {colour}, interlace {interlace})")
            ch = {0: 1, 2: 3, 6: 4}[colour]
        elif kind == b"IDAT":
            idat += body
        pos += 12 + n
    raw, stride, out, prev = zlib.decompress(idat), w * ch, [], bytearray(w * ch)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - ch] if i >= ch else 0
            b, c = prev[i], (prev[i - ch] if i >= ch else 0)
            if f == 1:
                line[i] = (line[i] + a) & 255
            elif f == 2:
                line[i] = (line[i] + b) & 255
            elif f == 3:
                line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c
                pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        out.append(bytes(line))
        prev = line
    return w, h, ch, out


def distinct_colours(path, step=3):
    """Number of distinct pixel colours (sampling every step-th pixel of every step-th row)."""
    w, h, ch, rws = read_png(path)
    seen = set()
    for y in range(0, h, step):
        r = rws[y]
        for x in range(0, w, step):
            seen.add(r[x * ch:(x + 1) * ch])
    return len(seen), w, h


# ---- running nep-report --------------------------------------------------------------------------
def run_report(launcher, folder, outdir, expect_ok=True):
    p = harness.run([launcher, folder, "-o", outdir])
    if expect_ok:
        check(p.returncode == 0, f"nep-report {os.path.basename(folder)} exits 0 (got {p.returncode})")
        if p.returncode != 0:
            print(p.stdout[-3000:], p.stderr[-3000:])
    return p


def manifest(outdir):
    return json.load(open(os.path.join(outdir, "report.json")))


def figures(man):
    """file -> annotations of every figure in report.json."""
    return {f["file"]: f["annotations"] for s in man["sections"] for f in s["figures"]}


def check_figures_present(outdir, man, expected):
    figs = figures(man)
    html = open(os.path.join(outdir, "report.html")).read()
    for name in expected:
        check(name in figs, f"report.json lists {name}")
        p = os.path.join(outdir, name)
        ok = os.path.isfile(p)
        check(ok, f"{name} written")
        if ok:
            n, w, h = distinct_colours(p)
            check(n > 20 and w > 300 and h > 200, f"{name}: a {w}x{h} picture with {n} colours (not blank)")
    check(html.count("data:image/png;base64,") == len(figs), "every figure is embedded in report.html as a data URI")
    check(not re.search(r"(src|href)=\"(https?:|//)", html), "report.html fetches nothing from the network")
    import html as h
    missing = [t for a in figs.values() for t in a.values() if h.escape(t) not in html]
    check(not missing, f"the numbers of every panel are printed in report.html too ({missing[:1]})")
    return figs
