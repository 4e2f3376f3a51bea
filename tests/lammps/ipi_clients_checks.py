#!/usr/bin/env python3
"""pair_style ipi with real i-PI clients (Debian's packages, installed by tools/deps.sh):
- Quantum ESPRESSO 6.7 (`pw.x --ipi`), 8 rattled Si atoms (Si.pbe-rrkj.UPF, ecutwfc 16 Ry, Gamma,
  conv_thr 1e-11): through the pair style, on 1 and 2 LAMMPS ranks, the energy equals a plain pw.x
  run of the same positions to 1e-8 relative, forces and stress to 1e-3 of their largest component;
  killed with SIGKILL during MD it is restarted and the run ends; as the teacher of fix nep/train
  mode active it labels frames;
- ASE's SocketClient with ASE's EMT calculator (Cu, triclinic): energy, forces and stress equal
  ASE's own evaluation of the same positions (1e-6: ASE 3.22 converts with CODATA 2014 constants)."""
import glob
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import harness
from otf_common import arg_parser, launch_lmp, read_buffer, thermo_rows

ap = arg_parser()
args = ap.parse_args()
HERE = os.path.dirname(os.path.abspath(__file__))
RY_EV, BOHR = 27.211386245988 / 2, 0.529177210903
BAR_PER_EV_A3 = 1.602176634e6
PSEUDO = "/usr/share/espresso/pseudo"
PW = shutil.which("pw.x")
ASE_PY = "/usr/bin/python3"
if not PW or not os.path.isfile(os.path.join(PSEUDO, "Si.pbe-rrkj.UPF")):
    harness.check(False, "pw.x and Si.pbe-rrkj.UPF are installed (Debian quantum-espresso, quantum-espresso-data: "
                         "tools/deps.sh installs them)")
    harness.finish()

A = 5.431
SI8 = [(0.05, 0.0, 0.0), (1.3577, 1.3577, 1.40), (2.7155, 2.7155, 0.0), (4.0732, 4.1, 1.3577),
       (2.7155, 0.0, 2.7155), (4.0732, 1.3577, 4.0732), (0.0, 2.8, 2.7155), (1.3577, 4.0732, 4.0732)]


def pw_input(outdir):
    pos = "".join(f"Si {x:.10f} {y:.10f} {z:.10f}\n" for x, y, z in SI8)
    return (f"&CONTROL\n  calculation = 'scf'\n  tprnfor = .true.\n  tstress = .true.\n  pseudo_dir = '{PSEUDO}'\n"
            f"  outdir = '{outdir}'\n/\n&SYSTEM\n  ibrav = 0\n  nat = 8\n  ntyp = 1\n  ecutwfc = 16\n  nosym = .true.\n/\n"
            f"&ELECTRONS\n  conv_thr = 1e-11\n/\nATOMIC_SPECIES\nSi 28.0855 Si.pbe-rrkj.UPF\nCELL_PARAMETERS angstrom\n"
            f"{A} 0.0 0.0\n0.0 {A} 0.0\n0.0 0.0 {A}\nATOMIC_POSITIONS angstrom\n{pos}K_POINTS gamma\n")


def si8_data(path):
    atoms = "".join(f"{i + 1} 1 {x} {y} {z}\n" for i, (x, y, z) in enumerate(SI8))
    open(path, "w").write(f"Si8\n\n8 atoms\n1 atom types\n\n0.0 {A} xlo xhi\n0.0 {A} ylo yhi\n0.0 {A} zlo zhi\n\n"
                          f"Masses\n\n1 28.0855\n\nAtoms # atomic\n\n{atoms}")


def plain_pw(d):
    """energy (eV), forces (eV/A, by atom), pressure tensor (bar, xx yy zz xy xz yz) of a plain pw.x run"""
    open(os.path.join(d, "plain.in"), "w").write(pw_input(os.path.join(d, "tmp_plain")))
    p = harness.run([PW, "-in", "plain.in"], timeout=300, cwd=d, env=harness.env(OMP_NUM_THREADS="1"))
    out = p.stdout
    e = float(re.search(r"^!\s+total energy\s+=\s+(\S+) Ry", out, re.M).group(1)) * RY_EV
    f = [[float(v) * RY_EV / BOHR for v in m] for m in re.findall(r"atom\s+\d+ type\s+\d+\s+force =\s+(\S+)\s+(\S+)\s+(\S+)", out)][:8]
    rows = re.search(r"total\s+stress\s+\(Ry/bohr\*\*3\).*\n(.*)\n(.*)\n(.*)", out).groups()
    s = [[float(v) * RY_EV / BOHR ** 3 * BAR_PER_EV_A3 for v in r.split()[:3]] for r in rows]
    return e, f, [s[0][0], s[1][1], s[2][2], s[0][1], s[0][2], s[1][2]]


OUT = """compute p all pressure NULL virial
thermo_style custom step pe c_p[1] c_p[2] c_p[3] c_p[4] c_p[5] c_p[6]
thermo_modify format float %.15g
dump d all custom 1 f.dump id fx fy fz
dump_modify d format float %.15g sort id
"""


def qe_deck(d, extra_pair="", run="run 0\n"):
    open(os.path.join(d, "pw.in"), "w").write(pw_input(os.path.join(d, "tmp_driver")))
    si8_data(os.path.join(d, "si8.data"))
    return ("units metal\nboundary p p p\nread_data si8.data\n"
            f"plugin load {args.plugin}\n"
            f'pair_style ipi launch "{PW} --ipi {{address}} -in pw.in" log pw.log input pw.in timeout 300 {extra_pair}\n'
            "pair_coeff * * Si\n" + OUT + run)


def last_forces(d):
    lines = open(os.path.join(d, "f.dump")).read().splitlines()
    last = max(i for i, l in enumerate(lines) if l.startswith("ITEM: ATOMS"))
    return [[float(v) for v in l.split()[1:]] for l in lines[last + 1:]]


def worst(a, b):
    """max |a - b| over max |b| (flattened lists)"""
    fa, fb = [x for r in a for x in r], [x for r in b for x in r]
    return max(abs(x - y) for x, y in zip(fa, fb)) / max(abs(y) for y in fb)


# ---- parity with a plain pw.x run, 1 and 2 LAMMPS ranks
dp = harness.folder("plain")
d1, d2 = harness.folder("qe_np1"), harness.folder("qe_np2")
h1 = launch_lmp(args.lmp, d1, qe_deck(d1), timeout=600)
e_ref, f_ref, p_ref = plain_pw(dp)
p1, log1 = h1.finish()
h2 = launch_lmp(args.lmp, d2, qe_deck(d2), np=2, timeout=600)
p2, log2 = h2.finish()
for np, d, p, log in ((1, d1, p1, log1), (2, d2, p2, log2)):
    rows = thermo_rows(log)
    if p.returncode != 0 or not rows:
        harness.check(False, f"pw.x through pair_style ipi, {np} rank(s), runs")
        continue
    r = rows[0]
    e = r["PotEng"]
    press = [r[f"c_p[{k}]"] for k in range(1, 7)]
    de, df, dpress = abs(e - e_ref) / abs(e_ref), worst(last_forces(d), f_ref), worst([press], [p_ref])
    harness.check(de < 1e-8 and df < 1e-3 and dpress < 1e-3,
                  f"pw.x through pair_style ipi ({np} rank(s)) equals plain pw.x: energy {de:.1e} relative, forces "
                  f"{df:.1e}, stress {dpress:.1e} of their largest component")
harness.check("input FILE" not in log1 and "Angstrom from LAMMPS" not in log1,
              "the pw.x input's species and positions agree with LAMMPS's atoms (no warning)")

# ---- SIGKILL of pw.x during MD: restarted, the run ends
dk = harness.folder("qe_kill")
text = qe_deck(dk, run="velocity all create 600 5 loop geom\nfix nve all nve\nthermo 1\nthermo_modify flush yes\nrun 6\n").replace("dump d all custom 1", "dump d all custom 6")
hk = launch_lmp(args.lmp, dk, text, timeout=600)
killed = []


def kill_pw_once():
    """SIGKILL the pw.x of this folder once the run has made two calls"""
    deadline = time.time() + 300
    while time.time() < deadline and hk.proc.poll() is None:
        log = open(os.path.join(dk, "in.lmp.log")).read() if os.path.exists(os.path.join(dk, "in.lmp.log")) else ""
        if len(re.findall(r"^\s+[12]\s+-?\d", log, re.M)) >= 2:
            for cmd in glob.glob("/proc/[0-9]*/cmdline"):
                try:
                    c = open(cmd, "rb").read().split(b"\0")
                    cwd = os.readlink(os.path.dirname(cmd) + "/cwd")
                except OSError:
                    continue
                if c and c[0].endswith(b"pw.x") and cwd == dk:
                    os.kill(int(cmd.split("/")[2]), signal.SIGKILL)
                    killed.append(cmd)
                    return
        time.sleep(0.2)


t = threading.Thread(target=kill_pw_once)
t.start()
pk, logk = hk.finish()
t.join()
rows = thermo_rows(logk)
harness.check(killed and pk.returncode == 0 and len(rows) == 7 and "restarting the client" in logk,
              f"pw.x killed with SIGKILL during MD: restarted, all 6 steps done ({len(rows)} thermo rows)")

# ---- Quantum ESPRESSO as the teacher of fix nep/train mode active
da = harness.folder("qe_active")
open(os.path.join(da, "nep.in"), "w").write("type 1 Si\ncutoff 4.2 3.7\nn_max 4 4\nbasis_size 6 6\nl_max 4 0 0\n"
                                             "neuron 8\nbatch 2\nepoch 4\n")
text = qe_deck(da).replace("pair_style ipi", "pair_style hybrid/overlay nep/gpu cutoff 4.2 ipi").replace(
    "pair_coeff * * Si\n", "pair_coeff * * nep/gpu none Si\npair_coeff * * ipi Si\n").replace(OUT, "").replace(
    "run 0\n", "velocity all create 900 5 loop geom\nfix nve all nve\n"
    "fix learn all nep/train every 4 buffer si.h5 model si.nep.txt input nep.in seed 5 train_every 3 mode active "
    "teacher ipi committee 2 threshold 0.2 0.8 adopt_after 8 8\nthermo_style custom step pe f_learn[1] f_learn[8]\n"
    "thermo 4\nrun 24\n")
pa, loga = launch_lmp(args.lmp, da, text, timeout=900).finish()
rows = thermo_rows(loga)
frames = read_buffer(args.frames, da, "si.h5") if pa.returncode == 0 else []
harness.check(pa.returncode == 0 and rows and rows[-1]["f_learn[8]"] > 0 and len(frames) == rows[-1]["f_learn[1]"] > 0,
              f"pw.x as the teacher of fix nep/train mode active: {int(rows[-1]['f_learn[8]']) if rows else 0} DFT "
              f"evaluations, {len(frames)} frames buffered")

# ---- ASE's SocketClient with EMT (Cu, triclinic): against ASE's own numbers
de_ = harness.folder("ase")
ref = subprocess.run([ASE_PY, "-c", """
import numpy as np
from ase.build import bulk
from ase.calculators.emt import EMT
a = bulk('Cu', 'fcc', a=3.6, cubic=True).repeat((2, 2, 2))
a.set_cell(a.cell + [[0, 0, 0], [0.4, 0, 0], [0.2, -0.3, 0]], scale_atoms=True)
a.rattle(0.05, seed=3)
a.write('cu.xyz')
a.calc = EMT()
e, f, s = a.get_potential_energy(), a.get_forces(), a.get_stress(voigt=False)
np.savetxt('ref.txt', np.concatenate([[e], f.ravel(), s.ravel()]))
lmp = ['LAMMPS data from ASE', '', f'{len(a)} atoms', '1 atom types', '']
c = a.cell
lmp += [f'0 {c[0,0]!r} xlo xhi', f'0 {c[1,1]!r} ylo yhi', f'0 {c[2,2]!r} zlo zhi', f'{c[1,0]!r} {c[2,0]!r} {c[2,1]!r} xy xz yz',
        '', 'Masses', '', '1 63.546', '', 'Atoms # atomic', '']
lmp += [f'{i + 1} 1 {x!r} {y!r} {z!r}' for i, (x, y, z) in enumerate(a.positions)]
open('cu.data', 'w').write('\\n'.join(lmp) + '\\n')
"""], cwd=de_, capture_output=True, text=True)
if ref.returncode != 0:
    harness.check(False, "ASE (Debian python3-ase) computes the EMT reference: " + ref.stderr[-500:])
else:
    vals = [float(v) for v in open(os.path.join(de_, "ref.txt")).read().split()]
    # ASE 3.22 sends in its own units (CODATA 2014 Bohr and Hartree), the server reads CODATA 2018:
    # ASE's numbers as they arrive
    ase_units = subprocess.run([ASE_PY, "-c", "import ase.units as u; print(repr(u.Hartree), repr(u.Bohr))"],
                               capture_output=True, text=True).stdout.split()
    ha, bohr = float(ase_units[0]), float(ase_units[1])
    ke, kf = 27.211386245988 / ha, (27.211386245988 / 0.529177210903) / (ha / bohr)
    e_ase, f_ase = vals[0] * ke, [[x * kf for x in vals[1 + 3 * i:4 + 3 * i]] for i in range(32)]
    s_ase = [x * ke for x in vals[97:106]]    # the virial (energy units) of a volume LAMMPS and ASE share
    text = ("units metal\nboundary p p p\nread_data cu.data\n" f"plugin load {args.plugin}\n"
            f'pair_style ipi launch "{ASE_PY} {HERE}/../ipi/ase_client.py {{name}} cu.xyz emt" log ase.log input cu.xyz\n'
            "pair_coeff * * Cu\n" + OUT + "run 0\n")
    pe, loge = launch_lmp(args.lmp, de_, text, timeout=300).finish()
    rows = thermo_rows(loge)
    if pe.returncode == 0 and rows:
        r = rows[0]
        # ASE's stress is the derivative of the energy per volume (tensile positive): P_virial = -stress
        p_ase = [-s_ase[k] * BAR_PER_EV_A3 for k in (0, 4, 8, 1, 2, 5)]
        press = [r[f"c_p[{k}]"] for k in range(1, 7)]
        dev = max(abs(r["PotEng"] - e_ase) / abs(e_ase), worst(last_forces(de_), f_ase), worst([press], [p_ase]))
        # 1e-6: the positions ASE turns back into Angstrom with its CODATA 2014 Bohr are ours scaled
        # by 4e-10, which moves this small energy (1.3 eV against a large virial) by ~1e-8 relative
        harness.check(dev < 1e-6, f"ASE's SocketClient with EMT (32 Cu, triclinic): energy, forces and stress equal "
                                  f"ASE's own ({dev:.1e}; ASE's unit constants are CODATA 2014)")
    else:
        harness.check(False, "ASE's SocketClient through pair_style ipi runs")
harness.finish()
