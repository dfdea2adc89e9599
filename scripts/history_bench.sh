#!/usr/bin/env bash
# Benchmark of nightly runs against a growing history (`--history DIR`):
# the cost of one night as the history holds 1, 4, 16 ... earlier nights.
#
# Usage: scripts/history_bench.sh [--bin PATH] [--nights 1,4,16] [--work DIR]
#                                 [--config FILE] CORPUS...
#
# The corpus is run once (`pipeline run`, the night's own stages, whose cost
# does not depend on the history) and then kept as every night's crawl:
# the same pages re-crawled night after night, the case in which a history
# that indexed every copy would grow the night's groups the most. Night k
# (crawl id night-NNN) is matched against the k-1 nights before it
# (`pipeline history match`) and appended (`pipeline history append`), each
# under `/usr/bin/time -v`; the script prints CPU seconds and peak RSS of
# both for the nights whose history holds the counts of --nights, with the
# rows of the night's history_candidates, repeats and crawl_clusters.
#
# Needs GNU time at /usr/bin/time. Without --bin, builds the release binary.

set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
BIN=""
NIGHTS="1,4,16"
WORK="$ROOT/target/history-bench"
CONFIG=()
CORPUS=()

while [[ $# -gt 0 ]]; do
    case "$1" in
        --bin) BIN="${2:?--bin needs a path}"; shift 2 ;;
        --nights) NIGHTS="${2:?--nights needs N[,N...]}"; shift 2 ;;
        --work) WORK="${2:?--work needs a folder}"; shift 2 ;;
        --config) CONFIG=(--config "$(realpath "${2:?--config needs a file}")"); shift 2 ;;
        -h|--help) sed -n '5,6p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
        -*) echo "unknown option $1" >&2; exit 2 ;;
        *) CORPUS+=("$(realpath "$1")"); shift ;;
    esac
done
[[ ${#CORPUS[@]} -gt 0 ]] || { echo "give a corpus (WARC files or folders)" >&2; exit 2; }
if [[ -z "$BIN" ]]; then
    (cd "$ROOT" && cargo build --release --bin pipeline >&2)
    BIN="$ROOT/target/release/pipeline"
fi
IFS=, read -r -a COUNTS <<< "$NIGHTS"
LAST=0
for c in "${COUNTS[@]}"; do (( c > LAST )) && LAST=$c; done

rm -rf "$WORK"
mkdir -p "$WORK"
OUT="$WORK/night"
HISTORY="$WORK/history"
"$BIN" --quiet run --input "${CORPUS[@]}" --out "$OUT" "${CONFIG[@]}"

# `/usr/bin/time -v` of a command: "CPU-seconds peak-MB".
measure() {
    local log="$WORK/time.log"
    /usr/bin/time -v "$@" > "$WORK/cmd.out" 2> "$log"
    awk -F': ' '/User time/ {u=$2} /System time/ {s=$2} /Maximum resident/ {m=$2}
                END {printf "%.2f %.0f\n", u + s, m / 1024}' "$log"
}

rows() {
    "$BIN" --quiet query --out "$OUT" --format csv "SELECT COUNT(*) AS n FROM $1" | tail -1
}

printf '%-15s %-10s %12s %10s %12s %10s %12s %10s %14s\n' \
    "earlier nights" crawl "match CPU-s" "match MB" "append CPU-s" "append MB" candidates repeats crawl_clusters
for ((k = 1; k <= LAST + 1; k++)); do
    crawl=$(printf 'night-%03d' "$k")
    read -r match_cpu match_mb < <(measure "$BIN" --quiet history --history "$HISTORY" match --out "$OUT" --crawl-id "$crawl" "${CONFIG[@]}")
    read -r append_cpu append_mb < <(measure "$BIN" --quiet history --history "$HISTORY" append --out "$OUT" --crawl-id "$crawl" "${CONFIG[@]}")
    earlier=$((k - 1))
    for c in "${COUNTS[@]}"; do
        if [[ $c == "$earlier" ]]; then
            printf '%-15s %-10s %12s %10s %12s %10s %12s %10s %14s\n' "$earlier" "$crawl" "$match_cpu" "$match_mb" \
                "$append_cpu" "$append_mb" "$(rows history_candidates)" "$(rows repeats)" "$(rows crawl_clusters)"
        fi
    done
done
du -sh "$HISTORY" | awk '{print "history folder: " $1}'
