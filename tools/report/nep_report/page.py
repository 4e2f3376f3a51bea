"""The report page: one self-contained HTML file (inline CSS, figures embedded as base64 PNG data
URIs, no script, nothing fetched) and report.json, the machine-readable list of what it shows."""
import base64
import html
import json
import os
import struct

from .plotting import DPI

CSS_PX_PER_INCH = 96  # figures are shown at their physical size: matplotlib inches x 96 CSS px


class Section:
    def __init__(self, title, anchor):
        self.title, self.anchor = title, anchor
        self.notes = []      # short paragraphs (plain text)
        self.tables = []     # (title, [(label, value)])
        self.figures = []    # plotting.Figure


CSS = """
body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; margin: 0; color: #222; background: #f6f7f9; }
header { background: #24323f; color: #fff; padding: 18px 32px; }
header h1 { margin: 0 0 4px 0; font-size: 22px; }
header p { margin: 0; color: #c8d3dd; font-size: 13px; }
nav { padding: 8px 32px; background: #e8ecf0; font-size: 13px; }
nav a { margin-right: 16px; color: #24323f; }
main { padding: 8px 32px 40px 32px; max-width: 1400px; }
section { margin-top: 18px; }
h2 { border-bottom: 2px solid #24323f; padding-bottom: 4px; font-size: 18px; }
.note { color: #555; font-size: 13px; margin: 4px 0; }
.figures { display: flex; flex-wrap: wrap; gap: 16px; }
figure { background: #fff; border: 1px solid #dde2e7; border-radius: 6px; padding: 10px; margin: 0; max-width: 100%; }
figure img { max-width: 100%; height: auto; display: block; }
figcaption { font-size: 12px; color: #444; margin-top: 6px; }
figcaption b { color: #222; }
pre.numbers { font-size: 11px; background: #f3f5f7; padding: 6px; margin: 6px 0 0 0; white-space: pre-wrap; }
table { border-collapse: collapse; background: #fff; font-size: 13px; margin: 6px 16px 12px 0; display: inline-table; vertical-align: top; }
caption { text-align: left; font-weight: bold; padding: 4px 0; }
td, th { border: 1px solid #dde2e7; padding: 3px 10px; text-align: left; }
td:first-child { color: #555; }
"""


def _img(outdir, fig):
    with open(os.path.join(outdir, fig.file), "rb") as f:
        raw = f.read()
    width = struct.unpack(">I", raw[16:20])[0]  # IHDR width
    data = base64.b64encode(raw).decode()
    shown = round(width * CSS_PX_PER_INCH / DPI)
    return shown, f'<img src="data:image/png;base64,{data}" width="{shown}" alt="{html.escape(fig.title)}">'


def _numbers(fig):
    """The panels' text, each block led by its panel name unless the text already starts with it."""
    out = []
    for panel, text in fig.annotations.items():
        out.append(text if text.startswith(panel) else f"{panel} — {text}")
    return "\n".join(out)


def write(outdir, title, subtitle, sections):
    e = html.escape
    parts = ["<!DOCTYPE html>", '<html lang="en"><head><meta charset="utf-8">',
             '<meta name="viewport" content="width=device-width, initial-scale=1">',
             f"<title>{e(title)}</title><style>{CSS}</style></head><body>",
             f"<header><h1>{e(title)}</h1><p>{e(subtitle)}</p></header>", "<nav>"]
    parts += [f'<a href="#{s.anchor}">{e(s.title)}</a>' for s in sections]
    parts.append("</nav><main>")
    for s in sections:
        parts.append(f'<section id="{s.anchor}"><h2>{e(s.title)}</h2>')
        parts += [f'<p class="note">{e(n)}</p>' for n in s.notes]
        for t_title, rows in s.tables:
            parts.append(f"<table><caption>{e(t_title)}</caption>")
            parts += [f"<tr><td>{e(str(k))}</td><td>{e(str(v))}</td></tr>" for k, v in rows]
            parts.append("</table>")
        parts.append('<div class="figures">')
        for fig in s.figures:
            numbers = _numbers(fig)
            shown, img = _img(outdir, fig)
            numbers_html = f'<pre class="numbers">{e(numbers)}</pre>' if numbers else ""
            parts.append(f'<figure>{img}<figcaption style="max-width: {max(shown, 320)}px"><b>{e(fig.title)}</b> '
                         f"({e(fig.file)}). {e(fig.caption)}{numbers_html}</figcaption></figure>")
        parts.append("</div></section>")
    parts.append("</main></body></html>")
    path = os.path.join(outdir, "report.html")
    with open(path, "w") as f:
        f.write("\n".join(parts) + "\n")
    manifest = {"title": title, "sections": [
        {"title": s.title, "notes": s.notes, "tables": [{"title": t, "rows": [list(r) for r in rows]} for t, rows in s.tables],
         "figures": [{"file": f.file, "title": f.title, "annotations": f.annotations} for f in s.figures]}
        for s in sections]}
    with open(os.path.join(outdir, "report.json"), "w") as f:
        json.dump(manifest, f, indent=1)
    return path
