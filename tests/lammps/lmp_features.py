#!/usr/bin/env python3
"""LAMMPS-level behaviour of the NEP pair styles beyond the reference numbers:
finite-difference forces, restart, pair_style hybrid/overlay with zbl, NULL element mapping,
NEP_CPU's 'pair_style nep FILE' form, repeated runs, 1/2/4 MPI ranks, and bad-input errors.

usage: lmp_features.py --lmp LMP --plugin SO --data DIR [--style nep] [--lmp-args "..."]
Prints one line per check and 'N passed, M failed'.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness  # noqa: E402
import lmp_common  # noqa: E402

ARGS = None
WORK = None


def run_lmp(deck, np=1, lmp_args=None, expect_fail=False):
    path = os.path.join(WORK, "in.%d" % abs(hash(deck)))
    with open(path, "w") as fh:
        fh.write(deck)
    log = path + ".log"
    res, _ = lmp_common.run_lmp(ARGS.lmp, path, log, ARGS.lmp_args if lmp_args is None else lmp_args, np, cwd=WORK)
    text = (open(log).read() if os.path.exists(log) else "") + res.stdout + res.stderr
    if (res.returncode != 0) != expect_fail:
        raise RuntimeError("lmp exit %d, expected %s:\n%s" % (res.returncode, "failure" if expect_fail else "success", text[-3000:]))
    return text


def values(text, key):
    """Numbers printed by 'print "KEY v1 v2 ..."' lines."""
    for line in text.splitlines():
        if line.startswith(key + " "):
            return [float(v) for v in line.split()[1:]]
    raise RuntimeError("no line starting with %r in output" % key)


def structure(boxrep, ntypes):
    """Rattled rocksalt PbTe written once by a 1-rank run, so every run sees the same atom IDs."""
    path = os.path.join(WORK, "pbte_%d_%d.data" % (boxrep, ntypes))
    if not os.path.exists(path):
        run_lmp(f"""units metal
atom_style atomic
lattice custom 6.46 a1 1 0 0 a2 0 1 0 a3 0 0 1 basis 0 0 0 basis 0.5 0.5 0 basis 0.5 0 0.5 basis 0 0.5 0.5 &
        basis 0.5 0 0 basis 0 0.5 0 basis 0 0 0.5 basis 0.5 0.5 0.5
region box block 0 {boxrep} 0 {boxrep} 0 {boxrep}
create_box {ntypes} box
create_atoms 2 box basis 1 2 basis 2 2 basis 3 2 basis 4 2 basis 5 1 basis 6 1 basis 7 1 basis 8 1
mass * 200.0
displace_atoms all random 0.1 0.1 0.1 4711
write_data {path}
""", lmp_args="")
    return path


def header(style=None, newton="on", elements="Te Pb", model="PbTe_NEP4.txt", extra_types=0, boxrep=3, coeff=None):
    style = style or ARGS.style
    d = ARGS.data
    nep_sub = ARGS.style.split()[0] + " " if style.startswith("hybrid") else ""
    coeff = coeff or f"pair_coeff * * {nep_sub}{d}/potentials/{model} {elements}"
    return f"""units metal
atom_style atomic
atom_modify map array
boundary p p p
newton {newton}
read_data {structure(boxrep, 2 + extra_types)}
plugin load {ARGS.plugin}
pair_style {style}
{coeff}
thermo_modify format float %.17g
"""


def check_finite_difference():
    # central difference of the total energy for 3 coordinates vs the force LAMMPS reports
    h = 1e-5
    deck = header(boxrep=2) + f"""
group one id 5
run 0
variable fx equal fx[5]
variable fy equal fy[5]
variable fz equal fz[5]
print "F ${{fx}} ${{fy}} ${{fz}}"
"""
    for dim, (dx, dy, dz) in enumerate([(h, 0, 0), (0, h, 0), (0, 0, h)]):
        deck += f"""displace_atoms one move {dx} {dy} {dz} units box
run 0
variable ep{dim} equal pe
print "EP{dim} $(v_ep{dim}:%.17g)"
displace_atoms one move {-2*dx} {-2*dy} {-2*dz} units box
run 0
variable em{dim} equal pe
print "EM{dim} $(v_em{dim}:%.17g)"
displace_atoms one move {dx} {dy} {dz} units box
"""
    out = run_lmp(deck.replace('print "F ${fx} ${fy} ${fz}"', 'print "F $(v_fx:%.17g) $(v_fy:%.17g) $(v_fz:%.17g)"'))
    f = values(out, "F")
    worst = 0.0
    for dim in range(3):
        fd = -(values(out, "EP%d" % dim)[0] - values(out, "EM%d" % dim)[0]) / (2 * h)
        worst = max(worst, abs(fd - f[dim]))
    assert worst < 1e-6, "FD force mismatch %.2e eV/A" % worst
    return "max |F - F_fd| = %.1e eV/A" % worst


# energy and three force components of atoms with fixed IDs, full precision
PRINT_EF = """run 0
variable e equal pe
variable f1 equal fx[1]
variable f2 equal fy[7]
variable f3 equal fz[33]
print "EF $(v_e:%.17g) $(v_f1:%.17g) $(v_f2:%.17g) $(v_f3:%.17g)"
"""


def restart_deck(restart, before=""):
    return f"""{before}read_restart {restart}
plugin load {ARGS.plugin}
pair_style {ARGS.style}
pair_coeff * * {ARGS.data}/potentials/PbTe_NEP4.txt Te Pb
thermo_modify format float %.17g
""" + PRINT_EF


def energy_and_force(deck_tail="", np=1, **kw):
    deck = header(**kw) + "\n" + PRINT_EF + deck_tail
    return values(run_lmp(deck, np=np), "EF")


rel = lmp_common.max_rel


def check_mpi_ranks():
    ref = energy_and_force()
    dev = [rel(energy_and_force(np=n), ref) for n in (2, 4)]
    assert max(dev) <= 1e-12, "1 vs 2/4 ranks: %s" % dev
    return "1 vs 2 / 4 ranks: max rel dev %.1e / %.1e" % tuple(dev)


def check_newton():
    a = energy_and_force(newton="on")
    b = energy_and_force(newton="off")
    d = rel(b, a)
    assert d <= 1e-12, d
    return "newton on vs off: %.1e" % d


def check_restart():
    ref = energy_and_force(deck_tail="write_restart nep.restart\n")
    d = rel(values(run_lmp(restart_deck("nep.restart")), "EF"), ref)
    assert d <= 1e-13, d
    return "read_restart + pair_coeff: %.1e" % d


def check_restart_newton_off():
    # read_restart keeps the file's newton_bond (on) while the input sets newton_pair off: ghost
    # forces are folded by the pair style and must not be reverse-communicated a second time
    ref = energy_and_force(deck_tail="write_restart nep2.restart\n")
    d = rel(values(run_lmp(restart_deck("nep2.restart", before="newton off\n")), "EF"), ref)
    assert d <= 1e-13, d
    return "newton pair off, bond on (from restart): %.1e" % d


def check_plugin_clear_and_reload():
    # plugin clear unloads the styles (and, without -k on, the plugin's own Kokkos session);
    # loading again must give the same energy, and exiting afterwards must be clean
    first = header() + 'run 0\nvariable e1 equal pe\nprint "E1 $(v_e1:%.17g)"\nplugin clear\n'
    again = (f"plugin load {ARGS.plugin}\npair_style {ARGS.style}\n"
             f"pair_coeff * * {ARGS.data}/potentials/PbTe_NEP4.txt Te Pb\n"
             'run 0\nvariable e2 equal pe\nprint "E2 $(v_e2:%.17g)"\n'
             f"plugin unload pair {ARGS.style.split('/')[0]}\n")
    out = run_lmp(first + again)
    e1, e2 = values(out, "E1")[0], values(out, "E2")[0]
    assert e1 == e2, (e1, e2)
    return "plugin clear + load + unload: E identical"


def check_repeated_runs():
    # MD split over several runs in one deck (re-setup, re-neighbouring in between) follows the
    # same trajectory as one run, and a run 0 afterwards reproduces the last step's energy
    md = header() + """
velocity all create 300 12345 loop geom
fix 1 all nve
thermo 20
"""
    split = md + """run 20
run 20
variable e1 equal pe
print "A $(v_e1:%.17g)"
run 0
variable e2 equal pe
print "B $(v_e2:%.17g) $(fx[7]:%.17g)"
"""
    whole = md + """run 40
variable e1 equal pe
print "A $(v_e1:%.17g) $(fx[7]:%.17g)"
"""
    a = values(run_lmp(split), "A")[0]
    b, fb = values(run_lmp(split), "B")
    c, fc = values(run_lmp(whole), "A")
    d_runs = abs(a - c) / abs(c)
    d_zero = abs(b - a) / abs(a)
    d_f = abs(fb - fc) / max(abs(fc), 1e-3)
    assert d_runs <= 1e-11 and d_zero <= 1e-13 and d_f <= 1e-8, (a, b, c, fb, fc)
    return "run 20 + run 20 vs run 40: E rel dev %.1e, F %.1e; run 0 after: %.1e" % (d_runs, d_f, d_zero)


def check_hybrid_overlay_zbl():
    # nep + zbl through hybrid/overlay equals the sum of separate runs
    zbl_coeffs = "pair_coeff 1 1 {p}52 52\npair_coeff 2 2 {p}82 82\npair_coeff 1 2 {p}52 82"
    e_nep = energy_and_force()[0]
    run = 'run 0\nvariable e equal pe\nprint "E $(v_e:%.17g)"\n'
    e_zbl = values(run_lmp(header(style="zbl 2.5 3.5", coeff=zbl_coeffs.format(p="")) + run), "E")[0]
    deck = header(style=f"hybrid/overlay {ARGS.style} zbl 2.5 3.5") + zbl_coeffs.format(p="zbl ") + "\n" + run
    e_h = values(run_lmp(deck), "E")[0]
    d = abs(e_h - (e_nep + e_zbl)) / abs(e_h)
    assert d <= 1e-13, d
    return "hybrid/overlay E = E_nep + E_zbl to %.1e (E_zbl = %.4f eV)" % (d, e_zbl)


def check_null_mapping():
    # under pair_style hybrid a third atom type maps to NULL (handled by zbl; no such atoms exist)
    ref = energy_and_force()
    got = energy_and_force(style=f"hybrid {ARGS.style} zbl 1.0 2.0", extra_types=1,
                           elements=f"Te Pb NULL\npair_coeff 1*3 3 zbl 52 52")
    d = rel(got, ref)
    assert d <= 1e-14, d
    return "NULL type: %.1e" % d


def check_nep_cpu_form():
    ref = energy_and_force()
    deck = header().replace(f"pair_style {ARGS.style}\npair_coeff * * {ARGS.data}/potentials/PbTe_NEP4.txt Te Pb",
                            f"pair_style {ARGS.style.split()[0]} {ARGS.data}/potentials/PbTe_NEP4.txt\npair_coeff * *")
    deck += PRINT_EF
    out = run_lmp(deck)
    assert "NEP_CPU-style" in out
    d = rel(values(out, "EF"), ref)
    assert d <= 1e-14, d
    return "pair_style nep FILE + pair_coeff * *: %.1e" % d


ERRORS = [
    ("units", lambda h: h.replace("units metal", "units real"), "requires 'units metal'"),
    ("missing model", lambda h: h.replace("PbTe_NEP4.txt", "no_such_model.txt"), "no_such_model.txt: cannot open model file"),
    ("unknown element", lambda h: h.replace("Te Pb\n", "Te Xx\n"), "element 'Xx' (atom type 2) is not in NEP model"),
    ("wrong count", lambda h: h.replace("Te Pb\n", "Te\n"), "expected pair_coeff * * model.txt and 2 element names"),
    ("bad model", lambda h: h.replace("potentials/PbTe_NEP4.txt", "reference/PbTe_NEP4__tric_24_rattled_swapped.xyz"),
     "rattled_swapped.xyz:1: first line must be"),
    ("bad keyword", lambda h: h.replace(f"pair_style {ARGS.style}", f"pair_style {ARGS.style} precision half"),
     "unknown precision 'half'"),
    # an atom type left unmapped (NULL) outside pair_style hybrid: LAMMPS refuses the run
    ("unmapped type", lambda h: h.replace("Te Pb\n", "Te NULL\n"), "All pair coeffs are not set"),
]


def check_nan_position():
    # a position turning NaN between re-neighbourings (LAMMPS checks coordinates only when it
    # re-neighbours) must stop the run with the atom named, not drop the atom's neighbours silently
    deck = header(boxrep=2) + """
neigh_modify every 1000 delay 0 check no
group one id 5
variable dx atom (step>=3)*1e308*10-(step>=3)*1e308*10
fix m one move variable v_dx NULL NULL NULL NULL NULL
fix n all nve
run 6
"""
    out = run_lmp(deck, expect_fail=True)
    assert "non-finite position" in out and "at step 3" in out, out[-1500:]
    line = next(l for l in out.splitlines() if "non-finite position" in l)
    return "NaN position at step 3 stops the run: %s" % line.strip()[:90]


def check_out_of_memory():
    # an allocation that fails inside the pair style (NEP_FAULT injects std::bad_alloc there, as a
    # full device or host memory would) ends the run with a LAMMPS error on that rank, not
    # std::terminate; under MPI with only rank 1 failing, rank 0 does not hang (LAMMPS aborts all)
    path = os.path.join(WORK, "in.oom")
    with open(path, "w") as fh:
        fh.write(header(boxrep=2) + "run 0\n")
    base = lmp_common.lmp_command(ARGS.lmp, path, path + ".log", ARGS.lmp_args)
    env = harness.env()
    msgs = []
    for np in (1, 2):
        if np == 1:
            cmd, e = base, dict(env, NEP_FAULT="pair:alloc")
        else:
            wrap = 'if [ "$OMPI_COMM_WORLD_RANK" = 1 ]; then export NEP_FAULT=pair:alloc; fi; exec "$@"'
            cmd, e = harness.mpirun(2, ["sh", "-c", wrap, "sh"] + base), env
        res = harness.run(cmd, env=e, timeout=120, cwd=WORK)
        out = res.stdout + res.stderr + (open(path + ".log").read() if os.path.exists(path + ".log") else "")
        assert res.returncode != 0, "np %d: the run did not fail" % np
        assert "terminate called" not in out, "np %d: an exception escaped into LAMMPS:\n%s" % (np, out[-1500:])
        assert "NEP evaluation failed at step 0" in out, "np %d: no clear message:\n%s" % (np, out[-1500:])
        msgs.append(next(l for l in out.splitlines() if "NEP evaluation failed" in l).strip()[:80])
    return "out of memory in the pair style: %s (1 rank; 2 ranks with rank 1 failing end too)" % msgs[0]


def check_model_path_is_a_directory():
    out = run_lmp(header().replace(f"{ARGS.data}/potentials/PbTe_NEP4.txt", f"{ARGS.data}/potentials") + "run 0\n",
                  expect_fail=True)
    assert "potentials: is a directory, not a NEP model file" in out, out[-1500:]
    return "a directory as the model: 'is a directory'"


def check_errors():
    for name, edit, msg in ERRORS:
        out = run_lmp(edit(header()) + "run 0\n", expect_fail=True)
        assert msg in out, "%s: message %r not found in:\n%s" % (name, msg, out[-1500:])
    return "%d bad inputs give clear errors" % len(ERRORS)


CHECKS = [check_finite_difference, check_newton, check_mpi_ranks, check_restart, check_restart_newton_off,
          check_repeated_runs, check_plugin_clear_and_reload,
          check_hybrid_overlay_zbl, check_null_mapping, check_nep_cpu_form, check_errors, check_nan_position,
          check_out_of_memory, check_model_path_is_a_directory]


def main():
    global ARGS, WORK
    ap = argparse.ArgumentParser()
    lmp_common.add_common_args(ap)
    ap.add_argument("--only", default="")
    ARGS = ap.parse_args()
    WORK = harness.folder("work")
    harness.run_checks(CHECKS, ARGS.only)
    harness.finish()


if __name__ == "__main__":
    main()
