"""Spectra from the dipole a NEP dipole model gives during MD (compute nep/dipole), shown when the
folder has them:
  dipole.out     '# time_ps mu_x mu_y mu_z' then one row per sample (fix print of c_ID[1..3]):
                 the time series, and the IR spectrum from its autocorrelation
  dipole.acf     LAMMPS `fix ave/correlate ... c_ID[1] c_ID[2] c_ID[3] type auto` output (optional):
                 its last block against the autocorrelation computed here from dipole.out

IR line shape (classical, linear response): I(nu) ~ nu^2 * FT[<mu(0).mu(t)>](nu), the
autocorrelation of the fluctuation mu - <mu>, Hann-windowed over the first half of the series."""
import os

import numpy as np

from . import md_files, metrics, plotting
from .errors import ReportError, parse_floats

THZ_TO_INV_CM = 33.35641


def read_dipole(path):
    """(t in ps, mu as an (n, 3) array)."""
    rows = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            t = line.split()
            if not t or t[0].startswith("#"):
                continue
            v = parse_floats(path, lineno, t)
            if len(v) != 4:
                raise ReportError(path, "expected 'time_ps mu_x mu_y mu_z'", lineno)
            rows.append(v)
    if len(rows) < 16:
        raise ReportError(path, f"{len(rows)} samples: too few for a spectrum (16 at least)")
    a = np.array(rows)
    dt = np.diff(a[:, 0])
    if np.any(dt <= 0) or np.ptp(dt) > 1e-6 * np.mean(dt):
        raise ReportError(path, "samples must be equally spaced in time")
    return a[:, 0], a[:, 1:]


def autocorrelation(mu, nlag):
    """<dmu(0).dmu(t)> for t < nlag samples (time origins averaged), dmu = mu - <mu>."""
    d = mu - mu.mean(axis=0)
    n = len(d)
    return np.array([np.sum(d[:n - k] * d[k:]) / (n - k) for k in range(nlag)])


def ir_spectrum(t, mu):
    """(nu in THz, normalised intensity, the autocorrelation and its lags in ps)."""
    dt = t[1] - t[0]
    nlag = len(t) // 2
    c = autocorrelation(mu, nlag)
    w = np.hanning(2 * nlag)[nlag:]                    # decays to zero at the longest lag
    sym = np.concatenate([c * w, (c * w)[:0:-1]])      # even in time: a real transform
    spec = np.real(np.fft.rfft(sym)) * dt
    nu = np.fft.rfftfreq(len(sym), dt)                  # 1/ps = THz
    inten = np.clip(nu ** 2 * spec, 0.0, None)
    if inten.max() > 0:
        inten = inten / inten.max()
    return nu, inten, c, np.arange(nlag) * dt


def read_acf(path):
    """The last block of fix ave/correlate type auto with three values: lag (steps) and the three
    auto-correlations summed."""
    last = md_files.read_blocks(path, 6, "index dt count c1 c2 c3 (three auto-correlations)")[-1]
    return np.array([(v[1], v[3] + v[4] + v[5]) for v in last])


def ir(folder, outdir):
    path = os.path.join(folder, "dipole.out")
    if not os.path.isfile(path):
        return []
    t, mu = read_dipole(path)
    nu, inten, c, lag = ir_spectrum(t, mu)
    out = []
    fig, axes = plotting.new(ncols=2, width=4.4)
    ax = axes[0][0]
    for k, name in enumerate("xyz"):
        ax.plot(t, mu[:, k] - mu[:, k].mean(), lw=0.6, label=f"μ_{name} − ⟨μ_{name}⟩")
    ax.set_xlabel("time (ps)")
    ax.set_ylabel("dipole fluctuation (model units)")
    ax.set_title(f"dipole ({len(t)} samples, Δt {metrics.number(1000 * (t[1] - t[0]))} fs)")
    ax.legend(loc="upper right")
    ax = axes[0][1]
    top = nu[np.argmax(inten)]
    # up to a third beyond the highest frequency with 5 % of the strongest line
    keep = nu <= max(1.3 * nu[inten > 0.05].max(), nu[min(len(nu) - 1, 8)])
    ax.plot(nu[keep], inten[keep], color="tab:red")
    ax.set_xlabel("frequency (THz)")
    ax.set_ylabel("IR intensity (normalised)")
    sec = ax.secondary_xaxis("top", functions=(lambda x: x * THZ_TO_INV_CM, lambda x: x / THZ_TO_INV_CM))
    sec.set_xlabel("wavenumber (cm⁻¹)")
    notes = {"ir": f"strongest peak {metrics.number(top)} THz ({metrics.number(top * THZ_TO_INV_CM)} cm⁻¹); "
                   f"resolution {metrics.number(nu[1])} THz"}
    plotting.annotate(ax, notes["ir"], loc="upper right")
    caption = ("dipole.out (compute nep/dipole through fix print); spectrum ν² FT⟨δμ(0)·δμ(t)⟩, the "
               "autocorrelation over half the series, Hann window; classical line shape, no quantum correction.")
    out.append(plotting.save(fig, outdir, "ir_spectrum.png", "IR spectrum from the NEP dipole", caption, notes))
    acf_path = os.path.join(folder, "dipole.acf")
    if os.path.isfile(acf_path):
        a = read_acf(acf_path)
        fig, axes = plotting.new(width=4.6)
        ax = axes[0][0]
        ax.plot(lag, c, color="k", lw=1.5, label="from dipole.out (fluctuations)")
        # fix ave/correlate correlates mu itself: its value minus <mu>^2 is the fluctuation's
        mean2 = float(np.sum(mu.mean(axis=0) ** 2))
        # its lags are in steps, one sample interval apart (row 1: one interval)
        lag_ps = a[:, 0] / a[1, 0] * (t[1] - t[0]) if len(a) > 1 and a[1, 0] > 0 else a[:, 0]
        ax.plot(lag_ps, a[:, 1] - mean2, lw=0.8, color="tab:blue", alpha=0.8, label="fix ave/correlate − ⟨μ⟩²")
        ax.set_xlabel("lag (ps)")
        ax.set_ylabel("⟨δμ(0)·δμ(t)⟩")
        ax.set_title("dipole autocorrelation")
        ax.legend(loc="upper right")
        caption = ("dipole.acf: LAMMPS fix ave/correlate (type auto, running average) of the three components, "
                   "summed; its lags (in steps) are taken as sample intervals of dipole.out.")
        out.append(plotting.save(fig, outdir, "dipole_acf.png", "Dipole autocorrelation", caption, {}))
    return out
