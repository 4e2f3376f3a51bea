"""Whitespace-separated numeric text files (GPUMD's *.out): rows of floats, every row the same width."""
import numpy as np

from .errors import ReportError, parse_floats


def read_rows(path, allowed_widths):
    """(rows as a 2-D float array, width); blank lines and '#' lines skipped. A row whose width is not
    in allowed_widths, or differs from the first row's, is an error naming path:line."""
    rows, width = [], None
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            tokens = line.split()
            if not tokens or tokens[0].startswith("#"):
                continue
            if width is None:
                if len(tokens) not in allowed_widths:
                    want = " or ".join(str(w) for w in sorted(allowed_widths))
                    raise ReportError(path, f"{len(tokens)} columns; expected {want}", lineno)
                width = len(tokens)
            rows.append(parse_floats(path, lineno, tokens, width))
    if width is None:
        return np.zeros((0, min(allowed_widths))), None
    return np.array(rows, dtype=float), width
