"""Trajectory observables of examples/otf-si and examples/otf-si-active (observables.in writes them):
per window of MD steps the mean temperature, the mean potential energy per atom of the model that
drove the MD, and the radial distribution function g(r) to 5 A.

windows(outdir, natoms)  -> [{"end_step", "temp_K", "pe_eV_per_atom", "r", "g", "first_peak_A"}]
spread(teacher_runs, phases) -> per phase the largest PE difference and g(r) distance between any
    two runs of the same MD driven by the teacher from different velocity seeds: what chaos alone
    gives (the melting time and the supercooled liquid's course differ from seed to seed)
compare(teacher, student, skip, spread) -> per window: PE difference (meV/atom) and the RDF distance
    L1 = sum |g_student - g_teacher| / sum g_teacher over the bins; within when both are at most
    the tolerances below or, with `spread`, the teacher's own spread in that window's phase if larger.
"""
import os

PE_TOL_MEV = 5.0      # |mean PE per atom, student-driven - teacher-driven| per window
RDF_L1_TOL = 0.05     # relative L1 distance of the window-averaged g(r)


def _l1(g, ref):
    """relative L1 distance of g(r) from ref over the same bins"""
    return sum(abs(a - b) for a, b in zip(g, ref)) / sum(ref)


def _rows(path):
    return [l.split() for l in open(path) if l.strip() and not l.startswith("#")]


def windows(out, natoms):
    res = {}
    for step, temp, pe in (map(float, r) for r in _rows(os.path.join(out, "window.dat"))):
        res[int(step)] = {"end_step": int(step), "temp_K": temp, "pe_eV_per_atom": pe / natoms}
    rows = _rows(os.path.join(out, "rdf.dat"))
    k = 0
    while k < len(rows):   # fix ave/time mode vector: "step nrows", then nrows rows "i r g coord"
        step, n = int(rows[k][0]), int(rows[k][1])
        block = rows[k + 1:k + 1 + n]
        k += 1 + n
        w = res.setdefault(step, {"end_step": step})
        w["r"] = [float(b[1]) for b in block]
        w["g"] = [float(b[2]) for b in block]
        w["first_peak_A"] = w["r"][max(range(n), key=lambda i: w["g"][i])]
    return [res[s] for s in sorted(res)]


def _phase(phases, step):
    for name, first, last in phases:
        if first <= step <= last:
            return name
    return None


def spread(runs, phases):
    """runs: windows() of two or more teacher-driven runs of one MD protocol from different velocity
    seeds; phases: [(name, first_end_step, last_end_step)]. Per phase: the largest |PE difference|
    (meV/atom) and g(r) L1 distance between any two runs over the phase's windows."""
    res = {name: {"pe_meV_per_atom": 0.0, "rdf_l1": 0.0, "windows": 0} for name, _, _ in phases}
    by = [{w["end_step"]: w for w in r if "g" in w} for r in runs]
    for i in range(len(by)):
        for j in range(i + 1, len(by)):
            for step, a in by[i].items():
                b, name = by[j].get(step), _phase(phases, step)
                if b is None or name is None:
                    continue
                ph = res[name]
                ph["pe_meV_per_atom"] = max(ph["pe_meV_per_atom"], 1e3 * abs(a["pe_eV_per_atom"] - b["pe_eV_per_atom"]))
                ph["rdf_l1"] = max(ph["rdf_l1"], _l1(a["g"], b["g"]))
                ph["windows"] += 1
    return res


def compare(teacher, student, skip=(), spread=None, phases=()):
    """teacher, student: windows() of two runs of the same MD protocol; windows ending at a step in
    `skip` (phase transients, e.g. the melting) are reported but not judged. With spread (spread()'s
    result over `phases`), a window's tolerances are the larger of the fixed ones and its phase's
    teacher spread."""
    s_by = {w["end_step"]: w for w in student}
    out, ok = [], True
    for t in teacher:
        s = s_by.get(t["end_step"])
        if s is None or "g" not in t or "g" not in s:
            continue
        d_pe = 1e3 * (s["pe_eV_per_atom"] - t["pe_eV_per_atom"])
        l1 = _l1(s["g"], t["g"])
        pe_tol, l1_tol = PE_TOL_MEV, RDF_L1_TOL
        ph = spread.get(_phase(phases, t["end_step"])) if spread else None
        if ph:
            pe_tol, l1_tol = max(pe_tol, ph["pe_meV_per_atom"]), max(l1_tol, ph["rdf_l1"])
        judged = t["end_step"] not in skip
        good = abs(d_pe) <= pe_tol and l1 <= l1_tol
        ok = ok and (good or not judged)
        out.append({"end_step": t["end_step"], "temp_K": [t["temp_K"], s["temp_K"]],
                    "pe_diff_meV_per_atom": d_pe, "rdf_l1": l1, "pe_tolerance_meV_per_atom": pe_tol,
                    "rdf_l1_tolerance": l1_tol,
                    "first_peak_A": [t["first_peak_A"], s["first_peak_A"]], "judged": judged, "within": good})
    return {"pe_tolerance_meV_per_atom": PE_TOL_MEV, "rdf_l1_tolerance": RDF_L1_TOL, "windows": out,
            "all_judged_within": ok}


def noise_floor(teacher, steps):
    """RDF L1 distance between consecutive windows of one run in a steady state (windows ending at
    `steps`): what statistics alone give."""
    by = {w["end_step"]: w for w in teacher}
    d = []
    for a, b in zip(steps, steps[1:]):
        if a in by and b in by:
            d.append(_l1(by[b]["g"], by[a]["g"]))
    return d
