#!/usr/bin/env python3
"""Size limits of the source tree (issue 29): no file over 600 lines and no function over 120,
except where a comment argues the length: `long-file: <why>` in a file's first 30 lines, or
`long-function: <why>` in the 6 lines above a function's first line.

Files: the C++ (.cpp .hpp .h), Python (.py) and shell (.sh) files git tracks (and untracked ones
it does not ignore), minus tests/data/ and tests/fuzz/regressions/. Functions: C++ definitions
(free, member, in-class, operator(), TEST bodies; lambdas count towards the function holding
them), Python def's (ast), shell `name() {` blocks. Exit 1 with a list when a limit is broken.
Usage: check_code_size.py [REPO] [--max-file N] [--max-function N]"""
import argparse, ast, os, re, subprocess, sys

ap = argparse.ArgumentParser()
ap.add_argument("repo", nargs="?", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
ap.add_argument("--max-file", type=int, default=600)
ap.add_argument("--max-function", type=int, default=120)
args = ap.parse_args()
repo = os.path.abspath(args.repo)

SKIP = ("tests/data/", "tests/fuzz/regressions/", "tests/fuzz/seeds/")
EXT = (".cpp", ".hpp", ".h", ".py", ".sh")


def tracked_files():
    out = subprocess.run(["git", "-C", repo, "ls-files", "--cached", "--others", "--exclude-standard"],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    return sorted(f for f in out if f.endswith(EXT) and not f.startswith(SKIP) and os.path.isfile(os.path.join(repo, f)))


def argued(lines, first, marker, above):
    """a `marker` comment in the `above` lines before line index `first` (or in the first lines)"""
    lo = max(0, first - above)
    return any(marker in l for l in lines[lo:first + 1])


# ---- C++: scopes by braces; a '{' whose head (the code since the last ; { or } at that point)
# ends like a function signature opens a function unless one is open already
CONTROL = re.compile(r"^\s*(if|for|while|switch|catch|do|else|return|case)\b")
SIG_END = re.compile(r"\)\s*(const\s*)?(override\s*)?(final\s*)?(noexcept\s*)?(->\s*[^{;]*)?\s*$"
                     r"|\)\s*(const\s*)?(noexcept\s*)?:\s*[^;]*$")


def strip_code(text):
    """comments and string/char literals blanked (line structure kept)"""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("".join("\n" if ch == "\n" else " " for ch in text[i:j]))
            i = j
        elif c == '"' and text.startswith('R"', i - 1) and i > 0:
            m = re.match(r'"([^(]*)\(', text[i:])
            end = text.find(")" + (m.group(1) if m else "") + '"', i)
            j = n if end < 0 else end + len(m.group(1) if m else "") + 2
            out.append('""' + "".join("\n" for ch in text[i:j] if ch == "\n"))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def cpp_functions(text):
    code = strip_code(text)
    stack, head_start, head, line = [], 0, [], 1    # stack of (kind, start line)
    results = []
    for ch in code:
        if ch == "\n":
            line += 1
            if re.fullmatch(r"\s*(public|private|protected)\s*:\s*", "".join(head)):
                head = []    # an access specifier is not part of the next declaration
        if ch == "{":
            h = "".join(head)
            in_func = any(k == "func" for k, _ in stack)
            hs = h.strip()
            is_func = (not in_func and hs and not CONTROL.match(hs) and "=" not in hs.split("(")[0]
                       and SIG_END.search(hs.replace("\n", " ")))
            stack.append(("func" if is_func else "block", head_start if is_func else line))
            head, head_start = [], line
        elif ch == "}":
            if stack:
                kind, start = stack.pop()
                if kind == "func":
                    results.append((start, line))
            head, head_start = [], line
        elif ch == ";":
            head, head_start = [], line
        else:
            if not head and not ch.isspace():
                head_start = line
            if head or not ch.isspace():
                head.append(ch)
    return results


def py_functions(text):
    tree = ast.parse(text)
    return [(n.lineno - len(n.decorator_list), n.end_lineno) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def sh_functions(lines):
    res, start = [], None
    for i, l in enumerate(lines, 1):
        if start is None and re.match(r"^[A-Za-z_][\w-]*\s*\(\)\s*\{\s*$", l):
            start = i
        elif start is not None and l.startswith("}"):
            res.append((start, i))
            start = None
    return res


problems = []
for f in tracked_files():
    text = open(os.path.join(repo, f), encoding="utf-8", errors="replace").read()
    lines = text.split("\n")
    n = len(lines) - (1 if text.endswith("\n") else 0)
    if n > args.max_file and not argued(lines, 30, "long-file:", 30):
        problems.append(f"{f}: {n} lines (limit {args.max_file}; argue with a 'long-file:' comment)")
    if f.endswith(".py"):
        spans = py_functions(text)
    elif f.endswith(".sh"):
        spans = sh_functions(lines)
    else:
        spans = cpp_functions(text)
    for a, b in spans:
        length = b - a + 1
        if length > args.max_function and not argued(lines, a - 1, "long-function:", 6):
            problems.append(f"{f}:{a}: function of {length} lines (limit {args.max_function}; "
                            f"argue with a 'long-function:' comment): {lines[a - 1].strip()[:70]}")

for p in problems:
    print("FAIL " + p)
print(f"{len(problems)} size problems in {len(tracked_files())} files")
sys.exit(1 if problems else 0)
