"""matplotlib set-up shared by every figure, and the record of a written figure."""
import os

import matplotlib

matplotlib.use("Agg")  # files only, no display
import matplotlib.pyplot as plt  # noqa: E402

DPI = 150
TRAIN, TEST = "#1f77b4", "#d62728"   # the two sets everywhere
SET_COLOURS = {"train": TRAIN, "test": TEST}

plt.rcParams.update({
    "font.size": 9, "axes.titlesize": 10, "axes.grid": True, "grid.alpha": 0.3,
    "legend.fontsize": 8, "legend.frameon": False, "savefig.bbox": "tight",
})


class Figure:
    """A written PNG: file name, title, caption, and the text printed in its panels
    (panel name -> text), which report.json lists so that tests can check the numbers."""

    def __init__(self, file, title, caption, annotations):
        self.file, self.title, self.caption, self.annotations = file, title, caption, annotations


def new(ncols=1, nrows=1, width=3.4, height=3.0):
    fig, axes = plt.subplots(nrows, ncols, figsize=(width * ncols, height * nrows), squeeze=False)
    return fig, axes


def annotate(ax, text, loc="upper left"):
    """Text in a panel corner, on a white box so points do not hide it."""
    x, ha = (0.03, "left") if "left" in loc else (0.97, "right")
    y, va = {"upper": (0.97, "top"), "lower": (0.03, "bottom"), "center": (0.5, "center")}[loc.split()[0]]
    ax.text(x, y, text, transform=ax.transAxes, ha=ha, va=va, fontsize=7.5,
            bbox=dict(boxstyle="round,pad=0.3", fc="white", ec="0.8", alpha=0.9))


def log_y(ax):
    """Logarithmic y axis with plain tick labels (0.5, 2, 300 rather than 5x10^-1)."""
    from matplotlib.ticker import FuncFormatter
    ax.set_yscale("log")
    plain = FuncFormatter(lambda v, _: f"{v:g}")
    ax.yaxis.set_major_formatter(plain)
    # minor ticks: label only 2x and 5x a power of ten (first digit of the scientific form)
    ax.yaxis.set_minor_formatter(FuncFormatter(lambda v, _: f"{v:g}" if f"{v:e}"[0] in "25" else ""))


def title_with_note(ax, title, note):
    """A panel title with a second, smaller line of numbers."""
    ax.set_title(f"{title}\n", fontsize=10)
    ax.text(0.5, 1.02, note, transform=ax.transAxes, ha="center", va="bottom", fontsize=7.5, color="0.25")


def save(fig, outdir, name, title, caption, annotations):
    fig.tight_layout()
    fig.savefig(os.path.join(outdir, name), dpi=DPI)
    plt.close(fig)
    return Figure(name, title, caption, annotations)
