"""Which train.xyz frame each row of energy_train.out / force_train.out belongs to.

nep-train writes frames in file order. GPUMD's `nep` (src/main_nep/structure.cu, when batch <
number of training frames) first sorts the training frames by reference energy per atom (single
precision, stable) and deals them round-robin into ceil(Nc / batch) batches, the larger batches
first; *_train.out then lists the batches in order. Both orders are tried and the one whose
reference columns equal the XYZ labels is used; None when neither does.
"""
import numpy as np

RTOL, ATOL = 2e-5, 1e-6  # GPUMD prints references with %g (6 significant digits) from floats


def gpumd_batch_order(frames, batch):
    nc = len(frames)
    if batch is None or batch >= nc or any(f.energy is None for f in frames):
        return list(range(nc))
    n_batches = (nc - 1) // batch + 1
    e = [np.float32(f.energy) / np.float32(len(f.species)) for f in frames]
    by_energy = sorted(range(nc), key=lambda k: e[k])  # Python's sort is stable
    order, smallest = [], nc // n_batches
    for b in range(n_batches):
        size = smallest + (1 if b + smallest * n_batches < nc else 0)
        order.extend(by_energy[b + n_batches * c] for c in range(size))
    return order


def _labels_match(frames, order, energy, force):
    if len(order) != len(energy) or sum(len(frames[k].species) for k in order) != len(force):
        return False
    ref_e = energy.ref[:, 0]
    row = 0
    for pos, k in enumerate(order):
        f = frames[k]
        n = len(f.species)
        if f.energy is not None and not np.isclose(ref_e[pos], f.energy / n, rtol=RTOL, atol=ATOL):
            return False
        if f.forces is not None and not np.allclose(force.ref[row:row + n], f.forces, rtol=RTOL, atol=ATOL):
            return False
        row += n
    return True


def match_order(frames, energy, force, batch=None):
    """The frame order of the rows (a list of frame indices), or None."""
    candidates = [list(range(len(frames)))]
    reordered = gpumd_batch_order(frames, batch)
    if reordered != candidates[0]:
        candidates.append(reordered)
    for order in candidates:
        if _labels_match(frames, order, energy, force):
            return order
    return None


def atom_species(frames, order):
    """Species of each force row, and whether its frame has force labels."""
    species, labelled = [], []
    for k in order:
        species.extend(frames[k].species)
        labelled.extend([frames[k].forces is not None] * len(frames[k].species))
    return np.array(species), np.array(labelled, dtype=bool)
