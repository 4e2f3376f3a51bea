"""The one error type of nep-report: a message that names the file (and line) at fault."""


class ReportError(Exception):
    def __init__(self, path, message, line=None):
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {message}")


def parse_floats(path, lineno, tokens, count=None):
    """tokens -> floats, or ReportError naming path:lineno (count: exact number expected, if given)."""
    if count is not None and len(tokens) != count:
        raise ReportError(path, f"expected {count} numbers, found {len(tokens)}", lineno)
    try:
        return [float(t) for t in tokens]
    except ValueError:
        bad = next(t for t in tokens if not _is_float(t))
        raise ReportError(path, f"'{bad}' is not a number", lineno) from None


def _is_float(t):
    try:
        float(t)
        return True
    except ValueError:
        return False
