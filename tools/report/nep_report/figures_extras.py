"""Figures from files an on-the-fly run (examples/otf-si) leaves in its folder, shown when present:
  rdf_*.txt                       radial distribution functions (teacher vs student)
  *.log with PHASE NAME_nve       total energy in NVE after that marker (energy drift)
  test.xyz + test_pred.xyz        the model (nep-predict) on held-out reference frames"""
import glob
import os

import numpy as np

from . import md_files, metrics, plotting, xyz
from .figures_training import parity_figure

RDF_COLOURS = {"teacher": "k", "student": "tab:red"}


def rdf_l1_difference(g_ref, g):
    """Integral of |g_ref - g| over integral of g_ref, on the common bins (uniform bins: dr cancels)."""
    return float(np.sum(np.abs(g_ref - g)) / np.sum(g_ref))


def rdf(folder, outdir):
    paths = sorted(glob.glob(os.path.join(folder, "rdf_*.txt")))
    if not paths:
        return None
    fig, axes = plotting.new(width=4.6)
    ax = axes[0][0]
    curves = {}
    for p in paths:
        name = os.path.basename(p)[4:-4]
        r, g = md_files.read_rdf(p)
        curves[name] = (r, g)
        ax.plot(r, g, color=RDF_COLOURS.get(name), lw=1.8 if name == "teacher" else 1.2, label=name)
    notes = {}
    if "teacher" in curves and "student" in curves:
        (rt, gt), (rs, gs) = curves["teacher"], curves["student"]
        if len(rt) == len(rs) and np.allclose(rt, rs):
            notes["rdf"] = f"L1 difference student vs teacher: {metrics.number(rdf_l1_difference(gt, gs))}"
            plotting.annotate(ax, notes["rdf"], loc="upper right")
    ax.set_xlabel("r (Å)")
    ax.set_ylabel("g(r)")
    ax.set_title("radial distribution function")
    ax.legend(loc="center right")
    caption = ("g(r) from LAMMPS compute rdf averaged by fix ave/time (" + ", ".join(os.path.basename(p) for p in paths)
               + "); L1 difference = ∫|g_teacher − g_student| dr / ∫g_teacher dr.")
    return plotting.save(fig, outdir, "rdf.png", "Radial distribution functions", caption, notes)


def nve_drift(trace):
    """Slope of the total energy per atom (meV/atom/ps), least squares, and the time axis (ps)."""
    t = (trace.col("Step") - trace.col("Step")[0]) * trace.timestep
    e = 1000.0 * trace.col("TotEng") / trace.natoms
    slope = float(np.polyfit(t, e, 1)[0])
    return slope, t, e


def nve(folder, outdir):
    traces = []
    for p in sorted(glob.glob(os.path.join(folder, "*.log"))):
        for phase in md_files.phase_markers(p):
            if not phase.endswith("_nve"):
                continue
            tr = md_files.read_thermo_after(p, f"PHASE {phase}")
            if tr is not None and "TotEng" in tr.columns and len(tr.rows) >= 3:
                traces.append((phase[:-4], os.path.basename(p), tr))
    if not traces:
        return None
    fig, axes = plotting.new(width=4.6)
    ax = axes[0][0]
    notes = {}
    for who, name, tr in traces:
        slope, t, e = nve_drift(tr)
        ax.plot(t, e - e[0], color=RDF_COLOURS.get(who, "tab:blue"), label=who)
        notes[who] = f"{who}: drift {metrics.number(slope)} meV/atom/ps ({tr.natoms} atoms, {metrics.number(t[-1])} ps)"
    ax.set_xlabel("time (ps)")
    ax.set_ylabel("E_total − E_total(0) (meV/atom)")
    ax.set_title("total energy in NVE")
    ax.legend(loc="upper left")
    plotting.annotate(ax, "\n".join(notes.values()), loc="lower right")
    caption = ("Total energy per atom after the PHASE *_nve marker of " + ", ".join(sorted({n for _, n, _ in traces}))
               + "; drift = least-squares slope.")
    return plotting.save(fig, outdir, "nve_energy.png", "NVE energy trace", caption, notes)


def heldout_predictions(folder, outdir):
    ref_p, pred_p = os.path.join(folder, "test.xyz"), os.path.join(folder, "test_pred.xyz")
    if not (os.path.isfile(ref_p) and os.path.isfile(pred_p)):
        return []
    ref, pred = xyz.read_xyz(ref_p), xyz.read_xyz(pred_p)
    if len(ref) != len(pred) or any(len(a.species) != len(b.species) for a, b in zip(ref, pred)):
        return []
    out = []
    pairs = [(a, b) for a, b in zip(ref, pred) if a.energy is not None and b.energy is not None]
    if pairs:
        e_ref = np.array([[a.energy / len(a.species)] for a, _ in pairs])
        e_pred = np.array([[b.energy / len(b.species)] for _, b in pairs])
        out.append(parity_figure({"held-out": (e_pred, e_ref)}, "energy", outdir, "heldout_parity_energy.png",
                                 "Held-out frames: energy", "test_pred.xyz (nep-predict) against test.xyz"))
    pairs = [(a, b) for a, b in zip(ref, pred) if a.forces is not None and b.forces is not None]
    if pairs:
        f_ref = np.concatenate([a.forces for a, _ in pairs])
        f_pred = np.concatenate([b.forces for _, b in pairs])
        out.append(parity_figure({"held-out": (f_pred, f_ref)}, "force", outdir, "heldout_parity_force.png",
                                 "Held-out frames: force", "test_pred.xyz (nep-predict) against test.xyz"))
    return out


def all_figures(folder, outdir, progress):
    out = []
    for name, make in (("radial distribution functions", rdf), ("NVE energy", nve)):
        progress(f"figure: {name}")
        fig = make(folder, outdir)
        if fig is not None:
            out.append(fig)
    progress("figure: held-out predictions")
    out.extend(heldout_predictions(folder, outdir))
    return out
