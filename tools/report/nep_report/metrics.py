"""Error metrics printed in the panels, and the one format they are printed in.

All metrics pool every component (forces: 3 per atom; virials: 6 per frame):
  RMSE = sqrt(mean((pred - ref)^2)), MAE = mean(|pred - ref|),
  R^2  = 1 - sum((pred - ref)^2) / sum((ref - mean(ref))^2).
"""
import numpy as np


def rmse(pred, ref):
    d = np.asarray(pred, dtype=float).ravel() - np.asarray(ref, dtype=float).ravel()
    return float(np.sqrt(np.mean(d * d))) if d.size else float("nan")


def mae(pred, ref):
    d = np.asarray(pred, dtype=float).ravel() - np.asarray(ref, dtype=float).ravel()
    return float(np.mean(np.abs(d))) if d.size else float("nan")


def r2(pred, ref):
    p, r = np.asarray(pred, dtype=float).ravel(), np.asarray(ref, dtype=float).ravel()
    ss_tot = float(np.sum((r - r.mean()) ** 2)) if r.size else 0.0
    if ss_tot == 0.0:
        return float("nan")
    return 1.0 - float(np.sum((p - r) ** 2)) / ss_tot


def number(x):
    """A value as printed in a panel: 4 significant digits."""
    return f"{x:.4g}"


def parity_text(label, pred, ref, scale, unit):
    """Two lines for a parity panel; scale converts eV-based values to the printed unit (1000: meV)."""
    return (f"{label}: RMSE {number(scale * rmse(pred, ref))} {unit}\n"
            f"MAE {number(scale * mae(pred, ref))} {unit}, R² {r2(pred, ref):.5f}")
