#!/usr/bin/env python3
"""Turns Debian's Javadoc packages into a crawl of gzipped WARC files.

Why: real crawls are full of templated sites, and generated API
documentation is the archetype: every page shares the site's navigation,
headers and boilerplate, and type-specialized libraries have thousands of
nearly identical pages (fastutil's IntArrayList, LongArrayList, ...). It is
the large real templated crawl of the linear-cost benchmark
(`scripts/bench.sh`). The output is written outside the repository and never
committed.

Usage:
    scripts/make_javadoc_crawl.py OUT_DIR [--fraction F] [--files N] [--package NAME ...] [--deb PATH ...]

The default packages are openjdk-17-doc (10,140 pages), libfastutil-java-doc
(4,397), libapache-poi-java-doc (5,393) and libbiojava-java-doc (4,963):
24,893 pages, 770 MB of HTML (Debian 12). Packages not given as --deb are
downloaded with `apt-get download` into OUT_DIR/.deb/. Every regular
`*.html` file under the package's /usr/share/doc becomes one `response`
record (HTTP/1.1 200, text/html) at
`https://<package>.javadoc.example/<path>`, after a `warcinfo` record; each
record is its own gzip member (the Common Crawl convention). Pages are split
into N files (default 8) in contiguous runs of the sorted URLs.

--fraction F keeps a uniform sample of the pages: those whose path hashes
(SHA-1) below F. The sample of 0.25 is one quarter of the site with the
same mix of page kinds, and it is a subset of the sample of 0.5.

Deterministic: the same package gives byte-identical files (fixed dates,
record ids derived from the paths, gzip without timestamps).
"""

import argparse
import gzip
import hashlib
import io
import os
import subprocess
import sys
import tempfile
import uuid

DEFAULT_PACKAGES = ["openjdk-17-doc", "libfastutil-java-doc", "libapache-poi-java-doc", "libbiojava-java-doc"]
WARC_DATE = "2026-01-01T00:00:00Z"
NAMESPACE = uuid.UUID("6f1d7c2e-9a53-4b8e-8a61-2f3c4d5e6a7b")


def record(headers, block):
    """One WARC record as bytes, gzipped as its own member."""
    head = "WARC/1.0\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers) + f"Content-Length: {len(block)}\r\n\r\n"
    raw = head.encode("utf-8") + block + b"\r\n\r\n"
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", mtime=0) as gz:
        gz.write(raw)
    return out.getvalue()


def response_record(url, html):
    """The `response` record of a page served as HTTP/1.1 200 text/html,
    with an id derived from its URL."""
    http = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            + f"Content-Length: {len(html)}\r\n\r\n".encode() + html)
    return record([
        ("WARC-Type", "response"),
        ("WARC-Record-ID", f"<urn:uuid:{uuid.uuid5(NAMESPACE, url)}>"),
        ("WARC-Date", WARC_DATE),
        ("WARC-Target-URI", url),
        ("Content-Type", "application/http; msgtype=response"),
    ], http)


def pages(api_root):
    """Every regular .html file under api_root, as sorted relative paths;
    symlinks are skipped so that each file is read once."""
    found = []
    for dirpath, dirnames, filenames in os.walk(api_root):
        dirnames.sort()
        for name in filenames:
            path = os.path.join(dirpath, name)
            if name.endswith(".html") and os.path.isfile(path) and not os.path.islink(path):
                found.append(os.path.relpath(path, api_root))
    return sorted(found)


def in_sample(rel, fraction):
    if fraction >= 1.0:
        return True
    h = int.from_bytes(hashlib.sha1(rel.encode("utf-8")).digest()[:8], "big")
    return h < fraction * 2**64


def package_debs(args):
    """(package name, .deb path) for every package asked for."""
    given = {os.path.basename(d).split("_")[0]: d for d in args.deb or []}
    names = args.package or (list(given) if given else DEFAULT_PACKAGES)
    work = os.path.join(args.out_dir, ".deb")
    debs = []
    for name in names:
        if name not in given:
            os.makedirs(work, exist_ok=True)
            have = [f for f in os.listdir(work) if f.startswith(name + "_") and f.endswith(".deb")]
            if not have:
                subprocess.run(["apt-get", "download", name], cwd=work, check=True)
                have = [f for f in os.listdir(work) if f.startswith(name + "_") and f.endswith(".deb")]
            given[name] = os.path.join(work, sorted(have)[0])
        debs.append((name, given[name]))
    return debs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--fraction", type=float, default=1.0, help="share of pages kept (uniform sample by path hash)")
    ap.add_argument("--files", type=int, default=8, help="number of WARC files")
    ap.add_argument("--package", action="append", help="a Debian package with Javadoc (repeatable)")
    ap.add_argument("--deb", action="append", help="an already downloaded package file (repeatable)")
    args = ap.parse_args()
    if not 0 < args.fraction <= 1 or args.files < 1:
        sys.exit("--fraction must be in (0, 1] and --files at least 1")
    os.makedirs(args.out_dir, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        chosen = []
        for name, deb in package_debs(args):
            root = os.path.join(tmp, name)
            subprocess.run(["dpkg", "-x", deb, root], check=True)
            docs = os.path.join(root, "usr", "share", "doc")
            base = f"https://{name}.javadoc.example/"
            chosen.extend((base + p, os.path.join(docs, p)) for p in pages(docs) if in_sample(name + "/" + p, args.fraction))
        chosen.sort()
        per_file = -(-len(chosen) // args.files)
        total_bytes = 0
        for f in range(args.files):
            part = chosen[f * per_file:(f + 1) * per_file]
            name = os.path.join(args.out_dir, f"javadoc-{f:03d}.warc.gz")
            with open(name, "wb") as out:
                info = b"software: scripts/make_javadoc_crawl.py\r\n"
                out.write(record([
                    ("WARC-Type", "warcinfo"),
                    ("WARC-Record-ID", f"<urn:uuid:{uuid.uuid5(NAMESPACE, 'warcinfo-' + str(f))}>"),
                    ("WARC-Date", WARC_DATE),
                    ("WARC-Filename", os.path.basename(name)),
                    ("Content-Type", "application/warc-fields"),
                ], info))
                for url, path in part:
                    with open(path, "rb") as page:
                        html = page.read()
                    total_bytes += len(html)
                    out.write(response_record(url, html))
        print(f"{len(chosen)} pages, {total_bytes / 1e6:.1f} MB of HTML, {args.files} files in {args.out_dir}")


if __name__ == "__main__":
    main()
