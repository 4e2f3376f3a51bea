#!/usr/bin/env python3
"""LAMMPS-level checks of the NEP model kinds (docs/model_kinds.md): pair_style nep with charge
models (qNEP) and compute nep/dipole, nep/polarizability.

- charge models without a kspace style (NEP_CPU's Ewald k-set with exact 2 pi) against NEP_CPU's
  fixtures: energy, per-atom energy, charges, forces and virials (the gradient-consistent columns),
  1e-7 relative (the fixtures README's rule for exact 2 pi); charge3 (no k-sum) 1e-10
- with kspace_style ewald (tight accuracy, gewald pi/rc) and pppm against nep-predict --ewald
  converged (the converged sum the solvers approach); 1, 2 and 4 MPI ranks, newton off
- forces are the energy's gradient in LAMMPS with pppm (finite differences), NVE over 200 steps
- compute nep/dipole and nep/polarizability against NEP_CPU's totals (1e-10), per-atom sums, ranks
- clear errors for what does not work

usage: lmp_charge_checks.py --lmp LMP --plugin SO --data DIR --predict NEP_PREDICT [--only NAME]
"""
import argparse
import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
import lmp_common  # noqa: E402
from lmp_common import max_rel  # noqa: E402

NKTV2P = 1.6021765e6  # LAMMPS metal units: bar * A^3 / eV
ARGS = None
WORK = None
PACKAGES = set()


def run_lmp(deck, np=1, expect_fail=False, tag=None, lmp_args=""):
    path = os.path.join(WORK, "in.%s" % (tag or abs(hash(deck))))
    with open(path, "w") as fh:
        fh.write(deck)
    log = path + ".log"
    res, _ = lmp_common.run_lmp(ARGS.lmp, path, log, lmp_args, np, cwd=WORK)
    text = (open(log).read() if os.path.exists(log) else "") + res.stdout + res.stderr
    if (res.returncode != 0) != expect_fail:
        raise RuntimeError("lmp exit %d, expected %s:\n%s" % (res.returncode, "failure" if expect_fail else "success",
                                                             text[-3000:]))
    return text


def read_xyz(path):
    """The first frame of an extended XYZ file: header dict, per-atom columns by name."""
    lines = open(path).read().splitlines()
    n = int(lines[0])
    head = lines[1]
    info = {}
    for key in ("Lattice", "virial", "virial_gc", "dipole", "polarizability", "pol"):
        tag = key + '="'
        if tag in head:
            info[key] = [float(v) for v in head.split(tag)[1].split('"')[0].split()]
    if " energy=" in " " + head:
        info["energy"] = float((" " + head).split(" energy=")[1].split()[0])
    props = head.split("Properties=")[1].split()[0].split(":")
    cols, k = {}, 0
    rows = [l.split() for l in lines[2:2 + n]]
    for name, kind, width in zip(props[0::3], props[1::3], props[2::3]):
        w = int(width)
        cols[name] = [r[k:k + w] if kind == "S" else [float(v) for v in r[k:k + w]] for r in rows]
        k += w
    return info, cols


def model_path(stem):
    return os.path.join(ARGS.data, "potentials", stem.split("__")[0] + ".txt")


def elements(path):
    tok = open(path).readline().split()
    return tok[2:2 + int(tok[1])]


def data_file(stem, charge=True):
    """The fixture's structure as a LAMMPS data file with its exact decimal positions."""
    info, cols = read_xyz(os.path.join(ARGS.data, "reference", stem + ".xyz"))
    els = elements(model_path(stem))
    ax, ay, az, bx, by, bz, cx, cy, cz = info["Lattice"]
    path = os.path.join(WORK, stem + (".q" if charge else "") + ".data")
    raw = [l.split() for l in open(os.path.join(ARGS.data, "reference", stem + ".xyz")).read().splitlines()[2:]]
    with open(path, "w") as fh:
        fh.write("fixture %s\n\n%d atoms\n%d atom types\n\n" % (stem, len(raw), len(els)))
        fh.write("0 %r xlo xhi\n0 %r ylo yhi\n0 %r zlo zhi\n%r %r %r xy xz yz\n\n" % (ax, by, cz, bx, cx, cy))
        fh.write("Masses\n\n" + "".join("%d 50.0\n" % (k + 1) for k in range(len(els))))
        fh.write("\nAtoms # %s\n\n" % ("charge" if charge else "atomic"))
        for i, r in enumerate(raw):
            fh.write("%d %d %s%s %s %s\n" % (i + 1, els.index(r[0]) + 1, "0.0 " if charge else "", *r[1:4]))
    return path, info, cols, els


def deck(stem, kspace="", np_note="", newton="on", extra="", run="run 0"):
    data, _, _, els = data_file(stem)
    model = model_path(stem)
    dump = os.path.join(WORK, "%s_%s.dump" % (stem, abs(hash((kspace, np_note, newton, extra, run)))))
    return dump, f"""units metal
atom_style charge
atom_modify map array
boundary p p p
newton {newton}
read_data {data}
plugin load {ARGS.plugin}
pair_style nep
pair_coeff * * {model} {' '.join(els)}
{kspace}
neighbor 1.0 bin
compute pea all pe/atom
compute sa all stress/atom NULL virial
compute pv all pressure NULL virial
{extra}
thermo_style custom step pe c_pv[1] c_pv[2] c_pv[3] c_pv[4] c_pv[5] c_pv[6] vol
thermo_modify format float %.17g
dump d all custom 1 {dump} id q fx fy fz c_pea c_sa[1] c_sa[2] c_sa[3] c_sa[4] c_sa[5] c_sa[6]
dump_modify d format float %.17g sort id
{run}
"""


def lammps_results(text, dump):
    log = text.splitlines()
    k = next(i for i, l in enumerate(log) if l.split()[:2] == ["Step", "PotEng"])
    vals = [float(v) for v in log[k + 1].split()]
    rows = [l.split() for l in open(dump).read().splitlines()[9:]]
    return {"energy": vals[1], "virial": [p * vals[8] / NKTV2P for p in vals[2:8]],
            "q": [float(r[1]) for r in rows], "f": [float(v) for r in rows for v in r[2:5]],
            "eatom": [float(r[5]) for r in rows], "watom": [-float(v) / NKTV2P for r in rows for v in r[6:12]]}


SYM = [0, 4, 8, 1, 2, 5]  # xx yy zz xy xz yz of a row-major 3x3


def deviations(got, info, cols, gc=True, per_atom=True):
    vir = info["virial_gc" if gc else "virial"]
    dev = {"E": abs(got["energy"] - info["energy"]) / abs(info["energy"]),
           "F": max_rel(got["f"], [v for r in cols["forces_gc" if gc else "forces"] for v in r]),
           "W": max_rel(got["virial"], [vir[c] for c in SYM]),
           "q": max_rel(got["q"], [r[0] for r in cols["charges"]])}
    if per_atom:
        dev["E_i"] = max_rel(got["eatom"], [r[0] for r in cols["energies"]])
        dev["W_i"] = max_rel(got["watom"], [r[c] for r in cols["virials_gc" if gc else "virials"] for c in SYM])
    return dev


def fmt(dev):
    return " ".join("%s=%.1e" % kv for kv in dev.items())


CHARGE_STEMS = [m + "__" + s for m in ("BaTiO3_NEP4_charge1", "BaTiO3_NEP4_zbl_charge1", "BaTiO3_NEP4_charge2",
                                       "BaTiO3_NEP4_zbl_charge3")
                for s in ("perovskite_240_rattled", "tric_25_close_pairs_a", "tric_25_close_pairs_b")]


def check_builtin_ewald_matches_nep_cpu():
    worst = {}
    for stem in CHARGE_STEMS:
        dump, text = deck(stem)
        got = lammps_results(run_lmp(text), dump)
        _, info, cols, _ = data_file(stem)
        dev = deviations(got, info, cols)
        tol = 1e-10 if "charge3" in stem else 1e-7
        if max(dev.values()) > tol:
            raise RuntimeError("%s: %s (tolerance %g)" % (stem, fmt(dev), tol))
        for k, v in dev.items():
            worst[k] = max(worst.get(k, 0.0), v)
    return "12 fixtures, largest deviations " + fmt(worst)


def converged_reference(stem):
    out = os.path.join(WORK, stem + ".converged.xyz")
    if not os.path.exists(out):
        p = harness.run([ARGS.predict, model_path(stem), os.path.join(ARGS.data, "reference", stem + ".xyz"), out,
                         "--ewald", "converged", "--threads", "1"], timeout=120)
        if p.returncode != 0:
            raise RuntimeError("nep-predict --ewald converged failed: " + p.stderr[-500:])
    return read_xyz(out)


def alpha_of(stem):
    """pi / rc_R of the model (its cutoff line)."""
    for line in open(model_path(stem)):
        if line.startswith("cutoff"):
            return math.pi / float(line.split()[1])
    raise RuntimeError("no cutoff line")


def kspace_lines(stem, style):
    acc = {"ewald": "1e-12", "pppm": "1e-8"}[style]
    return "kspace_style %s %s\nkspace_modify gewald %.17g%s" % (
        style, acc, alpha_of(stem), " order 7" if style == "pppm" else "")


def check_kspace_matches_converged_sum():
    if "KSPACE" not in PACKAGES:
        return "skipped: this LAMMPS has no KSPACE package"
    out = []
    for style, tol, stems in (("ewald", 1e-7, CHARGE_STEMS[:9]), ("pppm", 2e-5, [CHARGE_STEMS[0], CHARGE_STEMS[7]])):
        worst = {}
        for stem in stems:
            dump, text = deck(stem, kspace_lines(stem, style))
            got = lammps_results(run_lmp(text), dump)
            info, cols = converged_reference(stem)  # nep-predict: its forces are the gradient
            dev = deviations(got, info, cols, gc=False, per_atom=(style == "ewald"))
            if max(dev.values()) > tol:
                raise RuntimeError("%s %s: %s (tolerance %g)" % (style, stem, fmt(dev), tol))
            for k, v in dev.items():
                worst[k] = max(worst.get(k, 0.0), v)
        out.append("%s (%d fixtures): %s" % (style, len(stems), fmt(worst)))
    return "; ".join(out)


def check_ranks_and_newton_agree():
    """1, 2 and 4 ranks and newton off give the 1-rank result (built-in sum and pppm)."""
    stem = "BaTiO3_NEP4_zbl_charge1__perovskite_240_rattled"
    variants = [("", 1, "on")]
    variants += [("", 2, "on"), ("", 4, "on"), ("", 2, "off")]
    if "KSPACE" in PACKAGES:
        pp = kspace_lines(stem, "pppm")
        variants += [(pp, 1, "on"), (pp, 2, "on"), (pp, 4, "on"), (pp, 1, "off")]
    base = {}
    msgs = []
    for ks, np, newton in variants:
        dump, text = deck(stem, ks, np_note=str(np), newton=newton)
        got = lammps_results(run_lmp(text, np=np), dump)
        key = ks.split()[1] if ks else "builtin"
        if key not in base:
            base[key] = got
            continue
        ref = base[key]
        dev = max(abs(got["energy"] - ref["energy"]) / abs(ref["energy"]), max_rel(got["f"], ref["f"]),
                  max_rel(got["virial"], ref["virial"]), max_rel(got["q"], ref["q"]))
        # pppm's mesh is split across ranks: sums in another order
        tol = 1e-10 if key == "builtin" else 1e-8
        if dev > tol:
            raise RuntimeError("%s np %d newton %s: deviation %.1e from 1 rank" % (key, np, newton, dev))
        msgs.append("%s/np%d/newton %s %.0e" % (key, np, newton, dev))
    return ", ".join(msgs)


def check_forces_are_energy_gradient_with_pppm():
    if "KSPACE" not in PACKAGES:
        return "skipped: this LAMMPS has no KSPACE package"
    stem = "BaTiO3_NEP4_charge1__tric_25_close_pairs_b"
    data, _, _, els = data_file(stem)
    h = 1e-4
    moves = [(3, 0), (11, 1), (20, 2)]
    lines = ""
    for k, (atom, d) in enumerate(moves):
        delta = ["0", "0", "0"]
        delta[d] = "%r" % h
        minus = ["0", "0", "0"]
        minus[d] = "%r" % (-2 * h)
        back = ["0", "0", "0"]
        back[d] = "%r" % h
        lines += f"""variable f{k} equal f{['x', 'y', 'z'][d]}[{atom}]
run 0
variable f0_{k} equal ${{f{k}}}
displace_atoms a{atom} move {' '.join(delta)} units box
run 0
variable ep{k} equal $(pe:%.17g)
displace_atoms a{atom} move {' '.join(minus)} units box
run 0
variable em{k} equal $(pe:%.17g)
displace_atoms a{atom} move {' '.join(back)} units box
print "FD {k} ${{f0_{k}}} $(-(v_ep{k}-v_em{k})/{2 * h}:%.17g)"
"""
    groups = "".join("group a%d id %d\n" % (a, a) for a, _ in moves)
    text = run_lmp(f"""units metal
atom_style charge
atom_modify map array
read_data {data}
plugin load {ARGS.plugin}
pair_style nep
pair_coeff * * {model_path(stem)} {' '.join(els)}
{kspace_lines(stem, "pppm")}
thermo_modify format float %.17g
{groups}{lines}""")
    worst = 0.0
    for line in text.splitlines():
        if line.startswith("FD "):
            _, _, f, fd = line.split()
            worst = max(worst, abs(float(f) - float(fd)))
    if worst > 2e-5:
        raise RuntimeError("analytic vs central-difference force differ by %.1e eV/A" % worst)
    return "3 components, largest |F - F_fd| %.1e eV/A (h = 1e-4 A, pppm 1e-8)" % worst


def check_nve_conserves_energy():
    """NVE over 0.1 ps at 0.5 and 0.25 fs: the total energy's excursion shrinks as dt^2 (what forces
    that are not the energy's gradient break; the synthetic model is stiff, so the excursion itself
    is large)."""
    if "KSPACE" not in PACKAGES:
        return "skipped: this LAMMPS has no KSPACE package"
    stem = "BaTiO3_NEP4_zbl_charge1__perovskite_240_rattled"
    data, _, _, els = data_file(stem)
    spread = {}
    for dt, steps in ((0.0005, 200), (0.00025, 400)):
        text = run_lmp(f"""units metal
atom_style charge
read_data {data}
mass 1 137.3
mass 2 47.87
mass 3 16.0
plugin load {ARGS.plugin}
pair_style nep
pair_coeff * * {model_path(stem)} {' '.join(els)}
{kspace_lines(stem, "pppm")}
velocity all create 300 12345 loop geom
timestep {dt}
fix 1 all nve
thermo {steps // 10}
thermo_style custom step temp pe etotal
thermo_modify format float %.12g
run {steps}
""", np=2)
        log = text.splitlines()
        k = next(i for i, l in enumerate(log) if l.split()[:2] == ["Step", "Temp"])
        et = [float(l.split()[3]) for l in log[k + 1:k + 12]]
        spread[dt] = max(et) - min(et)
    ratio = spread[0.0005] / spread[0.00025]
    if not 3.0 < ratio < 5.5:
        raise RuntimeError("total-energy excursions %.3e / %.3e eV: ratio %.2f, not the dt^2 of 4" % (
            spread[0.0005], spread[0.00025], ratio))
    return ("240 atoms, 2 ranks, pppm, 0.1 ps: total energy within %.2e eV at 0.5 fs, %.2e at 0.25 fs "
            "(ratio %.2f, dt^2: 4)" % (spread[0.0005], spread[0.00025], ratio))


TENSOR_STEMS = ["PbTe_NEP4_dipole__rocksalt_216_rattled", "PbTe_NEP3_dipole__tric_24_rattled_swapped",
                "PbTe_NEP4_polarizability__tric_24_rattled_swapped", "PbTe_NEP3_polarizability__rocksalt_216_rattled"]


def check_tensor_computes_match_nep_cpu():
    worst = 0.0
    for stem in TENSOR_STEMS:
        data, info, _, els = data_file(stem, charge=False)
        dip = "dipole" in stem
        style = "nep/dipole" if dip else "nep/polarizability"
        n = 3 if dip else 6
        cols = 3 if dip else 9
        for np in (1, 2):
            text = run_lmp(f"""units metal
atom_style atomic
atom_modify map array
read_data {data}
plugin load {ARGS.plugin}
pair_style zero 8.0
pair_coeff * *
comm_modify cutoff 9.0
compute t all {style} {model_path(stem)} {' '.join(els)}
compute ta all {style} {model_path(stem)} {' '.join(els)}
compute s all reduce sum {' '.join('c_ta[%d]' % c for c in range(1, cols + 1))}
group half id <= 10
compute th half {style} {model_path(stem)} {' '.join(els)}
compute sh half reduce sum {' '.join('c_ta[%d]' % c for c in range(1, cols + 1))}
thermo_style custom step c_t[1] c_s[1] c_th[1] c_sh[1]
run 0
print "TOTAL {' '.join('$(c_t[%d]:%%.17g)' % c for c in range(1, n + 1))}"
print "SUM {' '.join('$(c_s[%d]:%%.17g)' % c for c in range(1, cols + 1))}"
print "HALF {' '.join('$(c_th[%d]:%%.17g)' % c for c in range(1, n + 1))}"
print "HALFSUM {' '.join('$(c_sh[%d]:%%.17g)' % c for c in range(1, cols + 1))}"
""", np=np)
            vals = {}
            for line in text.splitlines():
                t = line.split()
                if t and t[0] in ("TOTAL", "SUM", "HALF", "HALFSUM") and len(t) > 1:
                    vals[t[0]] = [float(v) for v in t[1:]]
            if dip:
                ref = info["dipole"]
                got = vals["TOTAL"]
            else:  # NEP_CPU: xx yy zz xy yz zx; LAMMPS: xx yy zz xy xz yz (symmetric total)
                r = info["polarizability"]
                ref = [r[0], r[1], r[2], r[3], r[5], r[4]]
                got = vals["TOTAL"]
            dev = max_rel(got, ref)
            worst = max(worst, dev)
            if dev > 1e-10:
                raise RuntimeError("%s np %d: total %s vs NEP_CPU %s (%.1e)" % (stem, np, got, ref, dev))
            # per-atom columns sum to the total (per-atom order xx yy zz xy xz yz yx zx zy)
            s = vals["SUM"][:n] if dip else vals["SUM"][:6]
            if max_rel(s, got) > 1e-10:
                raise RuntimeError("%s np %d: per-atom sum %s vs total %s" % (stem, np, s, got))
            hs = vals["HALFSUM"][:n] if dip else vals["HALFSUM"][:6]
            if max_rel(vals["HALF"], hs) > 1e-10:
                raise RuntimeError("%s np %d: group total %s vs its atoms' sum %s" % (stem, np, vals["HALF"], hs))
    return "4 fixtures x 1, 2 ranks: totals within %.1e of NEP_CPU; per-atom and group sums agree" % worst


def expect_error(text_deck, needle, np=1):
    text = run_lmp(text_deck, np=np, expect_fail=True)
    if needle not in text:
        raise RuntimeError("expected %r in the error output:\n%s" % (needle, text[-1500:]))


def check_errors():
    stem = "BaTiO3_NEP4_charge1__tric_25_close_pairs_a"
    data, _, _, els = data_file(stem)
    atomic, _, _, _ = data_file(stem, charge=False)
    base = "units metal\natom_style {style}\nread_data {data}\nplugin load %s\npair_style nep\n" % ARGS.plugin
    n = 0
    expect_error(base.format(style="atomic", data=atomic) + "pair_coeff * * %s %s\nrun 0\n" % (model_path(stem), " ".join(els)),
                 "needs an atom style with charge")
    n += 1
    dip = "PbTe_NEP4_dipole__tric_24_rattled_swapped"
    ddata, _, _, dels = data_file(dip, charge=False)
    expect_error(base.format(style="atomic", data=ddata) + "pair_coeff * * %s %s\n" % (model_path(dip), " ".join(dels)),
                 "compute nep/dipole")
    n += 1
    expect_error("units metal\natom_style atomic\nread_data %s\nplugin load %s\npair_style zero 8.0\npair_coeff * *\n"
                 "compute t all nep/polarizability %s %s\n" % (ddata, ARGS.plugin, model_path(dip), " ".join(dels)),
                 "not a polarizability model")
    n += 1
    if "KSPACE" in PACKAGES:
        c3 = "BaTiO3_NEP4_zbl_charge3__tric_25_close_pairs_a"
        expect_error(base.format(style="charge", data=data) + "pair_coeff * * %s %s\nkspace_style ewald 1e-8\n"
                     "kspace_modify gewald 0.5\nrun 0\n" % (model_path(c3), " ".join(els)), "remove the kspace_style")
        c2 = "BaTiO3_NEP4_charge2__tric_25_close_pairs_a"
        expect_error(base.format(style="charge", data=data) + "pair_coeff * * %s %s\nkspace_style ewald 1e-8\n"
                     "kspace_modify gewald 0.5\nrun 0\n" % (model_path(c2), " ".join(els)), "kspace_modify gewald 0.52359")
        expect_error(base.format(style="charge", data=data) + "pair_coeff * * %s %s\nkspace_style pppm/cg 1e-6\n"
                     "kspace_modify gewald 0.5\nrun 0\n" % (model_path(stem), " ".join(els)), "is not supported with charge models")
        n += 3
    if "KOKKOS" in PACKAGES:
        text = run_lmp(base.format(style="charge", data=data) + "pair_coeff * * %s %s\nrun 0\n" % (
            model_path(stem), " ".join(els)), expect_fail=True, lmp_args="-k on t 1 -sf kk")
        if "the KOKKOS styles evaluate potentials only" not in text:
            raise RuntimeError("nep/kk with a charge model: no clear error:\n" + text[-1500:])
        n += 1
    return "%d bad decks stop with a clear message" % n


def main():
    global ARGS, WORK, PACKAGES
    ap = argparse.ArgumentParser()
    lmp_common.add_common_args(ap)
    ap.add_argument("--predict", required=True)
    ap.add_argument("--only", default="")
    ARGS = ap.parse_args()
    ARGS.data = os.path.abspath(ARGS.data)
    WORK = harness.folder("charge")
    PACKAGES = lmp_common.installed_packages(ARGS.lmp)
    harness.run_checks([check_builtin_ewald_matches_nep_cpu, check_kspace_matches_converged_sum,
                        check_ranks_and_newton_agree, check_forces_are_energy_gradient_with_pppm,
                        check_nve_conserves_energy, check_tensor_computes_match_nep_cpu, check_errors], ARGS.only)
    harness.finish()


if __name__ == "__main__":
    main()
