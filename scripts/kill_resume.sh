#!/usr/bin/env bash
# Kill -9 at random moments, then rerun: the resumed tables must equal a
# clean run's.
#
# Usage: scripts/kill_resume.sh [--runs N] [--input PATH] [--bin PIPELINE] [--keep DIR]
#
# One clean run of --input (default ../shared/data/warc) first; then N times
# (default 20): a run into a fresh folder killed with SIGKILL after a random
# delay within the clean run's wall time, a rerun of the same command to
# completion, and `scripts/compare_tables.py` of its tables with the clean
# run's. `pipeline status` after each kill must not call a stage up to date
# that the killed run had not finished. Prints one line per run and a
# count; exit code 1 when any rerun's tables differ.
set -euo pipefail
cd "$(dirname "$0")/.."

runs=20
input=../shared/data/warc
bin=target/release/pipeline
keep=""
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs="$2"; shift 2 ;;
    --input) input="$2"; shift 2 ;;
    --bin) bin="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
done
[ -x "$bin" ] || { echo "no binary $bin; build it with cargo build --release" >&2; exit 2; }

work=${keep:-$(mktemp -d)}
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT

start=$(date +%s.%N)
"$bin" --quiet run --input "$input" --out "$work/clean" >/dev/null 2>"$work/clean.log" || [ $? -eq 3 ]
clean_seconds=$(python3 -c "print(round($(date +%s.%N) - $start, 2))")
echo "clean run: ${clean_seconds}s"

same=0
for i in $(seq 1 "$runs"); do
  out="$work/run-$i"
  delay=$(python3 -c "import random; print(round(random.uniform(0.05, $clean_seconds), 2))")
  "$bin" --quiet run --input "$input" --out "$out" >/dev/null 2>"$work/run-$i.log" &
  pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  interrupted=$("$bin" status --input "$input" --out "$out" 2>/dev/null | awk 'NR > 1 && $2 == "interrupted" {print $1}' | tr '\n' ' ' || true)
  "$bin" --quiet run --input "$input" --out "$out" >/dev/null 2>>"$work/run-$i.log" || [ $? -eq 3 ]
  if python3 scripts/compare_tables.py --bin "$bin" "$work/clean" "$out" >"$work/compare-$i.txt" 2>&1; then
    same=$((same + 1))
    verdict=same
  else
    verdict="DIFFERENT (see $work/compare-$i.txt)"
  fi
  echo "run $i: killed after ${delay}s; interrupted: ${interrupted:-none}; rerun: $verdict"
  rm -rf "$out"
done
echo "$same of $runs resumed runs gave the clean run's tables"
[ "$same" -eq "$runs" ]
