"""nep.in (GPUMD / nep-train keywords): the settings as written, for the report's table."""
from .errors import ReportError


def read_nep_in(path):
    """[(keyword, value text, line number)] in file order; '#' starts a comment."""
    out = []
    with open(path) as f:
        for lineno, line in enumerate(f, 1):
            tokens = line.split("#", 1)[0].split()
            if not tokens:
                continue
            out.append((tokens[0], " ".join(tokens[1:]), lineno))
    if not out:
        raise ReportError(path, "no keywords")
    return out


def keyword(settings, name, default=None):
    """The value text of the last occurrence of keyword name, else default."""
    found = [v for k, v, _ in settings if k == name]
    return found[-1] if found else default
