#!/usr/bin/env python3
"""Blocked cross-validation of a nep.in on a set of frames, by force RMSE (how examples/otf-si-dft's
cutoffs were chosen: docs/benchmarks_log.md section 20).

Frames in store order (an on-the-fly buffer is in MD order) are cut into blocks of BLOCK consecutive
frames; fold k holds out every block b with b % FOLDS == k and trains on the rest from scratch
(`nep-train --seed SEED`), then `nep-predict` labels the held-out frames. Blocks rather than single
frames: frames a few MD steps apart are nearly the same configuration, so holding out single frames
would measure memory, not generalisation. Prints the force RMSE over all held-out frames and per
fold (meV/A). The frames never include a run's test set: choose settings here, report them there.

Usage: benchmarks/train/cv_blocks.py FRAMES.xyz|FRAMES.h5 NEP.IN WORKDIR [--folds 4] [--block 7]
       [--seed 7] [--threads 1] [--epochs N]
Needs nep-train, nep-predict and nep-frames on PATH (source tools/env.sh)."""
import argparse
import math
import os
import subprocess
import sys


def read_xyz(path):
    """frames as (lines, force column index) of an extended XYZ file"""
    lines, frames, i = open(path).read().splitlines(), [], 0
    while i < len(lines):
        n = int(lines[i])
        props = next(t for t in lines[i + 1].split() if t.startswith("Properties=")).split("=", 1)[1].split(":")
        col, force = 0, None
        for name, kind, width in zip(props[0::3], props[1::3], props[2::3]):
            if name in ("force", "forces"):
                force = col
            col += int(width)
        if force is None:
            sys.exit(f"cv_blocks.py: {path}:{i + 2}: no force column in Properties")
        frames.append((lines[i:i + 2 + n], force))
        i += 2 + n
    return frames


def forces(frame):
    lines, c = frame
    return [float(v) for l in lines[2:] for v in l.split()[c:c + 3]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("frames"), ap.add_argument("nep_in"), ap.add_argument("workdir")
    ap.add_argument("--folds", type=int, default=4)
    ap.add_argument("--block", type=int, default=7)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--epochs", type=int, help="override nep.in's epoch")
    a = ap.parse_args()
    os.makedirs(a.workdir, exist_ok=True)
    src = a.frames
    if src.endswith(".h5"):
        src = os.path.join(a.workdir, "frames.xyz")
        subprocess.run(["nep-frames", a.frames, src], check=True, stdout=subprocess.DEVNULL)
    frames = read_xyz(src)
    blocks = (len(frames) + a.block - 1) // a.block
    if blocks < a.folds:
        sys.exit(f"cv_blocks.py: {len(frames)} frames make {blocks} blocks of {a.block}: fewer than {a.folds} folds")
    nep_in = [l for l in open(a.nep_in).read().splitlines() if not (a.epochs and l.split()[:1] == ["epoch"])]
    if a.epochs:
        nep_in.append(f"epoch {a.epochs}")
    total, count = 0.0, 0
    per_fold = []
    for k in range(a.folds):
        test = [j for j in range(len(frames)) if (j // a.block) % a.folds == k]
        train = [j for j in range(len(frames)) if (j // a.block) % a.folds != k]
        d = os.path.join(a.workdir, f"fold{k}")
        os.makedirs(d, exist_ok=True)
        open(os.path.join(d, "nep.in"), "w").write("\n".join(nep_in) + "\n")
        for name, idx in (("train.xyz", train), ("heldout.xyz", test)):
            open(os.path.join(d, name), "w").write("".join(l + "\n" for j in idx for l in frames[j][0]))
        with open(os.path.join(d, "train.log"), "w") as log:
            subprocess.run(["nep-train", d, "--seed", str(a.seed), "--threads", str(a.threads)],
                           stdout=log, stderr=subprocess.STDOUT, check=True)
        pred = os.path.join(d, "pred.xyz")
        subprocess.run(["nep-predict", os.path.join(d, "nep.txt"), os.path.join(d, "heldout.xyz"), pred,
                        "--threads", str(a.threads)], stdout=subprocess.DEVNULL, check=True)
        se, n = 0.0, 0
        for j, p in zip(test, read_xyz(pred)):
            ref, got = forces(frames[j]), forces(p)
            se += sum((x - y) ** 2 for x, y in zip(ref, got))
            n += len(ref)
        per_fold.append(1000 * math.sqrt(se / n))
        total, count = total + se, count + n
    print(f"{a.nep_in}: force RMSE {1000 * math.sqrt(total / count):.1f} meV/A over {len(frames)} held-out frames; "
          f"folds " + " ".join(f"{x:.1f}" for x in per_fold))


if __name__ == "__main__":
    main()
