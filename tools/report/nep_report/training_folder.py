"""Everything a nep-train or GPUMD `nep` output folder holds, read once (see gpumd_files.py for the
layouts). Missing files are not errors: the report shows what exists and says what did not."""
import os

from . import gpumd_files, nep_in, nep_txt, xyz
from .frame_order import atom_species, match_order

SETS = ("train", "test")
QUANTITIES = ("energy", "force", "virial")


class TrainingFolder:
    def __init__(self, path):
        self.path = path
        self.program = "unknown"
        self.loss = None
        self.lr = None                 # (epochs, learning rates) or None
        self.parity = {}               # (set, quantity) -> gpumd_files.Parity
        self.species = {}              # set -> (species per force row, row has force labels)
        self.settings = None           # nep.in
        self.model = None              # nep_txt.ModelSummary
        self.notes = []                # what could not be shown, and why

    def file(self, name):
        p = os.path.join(self.path, name)
        return p if os.path.isfile(p) else None

    def has_content(self):
        return self.loss is not None or bool(self.parity)


def _program(folder):
    if folder.file("checkpoint.bin") or folder.file("lr.out"):
        return "nep-train"
    if folder.file("nep.restart"):
        return "GPUMD nep"
    return "nep-train or GPUMD nep"


def load(path, progress):
    f = TrainingFolder(path)
    f.program = _program(f)
    if f.file("loss.out"):
        progress("reading loss.out")
        f.loss = gpumd_files.read_loss(f.file("loss.out"))
    if f.file("lr.out"):
        f.lr = gpumd_files.read_lr(f.file("lr.out"))
    if f.file("nep.in"):
        f.settings = nep_in.read_nep_in(f.file("nep.in"))
    if f.file("nep.txt"):
        f.model = nep_txt.read_nep_txt(f.file("nep.txt"))
    readers = {"energy": gpumd_files.read_energy, "force": gpumd_files.read_force,
               "virial": lambda p: gpumd_files.read_virial(p)[0]}
    for s in SETS:
        for q in QUANTITIES:
            p = f.file(f"{q}_{s}.out")
            if p:
                progress(f"reading {q}_{s}.out")
                par = readers[q](p)
                if len(par):
                    f.parity[(s, q)] = par
        _load_species(f, s, progress)
    return f


def _load_species(f, s, progress):
    """Species of each force row from train.xyz/test.xyz, when the rows can be matched to it."""
    if (s, "force") not in f.parity or (s, "energy") not in f.parity:
        return
    p = f.file(f"{s}.xyz")
    if not p:
        f.notes.append(f"force RMSE per element ({s}): needs {s}.xyz in the folder")
        return
    progress(f"reading {s}.xyz")
    frames = xyz.read_xyz(p)
    batch = None
    if s == "train" and f.settings is not None:
        b = nep_in.keyword(f.settings, "batch")
        prediction = nep_in.keyword(f.settings, "prediction", "0")
        if b is not None and prediction.split()[0] == "0":
            batch = int(b.split()[0])
        elif b is None and f.program != "nep-train":
            batch = 1000  # GPUMD's default batch size
    order = match_order(frames, f.parity[(s, "energy")], f.parity[(s, "force")], batch)
    if order is None:
        f.notes.append(f"force RMSE per element ({s}): the rows of force_{s}.out do not match {s}.xyz "
                       "in file order nor in GPUMD's batch order")
        return
    f.species[s] = atom_species(frames, order)
