#!/usr/bin/python3
"""Checks that every #include follows the module order of docs/architecture.md ("Dependency
rules"): a module includes only itself and modules to its left, never one beside it (modules
joined by commas), and never another module's internal/ headers.

A source file's module is its top-level folder, or for actors/ its subfolder (actors/ingest);
tools/ is one module. tests/ may include every module, internals too (they are white-box), and
nothing under tools/ but what tools offer to tests (none today: see TESTS_MAY_INCLUDE).

usage: check_includes.py --root DIR [--add FILE LINE]...
--add checks the tree as if FILE held LINE too (how ctest shows a violation is caught).
Exit status 1 and one line per violation when the order is broken.
"""
import argparse
import pathlib
import re
import subprocess
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
SOURCES = (".cpp", ".hpp", ".h", ".cc")
# What tests include from tools/: the programs' own code under test.
TESTS_MAY_INCLUDE = ("tools/mail/", "tools/engramctl/", "tools/bench/", "tools/train/")


def order(root):
    """The modules in order, as a list of groups (a group's modules sit side by side)."""
    text = (root / "docs" / "architecture.md").read_text()
    section = text.split("## Dependency rules", 1)[1]
    block = section.split("```", 2)[1]
    line = " ".join(block.split())
    groups = [[m.strip() for m in g.split(",")] for g in line.split("←")]
    if len(groups) < 3 or any(not m for g in groups for m in g):
        sys.exit("check_includes: no module order in docs/architecture.md (## Dependency rules)")
    return groups


def module_of(path, known):
    parts = path.split("/")
    if len(parts) > 2 and "/".join(parts[:2]) in known:
        return "/".join(parts[:2])
    return parts[0] if parts[0] in known or parts[0] == "tests" else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--add", nargs=2, action="append", default=[], metavar=("FILE", "LINE"))
    a = ap.parse_args()
    root = pathlib.Path(a.root)
    groups = order(root)
    rank = {m: i for i, g in enumerate(groups) for m in g}
    files = subprocess.run(["git", "-C", str(root), "ls-files"], check=True, capture_output=True,
                           text=True).stdout.split()
    sources = {f: (root / f).read_text(errors="replace") for f in files
               if f.endswith(SOURCES) and not f.startswith("tests/data/") and (root / f).is_file()}
    for f, line in a.add:
        sources[f] = sources.get(f, "") + "\n" + line + "\n"
    modules = {module_of(f, rank) for f in sources} - {None, "tests"}
    unknown = sorted(m for m in modules if m not in rank)
    problems = [f"{m}: a module the order in docs/architecture.md does not name" for m in unknown]
    for f, text in sorted(sources.items()):
        m = module_of(f, rank)
        if m is None:
            continue
        for inc in INCLUDE.findall(text):
            n = module_of(inc, rank)
            if n is None or n == "tests" or n == m:
                continue
            if m == "tests":
                if n.startswith("tools") and not inc.startswith(TESTS_MAY_INCLUDE):
                    problems.append(f"{f}: includes {inc}, a tool's code tests may not use")
                continue
            if "/internal/" in inc:
                problems.append(f"{f}: includes {inc}, another module's internals")
            elif rank[n] > rank[m]:
                problems.append(f"{f}: includes {inc}, which is above {m} ({n})")
            elif rank[n] == rank[m]:
                problems.append(f"{f}: includes {inc}, which sits beside {m} ({n})")
    for p in problems:
        print(p)
    if problems:
        print(f"check_includes: {len(problems)} include(s) break the order of docs/architecture.md")
        return 1
    print(f"check_includes: {len(sources)} files follow the order of {len(rank)} modules")
    return 0


if __name__ == "__main__":
    sys.exit(main())
