"""Writes a training folder in the layout of GPUMD's `nep` (doc/nep/output_files): loss.out with 10
fixed-width columns, energy/force/virial_{train,test}.out with %g numbers, virial rows for every frame
(-1e6 as the reference of frames without a virial label, or the older 2-column component-major layout),
and the rows of the training set in GPUMD's batch order (frames sorted by single-precision energy per
atom, dealt round-robin into ceil(Nc/batch) batches). Predictions are the labels plus seeded noise.
Returns what the test needs to recompute every number: the rows written and each force row's species."""
import os
import random
import re
import shutil
import struct

import harness


def f32(x):
    return struct.unpack("f", struct.pack("f", x))[0]


def read_frames(path):
    """[(species, energy, forces, virial or None, text)] of an extended XYZ (the test's own reader)."""
    out = []
    for fr in harness.xyz_frames(path):
        e = float(re.search(r"energy=(\S+)", fr[1], re.I).group(1))
        v = re.search(r'virial="([^"]*)"', fr[1], re.I)
        atoms = [l.split() for l in fr[2:]]
        out.append(([a[0] for a in atoms], e, [[float(x) for x in a[4:7]] for a in atoms],
                    [float(x) for x in v.group(1).split()] if v else None, "\n".join(fr) + "\n"))
    return out


def batch_order(frames, batch):
    """GPUMD's training-set order (the test's own statement of structure.cu's reorder)."""
    nc = len(frames)
    if batch >= nc:
        return list(range(nc))
    nb = (nc - 1) // batch + 1
    e = [f32(f32(fr[1]) / f32(len(fr[0]))) for fr in frames]
    srt = sorted(range(nc), key=lambda k: e[k])
    order = []
    for b in range(nb):
        size = nc // nb + (1 if b + (nc // nb) * nb < nc else 0)
        order += [srt[b + nb * c] for c in range(size)]
    return order


def g(x):
    return "%g" % x


def write(d, efv_xyz, ef_xyz, model, seed=1, batch=5, old_virial=False):
    os.makedirs(d, exist_ok=True)
    efv, ef = read_frames(efv_xyz), read_frames(ef_xyz)
    train = efv[:14] + ef[14:18]          # 4 frames without a virial label
    test = efv[18:22]
    open(os.path.join(d, "train.xyz"), "w").write("".join(f[4] for f in train))
    open(os.path.join(d, "test.xyz"), "w").write("".join(f[4] for f in test))
    open(os.path.join(d, "nep.in"), "w").write(
        "type 2 Te Pb\nversion 4\ncutoff 8 4\nn_max 6 6\nbasis_size 6 6\nl_max 4 2 0\nneuron 30\n"
        f"batch {batch}\ngeneration 5000   # SNES generations\n")
    shutil.copy(model, os.path.join(d, "nep.txt"))
    open(os.path.join(d, "nep.restart"), "w").write("")
    rng = random.Random(seed)
    with open(os.path.join(d, "loss.out"), "w") as f:
        for k in range(1, 51):
            gen, decay = 100 * k, 1.0 / (1 + 0.2 * k)
            v = [0.5 * decay + 0.01, 0.02, 0.03 * decay, 0.004 * decay, 0.12 * decay, 0.05 * decay,
                 0.005 * decay, 0.13 * decay, 0.06 * decay]
            f.write(("%-8d" + "%-11.5f" * 3 + "%-13.5f" * 6 + "\n") % (gen, *v))
    written = {}
    for name, frames, order in (("train", train, batch_order(train, batch)), ("test", test, list(range(len(test))))):
        e_lines, f_lines, v_rows, species = [], [], [], []
        for k in order:
            sp, e, forces, vir, _ = frames[k]
            n = len(sp)
            e_lines.append(f"{g(f32(e / n + rng.gauss(0, 0.003)))} {g(f32(e / n))}\n")
            for s, fr in zip(sp, forces):
                noise = 0.08 if s == "Te" else 0.05   # different errors per element
                p = [f32(x + rng.gauss(0, noise)) for x in fr]
                f_lines.append(" ".join(g(x) for x in p + [f32(x) for x in fr]) + "\n")
                species.append(s)
            if vir is None:
                ref6 = [-1e6] * 6
            else:  # xx yy zz xy yz zx per atom
                ref6 = [f32(vir[i] / n) for i in (0, 4, 8, 1, 5, 2)]
            pred6 = [f32((x if x != -1e6 else 0.3) + rng.gauss(0, 0.01)) for x in ref6]
            v_rows.append((pred6, ref6))
        open(os.path.join(d, f"energy_{name}.out"), "w").write("".join(e_lines))
        open(os.path.join(d, f"force_{name}.out"), "w").write("".join(f_lines))
        with open(os.path.join(d, f"virial_{name}.out"), "w") as f:
            if old_virial:  # 2 columns, component-major
                for c in range(6):
                    f.writelines(f"{g(p[c])} {g(r[c])}\n" for p, r in v_rows)
            else:
                f.writelines(" ".join(g(x) for x in p + r) + "\n" for p, r in v_rows)
        written[name] = {"species": species}
    return written
