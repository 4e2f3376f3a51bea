#!/usr/bin/env python3
"""LAMMPS-level checks of the NEP pair styles against NEP_CPU reference fixtures.

For every fixture (tests/data/reference/<model>__<structure>.xyz) this writes a LAMMPS data file
with the fixture's exact decimal positions, runs `run 0` with the requested pair style / Kokkos
options / MPI ranks / newton setting, and compares energy, forces, global virial (pressure),
per-atom energy (compute pe/atom) and per-atom virial (compute stress/atom and
centroid/stress/atom) with the reference: max relative deviation <= tol (fixtures README rule).
All fixtures run in one LAMMPS process, `clear` and `plugin load` between them (as a user's deck
that loops over structures); when that process fails, each fixture runs alone to name the failing one.
With --computes centroid or stress only that one per-atom virial compute is defined (LAMMPS then
requests only centroid or only plain per-atom virials from the pair style), and the virial part of
compute heat/flux (on centroid/stress/atom) is checked against sum_i W_i . v_i of the reference's
per-atom virials W_i and the velocities LAMMPS reports.

usage: lmp_reference.py --lmp LMP --plugin SO --data DIR --style nep [--lmp-args "..."]
                        [--np N] [--newton on|off] [--tol 1e-10] [--fixtures a,b] [--precision double]
                        [--atom-style atomic/kk] [--run-style verlet/kk] [--computes both|centroid|stress]
(NEP_KEEP_LOG=1 prints each LAMMPS log.)
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
from lmp_common import add_common_args, max_rel, run_lmp  # noqa: E402

NKTV2P = 1.6021765e6  # LAMMPS metal units: bar * A^3 / eV

FIXTURES = [
    "PbTe_NEP4__tric_24_rattled_swapped", "PbTe_NEP3__rocksalt_216_rattled",
    "C_2022_NEP4__tric_24_rattled", "Si_2022_NEP4_5body__diamond_216_rattled",
    "Si_2022_NEP4_3body__tric_24_rattled",
    # synthetic models (tests/data/README.md): per-type cutoffs, NEP5, flexible / universal /
    # typewise ZBL (tric_25: pairs inside the ZBL range)
    "PbTe_NEP4_typewise_cutoff__tric_24_rattled_swapped", "PbTe_NEP5__rocksalt_216_rattled",
    "BaTiO3_NEP4_flexible_zbl__tric_25_close_pairs", "BaTiO3_NEP5_zbl__tric_25_close_pairs",
    "BaTiO3_NEP5_zbl_flexible_typewise_cutoff__perovskite_240_rattled",
    "BaTiO3_NEP5_zbl_flexible_typewise_cutoff__tric_25_close_pairs",
    "BaTiO3_NEP4_typewise_zbl_typewise_cutoff__tric_25_close_pairs",
]


def read_reference(path):
    with open(path) as fh:
        lines = fh.read().splitlines()
    n = int(lines[0])
    head = lines[1]
    lat = [float(v) for v in head.split('Lattice="')[1].split('"')[0].split()]
    energy = float(head.split("energy=")[1].split()[0])
    virial = [float(v) for v in head.split('virial="')[1].split('"')[0].split()]
    atoms = []
    for line in lines[2:2 + n]:
        t = line.split()
        atoms.append({"el": t[0], "pos": t[1:4], "e": float(t[4]),
                      "f": [float(v) for v in t[5:8]], "w": [float(v) for v in t[8:17]]})
    return lat, energy, virial, atoms


def model_elements(model_path):
    with open(model_path) as fh:
        tok = fh.readline().split()
    return tok[2:2 + int(tok[1])]


def fixture_deck(args, stem, workdir):
    """The LAMMPS input of one fixture (its own log file) and what parse_fixture needs."""
    model = os.path.join(args.data, "potentials", stem.split("__")[0] + ".txt")
    lat, e_ref, w_ref, atoms = read_reference(os.path.join(args.data, "reference", stem + ".xyz"))
    els = model_elements(model)
    ax, ay, az, bx, by, bz, cx, cy, cz = lat
    assert ay == 0 and az == 0 and bz == 0, "fixture cell must be in LAMMPS form"
    data = os.path.join(workdir, stem + ".data")
    with open(data, "w") as fh:
        fh.write("fixture %s\n\n%d atoms\n%d atom types\n\n" % (stem, len(atoms), len(els)))
        fh.write("0 %r xlo xhi\n0 %r ylo yhi\n0 %r zlo zhi\n%r %r %r xy xz yz\n\n" % (ax, by, cz, bx, cx, cy))
        fh.write("Masses\n\n" + "".join("%d 1.0\n" % (k + 1) for k in range(len(els))) + "\nAtoms # atomic\n\n")
        for i, a in enumerate(atoms):
            fh.write("%d %d %s %s %s\n" % (i + 1, els.index(a["el"]) + 1, *a["pos"]))
    dump = os.path.join(workdir, stem + ".dump")
    style = args.style + ("" if args.precision == "double" else " precision " + args.precision)
    want_sym = args.computes in ("both", "stress")
    want_cen = args.computes in ("both", "centroid")
    computes = "compute pea all pe/atom\n"
    cols = "id fx fy fz c_pea"
    if want_sym:
        computes += "compute sa all stress/atom NULL virial\n"
        cols += " " + " ".join("c_sa[%d]" % k for k in range(1, 7))
    if want_cen:
        computes += ("compute csa all centroid/stress/atom NULL virial\n"
                     "compute kea all ke/atom\n"
                     "compute flux all heat/flux kea pea csa\n")
        cols += " " + " ".join("c_csa[%d]" % k for k in range(1, 10)) + " vx vy vz"
    flux = " c_flux[1] c_flux[2] c_flux[3] c_flux[4] c_flux[5] c_flux[6]" if want_cen else ""
    text = f"""log {os.path.join(workdir, stem + ".log")}
units metal
atom_style {args.atom_style}
atom_modify map array
boundary p p p
newton {args.newton}
read_data {data}
plugin load {args.plugin}
pair_style {style}
pair_coeff * * {model} {' '.join(els)}
neighbor 1.0 bin
{"run_style " + args.run_style if args.run_style else ""}
velocity all create 300 4928459 loop geom
{computes}compute pv all pressure NULL virial
thermo_style custom step pe c_pv[1] c_pv[2] c_pv[3] c_pv[4] c_pv[5] c_pv[6] vol{flux}
thermo_modify format float %.17g
dump d all custom 1 {dump} {cols}
dump_modify d format float %.17g sort id
run 0
"""
    return text, (atoms, e_ref, w_ref, dump, want_sym, want_cen)


def parse_fixture(stem, workdir, ref):
    """Deviations of one fixture's LAMMPS output from its reference."""
    atoms, e_ref, w_ref, dump, want_sym, want_cen = ref
    # thermo line after the header
    log = open(os.path.join(workdir, stem + ".log")).read().splitlines()
    k = next(i for i, l in enumerate(log) if l.split()[:2] == ["Step", "PotEng"])
    vals = [float(v) for v in log[k + 1].split()]
    pe, pv, vol = vals[1], vals[2:8], vals[8]
    rows = [l.split() for l in open(dump).read().splitlines()[9:]]
    f = [float(v) for r in rows for v in r[1:4]]
    eatom = [float(r[4]) for r in rows]
    f_ref = [v for a in atoms for v in a["f"]]
    w_glob = [p * vol / NKTV2P for p in pv]
    sym_idx, cen_idx = [0, 4, 8, 1, 2, 5], [0, 4, 8, 1, 2, 5, 3, 6, 7]
    dev = {
        "energy": abs(pe - e_ref) / abs(e_ref),
        "forces": max_rel(f, f_ref),
        "virial": max_rel(w_glob, [w_ref[c] for c in sym_idx]),
        "pe/atom": max_rel(eatom, [a["e"] for a in atoms]),
    }
    col = 5
    # stress/atom = -nktv2p * W  (xx yy zz xy xz yz); centroid adds yx zx zy
    if want_sym:
        w_sym = [-float(v) / NKTV2P for r in rows for v in r[col:col + 6]]
        dev["stress/atom"] = max_rel(w_sym, [a["w"][c] for a in atoms for c in sym_idx])
        col += 6
    if want_cen:
        w_cen = [-float(v) / NKTV2P for r in rows for v in r[col:col + 9]]
        dev["centroid/stress/atom"] = max_rel(w_cen, [a["w"][c] for a in atoms for c in cen_idx])
        vel = [[float(v) for v in r[col + 9:col + 12]] for r in rows]
        # heat/flux: total - convective = sum_i W_i v_i with the centroid virial W_i[a][b] (row-major)
        jv = [vals[9 + a] - vals[12 + a] for a in range(3)]
        jv_ref = [sum(at["w"][3 * a + b] * v[b] for at, v in zip(atoms, vel) for b in range(3)) for a in range(3)]
        dev["heat/flux virial"] = max_rel(jv, jv_ref)
    return dev


def run_decks(args, decks, workdir, tag):
    """Run the decks in one LAMMPS process, `clear` between them (each reloads the plugin)."""
    path = os.path.join(workdir, tag + ".in")
    with open(path, "w") as fh:
        fh.write("clear\n".join(decks))
    log = os.path.join(workdir, tag + ".log" if len(decks) == 1 else tag + ".main.log")
    res, cmd = run_lmp(args.lmp, path, os.path.join(workdir, tag + ".main.log"), args.lmp_args, args.np)
    if res.returncode != 0:
        text = open(log).read()[-2000:] if os.path.exists(log) else ""
        raise RuntimeError("lmp failed (%d): %s\n%s\n%s" % (res.returncode, " ".join(cmd), res.stderr[-2000:], text))


def main():
    ap = argparse.ArgumentParser()
    add_common_args(ap)
    ap.add_argument("--precision", default="double")
    ap.add_argument("--np", type=int, default=1)
    ap.add_argument("--newton", default="on")
    ap.add_argument("--atom-style", default="atomic")
    ap.add_argument("--run-style", default="")
    ap.add_argument("--tol", type=float, default=1e-10)
    ap.add_argument("--fixtures", default=",".join(FIXTURES))
    ap.add_argument("--computes", default="both", choices=["both", "centroid", "stress"])
    args = ap.parse_args()
    stems = args.fixtures.split(",")
    work = harness.folder("fixtures")
    decks = {stem: fixture_deck(args, stem, work) for stem in stems}
    # every fixture in one process; if that fails, each alone, to name the one that fails
    try:
        run_decks(args, [decks[s][0] for s in stems], work, "all")
        alone = False
    except RuntimeError:
        alone = True
    for stem in stems:
        try:
            if alone:
                run_decks(args, [decks[stem][0]], work, stem)
            if os.environ.get("NEP_KEEP_LOG"): print(open(os.path.join(work, stem + ".log")).read())
            dev = parse_fixture(stem, work, decks[stem][1])
        except Exception as exc:  # report and count, keep going
            harness.check(False, "%s: %s" % (stem, exc))
            continue
        harness.check(max(dev.values()) <= args.tol, "%s %s" % (stem, " ".join("%s=%.1e" % kv for kv in dev.items())))
    harness.finish()


if __name__ == "__main__":
    main()
