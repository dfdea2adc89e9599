#!/usr/bin/env python3
"""Min-hash signing speed, side by side: datasketch, rensa and ours.

Why: the pipeline's signer must be at least as fast per core as rensa's
`RMinHash` on the same shingles (issue 18). This script gives all three the
same input and prints documents/s and shingles/s on one core.

What it does:
1. Creates (once) a Python venv outside the repository, default
   /work/venv-minhash, with `rensa`, `datasketch` and `numpy` from PyPI.
2. Writes DOCS shingle sets of SHINGLES distinct random u64 fingerprints
   each, from a fixed seed, to one binary file that every side reads
   (u32 LE document count; per document a u32 LE count and the u64 LE
   values).
3. Compiles `scripts/minhash_bench.rs` (which includes
   `src/methods/minwise.rs`, the pipeline's signer, alone) with plain
   `rustc -C opt-level=3 -C codegen-units=1` for the default target, as the
   release profile does, and times it.
4. Times rensa on pre-hashed u64 tokens, both its batch call
   (`RMinHash.digest_matrix_from_flat_token_hashes`) and one `RMinHash`
   per document fed the 8-byte tokens (`update`), and datasketch
   `MinHash(num_perm=84)` fed the same 8-byte tokens (on a subset: it is
   slow; rates are per document and per shingle, so they compare).
5. Checks our sketches of a few documents against `sketch_by_definition`,
   an independent Python reimplementation of the documented family
   h_i(x) = ((a_i*x + b_i) mod 2^64) >> 32, a_i = splitmix64 draw | 1,
   b_i = the next draw.

Every side runs pinned to one core (`taskset -c 0` when available, and
RAYON_NUM_THREADS=1 for rensa); each figure is the best of REPEATS runs.

Usage: scripts/minhash_bench.py [--docs 10000] [--shingles 500]
       [--functions 84] [--repeats 3] [--venv /work/venv-minhash]
       [--workdir /tmp/minhash-bench]
"""

import argparse
import os
import random
import shutil
import struct
import subprocess
import sys
import time

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MASK64 = (1 << 64) - 1


def splitmix64(state):
    """One splitmix64 step: (new state, output), as `methods::splitmix64`."""
    state = (state + 0x9E3779B97F4A7C15) & MASK64
    z = state
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK64
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK64
    return state, z ^ (z >> 31)


def sketch_by_definition(xs, functions, seed):
    """The documented min-hash sketch of the set `xs`, in plain Python."""
    state = seed
    out = []
    for _ in range(functions):
        state, a = splitmix64(state)
        state, b = splitmix64(state)
        a |= 1
        out.append(min(((a * x + b) & MASK64) >> 32 for x in xs))
    return out


def ensure_venv(venv):
    python = os.path.join(venv, "bin", "python")
    if not os.path.exists(python):
        subprocess.run([sys.executable, "-m", "venv", venv], check=True)
        subprocess.run([python, "-m", "pip", "install", "-q", "rensa", "datasketch", "numpy"], check=True)
    return python


def write_shingles(path, docs, shingles, seed=42):
    rng = random.Random(seed)
    sets = []
    with open(path, "wb") as f:
        f.write(struct.pack("<I", docs))
        for _ in range(docs):
            values = set()
            while len(values) < shingles:
                values.add(rng.getrandbits(64))
            values = list(values)
            sets.append(values)
            f.write(struct.pack("<I", len(values)))
            f.write(struct.pack("<%dQ" % len(values), *values))
    return sets


def pinned(cmd):
    return (["taskset", "-c", "0"] if shutil.which("taskset") else []) + cmd


# Runs inside the venv: times rensa and datasketch on the shingle file.
PY_SIDE = r"""
import struct, sys, time
import numpy as np
import rensa
from datasketch import MinHash

path, functions, repeats = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
raw = open(path, "rb").read()
n = struct.unpack_from("<I", raw, 0)[0]
parts, offsets, at = [], [0], 4
for _ in range(n):
    c = struct.unpack_from("<I", raw, at)[0]
    at += 4
    parts.append(np.frombuffer(raw, dtype="<u8", count=c, offset=at))
    at += 8 * c
    offsets.append(offsets[-1] + c)
flat = np.concatenate(parts)
offsets = np.array(offsets, dtype=np.uint64)
tokens = [[int(v).to_bytes(8, "little") for v in p] for p in parts]

def best(run):
    t = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        t = min(t, time.perf_counter() - start)
    return t

def rensa_batch():
    rensa.RMinHash.digest_matrix_from_flat_token_hashes(flat, offsets, num_perm=functions, seed=1)

def rensa_per_document():
    for d in tokens:
        m = rensa.RMinHash(num_perm=functions, seed=1)
        m.update(d)
        m.digest()

subset = tokens[: max(1, n // 20)]
def datasketch_run():
    for d in subset:
        m = MinHash(num_perm=functions, seed=1)
        m.update_batch(d)
        m.digest()

print("rensa RMinHash batch (flat u64 hashes)", best(rensa_batch), n, int(offsets[-1]))
print("rensa RMinHash per document (update)", best(rensa_per_document), n, int(offsets[-1]))
print("datasketch MinHash (update_batch)", best(datasketch_run), len(subset), sum(len(d) for d in subset))
"""


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--docs", type=int, default=10000)
    p.add_argument("--shingles", type=int, default=500)
    p.add_argument("--functions", type=int, default=84)
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--venv", default="/work/venv-minhash")
    p.add_argument("--workdir", default="/tmp/minhash-bench")
    args = p.parse_args()

    os.makedirs(args.workdir, exist_ok=True)
    python = ensure_venv(args.venv)
    data = os.path.join(args.workdir, "shingles.bin")
    sets = write_shingles(data, args.docs, args.shingles)

    binary = os.path.join(args.workdir, "minhash_bench")
    subprocess.run(
        ["rustc", "--edition", "2021", "-C", "opt-level=3", "-C", "codegen-units=1", "-o", binary,
         os.path.join(REPO, "scripts", "minhash_bench.rs")],
        check=True,
    )
    sketches = os.path.join(args.workdir, "sketches.bin")
    out = subprocess.run(
        pinned([binary, data, str(args.functions), "1", str(args.repeats), sketches]),
        check=True, capture_output=True, text=True,
    ).stdout.split()
    rows = [("neardup MinHasher (src/methods/minwise.rs)", float(out[0]), int(out[1]), int(out[2]))]

    # Our sketches against the Python reimplementation of the definition.
    raw = open(sketches, "rb").read()
    for d in (0, 1, args.docs - 1):
        ours = list(struct.unpack_from("<%dQ" % args.functions, raw, 8 * args.functions * d))
        if ours != sketch_by_definition(sets[d], args.functions, 1):
            sys.exit("document %d: sketch differs from the documented definition" % d)

    env = dict(os.environ, RAYON_NUM_THREADS="1")
    script = os.path.join(args.workdir, "py_side.py")
    with open(script, "w") as f:
        f.write(PY_SIDE)
    py_out = subprocess.run(
        pinned([python, script, data, str(args.functions), str(args.repeats)]),
        check=True, capture_output=True, text=True, env=env,
    ).stdout
    for line in py_out.strip().splitlines():
        name, t, n, s = line.rsplit(" ", 3)
        rows.append((name, float(t), int(n), int(s)))

    print("%d documents x %d shingles, %d functions, one core, best of %d"
          % (args.docs, args.shingles, args.functions, args.repeats))
    print("sketches of documents 0, 1, %d equal the Python reimplementation of the definition" % (args.docs - 1))
    print("%-45s %12s %14s" % ("signer", "documents/s", "shingles/s"))
    for name, t, n, s in rows:
        print("%-45s %12.0f %14.0f" % (name, n / t, s / t))


if __name__ == "__main__":
    main()
