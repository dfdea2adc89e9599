#!/usr/bin/env bash
# End-to-end benchmark of the pipeline: cost and memory per stage, and how
# they grow with the corpus.
#
# Usage: scripts/bench.sh [--scale N[,N...]] [--bin PATH | --profile P]
#                         [--work DIR] [--json FILE] [--memory-limit SIZE]
#                         [--threads N] [--new-words] [--one-host]
#                         [--first-as-is] [--url-copies R] [--half-words]
#                         [--config FILE] [--methods LIST] CORPUS...
#
# CORPUS: WARC/ARC or JSON Lines files or folders, as for `pipeline run --input`.
#
# Without --bin, builds the binary of cargo profile P first (default
# `release`; `dist` is the packaged build with thin LTO and one codegen
# unit, see docs/benchmarks.md, "Build profiles").
# Each stage runs as its own process (`pipeline run --stage S --force`)
# under `/usr/bin/time -v`, so the peak RSS is measured per stage; wall and
# CPU seconds come from the stage manifests. Prints one table per scale and
# writes bench.json (see scripts/bench_report.py for the columns).
#
# --scale 1,2,4: instead of the corpus itself, runs over 1, 2 and 4 copies
# of it made by scripts/bench_corpus.py (the corpus is ingested once and its
# documents exported as JSON Lines; the copies are translated through
# per-copy vocabulary permutations with light random edits, and 5% of the
# documents of each copy stay near-duplicates of the original), then prints
# the growth factor of every stage between consecutive scales. With
# --new-words, each copy is translated into made-up words of its own
# instead (bench_corpus.py --new-words): the vocabulary and the
# statistics grow with the copies. Each copy is a site of its own (its
# hosts prefixed `copy-k.`), and copy 0 is changed like the others;
# --one-host keeps the copies on the original hosts and --first-as-is
# leaves copy 0 unchanged, the layout of the series before 2026-11-27
# (bench_corpus.py says why each made the cost per page grow with the
# copies). --url-copies R serves every page of every copy again under
# session-id and tracking URLs, a heavy-tailed number of times, R times the
# records (issue 53's layout); --half-words keeps each host's template lines
# and replaces half the words of every other line, copy 0 included (issue
# 54's layout). With either, --scale 1 is the corpus in that layout. If the
# binary cannot read JSON Lines, the input files are replicated unchanged
# under distinct names instead (exact duplicates, so the pair counts grow
# quadratically: the script says so).
#
# --config FILE and --methods LIST are passed to every stage's `pipeline
# run`, as --memory-limit and --threads are: the same crawl measured under
# two settings (say `[verify] screen = 0` against the default) or with
# one method.
#
# Needs python3 and GNU time at /usr/bin/time (Debian/Ubuntu: apt-get
# install time; the shell's `time` builtin has no peak RSS).

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
STAGES=(ingest blocks boilerplate tokens exact stats descr_sample method_state signatures search_keys search_groups search_links search candidates verify_pairs verify place decide evaluate)
SCALES=""
BIN=""
PROFILE="release"
WORK="$ROOT/target/bench"
JSON_OUT="bench.json"
RUN_FLAGS=()
CORPUS_FLAGS=()
CORPUS=()

usage() {
    sed -n '5,9p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
    exit 2
}

while [[ $# -gt 0 ]]; do
    case "$1" in
        --scale) SCALES="${2:?--scale needs N[,N...]}"; shift 2 ;;
        --bin) BIN="${2:?--bin needs a path}"; shift 2 ;;
        --profile) PROFILE="${2:?--profile needs a cargo profile}"; shift 2 ;;
        --work) WORK="${2:?--work needs a folder}"; shift 2 ;;
        --json) JSON_OUT="${2:?--json needs a file}"; shift 2 ;;
        --memory-limit) RUN_FLAGS+=(--memory-limit "${2:?--memory-limit needs a size}"); shift 2 ;;
        --threads) RUN_FLAGS+=(--threads "${2:?--threads needs a number}"); shift 2 ;;
        --config) RUN_FLAGS+=(--config "$(realpath "${2:?--config needs a file}")"); shift 2 ;;
        --methods) RUN_FLAGS+=(--methods "${2:?--methods needs a list}"); shift 2 ;;
        --new-words) CORPUS_FLAGS+=(--new-words); shift ;;
        --one-host) CORPUS_FLAGS+=(--one-host); shift ;;
        --first-as-is) CORPUS_FLAGS+=(--first-as-is); shift ;;
        --url-copies) CORPUS_FLAGS+=(--url-copies "${2:?--url-copies needs a ratio}"); shift 2 ;;
        --half-words) CORPUS_FLAGS+=(--half-words); shift ;;
        -h|--help) usage ;;
        -*) echo "unknown option $1" >&2; usage ;;
        *) CORPUS+=("$(realpath "$1")"); shift ;;
    esac
done
[[ ${#CORPUS[@]} -gt 0 ]] || usage
if [[ -n "$SCALES" && ! "$SCALES" =~ ^[1-9][0-9]*(,[1-9][0-9]*)*$ ]]; then
    echo "--scale takes positive integers separated by commas, e.g. 1,2,4" >&2
    exit 2
fi
if [[ ! -x /usr/bin/time ]]; then
    echo "/usr/bin/time (GNU time) is missing: apt-get install time" >&2
    exit 2
fi

if [[ -z "$BIN" ]]; then
    (cd "$ROOT" && cargo build --profile "$PROFILE" --bin pipeline)
    BIN="${CARGO_TARGET_DIR:-$ROOT/target}/$PROFILE/pipeline"
fi
BIN="$(realpath "$BIN")"
mkdir -p "$WORK"
WORK="$(realpath "$WORK")"
JSON_OUT="$(realpath -m "$JSON_OUT")"
# Every stage after ingest runs without --input, which `pipeline run`
# accepts only in the checkout (its default input is the sample there).
cd "$ROOT"

# run_stages OUT INPUT...: every stage in order, each its own timed process.
run_stages() {
    local out="$1"; shift
    rm -rf "$out"
    mkdir -p "$out/_time"
    local stage status
    for stage in "${STAGES[@]}"; do
        local inputs=()
        [[ "$stage" == ingest ]] && inputs=(--input "$@")
        status=0
        /usr/bin/time -v -o "$out/_time/$stage.txt" \
            "$BIN" --quiet run --stage "$stage" --force --out "$out" "${RUN_FLAGS[@]}" "${inputs[@]}" \
            || status=$?
        # 3: the run finished but some input file could not be read.
        if [[ $status -ne 0 && $status -ne 3 ]]; then
            echo "stage $stage failed with exit code $status (see $out/_time/$stage.txt)" >&2
            exit 1
        fi
    done
}

# input_bytes OUT: bytes of the input files, from the ingest_files table.
input_bytes() {
    "$BIN" --quiet query --out "$1" --format csv "SELECT COALESCE(SUM(bytes), 0) AS b FROM ingest_files" | tail -n 1
}

REPORT_ARGS=()
if [[ -z "$SCALES" ]]; then
    run_stages "$WORK/scale-1" "${CORPUS[@]}"
    REPORT_ARGS+=("1:$WORK/scale-1:$(input_bytes "$WORK/scale-1")")
else
    IFS=, read -r -a SCALE_LIST <<< "$SCALES"
    MAX_SCALE=$(printf '%s\n' "${SCALE_LIST[@]}" | sort -n | tail -n 1)
    # Does this binary read JSON Lines? Ingest a one-line probe.
    PROBE="$WORK/probe"
    rm -rf "$PROBE" && mkdir -p "$PROBE"
    printf '{"id": "probe", "url": "https://probe.example/", "text": "A probe document for the benchmark."}\n' \
        > "$PROBE/probe.jsonl"
    PROBE_DOCS=0
    if "$BIN" --quiet run --stage ingest --out "$PROBE/out" --input "$PROBE/probe.jsonl" >/dev/null 2>&1; then
        PROBE_DOCS=$("$BIN" --quiet query --out "$PROBE/out" --format csv "SELECT COUNT(*) AS n FROM documents" | tail -n 1)
    fi
    COPIES="$WORK/copies"
    rm -rf "$COPIES"
    if [[ "$PROBE_DOCS" == 1 ]]; then
        echo "exporting the corpus's documents and making $MAX_SCALE edited copies" >&2
        "$BIN" --quiet run --stage ingest --force --out "$WORK/base" --input "${CORPUS[@]}" || [[ $? -eq 3 ]]
        "$BIN" --quiet query --out "$WORK/base" --format json \
            "SELECT doc_id, url, text FROM documents ORDER BY doc_id" > "$WORK/base-documents.jsonl"
        python3 "$ROOT/scripts/bench_corpus.py" "${CORPUS_FLAGS[@]}" "$WORK/base-documents.jsonl" "$COPIES" "$MAX_SCALE"
    else
        echo "warning: $BIN reads no JSON Lines; replicating the input files unchanged" \
             "(exact duplicates: candidate and verify costs grow quadratically)" >&2
        for ((k = 0; k < MAX_SCALE; k++)); do
            mkdir -p "$COPIES/copy-$(printf %03d "$k")"
            i=0
            for c in "${CORPUS[@]}"; do
                ln -s "$c" "$COPIES/copy-$(printf %03d "$k")/$i-$(basename "$c")"
                i=$((i + 1))
            done
        done
    fi
    for scale in "${SCALE_LIST[@]}"; do
        # The first `scale` copies, under distinct names (document ids come
        # from file names, or from paths relative to the input folder).
        inputs=()
        if [[ "$PROBE_DOCS" == 1 ]]; then
            for ((k = 0; k < scale; k++)); do
                inputs+=("$COPIES/copy-$(printf %03d "$k").jsonl")
            done
        else
            root="$WORK/inputs-$scale"
            rm -rf "$root" && mkdir -p "$root"
            for ((k = 0; k < scale; k++)); do
                ln -s "$COPIES/copy-$(printf %03d "$k")" "$root/"
            done
            inputs=("$root")
        fi
        echo "scale $scale: running every stage" >&2
        run_stages "$WORK/scale-$scale" "${inputs[@]}"
        REPORT_ARGS+=("$scale:$WORK/scale-$scale:$(input_bytes "$WORK/scale-$scale")")
    done
fi

python3 "$ROOT/scripts/bench_report.py" "$JSON_OUT" "${REPORT_ARGS[@]}"
