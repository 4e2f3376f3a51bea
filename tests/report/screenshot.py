#!/usr/bin/python3
"""The screenshots in docs/ (docs/nep_report.md): render a report page in headless Chromium, keep the
top HEIGHT pixels at 1000 px width, reduce to a 256-colour palette (PIL, a matplotlib dependency).
  screenshot.py REPORT.html OUT.png [--height 1800]"""
import argparse
import os
import sys
import tempfile

from PIL import Image

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import headless_chromium  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("page")
ap.add_argument("out")
ap.add_argument("--height", type=int, default=1800)
a = ap.parse_args()
exe = headless_chromium.find_chromium()
if exe is None:
    sys.exit("screenshot.py: no chromium on PATH")
with tempfile.TemporaryDirectory() as tmp:
    full = os.path.join(tmp, "full.png")
    problems = headless_chromium.render(exe, "file://" + os.path.abspath(a.page), full)
    if problems:
        sys.exit(f"screenshot.py: the page has problems: {problems}")
    img = Image.open(full).convert("RGB")
    img = img.crop((0, 0, img.width, min(a.height, img.height)))
    img.quantize(colors=256, method=Image.Quantize.MEDIANCUT).save(a.out, optimize=True)
print(f"{a.out}: {os.path.getsize(a.out) // 1024} KiB")
