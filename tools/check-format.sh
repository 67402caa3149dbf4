#!/usr/bin/env bash
# The C++ sources follow .clang-format (clang-format 14, installed by tools/dev.sh setup).
#   tools/check-format.sh          list the files that differ and fail if any do
#   tools/check-format.sh --fix    reformat them in place
# Tables of phrases and test cases that read better by hand sit between
# "// clang-format off" and "// clang-format on".
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
fmt="$(command -v clang-format-14 || true)"
if [ -z "$fmt" ]; then
  echo "check-format: clang-format-14 is missing (tools/dev.sh setup installs it)" >&2
  exit 1
fi
# Every tracked C++ source; outside a git checkout, every one under the source folders.
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files '*.cpp' '*.hpp' '*.h')
else
  mapfile -t files < <(find . -path ./build -prune -o -path ./.cache -prune -o \
    \( -name '*.cpp' -o -name '*.hpp' -o -name '*.h' \) -print | sed 's|^\./||' | sort)
fi
if [ "${1:-}" = --fix ]; then
  "$fmt" -i "${files[@]}"
  echo "check-format: formatted ${#files[@]} files"
  exit 0
fi
# One run over every file; its warnings start with the file's name.
mapfile -t bad < <("$fmt" --dry-run "${files[@]}" 2>&1 | grep -o '^[^:]*:[0-9]*:[0-9]*: warning' | cut -d: -f1 | sort -u)
if [ ${#bad[@]} -gt 0 ]; then
  printf 'check-format: %d of %d files differ from .clang-format (tools/check-format.sh --fix):\n' \
    "${#bad[@]}" "${#files[@]}" >&2
  printf '  %s\n' "${bad[@]}" >&2
  exit 1
fi
echo "check-format: ${#files[@]} files follow .clang-format"
