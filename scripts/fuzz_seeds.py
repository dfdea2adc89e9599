#!/usr/bin/env python3
"""Builds the seed corpora of the fuzz targets (see scripts/fuzz.sh).

usage: fuzz_seeds.py OUT_DIR WARC_DIR [MORE_FILES_OR_DIRS...]

Writes OUT_DIR/<target>/<sha1> for the targets archive, http, html, charset,
jsonl and parquet, from real crawl files (never copied into the repository):
- archive: every archive file whole when at most 1 MB, else its first 1 MB;
  plus single records, plain and as one gzip member;
- http: the blocks of WARC response records (the target's first byte is a
  selector, 0 here);
- html and charset: the HTTP bodies of those records;
- jsonl: small JSON Lines files built from those pages (plain, gzip, zstd);
- parquet: small Parquet corpora of several schemas and codecs (needs
  pyarrow; skipped without it).
Only the standard library (and pyarrow, the zstd command when present).
"""

import gzip
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import zlib

MAX_ARCHIVE = 1 << 20
MAX_SMALL = 128 << 10
MAX_PER_TARGET = 400


def put(out, target, data):
    d = os.path.join(out, target)
    os.makedirs(d, exist_ok=True)
    name = hashlib.sha1(data).hexdigest()
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def gunzip_lenient(data):
    """All gzip members that decode, concatenated (stops at damage)."""
    out = bytearray()
    pos = 0
    while pos < len(data) and data[pos:pos + 2] == b"\x1f\x8b":
        d = zlib.decompressobj(16 + zlib.MAX_WBITS)
        try:
            out += d.decompress(data[pos:])
        except zlib.error:
            break
        if not d.eof:
            break
        pos = len(data) - len(d.unused_data)
    return bytes(out)


WARC_START = re.compile(rb"(?:^|\n)(WARC/[01]\.[0-9]+)\r?\n")


def warc_records(data):
    """(header, block, raw record bytes) of each WARC record found."""
    for m in WARC_START.finditer(data):
        start = m.start(1)
        end = data.find(b"\r\n\r\n", start)
        sep = 4
        if end < 0:
            end = data.find(b"\n\n", start)
            sep = 2
        if end < 0:
            continue
        header = data[start:end]
        cl = re.search(rb"(?im)^content-length:\s*([0-9]+)", header)
        if not cl:
            continue
        n = int(cl.group(1))
        block = data[end + sep:end + sep + n]
        yield header, block, data[start:end + sep + n] + b"\r\n\r\n"


def archive_files(paths):
    for p in paths:
        if os.path.isdir(p):
            for root, _, files in os.walk(p):
                for f in sorted(files):
                    yield os.path.join(root, f)
        elif os.path.isfile(p):
            yield p


def main():
    out, inputs = sys.argv[1], sys.argv[2:]
    for t in ("archive", "http", "html", "charset", "jsonl", "parquet"):
        shutil.rmtree(os.path.join(out, t), ignore_errors=True)
        os.makedirs(os.path.join(out, t))
    counts = {"http": 0, "html": 0, "charset": 0, "records": 0}
    bodies = []
    for path in archive_files(inputs):
        with open(path, "rb") as f:
            data = f.read()
        put(out, "archive", data[:MAX_ARCHIVE])
        plain = gunzip_lenient(data) if data[:2] == b"\x1f\x8b" else data
        for header, block, raw in warc_records(plain):
            if counts["records"] < MAX_PER_TARGET and len(raw) <= MAX_SMALL:
                counts["records"] += 1
                put(out, "archive", raw if counts["records"] % 2 else gzip.compress(raw))
            if not re.search(rb"(?im)^warc-type:\s*response", header):
                continue
            if len(block) > MAX_SMALL or not block.startswith(b"HTTP/"):
                continue
            if counts["http"] < MAX_PER_TARGET:
                counts["http"] += 1
                put(out, "http", bytes([counts["http"] % 256]) + block)
            head_end = block.find(b"\r\n\r\n")
            if head_end < 0:
                continue
            http_head, body = block[:head_end], block[head_end + 4:]
            if b"<" not in body[:2048]:
                continue
            if counts["html"] < MAX_PER_TARGET:
                counts["html"] += 1
                put(out, "html", body)
                bodies.append(body)
            if counts["charset"] < MAX_PER_TARGET:
                counts["charset"] += 1
                cs = re.search(rb"(?i)charset=([A-Za-z0-9_.:-]{1,31})", http_head)
                label = cs.group(1) if cs and counts["charset"] % 2 else b""
                put(out, "charset", bytes([len(label)]) + label + body[:16384])
    jsonl_seeds(out, bodies)
    parquet_seeds(out, bodies)
    for t in sorted(os.listdir(out)):
        print(f"{t}: {len(os.listdir(os.path.join(out, t)))} seeds")


def zstd_compress(data):
    if not shutil.which("zstd"):
        return None
    return subprocess.run(["zstd", "-q", "-c", "-1"], input=data, capture_output=True, check=True).stdout


def jsonl_seeds(out, bodies):
    """First byte: compression (0 none, 1 gzip, 2 zstd) + 4 when the target
    compresses the rest itself (see fuzz/fuzz_targets/jsonl.rs)."""
    files = []
    for i in range(0, min(len(bodies), 60), 3):
        lines = []
        for j, body in enumerate(bodies[i:i + 3]):
            html = body[:4096].decode("utf-8", "replace")
            rec = {"id": f"doc-{i + j}", "url": f"http://example.com/{i + j}"}
            rec["html" if j % 2 else "text"] = html
            if j == 2:
                rec = {"id": i + j, "text": html[:200], "html": html}
            lines.append(json.dumps(rec, ensure_ascii=(i % 2 == 0)))
        files.append(("\n".join(lines) + "\n").encode())
    files.append(
        b'{"id": 1, "text": "a"}\r\n\r\n[1,2]\n{"id": null, "text": "x"}\n{"id": "b", "text": 3}\n'
        b'{"id": "c"}\nnot json\n{"id": 1.5, "url": "u", "text": "  t  "}\n{"id": "d", "text": "cut'
    )
    for k, f in enumerate(files):
        put(out, "jsonl", b"\x00" + f)
        if k % 4 == 0:
            put(out, "jsonl", b"\x05" + f)
            put(out, "jsonl", b"\x01" + gzip.compress(f))
            z = zstd_compress(f)
            if z is not None:
                put(out, "jsonl", b"\x06" + f)
                put(out, "jsonl", b"\x02" + z)


def parquet_seeds(out, bodies):
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError:
        print("pyarrow missing: no parquet seeds", file=sys.stderr)
        return
    import io

    texts = [b[:1024].decode("utf-8", "replace") for b in bodies[:6]] or ["<p>hello</p>", "plain"]
    n = len(texts)
    tables = [
        pa.table({"id": [f"d{i}" for i in range(n)], "url": [f"http://e/{i}" for i in range(n)], "text": texts}),
        pa.table({"id": pa.array(range(n), pa.int64()), "html": texts}),
        pa.table({"id": [f"d{i}" for i in range(n)], "text": pa.array(texts, pa.large_string())}),
        pa.table({"id": [f"d{i}" for i in range(n)], "text": pa.array([t.encode() for t in texts], pa.binary())}),
        pa.table({"id": [f"d{i}" for i in range(n)], "text": pa.array(range(n), pa.int32())}),
        pa.table({"id": [None] + [f"d{i}" for i in range(1, n)], "text": [None] + texts[1:], "html": texts}),
        pa.table({"id": pa.array([f"d{i}" for i in range(n)]).dictionary_encode(), "text": texts}),
        pa.table({"id": [f"d{i}" for i in range(n)], "text": pa.array([[t] for t in texts])}),
        pa.table({"text": texts}),
    ]
    codecs = ["NONE", "SNAPPY", "GZIP", "ZSTD", "BROTLI", "LZ4"]
    k = 0
    for t in tables:
        for page_version in ("1.0", "2.0"):
            buf = io.BytesIO()
            pq.write_table(
                t,
                buf,
                compression=codecs[k % len(codecs)],
                row_group_size=2 if k % 2 else None,
                use_dictionary=k % 3 != 0,
                data_page_version=page_version,
                write_statistics=k % 2 == 0,
            )
            put(out, "parquet", buf.getvalue())
            k += 1


if __name__ == "__main__":
    main()
