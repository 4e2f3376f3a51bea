"""Readers of the training outputs that GPUMD's `nep` and this project's `nep-train` write.

Layouts covered (GPUMD's documentation, doc/nep/output_files/, and src/main_nep/fitness.cu):
  loss.out           10 columns for a potential: generation/epoch, total loss, L1 term, L2 term,
                     RMSE of energy (eV/atom), force (eV/A), virial (eV/atom) on the training set,
                     the same three on the test set; 6 columns for a dipole or polarizability model:
                     generation, total, L1, L2, RMSE train, RMSE test.
  energy_*.out       2 columns per frame: predicted, reference energy (eV/atom).
  force_*.out        6 columns per atom: predicted fx fy fz, reference fx fy fz (eV/A).
  virial_*.out       12 columns per frame (predicted xx yy zz xy yz zx, reference; eV/atom), or the
                     older 2 columns with 6 Nc rows, component-major (Nc rows of xx, then yy, ...).
                     GPUMD writes a row for every frame and -1e6 as the reference of a frame with no
                     virial label; nep-train writes rows only for labelled frames. Both are read.
  lr.out             (nep-train only) 2 columns: epoch, learning rate after that epoch.
"""
import numpy as np

from .errors import ReportError
from .table_file import read_rows

NO_VIRIAL = -1e6  # GPUMD's reference value for a frame without a virial label

LOSS_POTENTIAL_COLUMNS = 10
LOSS_TENSOR_COLUMNS = 6


class Loss:
    """loss.out: step (generation or epoch), total, l1, l2 and rmse[(set, quantity)] arrays."""

    def __init__(self, step, total, l1, l2, rmse, kind):
        self.step, self.total, self.l1, self.l2, self.rmse, self.kind = step, total, l1, l2, rmse, kind


def read_loss(path):
    rows, width = read_rows(path, {LOSS_POTENTIAL_COLUMNS, LOSS_TENSOR_COLUMNS})
    if width is None:
        raise ReportError(path, "no lines")
    if width == LOSS_POTENTIAL_COLUMNS:
        names = [("train", "energy"), ("train", "force"), ("train", "virial"),
                 ("test", "energy"), ("test", "force"), ("test", "virial")]
        kind = "potential"
    else:
        names = [("train", "tensor"), ("test", "tensor")]
        kind = "tensor"
    rmse = {n: rows[:, 4 + k] for k, n in enumerate(names)}
    return Loss(rows[:, 0], rows[:, 1], rows[:, 2], rows[:, 3], rmse, kind)


class Parity:
    """Predicted and reference values of one quantity on one set. pred/ref: 2-D (items x components);
    items are frames (energy, virial) or atoms (force)."""

    def __init__(self, pred, ref):
        self.pred, self.ref = pred, ref

    def __len__(self):
        return len(self.ref)


def read_energy(path):
    rows, _ = read_rows(path, {2})
    return Parity(rows[:, :1], rows[:, 1:])


def read_force(path):
    rows, _ = read_rows(path, {6})
    return Parity(rows[:, :3], rows[:, 3:])


def read_virial(path):
    """Frames with a virial label only (GPUMD's -1e6 rows dropped); also the frame index of each row
    kept, counted over the file's frames."""
    rows, width = read_rows(path, {12, 2})
    if width is None:
        return Parity(np.zeros((0, 6)), np.zeros((0, 6))), np.zeros(0, dtype=int)
    if width == 2:
        if len(rows) % 6:
            raise ReportError(path, f"{len(rows)} rows in the 2-column layout; expected 6 per frame")
        nc = len(rows) // 6
        pred = rows[:, 0].reshape(6, nc).T  # component-major -> frames x 6
        ref = rows[:, 1].reshape(6, nc).T
    else:
        pred, ref = rows[:, :6], rows[:, 6:]
    labelled = ~np.all(ref == NO_VIRIAL, axis=1)
    return Parity(pred[labelled], ref[labelled]), np.nonzero(labelled)[0]


def read_lr(path):
    """lr.out -> (epochs, learning rates)."""
    rows, width = read_rows(path, {2})
    if width is None:
        return np.zeros(0), np.zeros(0)
    return rows[:, 0], rows[:, 1]
