"""Figures of a training folder: loss curves, parity plots, force-error distribution, force RMSE per
element. Each function returns a plotting.Figure (or None when its data are absent)."""
import numpy as np
from matplotlib.ticker import MaxNLocator

from . import metrics, plotting
from .plotting import SET_COLOURS

UNITS = {"energy": ("meV/atom", "eV/atom"), "force": ("meV/Å", "eV/Å"), "virial": ("meV/atom", "eV/atom")}
MAX_POINTS = 200_000  # points drawn per parity panel (metrics always use every value)


def _log_if_positive(ax, *arrays):
    vals = np.concatenate([np.ravel(a) for a in arrays]) if arrays else np.zeros(0)
    if vals.size and np.all(vals > 0) and vals.max() > 10 * vals.min():  # log where it spans a decade
        plotting.log_y(ax)


def loss_curves(folder, outdir):
    loss = folder.loss
    if loss is None:
        return None
    step_name = "epoch" if folder.program == "nep-train" else "generation"
    panels = [("total", None)]
    if loss.kind == "potential":
        panels += [("energy", "energy"), ("force", "force"), ("virial", "virial")]
    else:
        panels += [("RMSE", "tensor")]
    if folder.lr is not None and len(folder.lr[0]):
        panels.append(("learning rate", None))
    ncols = min(3, len(panels))
    nrows = (len(panels) + ncols - 1) // ncols
    fig, axes = plotting.new(ncols=ncols, nrows=nrows, width=3.3, height=2.9)
    flat = list(axes.ravel())
    for ax in flat[len(panels):]:
        ax.set_visible(False)
    notes, titles = {}, {}
    for ax, (name, q) in zip(flat, panels):
        if name == "total":
            ax.plot(loss.step, loss.total, color="k", label="total")
            for arr, lab, c in ((loss.l1, "L1 term", "0.5"), (loss.l2, "L2 term", "tab:green")):
                if np.any(arr > 0):
                    ax.plot(loss.step, arr, color=c, label=lab)
            _log_if_positive(ax, loss.total)
            titles[name] = "loss"
            notes["total"] = f"last: {metrics.number(loss.total[-1])}"
        elif name == "learning rate":
            ax.plot(folder.lr[0], folder.lr[1], color="tab:purple")
            _log_if_positive(ax, folder.lr[1])
            titles[name] = "learning rate"
            notes["learning rate"] = f"last: {metrics.number(folder.lr[1][-1])}"
        else:
            unit = UNITS.get(q, ("", ""))[0] if q != "tensor" else "(per atom)"
            scale = 1000.0 if q != "tensor" else 1.0
            shown, lines = [], []
            for s in ("train", "test"):
                y = loss.rmse[(s, q)]
                if not np.any(y > 0):
                    continue  # no test set, or no virial labels: GPUMD writes zeros
                ax.plot(loss.step, scale * y, color=SET_COLOURS[s], label=s)
                shown.append(scale * y)
                lines.append(f"{s} last: {metrics.number(scale * y[-1])}")
            _log_if_positive(ax, *shown)
            titles[name] = f"{name} RMSE ({unit})" if q != "tensor" else "RMSE"
            if lines:
                notes[name] = ", ".join(lines)
        ax.set_xlabel(step_name)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(loc="best")
        if name in notes:
            plotting.title_with_note(ax, titles[name], notes[name])
        else:
            ax.set_title(titles[name])
    caption = (f"Loss and RMSEs from loss.out, one point per output interval ({step_name}s); "
               "log scale where the values are positive and span more than a factor 10.")
    if folder.lr is not None:
        caption += " Learning rate from lr.out."
    return plotting.save(fig, outdir, "loss.png", "Loss curves", caption, notes)


def _force_mask(folder, s):
    sp = folder.species.get(s)
    return sp[1] if sp is not None else None


def _parity_arrays(folder, s, q):
    par = folder.parity[(s, q)]
    pred, ref = par.pred, par.ref
    if q == "force":
        mask = _force_mask(folder, s)
        if mask is not None:
            pred, ref = pred[mask], ref[mask]
    return pred, ref


def parity_figure(sets, q, outdir, name, title, source):
    """sets: label -> (pred, ref) arrays in eV units; one panel per set."""
    unit, axis_unit = UNITS[q]
    fig, axes = plotting.new(ncols=len(sets))
    notes = {}
    rng = np.random.default_rng(0)
    for ax, (s, (pred, ref)) in zip(axes[0], sets.items()):
        p, r = pred.ravel(), ref.ravel()
        if p.size > MAX_POINTS:
            keep = rng.choice(p.size, MAX_POINTS, replace=False)
            p, r = p[keep], r[keep]
        size = float(np.clip(3000.0 / p.size, 3.0, 25.0))  # few points: larger markers
        ax.scatter(r, p, s=size, alpha=0.6, color=SET_COLOURS.get(s, "tab:blue"), edgecolors="none", rasterized=True)
        lo, hi = float(min(r.min(), p.min())), float(max(r.max(), p.max()))
        pad = 0.03 * (hi - lo or 1.0)
        ax.plot([lo - pad, hi + pad], [lo - pad, hi + pad], color="k", lw=0.8)
        ax.set_xlim(lo - pad, hi + pad)
        ax.set_ylim(lo - pad, hi + pad)
        ax.set_aspect("equal")
        ax.xaxis.set_major_locator(MaxNLocator(4))
        ax.yaxis.set_major_locator(MaxNLocator(5))
        ax.set_xlabel(f"reference {q} ({axis_unit})")
        ax.set_ylabel(f"predicted {q} ({axis_unit})")
        ax.set_title(f"{q}, {s} ({len(ref)} {'atoms' if q == 'force' else 'frames'})")
        notes[s] = metrics.parity_text(s, pred, ref, 1000.0, unit)
        plotting.annotate(ax, notes[s])
    what = {"energy": "energy per atom", "force": "force components (x, y, z pooled)",
            "virial": "virial components per atom (xx yy zz xy yz zx pooled; frames with a virial label)"}[q]
    caption = f"Predicted against reference {what}, from {source}. RMSE, MAE and R² over all values."
    return plotting.save(fig, outdir, name, title, caption, notes)


def parity(folder, q, outdir):
    sets = {s: _parity_arrays(folder, s, q) for s in ("train", "test") if (s, q) in folder.parity}
    if not sets:
        return None
    return parity_figure(sets, q, outdir, f"parity_{q}.png", f"Parity: {q}", f"{q}_train.out / {q}_test.out")


def force_error_distribution(folder, outdir):
    sets = [s for s in ("train", "test") if (s, "force") in folder.parity]
    if not sets:
        return None
    fig, axes = plotting.new(width=4.2)
    ax = axes[0][0]
    notes = {}
    errs = {}
    for s in sets:
        pred, ref = _parity_arrays(folder, s, "force")
        errs[s] = 1000.0 * np.linalg.norm(pred - ref, axis=1)
    top = max(float(e.max()) for e in errs.values()) or 1.0
    bins = np.linspace(0.0, top, 60)
    for s, e in errs.items():
        ax.hist(e, bins=bins, histtype="step", color=SET_COLOURS[s], label=s, lw=1.3)
        notes[s] = f"{s}: mean |ΔF| {metrics.number(e.mean())} meV/Å, max {metrics.number(e.max())} meV/Å"
    ax.set_yscale("log")
    ax.set_xlabel("|F_pred − F_ref| per atom (meV/Å)")
    ax.set_ylabel("atoms")
    ax.set_title("force error distribution")
    ax.legend(loc="lower left")
    plotting.annotate(ax, "\n".join(notes.values()), loc="upper right")
    caption = "Histogram of the length of the force error vector of each atom (log count)."
    return plotting.save(fig, outdir, "force_error_distribution.png", "Force error distribution", caption, notes)


def force_rmse_per_element(folder, outdir):
    sets = [s for s in ("train", "test") if s in folder.species and (s, "force") in folder.parity]
    if not sets:
        return None
    elements = []
    for s in sets:
        for el in folder.species[s][0]:
            if el not in elements:
                elements.append(el)
    if folder.model is not None:  # the model's type order first
        elements = [e for e in folder.model.elements if e in elements] + [e for e in elements if e not in folder.model.elements]
    fig, axes = plotting.new(width=max(3.4, 0.9 * len(elements) + 1.5))
    ax = axes[0][0]
    notes = {}
    w = 0.8 / len(sets)
    x = np.arange(len(elements))
    for k, s in enumerate(sets):
        species, labelled = folder.species[s]
        par = folder.parity[(s, "force")]
        values, lines = [], []
        for el in elements:
            m = (species == el) & labelled
            v = 1000.0 * metrics.rmse(par.pred[m], par.ref[m]) if m.any() else float("nan")
            values.append(v)
            if m.any():
                lines.append(f"{el} {metrics.number(v)}")
        bars = ax.bar(x + (k - (len(sets) - 1) / 2) * w, values, w, color=SET_COLOURS[s], label=s)
        ax.bar_label(bars, labels=[metrics.number(v) if np.isfinite(v) else "" for v in values], fontsize=7)
        notes[s] = f"{s} (meV/Å): " + ", ".join(lines)
    ax.set_xticks(x)
    ax.set_xticklabels(elements)
    ax.set_ylabel("force RMSE (meV/Å)")
    ax.set_title("force RMSE per element")
    ax.legend(loc="upper right")
    ax.margins(y=0.15)
    caption = "Force RMSE over the atoms of each element (species from train.xyz / test.xyz)."
    return plotting.save(fig, outdir, "force_rmse_per_element.png", "Force RMSE per element", caption, notes)


def all_figures(folder, outdir, progress):
    out = []
    steps = [("loss curves", lambda: loss_curves(folder, outdir))]
    steps += [(f"{q} parity", (lambda q=q: parity(folder, q, outdir))) for q in ("energy", "force", "virial")]
    steps += [("force error distribution", lambda: force_error_distribution(folder, outdir)),
              ("force RMSE per element", lambda: force_rmse_per_element(folder, outdir))]
    for name, make in steps:
        progress(f"figure: {name}")
        fig = make()
        if fig is not None:
            out.append(fig)
    return out
