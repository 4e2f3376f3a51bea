#!/usr/bin/env python3
"""End-to-end checks of nep-train on a small EFV training set (6 + 2 PbTe frames from tests/data/train):
the loss falls, the GPUMD output files are complete and consistent with nep-predict, the same seed
gives the same nep.txt bytes at --threads 1 and 2, when repeated and with the frame cache off or too
small, a different seed does not, an
interrupted run resumed from its checkpoint ends with the same bytes, 2 MPI ranks give the
1-rank model to 1e-10, an .h5 frame store trains
like the .xyz it came from, the device kernels (--device kokkos) train like the CPU kernel, and bad input is reported with file and line."""
import argparse, filecmp, os, re, subprocess, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from compare_models import compare  # noqa: E402
from harness import check, xyz_frames as frames  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--train", required=True)
ap.add_argument("--predict", required=True)
ap.add_argument("--data", required=True)
ap.add_argument("--xyz2h5", default=None)
ap.add_argument("--mpi", action="store_true", help="also check mpirun -np 2 against one rank")
args = ap.parse_args()

NEP_IN = """type 2 Te Pb
cutoff 5 4
n_max 4 4
basis_size 4 4
l_max 4 2 0
neuron 10
lambda_v 0.1
batch 2
epoch 16
print_interval 4
"""
DATA = "train/PbTe_gpumd-example_25frames_PbTe_NEP4-NEP_CPU-double-labels_EFV_train.xyz"


def setup(d, nep_in=NEP_IN):
    os.makedirs(d, exist_ok=True)
    fr = frames(os.path.join(args.data, DATA), keepends=True)
    open(os.path.join(d, "train.xyz"), "w").write("".join(sum(fr[:6], [])))
    open(os.path.join(d, "test.xyz"), "w").write("".join(sum(fr[6:8], [])))
    open(os.path.join(d, "nep.in"), "w").write(nep_in)
    return d


def run(d, *extra, expect_ok=True):
    p = harness.run([args.train, d, *extra])
    if expect_ok:
        # a run meant to succeed must exit 0 (under tools/sanitize.sh, a leak or UB report exits non-zero)
        check(p.returncode == 0, f"nep-train {' '.join(extra)} in {os.path.basename(d)} exits 0 (got {p.returncode})")
        if p.returncode != 0:
            print(p.stdout[-3000:], p.stderr[-3000:])
    return p


def read_bytes(p):
    return open(p, "rb").read()


tmp = harness.folder("runs")
# 1. a run: loss falls, files complete
a = setup(os.path.join(tmp, "a"))
p = run(a, "--seed", "5", "--threads", "1")
check(p.returncode == 0, "training run succeeds")
loss = [l.split() for l in open(os.path.join(a, "loss.out"))]
check(len(loss) == 4 and all(len(r) == 10 for r in loss), "loss.out: 4 lines of 10 GPUMD columns")
check(float(loss[-1][1]) < 0.5 * float(loss[0][1]), "loss falls by more than 2x (%s -> %s)" % (loss[0][1], loss[-1][1]))
check(float(loss[-1][5]) < float(loss[0][5]), "train force RMSE falls")
check(len(open(os.path.join(a, "energy_train.out")).readlines()) == 6, "energy_train.out: one line per frame")
check(len(open(os.path.join(a, "virial_test.out")).readlines()) == 2, "virial_test.out: one line per frame")
nat_test = sum(int(f[0]) for f in frames(os.path.join(a, "test.xyz")))
check(len(open(os.path.join(a, "force_test.out")).readlines()) == nat_test, "force_test.out: one line per atom")
check("epoch" in p.stdout and "ETA" in p.stdout, "progress lines printed")

# 2. the written nep.txt, through nep-predict, reproduces energy_test.out
out = os.path.join(tmp, "pred.xyz")
q = harness.run([args.predict, os.path.join(a, "nep.txt"), os.path.join(a, "test.xyz"), out])
check(q.returncode == 0, "nep-predict loads the trained nep.txt")
e_pred = []
for f in frames(out):
    info = f[1]
    e = float(info.split("energy=")[1].split()[0])
    e_pred.append(e / int(f[0]))
e_file = [float(l.split()[0]) for l in open(os.path.join(a, "energy_test.out"))]
dev = max(abs(x - y) for x, y in zip(e_pred, e_file))
check(len(e_pred) == len(e_file) and dev < 1e-8, "nep-predict energies equal energy_test.out (max dev %.2e eV/atom)" % dev)

# 3. determinism: threads 2, repeated run, other seed
b = setup(os.path.join(tmp, "b"))
run(b, "--seed", "5", "--threads", "2")
check(read_bytes(os.path.join(a, "nep.txt")) == read_bytes(os.path.join(b, "nep.txt")), "same seed: same nep.txt bytes at --threads 1 and 2")
c = setup(os.path.join(tmp, "c"))
run(c, "--seed", "5", "--threads", "1")
check(read_bytes(os.path.join(a, "nep.txt")) == read_bytes(os.path.join(c, "nep.txt")), "same seed: same nep.txt bytes when repeated")
check(filecmp.cmp(os.path.join(a, "loss.out"), os.path.join(c, "loss.out"), shallow=False), "same seed: same loss.out")
# the frame cache (neighbour lists + pair basis) off, and too small for all frames: the
# recompute fallback gives the same bytes
for budget in ("0", "3"):
    g = setup(os.path.join(tmp, "cache" + budget), NEP_IN + "cache_mb %s\n" % budget)
    pg = run(g, "--seed", "5", "--threads", "2")
    check(read_bytes(os.path.join(a, "nep.txt")) == read_bytes(os.path.join(g, "nep.txt")),
          "cache_mb %s (frames rebuilt when used): same nep.txt bytes" % budget)
    check(re.search(r"frame cache [0-9.]+ MB of %s MB \((\d+) builds\)" % budget, pg.stdout) is not None
          and int(re.search(r"\((\d+) builds\)", pg.stdout).group(1)) > 8, "cache_mb %s: frames were rebuilt" % budget)
d = setup(os.path.join(tmp, "d"))
run(d, "--seed", "6")
check(read_bytes(os.path.join(a, "nep.txt")) != read_bytes(os.path.join(d, "nep.txt")), "another seed: another nep.txt")

# 4. interrupted after 4 epochs, resumed: same bytes as the uninterrupted run
e = setup(os.path.join(tmp, "e"))
p1 = run(e, "--seed", "5", "--stop-after", "4")
check(p1.returncode == 0 and "--resume" in p1.stdout, "run stops after epoch 4 with a checkpoint")
# a checkpoint of another run is refused, and left usable
bad = run(e, "--seed", "6", "--resume", expect_ok=False)
check(bad.returncode != 0 and "checkpoint was written with seed 5, this run uses 6" in bad.stdout + bad.stderr,
      "resume with another seed: refused with a clear message")
nep_in = open(os.path.join(e, "nep.in")).read()
open(os.path.join(e, "nep.in"), "w").write(re.sub(r"neuron\s+\d+", "neuron 3", nep_in))
bad = run(e, "--seed", "5", "--resume", expect_ok=False)
check(bad.returncode != 0 and "checkpoint model does not match nep.in" in bad.stdout + bad.stderr,
      "resume with another architecture in nep.in: refused with a clear message")
open(os.path.join(e, "nep.in"), "w").write(nep_in)
p2 = run(e, "--seed", "5", "--resume", "--threads", "2")
check(p2.returncode == 0 and "resumed" in p2.stdout, "run resumes from the checkpoint")
check(read_bytes(os.path.join(a, "nep.txt")) == read_bytes(os.path.join(e, "nep.txt")), "resumed run ends with the uninterrupted run's nep.txt")
check(filecmp.cmp(os.path.join(a, "loss.out"), os.path.join(e, "loss.out"), shallow=False), "resumed run's loss.out equals the uninterrupted one")

# 5. train.h5 (frame store) trains exactly like train.xyz
if args.xyz2h5:
    h = setup(os.path.join(tmp, "h"))
    subprocess.run([args.xyz2h5, os.path.join(h, "train.xyz"), os.path.join(h, "train.h5")], check=True)
    os.remove(os.path.join(h, "train.xyz"))
    run(h, "--seed", "5")
    check(read_bytes(os.path.join(a, "nep.txt")) == read_bytes(os.path.join(h, "nep.txt")), "train.h5 gives the same nep.txt as train.xyz")

# 5b. data-parallel MPI: 2 ranks give the 1-rank model to 1e-10 relative
if args.mpi:
    m = setup(os.path.join(tmp, "m"))
    p = harness.run(harness.mpirun(2, [args.train, m, "--seed", "5"]))
    check(p.returncode == 0 and p.stdout.count("nep-train: wrote") == 1, "mpirun -np 2 runs, rank 0 alone reports")
    ok, what = compare(os.path.join(a, "nep.txt"), os.path.join(m, "nep.txt"), 1e-10)
    check(ok, "2 MPI ranks: nep.txt equals the 1-rank one to 1e-10 relative (%s)" % what)

# 5c. the device kernels (--device kokkos: Kokkos default execution space, OpenMP here; the
# path --device cuda takes on a GPU): the CPU run's loss.out and model to 1e-8 relative, same
# bytes at 1 and 2 threads and when repeated; --device cuda refused where Kokkos has no CUDA
k1 = setup(os.path.join(tmp, "k1"))
pk = run(k1, "--seed", "5", "--threads", "1", "--device", "kokkos")
check("training forward and gradient on Kokkos" in pk.stdout and re.search(r"device [0-9.]+ MB", pk.stdout) is not None,
      "--device kokkos: says where it trains and the device memory it held")
ok, what = compare(os.path.join(a, "nep.txt"), os.path.join(k1, "nep.txt"), 1e-8)
check(ok, "--device kokkos: nep.txt equals the CPU kernel's to 1e-8 relative (%s)" % what)
la = [[float(x) for x in l.split()] for l in open(os.path.join(a, "loss.out"))]
lk = [[float(x) for x in l.split()] for l in open(os.path.join(k1, "loss.out"))]
dev = max(abs(x - y) / max(abs(y), 1e-30) for ra, rk in zip(la, lk) for x, y in zip(rk, ra))
check(len(la) == len(lk) and dev < 1e-7, "--device kokkos: loss.out (9 printed digits) equals the CPU kernel's to 1e-7 (max rel dev %.1e)" % dev)
k2 = setup(os.path.join(tmp, "k2"))
run(k2, "--seed", "5", "--threads", "2", "--device", "kokkos")
check(read_bytes(os.path.join(k1, "nep.txt")) == read_bytes(os.path.join(k2, "nep.txt")),
      "--device kokkos: same nep.txt bytes at --threads 1 and 2")
k3 = setup(os.path.join(tmp, "k3"))
run(k3, "--seed", "5", "--threads", "2", "--device", "kokkos")
check(read_bytes(os.path.join(k3, "nep.txt")) == read_bytes(os.path.join(k2, "nep.txt")), "--device kokkos: same bytes when repeated")
kc = setup(os.path.join(tmp, "kc"))
pc = run(kc, "--seed", "5", "--device", "cuda", expect_ok=False)
cuda_build = "on Kokkos Cuda" in pc.stdout
check(pc.returncode == 0 if cuda_build else (pc.returncode != 0 and "--device cuda: this build's Kokkos runs on" in pc.stderr),
      "--device cuda: trains in a CUDA build, refused with a clear message elsewhere")

# 6. bad input: named file and line, no nep.txt written
f = setup(os.path.join(tmp, "f"), NEP_IN + "n_maxx 4 4\n")
p = run(f, expect_ok=False)
check(p.returncode != 0 and "nep.in:11: unknown keyword 'n_maxx'" in p.stderr, "unknown nep.in keyword: file:line message")
check(not os.path.exists(os.path.join(f, "nep.txt")), "no nep.txt after a rejected nep.in")
g = setup(os.path.join(tmp, "g"), NEP_IN.replace("type 2 Te Pb", "type 1 Te"))
first_pb = 3 + [l.split()[0] for l in frames(os.path.join(g, "train.xyz"))[0][2:]].index("Pb")
p = run(g, expect_ok=False)
check(p.returncode != 0 and "train.xyz:%d: element 'Pb' is not in the model's 'type' list" % first_pb in p.stderr,
      "element missing from 'type': file:line message")
w = setup(os.path.join(tmp, "w"), NEP_IN + "population 50\n")
p = run(w, "--seed", "5")
check(p.returncode == 0 and "nep.in:11: 'population' steers GPUMD's SNES trainer; ignored" in p.stdout, "SNES keyword warned and ignored")
harness.finish()
