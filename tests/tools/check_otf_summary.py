#!/usr/bin/env python3
"""Assertions on an on-the-fly example's summary.json (examples/otf-si, shortened run):
- exactly the frames and rounds its schedule implies (steps / every; one round per train_every
  frames, the last adopted at the end of the run);
- the student learned: its force RMSE on the independent held-out teacher frames is below
  --max-rel-force times the RMS teacher force (predicting zero forces scores 1.0);
- every number finite.
usage: check_otf_summary.py SUMMARY.json --frames N --rounds R [--max-rel-force 0.8]"""
import argparse
import json
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from harness import check  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("summary")
ap.add_argument("--frames", type=int, required=True)
ap.add_argument("--rounds", type=int, required=True)
ap.add_argument("--max-rel-force", type=float, default=0.8)
a = ap.parse_args()
s = json.load(open(a.summary))
check(all(math.isfinite(v) for v in s.values() if isinstance(v, (int, float))), "every number in the summary is finite")
check(s["frames_in_buffer"] == a.frames, "frames in the buffer: %s (schedule: %d)" % (s["frames_in_buffer"], a.frames))
check(s["training_rounds"] == a.rounds, "training rounds: %s (schedule: %d)" % (s["training_rounds"], a.rounds))
check(s["test_frames"] > 0, "%d independent held-out frames" % s["test_frames"])
check(s["relative_force_error"] < a.max_rel_force,
      "held-out force RMSE %.1f meV/A = %.2f x the RMS teacher force (< %.2f)"
      % (s["heldout_force_rmse_meV_per_A"], s["relative_force_error"], a.max_rel_force))
harness.finish()
