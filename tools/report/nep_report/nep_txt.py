"""nep.txt header and size (the model table; the numbers themselves are not interpreted)."""
from .errors import ReportError

HEADER_KEYS = ("zbl", "cutoff", "n_max", "basis_size", "l_max", "ANN")


class ModelSummary:
    def __init__(self):
        self.tag = ""
        self.elements = []
        self.header = {}          # keyword -> list of tokens
        self.numbers = 0          # numbers after the header
        self.bytes = 0


def read_nep_txt(path):
    m = ModelSummary()
    with open(path) as f:
        text = f.read()
    m.bytes = len(text.encode())
    lines = text.splitlines()
    if not lines:
        raise ReportError(path, "empty file")
    first = lines[0].split()
    if len(first) < 2 or not first[0].startswith("nep"):
        raise ReportError(path, "first line must be 'nepX[_zbl] T El1 .. ElT'", 1)
    m.tag = first[0]
    try:
        t = int(first[1])
    except ValueError:
        raise ReportError(path, f"'{first[1]}' is not a type count", 1) from None
    m.elements = first[2:2 + t]
    if len(m.elements) != t:
        raise ReportError(path, f"{t} types but {len(m.elements)} element names", 1)
    k = 1
    while k < len(lines):
        tokens = lines[k].split()
        k += 1
        if not tokens or tokens[0] not in HEADER_KEYS:
            raise ReportError(path, f"expected one of {', '.join(HEADER_KEYS)}", k)
        m.header[tokens[0]] = tokens[1:]
        if tokens[0] == "ANN":
            break
    for lineno in range(k + 1, len(lines) + 1):
        s = lines[lineno - 1].strip()
        if not s:
            continue
        try:
            float(s)
        except ValueError:
            raise ReportError(path, f"'{s}' is not a number", lineno) from None
        m.numbers += 1
    return m


def version(m):
    return int(m.tag[3]) if len(m.tag) > 3 and m.tag[3].isdigit() else None


def descriptor_dim(m):
    """Length of the descriptor: (n_max_R + 1) radial + (n_max_A + 1) per angular channel (L3
    3-body channels, one more each for the 4-body and 5-body switches of GPUMD's l_max line).
    None when the header uses channels this formula does not know."""
    try:
        n_r, n_a = (int(x) for x in m.header["n_max"][:2])
        lm = [int(x) for x in m.header["l_max"]]
    except (KeyError, ValueError):
        return None
    if any(lm[3:]):
        return None
    channels = lm[0] + sum(1 for x in lm[1:3] if x != 0)
    return (n_r + 1) + (n_a + 1) * channels


def flexible_zbl_numbers(m):
    z = m.header.get("zbl")
    if z and len(z) >= 2 and float(z[0]) == 0 and float(z[1]) == 0:
        t = len(m.elements)
        return 10 * t * (t + 1) // 2
    return 0


def table_rows(m, path):
    """(label, value) rows for the report."""
    dim = descriptor_dim(m)
    rows = [("file", f"{path} ({m.bytes / 1024:.1f} KiB)"), ("type", m.tag), ("elements", " ".join(m.elements))]
    for key in ("zbl", "cutoff", "n_max", "basis_size", "l_max"):
        if key in m.header:
            rows.append((key, " ".join(m.header[key])))
    if "ANN" in m.header:
        rows.append(("hidden neurons", m.header["ANN"][0]))
    if dim is not None:
        rows.append(("descriptor length", str(dim)))
        zbl = flexible_zbl_numbers(m)
        extra = f" + {zbl} flexible-ZBL" if zbl else ""
        rows.append(("numbers in the file",
                     f"{m.numbers} = {m.numbers - dim - zbl} trainable + {dim} q_scaler{extra}"))
    else:
        rows.append(("numbers in the file", str(m.numbers)))
    return rows
