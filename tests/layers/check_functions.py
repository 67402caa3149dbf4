#!/usr/bin/python3
"""Checks that no function in the given folders is longer than a limit (lines from its
signature to its closing brace): the engine's files stay wiring and steps a reader can hold.

usage: check_functions.py --root DIR --max N [--file-lines FILE M]... FOLDER...
--file-lines also holds FILE to at most M lines (engine.cpp is wiring only).
Exit status 1 and one line per function or file over its limit.
"""
import argparse
import pathlib
import re
import sys

CONTROL = re.compile(r"\b(if|for|while|switch|else|do|try|catch|return)\b")
TYPE = re.compile(r"^(namespace|struct|class|enum|union|extern)\b|\b(struct|class)\s+\w+[^()]*$")


def code(line):
    line = re.sub(r'"(?:[^"\\]|\\.)*"', '""', line)
    line = re.sub(r"'(?:[^'\\]|\\.)*'", "''", line)
    return re.sub(r"//.*", "", line)


def functions(text):
    """(first line, length, header) of each outermost function body of a C++ file."""
    lines = [code(l) for l in text.split("\n")]
    stack = []  # (kind, first line)
    for i, line in enumerate(lines):
        for at, ch in enumerate(line):
            if ch == "{":
                j, header = i, line[:at]
                while j > 0 and not re.search(r"[;{}]\s*$", lines[j - 1]) and i - j < 8:
                    j -= 1
                    header = lines[j] + " " + header
                header = " ".join(header.split())
                inside_function = any(s[0] == "fn" for s in stack)
                if inside_function or TYPE.search(header) or not header.endswith(")") and "(" not in header:
                    kind = "block"
                elif CONTROL.match(header) or "=" in header.split("(")[0] or header.startswith("["):
                    kind = "block"
                else:
                    kind = "fn" if "(" in header else "block"
                stack.append((kind, j, header))
            elif ch == "}" and stack:
                kind, j, header = stack.pop()
                if kind == "fn":
                    yield j + 1, i - j + 1, header


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--root", required=True)
    ap.add_argument("--max", type=int, required=True)
    ap.add_argument("--file-lines", nargs=2, action="append", default=[], metavar=("FILE", "M"))
    ap.add_argument("folders", nargs="+")
    a = ap.parse_args()
    root = pathlib.Path(a.root)
    long = []
    count = 0
    for folder in a.folders:
        for f in sorted((root / folder).rglob("*.[ch]pp")):
            for line, n, header in functions(f.read_text(errors="replace")):
                count += 1
                if n > a.max:
                    long.append(f"{f.relative_to(root)}:{line}: {n} lines: {header[:100]}")
    for f, m in a.file_lines:
        n = len((root / f).read_text().splitlines())
        if n > int(m):
            long.append(f"{f}: {n} lines, more than {m}")
    for l in long:
        print(l)
    if long:
        print(f"check_functions: {len(long)} function(s) or file(s) over their limit")
        return 1
    print(f"check_functions: {count} functions, none over {a.max} lines")
    return 0


if __name__ == "__main__":
    sys.exit(main())
