#!/usr/bin/env python3
"""Table of benchmarks/active/scale/run.sh: reads OUTDIR/{A,B,C,D}_L_RANKS.{log,rss,stderr} and writes
OUTDIR/scale.json. Student time per step: run A's loop time / S. Per check step: the fix's
otf_committee stage (NEP_TIMING), per teacher call: otf_teacher + otf_student_error +
otf_gather_frame + otf_check_buffer_frame of run C (whole frames) and of run D (carve 2.6 4: the
regions only), each the slowest rank's total / its calls; D's buffer size beside C's.
Peak memory: the largest process's maximum resident set (GNU time)."""
import json, os, re, sys

out, steps, every = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
sizes, ranks = [int(x) for x in sys.argv[4].split()], [int(x) for x in sys.argv[5].split()]


def stages(path):
    res = {}
    for line in open(path, errors="replace"):
        f = line.split()
        if len(f) == 5 and f[0] == "NEP_TIMING" and f[1].startswith("otf_"):
            calls, total = int(f[2]), float(f[3])
            if f[1] not in res or total > res[f[1]][1]:    # the slowest rank
                res[f[1]] = (calls, total)
    return {k: t / c for k, (c, t) in res.items() if c > 0}


def loop(path):
    return float(re.findall(r"Loop time of (\S+)", open(path).read())[-1])


def rss_mb(path):
    return float(open(path).read().split()[-1]) / 1024


call_stages = ["otf_teacher", "otf_student_error", "otf_gather_frame", "otf_check_buffer_frame"]
rows = []
print(f"{'atoms':>9s} {'ranks':>5s} {'student s/step':>14s} {'check s':>8s} {'check/student':>13s} {'call s':>7s} "
      f"{'teacher':>8s} {'error':>7s} {'gather':>7s} {'buffer':>7s} {'peak RSS MB A/B/C':>18s} | carved: "
      f"{'call s':>7s} {'gather':>7s} {'buffer':>7s} {'RSS MB':>7s} {'h5 MB C/D':>10s}")
for l in sizes:
    for r in ranks:
        tag = lambda k: os.path.join(out, f"{k}_{l}_{r}")
        student = loop(tag("A") + ".log") / steps
        b, c, dd = stages(tag("B") + ".stderr"), stages(tag("C") + ".stderr"), stages(tag("D") + ".stderr")
        check = b.get("otf_committee", float("nan"))
        call = sum(c.get(s, 0.0) for s in call_stages)
        mem = {k: rss_mb(tag(k) + ".rss") for k in "ABCD"}
        h5 = {k: os.path.getsize(os.path.join(out, f"{k}{l}.h5")) / 2**20 for k in "CD"}
        call_d = sum(dd.get(s, 0.0) for s in call_stages)
        row = {"atoms": 8 * l ** 3, "ranks": r, "student_s_per_step": student, "check_s": check,
               "check_over_student": check / student, "call_s": call, "call_stages_s": {s: c.get(s, 0.0) for s in call_stages},
               "max_rss_MB": mem, "carved_call_s": call_d, "carved_call_stages_s": {s: dd.get(s, 0.0) for s in call_stages},
               "buffer_MB": h5}
        rows.append(row)
        print(f"{row['atoms']:9d} {r:5d} {student:14.3f} {check:8.3f} {check / student:13.2f} {call:7.3f} "
              + " ".join(f"{c.get(s, 0.0):7.3f}" for s in call_stages)
              + f" {mem['A']:6.0f}/{mem['B']:5.0f}/{mem['C']:5.0f} | {call_d:15.3f} {dd.get('otf_gather_frame', 0.0):7.3f} "
              f"{dd.get('otf_check_buffer_frame', 0.0):7.3f} {mem['D']:7.0f} {h5['C']:5.1f}/{h5['D']:4.1f}")
json.dump(rows, open(os.path.join(out, "scale.json"), "w"), indent=2)
