"""Figures of a `fix nep/train` run from its history file (history.py): buffer size, RMSE per
round, training and MD-waiting time per round; with active learning, teacher calls over time,
predicted deviation against true error, and the calibration on audited frames per round."""
import numpy as np
from matplotlib.ticker import MaxNLocator

from . import metrics, plotting
from .history import column
from .plotting import TEST, TRAIN


def _restarts(ax, h):
    for ev in h.starts[1:]:
        ax.axvline(float(ev["step"]), color="0.6", ls="--", lw=0.8)


def buffer_size(h, outdir, prefix):
    r = h.rounds
    if not r:
        return None
    step = column(r, "step")
    fig, axes = plotting.new(width=4.6)
    ax = axes[0][0]
    ax.plot(step, column(r, "frames"), "o-", color="k", ms=3, label="frames buffered")
    ax.plot(step, column(r, "n_train"), "s-", color=TRAIN, ms=3, label="training frames")
    ax.plot(step, column(r, "n_heldout"), "^-", color=TEST, ms=3, label="held-out frames")
    _restarts(ax, h)
    ax.xaxis.set_major_locator(MaxNLocator(5))
    ax.set_xlabel("MD step")
    ax.set_ylabel("frames")
    ax.legend(loc="upper left")
    last = r[-1]
    note = (f"after round {last['round']}: {last.get('frames', '?')} frames "
            f"({last.get('n_train', '?')} training, {last.get('n_heldout', '?')} held out)")
    plotting.title_with_note(ax, "buffer size at each round", note)
    caption = "Frames in the buffer when each round ended (dashed lines: restarts)."
    return plotting.save(fig, outdir, f"{prefix}buffer.png", "Buffer size", caption, {"buffer": note})


def rmse_per_round(h, outdir, prefix):
    r = h.rounds
    if not r:
        return None
    rounds = [e["round"] for e in r]
    series = [("force (meV/Å)", [("training", "train", "train_rmse_f_meV_per_A", TRAIN, "o"),
                                 ("held-out", "held-out", "heldout_rmse_f_meV_per_A", TEST, "s"),
                                 ("new frames before training", "new", "fresh_rmse_f_meV_per_A", "tab:orange", "^")]),
              ("energy (meV/atom)", [("training", "train", "train_rmse_e_meV_per_atom", TRAIN, "o"),
                                     ("held-out", "held-out", "heldout_rmse_e_meV_per_atom", TEST, "s")]),
              ("virial (meV/atom)", [("training", "train", "train_rmse_v_meV_per_atom", TRAIN, "o"),
                                     ("held-out", "held-out", "heldout_rmse_v_meV_per_atom", TEST, "s")])]
    panels = [(t, [x for x in lines if any(v > 0 for v in column(r, x[2], 0.0))]) for t, lines in series]
    panels = [(t, lines) for t, lines in panels if lines]
    if not panels:
        return None
    fig, axes = plotting.new(ncols=len(panels), width=3.3)
    notes = {}
    reverted = [bool(e.get("reverted")) for e in r]
    legend_panel = max(range(len(panels)), key=lambda k: len(panels[k][1]))  # one legend: the fullest panel
    for k, (ax, (title, lines)) in enumerate(zip(axes[0], panels)):
        text = []
        for label, short, key, colour, marker in lines:
            y = np.array(column(r, key, 0.0))
            ok = y > 0   # 0 = not measured (no held-out frames yet, no new frames)
            ax.plot(np.array(rounds)[ok], y[ok], marker + "-", color=colour, ms=3, label=label)
            measured = [(rk, v) for rk, v, m in zip(rounds, y, ok) if m]
            if measured:
                rk, v = measured[-1]
                text.append(f"{short} {metrics.number(v)}" + (f" (round {rk})" if rk != rounds[-1] else ""))
        bad = [k for k, rv in enumerate(reverted) if rv]
        if bad:
            ax.plot([rounds[k] for k in bad], [0] * len(bad), "x", color="k", transform=ax.get_xaxis_transform(),
                    clip_on=False, label="reverted")
        plotting.log_y(ax)
        ax.set_xlabel("round")
        ax.xaxis.set_major_locator(MaxNLocator(integer=True))
        if k == legend_panel:
            ax.legend(loc="upper left", bbox_to_anchor=(0.0, -0.3), ncol=2)
        notes[title] = f"round {rounds[-1]}: " + ", ".join(text)
        plotting.title_with_note(ax, f"RMSE, {title}", notes[title])
    caption = ("RMSE of the model after each round on its training frames and on the held-out frames "
               "(never trained on); crosses: rounds whose result was reverted.")
    return plotting.save(fig, outdir, f"{prefix}rmse.png", "RMSE per round", caption, notes)


def timing(h, outdir, prefix):
    r = h.rounds
    if not r:
        return None
    rounds = np.array([e["round"] for e in r], dtype=float)
    train = np.array(column(r, "train_seconds", 0.0))
    wait = np.array(column(r, "md_wait_seconds", 0.0))
    fig, axes = plotting.new(width=4.6)
    ax = axes[0][0]
    ax.bar(rounds - 0.2, train, 0.4, color=TRAIN, label="training (background thread)")
    ax.bar(rounds + 0.2, wait, 0.4, color=TEST, label="MD waiting for training")
    ax.set_xlabel("round")
    ax.set_ylabel("seconds")
    ax.legend(loc="best")
    note = (f"{len(r)} rounds: training {metrics.number(train.sum())} s, "
            f"MD waiting {metrics.number(wait.sum())} s")
    plotting.title_with_note(ax, "time per round", note)
    caption = "Wall time each round spent training, and time molecular dynamics stood still waiting for it."
    return plotting.save(fig, outdir, f"{prefix}timing.png", "Training and waiting time", caption, {"timing": note})


REASON_COLOURS = {"lower": "tab:blue", "upper": "tab:red", "audit": "tab:green"}


def teacher_calls(h, outdir, prefix):
    if not h.teacher:
        return None
    fig, axes = plotting.new(ncols=2, width=3.8)
    ax = axes[0][0]
    reasons = sorted({str(e.get("reason", "?")) for e in h.teacher})
    counts = {}
    for reason in reasons:
        steps = sorted(float(e["step"]) for e in h.teacher if str(e.get("reason", "?")) == reason)
        counts[reason] = len(steps)
        ax.step(steps, np.arange(1, len(steps) + 1), where="post", color=REASON_COLOURS.get(reason, "0.3"),
                label=reason)
    all_steps = sorted(float(e["step"]) for e in h.teacher)
    ax.step(all_steps, np.arange(1, len(all_steps) + 1), where="post", color="k", label="all")
    # the fix's own count of teacher force evaluations: every step the teacher drives counts, not
    # only the check steps that buffer a frame ("driving" calls)
    evals = sorted((float(e["step"]), float(e["teacher_evaluations"])) for e in h.teacher
                   if e.get("teacher_evaluations") is not None)
    if evals:
        ax.step([p[0] for p in evals], [p[1] for p in evals], where="post", color="tab:purple", ls="--",
                label="teacher evaluations")
    _restarts(ax, h)
    ax.set_xlabel("MD step")
    ax.set_ylabel("teacher calls (cumulative)")
    ax.set_title("teacher calls over time")
    ax.legend(loc="upper left")
    note = f"{len(h.teacher)} teacher calls: " + ", ".join(f"{k} {v}" for k, v in counts.items())
    if evals:
        note += f"; {int(evals[-1][1])} teacher evaluations"
    plotting.annotate(ax, note.replace(": ", ":\n", 1), loc="center left")
    ax2 = axes[0][1]
    pts = [(float(e["step"]), float(e["max_dev_eV_per_A"])) for e in h.checks + h.teacher
           if e.get("max_dev_eV_per_A") is not None]
    pts.sort()
    if pts:
        ax2.plot([p[0] for p in pts], [1000 * p[1] for p in pts], ".", color="0.4", ms=3, label="checks")
        tp = [(float(e["step"]), 1000 * float(e["max_dev_eV_per_A"])) for e in h.teacher
              if e.get("max_dev_eV_per_A") is not None]
        ax2.plot([p[0] for p in tp], [p[1] for p in tp], "o", mfc="none", color="tab:red", ms=5, label="teacher called")
        if all(p[1] > 0 for p in pts):
            ax2.set_yscale("log")
        ax2.legend(loc="best")
    ax2.set_xlabel("MD step")
    ax2.set_ylabel("predicted max force deviation (meV/Å)")
    ax2.set_title("deviation checks")
    caption = ("Teacher calls (frames buffered with the teacher's labels) by reason over the run, the fix's count of "
               "teacher force evaluations (every teacher-driven step counts), and the committee's predicted maximum "
               "force deviation at each check.")
    return plotting.save(fig, outdir, f"{prefix}teacher_calls.png", "Teacher calls", caption, {"teacher": note})


def _prediction_axes(ax, pred, err, xlabel, title):
    """a predicted against true error panel: the diagonal, log axes when all values are positive"""
    lo, hi = float(min(pred.min(), err.min())), float(max(pred.max(), err.max()))
    ax.plot([lo, hi], [lo, hi], color="k", lw=0.8)
    if lo > 0:
        ax.set_xscale("log")
        ax.set_yscale("log")
    ax.set_xlabel(xlabel)
    ax.set_ylabel("true max force error (meV/Å)")
    ax.set_title(title)


def deviation_vs_error(h, outdir, prefix):
    ev = [e for e in h.teacher if e.get("max_dev_eV_per_A") is not None and e.get("true_max_err_eV_per_A") is not None]
    if not ev:
        return None
    dev = 1000 * np.array(column(ev, "max_dev_eV_per_A"))
    err = 1000 * np.array(column(ev, "true_max_err_eV_per_A"))
    fig, axes = plotting.new(width=4.0, height=3.6)
    ax = axes[0][0]
    for reason in sorted({str(e.get("reason", "?")) for e in ev}):
        m = np.array([str(e.get("reason", "?")) == reason for e in ev])
        ax.scatter(dev[m], err[m], s=12, color=REASON_COLOURS.get(reason, "0.3"), label=reason)
    _prediction_axes(ax, dev, err, "predicted max force deviation (meV/Å)", "predicted deviation vs true error")
    ax.legend(loc="lower right")
    r = float(np.corrcoef(dev, err)[0, 1]) if len(ev) > 1 and dev.std() > 0 and err.std() > 0 else float("nan")
    note = f"{len(ev)} teacher calls, Pearson r = {r:.3f}"
    plotting.annotate(ax, note)
    caption = ("At each teacher call: the deviation the student's committee predicted against the true maximum "
               "force error measured with the teacher's forces.")
    return plotting.save(fig, outdir, f"{prefix}deviation_vs_error.png", "Predicted deviation vs true error",
                         caption, {"deviation": note})


def wilson(k, n, z=1.96):
    """95 % Wilson score interval of k successes in n trials ([0, 1] for n = 0)"""
    if n == 0:
        return 0.0, 1.0
    p = k / n
    c = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * np.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, c - half), min(1.0, c + half)


def calibration(h, outdir, prefix):
    """Audited frames (the unbiased sample the fix calibrates on): the calibrated prediction, factor x
    deviation with the factor in force at that call, against the true error, coloured by round in use."""
    factor, rows = 1.0, []
    for e in h.teacher:    # the factor before each call: the one the previous call left
        if e.get("audited") and e.get("max_dev_eV_per_A") and e.get("true_max_err_eV_per_A") is not None:
            rows.append((float(e["step"]), factor * float(e["max_dev_eV_per_A"]), float(e["true_max_err_eV_per_A"])))
        if e.get("calibration_factor") is not None:
            factor = float(e["calibration_factor"])
    if not rows:
        return None
    adopted = sorted(float(r["step"]) for r in h.rounds)
    rnd = np.array([sum(s <= step for s in adopted) for step, _, _ in rows])
    pred = 1000 * np.array([r[1] for r in rows])
    err = 1000 * np.array([r[2] for r in rows])
    fig, axes = plotting.new(width=4.2, height=3.6)
    ax = axes[0][0]
    sc = ax.scatter(pred, err, s=14, c=rnd, cmap="viridis")
    fig.colorbar(sc, ax=ax, label="round in use")
    _prediction_axes(ax, pred, err, "calibrated prediction (meV/Å)", "audited frames")
    under = int(np.sum(err > pred))
    a, b = wilson(under, len(rows))
    note = (f"{len(rows)} audited frames; true error above the prediction in {under} "
            f"(95 % interval {a:.2f}-{b:.2f}); factor now {factor:.3g}")
    plotting.annotate(ax, note)
    caption = ("Each audited teacher call (drawn by the seeded audit stream whatever the deviation, the sample the "
               "calibration factor is fitted on): the committee's deviation times the factor in force at that call "
               "against the true maximum force error, coloured by the number of rounds adopted. A calibrated "
               "median predicts above and below the truth equally often.")
    return plotting.save(fig, outdir, f"{prefix}calibration.png", "Calibration on audited frames", caption,
                         {"calibration": note})


def all_figures(h, outdir, prefix, progress):
    out = []
    for name, make in (("buffer size", buffer_size), ("RMSE per round", rmse_per_round), ("timing", timing),
                       ("teacher calls", teacher_calls), ("deviation vs error", deviation_vs_error),
                       ("calibration", calibration)):
        progress(f"figure: {name}")
        fig = make(h, outdir, prefix)
        if fig is not None:
            out.append(fig)
    return out
