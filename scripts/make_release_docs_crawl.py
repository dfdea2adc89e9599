#!/usr/bin/env python3
"""Turns several releases of one Debian documentation package into one
crawl of gzipped WARC files: a multi-release documentation site.

Why: a documentation site that keeps the manual of every release is the
case where a site template misleads verification most. Every page of every
release shares the navigation and footer; the same page of two releases is
a near-duplicate a reader would agree with, but two different short pages
(the release notes of 15.17 and of 15.18) are not, although template lines
make up most of their text. The boilerplate stage must tell them apart.
The output is written outside the repository and never committed.

Usage:
    scripts/make_release_docs_crawl.py OUT_DIR [--package NAME[=VERSION] ...] [--files N]

A package without a version stands for every version apt knows of it
(`apt-cache madison`). The default is postgresql-doc-15, of which Debian 12
carries two releases (bookworm and bookworm-security; 15.18 and 15.20 on
2026-11-24): about 2 x 1,150 pages.
Each release's `*.html` files become `response` records at
`https://www.postgresql.example/docs/<version>/<path>` (one host, as on the
real site). Packages are fetched with `apt-get download NAME=VERSION` into
OUT_DIR/.deb/. Deterministic, like scripts/make_javadoc_crawl.py (whose
record and page-listing functions this uses).
"""

import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from make_javadoc_crawl import pages, response_record  # noqa: E402

DEFAULT_PACKAGE = "postgresql-doc-15"


def releases(spec):
    """NAME=VERSION specs: the one given, or every version apt knows."""
    if "=" in spec:
        return [spec]
    lines = subprocess.run(["apt-cache", "madison", spec], check=True, capture_output=True, text=True).stdout
    versions = sorted({line.split("|")[1].strip() for line in lines.splitlines() if "|" in line})
    if not versions:
        sys.exit(f"apt knows no version of {spec}")
    return [f"{spec}={v}" for v in versions]


def fetch(spec, work):
    """The .deb of NAME=VERSION, downloaded once into `work`."""
    name, version = spec.split("=", 1)
    os.makedirs(work, exist_ok=True)
    want = f"{name}_{version.replace(':', '%3a')}_"
    have = [f for f in os.listdir(work) if f.startswith(want)]
    if not have:
        subprocess.run(["apt-get", "download", spec], cwd=work, check=True)
        have = [f for f in os.listdir(work) if f.startswith(want)]
    return name, version, os.path.join(work, have[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out_dir")
    ap.add_argument("--package", action="append", help="NAME=VERSION of a Debian documentation package (repeatable)")
    ap.add_argument("--files", type=int, default=2, help="number of WARC files")
    ap.add_argument("--host", default="www.postgresql.example", help="host of every page")
    args = ap.parse_args()
    os.makedirs(args.out_dir, exist_ok=True)
    chosen = []
    with tempfile.TemporaryDirectory() as tmp:
        specs = [r for p in args.package or [DEFAULT_PACKAGE] for r in releases(p)]
        for spec in specs:
            name, version, deb = fetch(spec, os.path.join(args.out_dir, ".deb"))
            root = os.path.join(tmp, f"{name}-{version}")
            subprocess.run(["dpkg", "-x", deb, root], check=True)
            docs = os.path.join(root, "usr", "share", "doc")
            release = version.split("-")[0]
            for p in pages(docs):
                with open(os.path.join(docs, p), "rb") as f:
                    chosen.append((f"https://{args.host}/docs/{release}/{p}", f.read()))
    chosen.sort()
    per_file = -(-len(chosen) // args.files)
    total = 0
    for f in range(args.files):
        path = os.path.join(args.out_dir, f"release-docs-{f:03d}.warc.gz")
        with open(path, "wb") as out:
            for url, html in chosen[f * per_file:(f + 1) * per_file]:
                total += len(html)
                out.write(response_record(url, html))
    print(f"{len(chosen)} pages, {total / 1e6:.1f} MB of HTML, {args.files} files in {args.out_dir}")


if __name__ == "__main__":
    main()
