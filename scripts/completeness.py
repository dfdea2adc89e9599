#!/usr/bin/env python3
"""Are the proposed near-duplicates that verify in the result?

Usage: scripts/completeness.py [--bin PIPELINE] [--sample N] [--seed S]
                               [--threshold T] OUT_DIR

Takes a uniform sample (default 10,000, seeded) of the distinct candidate
edges of a finished run (`candidates`), compares each pair directly on the
verification text (`tokens.text`, the default `[verify] text = "visible"`)
with spec §9's similarity 2·LCS/(|a|+|b|) (rapidfuzz's Indel similarity,
an independent implementation: `pip install rapidfuzz`), and for every pair
that reaches the threshold (default 0.8) checks that the result has it: a
verified row of `duplicates`, or both documents in one cluster.

Prints the counts and the share found; lists the first pairs not found.
Exit code 0 when at least 99% of the passing pairs are in the result.
"""

import argparse
import json
import os
import random
import subprocess
import sys

from rapidfuzz.distance import Indel


def query(binary, out, sql):
    result = subprocess.run(
        [binary, "query", "--out", out, "--format", "json", sql], capture_output=True, text=True, check=True
    )
    return [json.loads(line) for line in result.stdout.splitlines() if line.strip()]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "pipeline"))
    parser.add_argument("--sample", type=int, default=10000)
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--threshold", type=float, default=0.8)
    parser.add_argument("out")
    args = parser.parse_args()

    edges = query(args.bin, args.out, "SELECT DISTINCT doc_a, doc_b FROM candidates ORDER BY doc_a, doc_b")
    pairs = [(e["doc_a"], e["doc_b"]) for e in edges]
    random.Random(args.seed).shuffle(pairs)
    sample = sorted(pairs[: args.sample])
    ids = sorted({d for p in sample for d in p})
    texts = {}
    for start in range(0, len(ids), 2000):
        chunk = ",".join(str(i) for i in ids[start : start + 2000])
        for row in query(args.bin, args.out, f"SELECT doc_id, text FROM tokens WHERE doc_id IN ({chunk})"):
            texts[row["doc_id"]] = row["text"]
    verified = {
        (r["doc_a"], r["doc_b"])
        for r in query(args.bin, args.out, "SELECT doc_a, doc_b FROM duplicates WHERE verified")
    }
    cluster = {r["doc_id"]: r["cluster_id"] for r in query(args.bin, args.out, "SELECT doc_id, cluster_id FROM clusters")}

    passing, found, missing = 0, 0, []
    for a, b in sample:
        similarity = Indel.normalized_similarity(texts.get(a, ""), texts.get(b, ""))
        if similarity < args.threshold:
            continue
        passing += 1
        if (a, b) in verified or (a in cluster and cluster.get(a) == cluster.get(b)):
            found += 1
        else:
            missing.append((a, b, similarity))
    share = found / passing if passing else 1.0
    print(f"candidate edges: {len(pairs)}; sampled: {len(sample)}; pass at {args.threshold}: {passing}")
    print(f"in the result (verified pair or one cluster): {found} ({100 * share:.2f}%); missing: {len(missing)}")
    for a, b, s in missing[:10]:
        print(f"  missing {a} {b} similarity {s:.4f}")
    return 0 if share >= 0.99 else 1


if __name__ == "__main__":
    sys.exit(main())
