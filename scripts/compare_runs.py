#!/usr/bin/env python3
"""Compares what two runs over the same input found, pair by pair.

Usage: scripts/compare_runs.py [--bin PIPELINE] BEFORE_DIR AFTER_DIR

A run finds a pair of documents when `duplicates` has it as a verified row
or, for runs whose `clusters` table has every member verified against its
representative, when both documents are in one cluster of `clusters`.
Older runs (before verification built the clusters) chained their clusters
through pairs, so for BEFORE only verified rows count unless
--before-clusters is given.

Prints the pairs each run found, the pairs both found, and the recall of
each run against the other's pairs: how much of what BEFORE found AFTER
still finds. Used to check that a change to the pair side loses nothing.
Pairs inside one cluster are enumerated, so keep this to test-sized runs.
"""

import argparse
import csv
import io
import itertools
import subprocess
from collections import defaultdict


def query(binary, out, sql):
    text = subprocess.run([binary, "--quiet", "query", "--out", out, "--format", "csv", sql],
                          check=True, capture_output=True, text=True).stdout
    return list(csv.DictReader(io.StringIO(text)))


def found_pairs(binary, out, with_clusters):
    pairs = {(int(r["doc_a"]), int(r["doc_b"]))
             for r in query(binary, out, "SELECT doc_a, doc_b FROM duplicates WHERE verified")}
    if with_clusters:
        members = defaultdict(list)
        for r in query(binary, out, "SELECT doc_id, cluster_id FROM clusters"):
            members[int(r["cluster_id"])].append(int(r["doc_id"]))
        for docs in members.values():
            pairs.update(itertools.combinations(sorted(docs), 2))
    return pairs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", default="target/release/pipeline")
    ap.add_argument("--before-clusters", action="store_true", help="count BEFORE's same-cluster pairs too")
    ap.add_argument("before")
    ap.add_argument("after")
    args = ap.parse_args()
    before = found_pairs(args.bin, args.before, args.before_clusters)
    after = found_pairs(args.bin, args.after, True)
    both = before & after
    print(f"before: {len(before)} pairs found; after: {len(after)}; both: {len(both)}")
    if before:
        print(f"recall of after against before: {len(both) / len(before):.4f} ({len(before - both)} lost)")
    if after:
        print(f"recall of before against after: {len(both) / len(after):.4f} ({len(after - both)} new)")


if __name__ == "__main__":
    main()
