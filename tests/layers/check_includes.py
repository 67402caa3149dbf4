#!/usr/bin/python3
"""Checks that every #include follows the module order of docs/architecture.md ("Dependency
rules"): a module includes only itself and modules to its left, never one beside it (modules
joined by commas), and never another module's internal/ headers. And that what a module
declares is in its own namespace: engram::<folder> (actors/: engram::actors or
engram::<subfolder>; base/ is the root vocabulary, engram and its own sub-namespaces), a
block of forward declarations of another module's classes aside.

A source file's module is its top-level folder, or for actors/ its subfolder (actors/ingest);
tools/ is one module. tests/ may include every module, internals too (they are white-box), and
of tools/ only the programs' own code they test (TESTS_MAY_INCLUDE); what tests and
benchmarks share is the evaluation/ module.

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
TESTS_MAY_INCLUDE = ("tools/mail/", "tools/engramctl/")


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


FORWARD = re.compile(r"^\s*((class|struct) \w+;)?\s*$")


def namespace_problems(f, module, text):
    """What `f` (of `module`) declares in another module's namespace."""
    if module in ("base", "tools", "tests"):
        return []
    allowed = {module.split("/")[-1], "actors"} if module.startswith("actors/") else {module}
    problems = []
    for m in re.finditer(r"namespace engram::(\w+)[\w:]*\s*\{", text):
        depth, i = 1, m.end()
        while depth and i < len(text):
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            i += 1
        body = text[m.end():i - 1]
        if m.group(1) not in allowed and not all(FORWARD.match(l) for l in body.split("\n")):
            problems.append(f"{f}: declares in engram::{m.group(1)}, not its module's namespace "
                            f"(engram::{sorted(allowed)[0] if len(allowed) == 1 else ' or engram::'.join(sorted(allowed))})")
    return problems


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
        problems += namespace_problems(f, m, text)
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
        print(f"check_includes: {len(problems)} include(s) or declaration(s) break the module order or namespaces")
        return 1
    print(f"check_includes: {len(sources)} files follow the order of {len(rank)} modules and their namespaces")
    return 0


if __name__ == "__main__":
    sys.exit(main())
