#!/usr/bin/env bash
# The bundled sample copied k times (k files of the same crawl in one
# folder): what each run keeps and removes, and whether it keeps the same
# pages and removes the same near-duplicates as the sample once (spec
# section 9, "Exact copies first"; tests/copies.rs checks k = 1, 2, 10 on
# every `cargo test`, this script the larger k).
#
# Usage: scripts/copies.sh [--bin PIPELINE] [--keep DIR] [K ...]   (default K: 1 2 10 20 50)
#
# Prints per k: documents, kept pages, near-duplicates removed, exact
# duplicates removed, and "same" when the kept URLs and the (URL, kept URL,
# similarity) of the near-duplicates equal those of k = 1, with k times its
# near-duplicates. Exit code 1 when a k differs.
set -euo pipefail
cd "$(dirname "$0")/.."

bin=target/release/pipeline
keep=""
ks=()
while [ $# -gt 0 ]; do
  case "$1" in
    --bin) bin="$2"; shift 2 ;;
    --keep) keep="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    -*) echo "unknown argument $1" >&2; exit 2 ;;
    *) ks+=("$1"); shift ;;
  esac
done
[ ${#ks[@]} -gt 0 ] || ks=(1 2 10 20 50)
work=${keep:-$(mktemp -d)}
mkdir -p "$work"
[ -n "$keep" ] || trap 'rm -rf "$work"' EXIT

query() { "$bin" query --out "$1" --format csv "$2" | tail -n +2 | sort; }
number() { query "$1" "$2" | head -1; }

status=0
for k in $(printf '%s\n' 1 "${ks[@]}" | awk '!seen[$0]++'); do
  input="$work/input-$k" out="$work/out-$k"
  if [ ! -d "$out" ]; then
    mkdir -p "$input"
    for i in $(seq 1 "$k"); do cp sample-data/sample-crawl.warc.gz "$input/copy-$i.warc.gz"; done
    "$bin" --quiet run --input "$input" --out "$out" >/dev/null
  fi
  docs=$(number "$out" "SELECT COUNT(*) FROM decisions")
  kept=$(number "$out" "SELECT COUNT(*) FROM decisions WHERE reason IN ('kept', 'unique')")
  near=$(number "$out" "SELECT COUNT(*) FROM decisions WHERE reason = 'near_duplicate'")
  exact=$(number "$out" "SELECT COUNT(*) FROM decisions WHERE reason = 'exact_duplicate'")
  query "$out" "SELECT DISTINCT url FROM decisions WHERE reason IN ('kept', 'unique')" >"$work/kept-$k"
  query "$out" "SELECT DISTINCT r.url, k.url, ROUND(r.similarity, 9) FROM decisions r
                JOIN decisions k ON k.doc_id = r.duplicate_of WHERE r.reason = 'near_duplicate'" >"$work/near-$k"
  verdict=same
  if [ "$k" = 1 ]; then
    near1=$near
  elif ! cmp -s "$work/kept-1" "$work/kept-$k" || ! cmp -s "$work/near-1" "$work/near-$k" \
       || [ "$near" != "$((k * near1))" ]; then
    verdict=DIFFERENT
    status=1
  fi
  echo "copies $k: $docs documents, $kept kept, $near near-duplicates and $exact exact duplicates removed: $verdict"
done
exit $status
