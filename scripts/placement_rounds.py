#!/usr/bin/env python3
"""Compares three ways of forming clusters from a finished run's tables.

usage: scripts/placement_rounds.py OUT

Needs the Python packages `datafusion` and `rapidfuzz` (pip install
datafusion rapidfuzz). Reads `documents`, `candidates` and `tokens` under
OUT (a run with the default `[dedup] keep = "canonical-url"` and `[verify]
text = "visible"`), computes every similarity it needs with rapidfuzz's
Indel normalized similarity (exactly spec §9's 2·LCS / (|a| + |b|)), and
applies no comparison bound: it compares the placement rules, not the
bounds. docs/design.md ("Verification in bounded units") has its figures.

A  today's placement (`verify`): documents in keep order, each compared with
   the representatives of the clusters its earlier partners are in, joining
   the most similar one at or above 0.8.
B  placement from verified edges alone (spec §9, "One way"): every candidate
   pair compared once; a document joins its most similar kept earlier
   partner that verifies.
C  B closed by rounds: the placement pass lists the comparisons of A it
   lacks (a document with a representative its partners were placed with
   that is not one of its partners), they are made, and the pass runs
   again, until none is missing. C's result is A's.
"""
import collections
import sys

import datafusion
from rapidfuzz.distance import Indel

THRESHOLD = 0.8

out = sys.argv[1]
ctx = datafusion.SessionContext()
for table in ["documents", "candidates", "tokens"]:
    ctx.register_parquet(table, f"{out}/{table}/")

# jobs/keep_order.sql under the default keep rule (one crawl).
rank = {}
for b in ctx.sql(
    """SELECT doc_id, ROW_NUMBER() OVER (ORDER BY CASE WHEN url = canonical_url THEN 0 ELSE 1 END,
              crawl_date, character_length(text) DESC, doc_id) FROM documents"""
).collect():
    rank.update(zip(b.column(0).to_pylist(), b.column(1).to_pylist()))
pairs = set()
for b in ctx.sql("SELECT DISTINCT doc_a, doc_b FROM candidates").collect():
    pairs.update((a, c) for a, c in zip(b.column(0).to_pylist(), b.column(1).to_pylist()) if a in rank and c in rank)
ends = {d for p in pairs for d in p}
text = {}
for b in ctx.sql("SELECT doc_id, text FROM tokens").collect():
    text.update((d, t or "") for d, t in zip(b.column(0).to_pylist(), b.column(1).to_pylist()) if d in ends)
earlier = collections.defaultdict(list)
for a, c in pairs:
    later, first = (a, c) if rank[a] > rank[c] else (c, a)
    earlier[later].append(first)
order = sorted(ends, key=rank.get)

similarities = {}


def similarity(x, y):
    key = (min(x, y), max(x, y))
    if key not in similarities:
        similarities[key] = Indel.normalized_similarity(text[x], text[y])
    return similarities[key]


def place(lookup):
    """The sequential placement; lookup(d, r) is the similarity of d and
    representative r, or None when not known (listed as missing)."""
    representative, missing = {}, set()
    for d in order:
        best = None
        for r in sorted({representative[e] for e in earlier.get(d, [])}, key=rank.get):
            s = lookup(d, r)
            if s is None:
                missing.add((d, r))
            elif s >= THRESHOLD and (best is None or s > best[1]):
                best = (r, s)
        representative[d] = best[0] if best else d
    return representative, missing


def kept(representative):
    return sum(1 for d in order if representative[d] == d)


made = set()


def counted(d, r):
    made.add((min(d, r), max(d, r)))
    return similarity(d, r)


a, _ = place(counted)
print(f"placed documents: {len(order)}, candidate pairs: {len(pairs)}")
print(f"A today's placement: kept {kept(a)}, comparisons {len(made)}")
for later, firsts in earlier.items():
    for e in firsts:
        similarity(later, e)
known = {(min(d, e), max(d, e)) for d, es in earlier.items() for e in es}
partners = {d: set(es) for d, es in earlier.items()}
b, _ = place(lambda d, r: similarity(d, r) if r in partners.get(d, ()) else 0.0)
print(f"B edges alone: kept {kept(b)}, comparisons {len(known)}, placed differently from A {sum(a[d] != b[d] for d in order)}")
rounds = 0
while True:
    c, missing = place(lambda d, r: similarity(d, r) if (min(d, r), max(d, r)) in known else None)
    print(f"C after {rounds} rounds: kept {kept(c)}, placed differently from A {sum(a[d] != c[d] for d in order)}, "
          f"missing {len(missing)}")
    if not missing:
        break
    known.update((min(d, r), max(d, r)) for d, r in missing)
    rounds += 1
print(f"C: {rounds} rounds, comparisons {len(known)}, the same as A: {c == a}")
