#!/usr/bin/env python3
"""No library includes another's private headers.

Owners: a library's private headers are its folder src/<lib>/; its public ones are under include/nep/
(data: include/nep/data/, train: include/nep/train/, ipi: include/nep/ipi/, core: the rest, include/nep/core/ included); the
plugin's, the apps' and the benchmarks' own headers are lammps_plugin/, apps/ and benchmarks/.
Every #include of src/, include/, lammps_plugin/, apps/ and benchmarks/ is resolved as a compiler
could find it (the including file's folder, then include/, src/ and the repository root, so that
"../core/x.hpp" and "core/x.hpp" are both caught) and is an error when it lands in another owner's
private folder, when a public header includes a private one, or when a library includes the public
header of a library it does not link. Includes found nowhere in the tree (the C++ library, Kokkos,
LAMMPS, LibTorch) are not checked. Also: no library's target_include_directories names the whole
src/ (each compiles with its own src/<lib>/ alone; tests/ may look inside).

Usage: check_includes.py ROOT    (exit 1 and one line per violation)
       check_includes.py --self-test    (a small tree with known violations must give exactly them)
"""
import os
import re
import sys
import tempfile

# what each owner may include publicly besides itself (the link graph of CMakeLists.txt)
DEPENDS = {
    "core": set(),
    "data": {"core"},
    "train": {"core", "data"},
    "ipi": {"core"},
    "plugin": {"core", "data", "train", "ipi"},
    "apps": {"core", "data", "train"},
    "benchmarks": {"core", "data", "train", "ipi"},
}
SCANNED = ("src", "include", "lammps_plugin", "apps", "benchmarks")
SOURCE = re.compile(r"\.(c|cc|cpp|cxx|h|hh|hpp|hxx|cu)$")
INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]', re.M)
CMAKE_CALL = re.compile(r"target_include_directories\s*\(([^)]*)\)", re.S)
WHOLE_SRC = re.compile(r"/src(?=[\s)\"]|$)", re.M)


def owner(rel):
    """(kind, name) of a repository-relative path: kind 'private' or 'public'; None outside."""
    parts = rel.split("/")
    if parts[0] == "src" and len(parts) > 2:
        return ("private", parts[1])
    if parts[0] == "include" and len(parts) > 2 and parts[1] == "nep":
        return ("public", parts[2] if parts[2] in ("data", "train", "ipi") and len(parts) > 3 else "core")
    named = {"lammps_plugin": "plugin", "apps": "apps", "benchmarks": "benchmarks", "tests": "tests"}
    if parts[0] in named:
        return ("private", named[parts[0]])
    return None


def resolve(root, includer_rel, quote, name):
    """Repository-relative path the include lands on, or None (not in the tree)."""
    bases = [os.path.dirname(includer_rel)] if quote == '"' else []
    for base in bases + ["include", "src", ""]:
        path = os.path.normpath(os.path.join(root, base, name))
        if os.path.isfile(path):
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            if not rel.startswith("../"):
                return rel
    return None


def include_violations(root, rel):
    kind, me = owner(rel)
    if me not in DEPENDS:
        return [f"{rel}: folder of no known library (add '{me}' to DEPENDS in {os.path.basename(__file__)})"]
    out = []
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        text = f.read()
    for quote, name in INCLUDE.findall(text):
        target = resolve(root, rel, quote, name)
        theirs = owner(target) if target else None
        if theirs is None:
            continue
        tkind, them = theirs
        if tkind == "private" and (them != me or kind == "public"):
            what = "a public header includes a" if kind == "public" and them == me else f"{me} includes {them}'s"
            out.append(f'{rel}: #include {quote}{name}{quote}: {what} private header {target}')
        elif tkind == "public" and them != me and them not in DEPENDS[me]:
            out.append(f'{rel}: #include {quote}{name}{quote}: {me} does not link {them} ({target})')
    return out


def cmake_violations(root):
    out = []
    for rel in ("CMakeLists.txt", "lammps_plugin/CMakeLists.txt"):
        path = os.path.join(root, rel)
        if not os.path.isfile(path):
            continue
        with open(path, encoding="utf-8") as f:
            for call in CMAKE_CALL.findall(f.read()):
                if WHOLE_SRC.search(call):
                    target = call.split()[0] if call.split() else "?"
                    out.append(f"{rel}: target_include_directories({target} ...) names the whole src/, not src/<lib>/")
    return out


def violations(root):
    out = cmake_violations(root)
    for top in SCANNED:
        for dirpath, dirnames, filenames in os.walk(os.path.join(root, top)):
            dirnames.sort()
            for fn in sorted(filenames):
                if SOURCE.search(fn):
                    rel = os.path.relpath(os.path.join(dirpath, fn), root).replace(os.sep, "/")
                    if owner(rel):
                        out += include_violations(root, rel)
    return out


def self_test():
    """A tree with each kind of violation once, beside includes that are fine."""
    files = {
        "src/core/own.hpp": '#include "nep/model.hpp"\n',
        "src/core/a.cpp": '#include "own.hpp"\n#include <vector>\n#include "nep/core/shared.hpp"\n',
        "src/core/b.cpp": '#include "nep/train/api.hpp"\n',                 # core does not link train
        "src/train/t.cpp": ('#include "../core/own.hpp"\n#include "core/own.hpp"\n'   # two private reaches
                            '#include "nep/model.hpp"\n#include "nep/data/store.hpp"\n#include "mine.hpp"\n'),
        "src/train/mine.hpp": "",
        "src/data/d.cpp": '#include "nep/model.hpp"\n#  include "../train/mine.hpp"\n',  # private, spaced
        "include/nep/model.hpp": '#include <string>\n#include "nep/core/shared.hpp"\n',
        "include/nep/core/shared.hpp": '#include "core/own.hpp"\n',         # public includes private
        "include/nep/data/store.hpp": '#include "nep/model.hpp"\n',
        "include/nep/train/api.hpp": '#include "nep/data/store.hpp"\n',
        "lammps_plugin/p.cpp": '#include "pair.h"\n#include "p.h"\n#include "nep/train/api.hpp"\n#include "train/mine.hpp"\n',
        "lammps_plugin/p.h": "",
        "apps/x.cpp": '#include "../src/core/own.hpp"\n',
        "CMakeLists.txt": ("target_include_directories(nep_x PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src)\n"
                           "target_include_directories(nep_y PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}/src/y)\n"),
    }
    want = [
        "CMakeLists.txt: target_include_directories(nep_x",
        'apps/x.cpp: #include "../src/core/own.hpp": apps includes core\'s private',
        'include/nep/core/shared.hpp: #include "core/own.hpp": a public header includes a private',
        'lammps_plugin/p.cpp: #include "train/mine.hpp": plugin includes train\'s private',
        'src/core/b.cpp: #include "nep/train/api.hpp": core does not link train',
        'src/data/d.cpp: #include "../train/mine.hpp": data includes train\'s private',
        'src/train/t.cpp: #include "../core/own.hpp": train includes core\'s private',
        'src/train/t.cpp: #include "core/own.hpp": train includes core\'s private',
    ]
    with tempfile.TemporaryDirectory() as root:
        for rel, text in files.items():
            os.makedirs(os.path.join(root, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(root, rel), "w") as f:
                f.write(text)
        got = sorted(violations(root))
    ok = len(got) == len(want) and all(g.startswith(w) for g, w in zip(got, sorted(want)))
    for g in got:
        print("  found:", g)
    print(f"include check self-test: {'ok' if ok else 'FAILED'} ({len(got)} violations found, {len(want)} planted)")
    return 0 if ok else 1


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    if len(sys.argv) != 2:
        print(__doc__.strip().splitlines()[-2])
        return 2
    found = violations(os.path.abspath(sys.argv[1]))
    for v in found:
        print(v)
    print(f"include check: {len(found)} violation(s)")
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
