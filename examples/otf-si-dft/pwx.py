"""Quantum ESPRESSO helpers of examples/otf-si-dft: the Si crystal as a LAMMPS data file, the pw.x
input written from that data file (so that pw.x's atoms are LAMMPS's atoms, in atom-ID order: the
protocol carries no species), and plain pw.x runs that label frames for the held-out set.

Settings of every pw.x call here (teacher and labels alike): Debian's Si.pbe-rrkj.UPF, ecutwfc
20 Ry, Gamma point, Marzari-Vanderbilt smearing of 0.01 Ry (hot silicon's gap can close in a 64-atom
cell; smearing keeps the SCF converging), conv_thr 1e-7 Ry (about 3e-4 Ry/Bohr in the forces), nosym (pw.x would
impose the start's symmetry on every call), forces and stress.

Command line (run.sh):
  pwx.py setup OUTDIR                  OUTDIR/si64.data and OUTDIR/pw.in (the teacher's input, from it)
  pwx.py label OUT.xyz JOBS DUMP...    plain pw.x on every frame of LAMMPS dumps (id x y z, sorted by
                                       id), JOBS at a time, written as extended XYZ with DFT labels"""
import os
import random
import re
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

PSEUDO = "/usr/share/espresso/pseudo"
RY_EV, BOHR = 27.211386245988 / 2, 0.529177210903    # CODATA 2018, as pair_style ipi converts
A_SI = 5.431


def write_crystal(path, cells=2, a=A_SI, rattle=0.05, seed=7):
    """diamond Si, cells^3 conventional cells, every atom displaced by a Gaussian of `rattle` Angstrom
    per component (seeded), as a LAMMPS data file (atom style atomic). The displacement is about
    400 K's thermal one: the first frames (1 fs apart while the teacher drives) then differ enough
    for the first round's descriptor scaling (q_scaler), which the whole run keeps; from the perfect
    crystal they hardly differ and training diverges."""
    basis = [(0, 0, 0), (0, .5, .5), (.5, 0, .5), (.5, .5, 0),
             (.25, .25, .25), (.25, .75, .75), (.75, .25, .75), (.75, .75, .25)]
    rng = random.Random(seed)
    pos = [((i + bx) * a + rng.gauss(0, rattle), (j + by) * a + rng.gauss(0, rattle), (k + bz) * a + rng.gauss(0, rattle))
           for i in range(cells) for j in range(cells) for k in range(cells) for bx, by, bz in basis]
    L = cells * a
    pos = [tuple(c % L for c in p) for p in pos]    # wrapped into the periodic box
    with open(path, "w") as f:
        f.write(f"diamond Si, {len(pos)} atoms (examples/otf-si-dft/pwx.py)\n\n{len(pos)} atoms\n1 atom types\n\n"
                f"0.0 {L!r} xlo xhi\n0.0 {L!r} ylo yhi\n0.0 {L!r} zlo zhi\n\nMasses\n\n1 28.0855\n\nAtoms # atomic\n\n")
        f.writelines(f"{n + 1} 1 {x!r} {y!r} {z!r}\n" for n, (x, y, z) in enumerate(pos))


def read_data(path):
    """(cell rows, positions in atom-ID order) of an orthogonal LAMMPS data file of one atom type"""
    text = open(path).read()
    lo_hi = [re.search(rf"^\s*(\S+)\s+(\S+)\s+{d}lo {d}hi", text, re.M) for d in "xyz"]
    if "xy xz yz" in text:
        raise ValueError(f"{path}: a triclinic box (this example writes orthogonal ones)")
    L = [float(m.group(2)) - float(m.group(1)) for m in lo_hi]
    atoms = text.split("Atoms", 1)[1].split("\n\n", 2)[1]
    rows = sorted((int(t[0]), [float(v) for v in t[2:5]]) for t in (l.split() for l in atoms.splitlines() if l.strip()))
    return [[L[0], 0, 0], [0, L[1], 0], [0, 0, L[2]]], [p for _, p in rows]


def pw_input(cell, positions, outdir):
    """a pw.x SCF input (Angstrom) of Si atoms in this order"""
    c = "".join(f"{x!r} {y!r} {z!r}\n" for x, y, z in cell)
    p = "".join(f"Si {x!r} {y!r} {z!r}\n" for x, y, z in positions)
    return (f"&CONTROL\n  calculation = 'scf'\n  tprnfor = .true.\n  tstress = .true.\n  pseudo_dir = '{PSEUDO}'\n"
            f"  outdir = '{outdir}'\n  disk_io = 'none'\n/\n&SYSTEM\n  ibrav = 0\n  nat = {len(positions)}\n  ntyp = 1\n"
            f"  ecutwfc = 20\n  nosym = .true.\n"
            f"  occupations = 'smearing'\n  smearing = 'mv'\n  degauss = 0.01\n/\n&ELECTRONS\n  conv_thr = 1e-7\n/\nATOMIC_SPECIES\nSi 28.0855 Si.pbe-rrkj.UPF\n"
            f"CELL_PARAMETERS angstrom\n{c}ATOMIC_POSITIONS angstrom\n{p}K_POINTS gamma\n")


def run_plain(workdir, cell, positions, pw="pw.x"):
    """one plain pw.x SCF: (energy eV, forces eV/A by atom, virial eV as xx yy zz xy xz yz)"""
    workdir = os.path.abspath(workdir)
    os.makedirs(workdir, exist_ok=True)
    open(os.path.join(workdir, "pw.in"), "w").write(pw_input(cell, positions, os.path.join(workdir, "tmp")))
    env = dict(os.environ, OMP_NUM_THREADS="1")
    out = subprocess.run(pw.split() + ["-in", "pw.in"], cwd=workdir, env=env, capture_output=True, text=True).stdout
    open(os.path.join(workdir, "pw.out"), "w").write(out)
    e = re.search(r"^!\s+total energy\s+=\s+(\S+) Ry", out, re.M)
    if not e or "convergence NOT achieved" in out:
        raise RuntimeError(f"{workdir}/pw.out: pw.x did not converge or failed")
    n = len(positions)
    f = [[float(v) * RY_EV / BOHR for v in m]
         for m in re.findall(r"atom\s+\d+ type\s+\d+\s+force =\s+(\S+)\s+(\S+)\s+(\S+)", out)][:n]
    rows = re.search(r"total\s+stress\s+\(Ry/bohr\*\*3\).*\n(.*)\n(.*)\n(.*)", out).groups()
    s = [[float(v) * RY_EV / BOHR ** 3 for v in r.split()[:3]] for r in rows]   # eV/A^3, pressure sign
    vol = cell[0][0] * cell[1][1] * cell[2][2]
    v = [s[0][0], s[1][1], s[2][2], s[0][1], s[0][2], s[1][2]]
    return float(e.group(1)) * RY_EV, f, [vol * x for x in v]


def read_dump(path):
    """frames (cell rows, positions in ID order, step) of a LAMMPS dump custom ... id x y z (orthogonal box)"""
    lines, frames, i = open(path).read().splitlines(), [], 0
    while i < len(lines):
        if lines[i].startswith("ITEM: TIMESTEP"):
            step = int(lines[i + 1])
            n = int(lines[i + 3])
            if "xy" in lines[i + 4]:
                raise ValueError(f"{path}:{i + 5}: a triclinic box (this example writes orthogonal ones)")
            lo_hi = [[float(v) for v in lines[i + 5 + d].split()[:2]] for d in range(3)]
            cols = lines[i + 8].split()[2:]
            c = [cols.index(k) for k in ("id", "x", "y", "z")]
            rows = sorted((int(t[c[0]]), [float(t[k]) for k in c[1:]])
                          for t in (l.split() for l in lines[i + 9:i + 9 + n]))
            L = [hi - lo for lo, hi in lo_hi]
            frames.append(([[L[0], 0, 0], [0, L[1], 0], [0, 0, L[2]]], [p for _, p in rows], step))
            i += 9 + n
        else:
            i += 1
    return frames


def write_xyz(path, frames):
    """extended XYZ (GPUMD's training format) of labelled frames (cell, positions, energy, forces, virial, tag)"""
    with open(path, "w") as f:
        for cell, pos, e, forces, v, tag in frames:
            lat = " ".join(repr(float(x)) for r in cell for x in r)
            vir = [v[0], v[3], v[4], v[3], v[1], v[5], v[4], v[5], v[2]]    # xx xy xz yx yy yz zx zy zz
            f.write(f"{len(pos)}\nLattice=\"{lat}\" energy={e!r} virial=\"{' '.join(repr(x) for x in vir)}\" "
                    f"config_type={tag} pbc=\"T T T\" Properties=species:S:1:pos:R:3:forces:R:3\n")
            f.writelines(f"Si {p[0]!r} {p[1]!r} {p[2]!r} {g[0]!r} {g[1]!r} {g[2]!r}\n" for p, g in zip(pos, forces))


def label(out_xyz, jobs, dumps):
    """plain pw.x on every frame of the dumps (config_type = the dump's name and step)"""
    work = [(os.path.splitext(os.path.basename(d))[0], fr) for d in dumps for fr in read_dump(d)]
    root = os.path.join(os.path.dirname(os.path.abspath(out_xyz)), "labels")

    def one(item):
        name, (cell, pos, step) = item
        e, f, v = run_plain(os.path.join(root, f"{name}_{step}"), cell, pos)
        return cell, pos, e, f, v, f"{name}_{step}"
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        write_xyz(out_xyz, list(pool.map(one, work)))
    return len(work)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "setup":
        out = os.path.abspath(sys.argv[2])
        write_crystal(os.path.join(out, "si64.data"))
        cell, pos = read_data(os.path.join(out, "si64.data"))
        open(os.path.join(out, "pw.in"), "w").write(pw_input(cell, pos, os.path.join(out, "pw_tmp")))
    elif len(sys.argv) >= 5 and sys.argv[1] == "label":
        print(f"pwx.py: {label(sys.argv[2], int(sys.argv[3]), sys.argv[4:])} frames labelled by pw.x -> {sys.argv[2]}")
    else:
        sys.exit("usage: pwx.py setup OUTDIR | pwx.py label OUT.xyz JOBS DUMP...")
