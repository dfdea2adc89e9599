#!/usr/bin/env bash
# Scores every near-duplicate method against human labels: turns the Webis
# ECIR 2020 labeled pairs (../shared/data/labeled/webis_s3_labeled_pairs.jsonl,
# label 0 = not a near-duplicate ... 3 = content-equivalent) into a JSONL
# corpus (one line per distinct document id) and a gold file, runs the
# pipeline on them and prints table gold_quality twice: with label 3 as
# positive, then with labels 2-3; label 0 is negative both times.
#
# Usage: scripts/eval_labeled.sh [--out DIR] [--limit N] [--labels FILE] [--config FILE]
#   --out DIR      output folder (default: out-labeled); corpus.jsonl and
#                  gold.jsonl are written into it too
#   --limit N      only the first N labeled pairs (default: all)
#   --labels FILE  the labeled pairs (default: the Webis file above)
#   --config FILE  settings for the runs (say `[verify] screen = 0`), put
#                  before the [evaluate] table the script writes; it must
#                  not have an [evaluate] table of its own
#   PIPELINE=path  a built `pipeline` binary to use instead of
#                  `cargo run --release --bin pipeline --`
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
labels="$root/../shared/data/labeled/webis_s3_labeled_pairs.jsonl"
out="out-labeled"
limit=0
base_config=""
while [ $# -gt 0 ]; do
    case "$1" in
        --out) out="$2"; shift 2 ;;
        --limit) limit="$2"; shift 2 ;;
        --labels) labels="$2"; shift 2 ;;
        --config) base_config="$2"; shift 2 ;;
        -h|--help) sed -n '2,19p' "$0"; exit 0 ;;
        *) echo "unknown argument: $1 (see --help)" >&2; exit 2 ;;
    esac
done
if [ -n "${PIPELINE:-}" ]; then
    pipeline=("$PIPELINE")
else
    pipeline=(cargo run --manifest-path "$root/Cargo.toml" --release --quiet --bin pipeline --)
fi
mkdir -p "$out"

python3 - "$labels" "$out" "$limit" <<'PY'
"""Labeled pairs -> corpus.jsonl (id, text) + gold.jsonl (id_a, id_b, label)."""
import json, sys

labels_path, out, limit = sys.argv[1], sys.argv[2], int(sys.argv[3])
texts, gold = {}, []
with open(labels_path, encoding="utf-8") as f:
    for n, line in enumerate(f):
        if limit and n >= limit:
            break
        pair = json.loads(line)
        for side in ("a", "b"):
            doc_id, text = pair["id_" + side], pair["text_" + side]
            if texts.setdefault(doc_id, text) != text:
                sys.exit(f"document {doc_id} has two different texts")
        gold.append({"id_a": pair["id_a"], "id_b": pair["id_b"], "label": int(pair["label_raw"]),
                     "collection": pair["collection"]})
with open(f"{out}/corpus.jsonl", "w", encoding="utf-8") as f:
    for doc_id in sorted(texts):
        f.write(json.dumps({"id": doc_id, "text": texts[doc_id]}, ensure_ascii=False) + "\n")
with open(f"{out}/gold.jsonl", "w", encoding="utf-8") as f:
    for g in gold:
        f.write(json.dumps(g) + "\n")
counts = {}
for g in gold:
    counts[g["label"]] = counts.get(g["label"], 0) + 1
print(f"{len(gold)} labeled pairs of {len(texts)} documents; pairs per label: "
      + ", ".join(f"{k}: {counts[k]}" for k in sorted(counts)))
PY

query='SELECT method, positives, negatives, tp, fp, fn,
              round(precision, 3) AS precision, round(recall, 3) AS recall, round(f1, 3) AS f1
       FROM gold_quality ORDER BY method = '"'final'"', method'
for positive_min in 3 2; do
    config="$out/evaluate-positive-$positive_min.toml"
    { [ -z "$base_config" ] || cat "$base_config"
      printf '\n[evaluate]\ngold_positive_min_label = %s\ngold_negative_max_label = 0\n' "$positive_min"
    } > "$config"
    # Only the evaluate stage depends on the thresholds: the second pass
    # reuses every other table.
    "${pipeline[@]}" --quiet run --input "$out/corpus.jsonl" --gold "$out/gold.jsonl" \
        --config "$config" --out "$out"
    echo
    echo "== positives: label >= $positive_min; negatives: label 0 =="
    "${pipeline[@]}" query --out "$out" "$query"
done
