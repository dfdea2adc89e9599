#!/usr/bin/env bash
# Fuzzes the ingest readers with cargo-fuzz (libFuzzer, nightly toolchain).
#
# usage: scripts/fuzz.sh [TARGET|all] [SECONDS]
#   TARGET   archive, http, html, charset, jsonl, parquet, or all (default);
#            `all` runs the targets one after another, SECONDS each
#   SECONDS  fuzzing time per target (default 1800)
#
# Installs cargo-fuzz when missing, builds the seed corpora from the real
# crawls in ../shared/data/warc and sample-data/ (scripts/fuzz_seeds.py)
# into a folder outside the repository, builds the targets once and runs
# each for SECONDS. A run that stops on a crash or hang is restarted for the
# time left (at most 10 times); findings are kept as artifacts.
#
# Environment:
#   FUZZ_DIR          corpora, artifacts and logs (default: ../fuzz-corpus,
#                     beside the repository; never inside it)
#   CARGO_TARGET_DIR  build folder of the sanitized targets (default:
#                     ../fuzz-target)
#   WARC_DIR          real crawl files (default: ../shared/data/warc)
#   FUZZ_PARALLEL     with `all`: how many targets run at once (default 1)
#   FUZZ_RESEED=1     rebuild the seed corpora (built once, then kept)
#   FUZZ_NO_BUILD=1   run the targets as last built (no cargo fuzz build)
#   FUZZ_FLAGS        extra libFuzzer flags
#   FUZZ_SANITIZER    address (default) or none: the readers are safe Rust
#                     and C code (zstd) is never instrumented, so `none`
#                     still finds panics, hangs and memory blow-ups, with a
#                     lighter build and faster executions
#
# Summary lines (one per target) go to $FUZZ_DIR/summary.txt:
#   <target> seconds=<s> execs=<n> crashes=<k> artifacts=<dir>
set -euo pipefail

ROOT="$(cd "$(dirname "$0")/.." && pwd)"
TARGET="${1:-all}"
SECONDS_EACH="${2:-1800}"
FUZZ_DIR="${FUZZ_DIR:-$ROOT/../fuzz-corpus}"
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/../fuzz-target}"
WARC_DIR="${WARC_DIR:-$ROOT/../shared/data/warc}"
ALL="archive http html charset jsonl parquet"
# Build flags: release with debug assertions and overflow checks, address
# sanitizer (cargo-fuzz's default; see FUZZ_SANITIZER), 16 codegen units
# (the default of 1 makes the DataFusion dependency tree take hours to build).
BUILD_FLAGS=(-O -a --codegen-units 16 -s "${FUZZ_SANITIZER:-address}" --target-dir "$CARGO_TARGET_DIR")

case "$TARGET" in
    all) TARGETS="$ALL" ;;
    archive | http | html | charset | jsonl | parquet) TARGETS="$TARGET" ;;
    *) echo "unknown target $TARGET (one of: $ALL, all)" >&2; exit 2 ;;
esac

max_len() {
    case "$1" in
        archive) echo $((1 << 20)) ;;
        charset) echo $((64 << 10)) ;;
        *) echo $((256 << 10)) ;;
    esac
}

if ! cargo +nightly fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz
fi

FUZZ_DIR="$(mkdir -p "$FUZZ_DIR" && cd "$FUZZ_DIR" && pwd)"
case "$FUZZ_DIR/" in
    "$ROOT"/*) echo "FUZZ_DIR must be outside the repository" >&2; exit 2 ;;
esac
# Seeds and build under a lock: several invocations may run side by side.
(
    flock 9
    if [ ! -e "$FUZZ_DIR/seeds/.done" ] || [ "${FUZZ_RESEED:-0}" = 1 ]; then
        echo "seed corpora → $FUZZ_DIR/seeds"
        python3 "$ROOT/scripts/fuzz_seeds.py" "$FUZZ_DIR/seeds" "$WARC_DIR" "$ROOT/sample-data"
        touch "$FUZZ_DIR/seeds/.done"
    fi
    if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then
        cd "$ROOT" && nice -n 19 cargo +nightly fuzz build "${BUILD_FLAGS[@]}"
    fi
) 9>"$FUZZ_DIR/.prep.lock"
BIN_DIR="$CARGO_TARGET_DIR/x86_64-unknown-linux-gnu/release"

run_target() {
    local t=$1 corpus artifacts logs start execs crashes runs left log status n line
    corpus="$FUZZ_DIR/corpus/$t"
    artifacts="$FUZZ_DIR/artifacts/$t"
    logs="$FUZZ_DIR/logs/$t"
    mkdir -p "$corpus" "$artifacts" "$logs"
    start=$(date +%s)
    execs=0
    crashes=0
    runs=0
    while :; do
        left=$((SECONDS_EACH - ($(date +%s) - start)))
        [ "$left" -gt 5 ] && [ "$runs" -lt 10 ] || break
        runs=$((runs + 1))
        log="$logs/run-$(date -u +%Y%m%dT%H%M%S).log"
        echo "$t: run $runs for ${left}s, log $log"
        status=0
        # shellcheck disable=SC2086
        nice -n 19 "$BIN_DIR/$t" "$corpus" "$FUZZ_DIR/seeds/$t" \
            -max_total_time="$left" -rss_limit_mb=2048 -max_len="$(max_len "$t")" -timeout=30 \
            -artifact_prefix="$artifacts/" -print_final_stats=1 ${FUZZ_FLAGS:-} >"$log" 2>&1 || status=$?
        n=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' | tail -1 || true)
        execs=$((execs + ${n:-0}))
        if [ "$status" -ne 0 ]; then
            crashes=$((crashes + 1))
            echo "$t: stopped with status $status:" >&2
            grep -E '^==[0-9]+==|^(SUMMARY|panicked|thread .* panicked)|Test unit written' "$log" | head -5 >&2 || true
        fi
    done
    line="$t seconds=$(($(date +%s) - start)) execs=$execs crashes=$crashes artifacts=$artifacts"
    echo "$line" | tee -a "$FUZZ_DIR/summary.txt"
}

running=0
for t in $TARGETS; do
    if [ "$running" -ge "${FUZZ_PARALLEL:-1}" ]; then
        wait -n || true
        running=$((running - 1))
    fi
    run_target "$t" &
    running=$((running + 1))
done
wait
