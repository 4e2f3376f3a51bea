#!/usr/bin/env python3
"""The report pages render in headless Chromium: a GPUMD-layout training folder and a fix nep/train
folder (both written here, as in report_checks.py) are reported, each page is loaded through the
DevTools protocol, and the full-page screenshot must not be blank and the page must produce no console
message, exception, error log entry or failed load. A deliberately broken page must be caught (so the
detector itself is tested). Screenshots are kept in --shots. Exit 77 (ctest: skipped) without Chromium."""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))  # tests/: harness
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpumd_folder  # noqa: E402
import headless_chromium  # noqa: E402
import otf_folder  # noqa: E402
from report_test_lib import distinct_colours, run_report  # noqa: E402
import harness  # noqa: E402
from harness import check  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--report", required=True)
ap.add_argument("--data", required=True)
ap.add_argument("--shots", required=True, help="folder for the screenshots")
args = ap.parse_args()
exe = headless_chromium.find_chromium()
if exe is None:
    print("SKIP: no chromium on PATH (tools/deps.sh installs Debian's chromium); the page was not rendered")
    sys.exit(77)
os.makedirs(args.shots, exist_ok=True)
EFV = os.path.join(args.data, "train/PbTe_gpumd-example_25frames_PbTe_NEP4-NEP_CPU-double-labels_EFV_train.xyz")
EF = os.path.join(args.data, "train/PbTe_gpumd-example_25frames_EF_train.xyz")

tmp = harness.folder("pages")
pages = []
d = os.path.join(tmp, "gpumd")
gpumd_folder.write(d, EFV, EF, os.path.join(args.data, "potentials/PbTe_NEP4.txt"))
run_report(args.report, d, d + "_report")
pages.append(("training", os.path.join(d + "_report", "report.html")))
d = os.path.join(tmp, "otf")
otf_folder.write(d, os.path.join(args.data, "potentials/Si_2022_NEP4_3body.txt"), EFV)
run_report(args.report, d, d + "_report")
pages.append(("fix", os.path.join(d + "_report", "report.html")))
for name, page in pages:
    shot = os.path.join(args.shots, f"report_{name}.png")
    problems = headless_chromium.render(exe, "file://" + page, shot)
    check(not problems, f"{name} page: no console messages, exceptions or failed loads ({problems[:3]})")
    colours, w, h = distinct_colours(shot, step=4)
    check(w == 1000 and h > 1500 and colours > 200,
          f"{name} page: screenshot {w}x{h} px with {colours} colours (not blank; kept as {shot})")
bad = os.path.join(tmp, "broken.html")
with open(bad, "w") as f:
    f.write('<!DOCTYPE html><html><body><p>x</p><img src="missing.png">'
            '<script>console.error("deliberate")</script></body></html>')
problems = headless_chromium.render(exe, "file://" + bad, os.path.join(tmp, "broken.png"))
check(any("deliberate" in p for p in problems) and any("failed load" in p for p in problems),
      f"a broken page is caught: console error and missing image ({problems})")
harness.finish()
