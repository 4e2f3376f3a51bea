"""nep-report DIR [-o OUTDIR] [--title TEXT] [--quiet]

Reads a training folder (nep-train or GPUMD `nep` outputs, a fix nep/train history, the otf-si
example's MD files) and writes OUTDIR/report.html (self-contained), OUTDIR/*.png and
OUTDIR/report.json. docs/nep_report.md describes every panel."""
import argparse
import datetime
import glob
import json
import os
import sys
import time

from .errors import ReportError


class Progress:
    """'nep-report: [  1.2 s] what' lines on stderr."""

    def __init__(self, quiet):
        self.quiet, self.t0 = quiet, time.monotonic()

    def __call__(self, what):
        if not self.quiet:
            print(f"nep-report: [{time.monotonic() - self.t0:6.1f} s] {what}", file=sys.stderr, flush=True)


def training_section(folder, outdir, progress):
    from . import figures_training, nep_in, nep_txt, page, training_folder
    f = training_folder.load(folder, progress)
    if not f.has_content():
        return None
    s = page.Section("Training", "training")
    s.notes.append(f"Outputs of {f.program} in {os.path.abspath(folder)}.")
    if f.loss is not None and f.loss.kind == "potential":
        last = f.loss
        rows = [("last " + ("epoch" if f.program == "nep-train" else "generation"), f"{last.step[-1]:.0f}")]
        for st in ("train", "test"):
            vals = [1000 * last.rmse[(st, q)][-1] for q in ("energy", "force", "virial")]
            if any(v > 0 for v in vals):
                rows.append((f"{st} RMSE E / F / V", f"{vals[0]:.4g} meV/atom / {vals[1]:.4g} meV/Å / {vals[2]:.4g} meV/atom"))
        s.tables.append(("loss.out, last line", rows))
    if f.settings is not None:
        s.tables.append(("nep.in", [(k, v) for k, v, _ in f.settings]))
    if f.model is not None:
        s.tables.append(("model (nep.txt)", nep_txt.table_rows(f.model, "nep.txt")))
    s.figures = figures_training.all_figures(f, outdir, progress)
    s.notes += f.notes
    if f.settings is None:
        s.notes.append("no nep.in in the folder: settings table left out")
    return s


def _resolve(folder, name):
    for p in (name, os.path.join(folder, name), os.path.join(folder, os.path.basename(name))):
        if p and os.path.isfile(p):
            return p
    return None


def history_sections(folder, outdir, progress):
    from . import figures_otf, history, nep_in, nep_txt, page
    kept = []
    for p in sorted(glob.glob(os.path.join(folder, "*history.jsonl"))):
        progress(f"reading {os.path.basename(p)}")
        h = history.read_history(p)
        if h.rounds or h.teacher or h.checks:
            kept.append(h)
        else:
            progress(f"{os.path.basename(p)}: no training round and no teacher call recorded; left out")
    out = []
    for k, h in enumerate(kept):
        name = os.path.basename(h.path)
        s = page.Section(f"fix nep/train: {name}", f"fix{k}")
        start = h.starts[0] if h.starts else {}
        rows = [(key, start[key] if not isinstance(start[key], list) else " ".join(map(str, start[key])))
                for key in ("natoms", "elements", "buffer", "model", "input", "seed", "every", "train_every")
                if key in start]
        rows.append(("starts (1 + restarts)", len(h.starts)))
        rows.append(("rounds", len(h.rounds)))
        if h.rounds:
            rows.append(("frames after the last round", h.rounds[-1].get("frames", "?")))
            rows.append(("reverted rounds", sum(1 for r in h.rounds if r.get("reverted"))))
        if h.teacher:
            rows.append(("teacher calls", len(h.teacher)))
        s.tables.append(("run", rows))
        prefix = "fix_" if len(kept) == 1 else f"fix{k}_"
        s.figures = figures_otf.all_figures(h, outdir, prefix, progress)
        nin = _resolve(folder, start["input"]) if start.get("input") else None
        if nin:
            s.tables.append(("nep.in", [(a, b) for a, b, _ in nep_in.read_nep_in(nin)]))
        model = _resolve(folder, start["model"]) if start.get("model") else None
        if model:
            s.tables.append(("model", nep_txt.table_rows(nep_txt.read_nep_txt(model), os.path.basename(model))))
        out.append(s)
    return out


def extras_section(folder, outdir, progress):
    from . import figures_extras, page
    s = page.Section("Molecular dynamics and held-out frames", "md")
    s.figures = figures_extras.all_figures(folder, outdir, progress)
    from . import figures_spectra
    progress("figure: dipole spectrum")
    s.figures += figures_spectra.ir(folder, outdir)
    summary = os.path.join(folder, "summary.json")
    if os.path.isfile(summary):
        try:
            with open(summary) as f:
                data = json.load(f)
        except json.JSONDecodeError as e:
            raise ReportError(summary, f"not JSON ({e.msg})", e.lineno) from None
        from .metrics import number
        s.tables.append(("summary.json", [(k, number(v) if isinstance(v, float) else v) for k, v in data.items()
                                          if not isinstance(v, (dict, list))]))
    return s if s.figures or s.tables else None


def main(argv=None):
    ap = argparse.ArgumentParser(prog="nep-report", description=__doc__.split("\n\n")[1])
    ap.add_argument("dir", help="the training folder")
    ap.add_argument("-o", "--out", help="output folder (default DIR/report)")
    ap.add_argument("--title", help="page title (default: 'NEP training report: DIR')")
    ap.add_argument("-q", "--quiet", action="store_true", help="no progress lines on stderr")
    a = ap.parse_args(argv)
    progress = Progress(a.quiet)
    folder = a.dir
    outdir = a.out or os.path.join(folder, "report")
    try:
        if not os.path.isdir(folder):
            raise ReportError(folder, "not a folder")
        os.makedirs(outdir, exist_ok=True)
        for old in glob.glob(os.path.join(outdir, "*.png")):
            os.remove(old)   # figures of an earlier report that this one may not have
        sections = []
        for make in (training_section, history_sections, extras_section):
            got = make(folder, outdir, progress)
            sections += got if isinstance(got, list) else ([got] if got else [])
        if not sections:
            raise ReportError(folder, "nothing to report: expected loss.out or *_train.out (nep-train, GPUMD nep), "
                                      "*history.jsonl (fix nep/train), rdf_*.txt, dipole.out or a LAMMPS log with PHASE markers")
        from . import page
        title = a.title or f"NEP training report: {os.path.basename(os.path.abspath(folder))}"
        sub = f"{os.path.abspath(folder)} · written {datetime.datetime.now():%Y-%m-%d %H:%M} by nep-report"
        path = page.write(outdir, title, sub, sections)
        n = sum(len(s.figures) for s in sections)
        progress(f"wrote {path} ({n} figures)")
    except ReportError as e:
        print(f"nep-report: error: {e}", file=sys.stderr)
        return 1
    except OSError as e:
        print(f"nep-report: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
