#!/usr/bin/env python3
"""Ingest beside FastWARC + Resiliparse on one crawl folder, taking turns.

Why: ingest (WARC records to page texts) is most of the cost of a run at
web scale (docs/scale.md), and the field's fastest extractor is FastWARC's
reader with Resiliparse's `extract_plain_text`. This machine is noisy, so
the two are only compared side by side: run after run, in turns, and every
run is printed (issue 69).

Usage:
    scripts/ingest_vs_fastwarc.py CRAWL_DIR [--bin [LABEL=]PIPELINE ...]
        [--runs N] [--venv DIR] [--work DIR] [--threads T] [--json FILE]

- CRAWL_DIR: a folder of WARC files (`*.warc`, `*.warc.gz`), read whole by
  both sides.
- --bin: a release build of `pipeline` (repeatable, e.g.
  `--bin base=/work/bin/pipeline-7ec1fad --bin new=target/release/pipeline`;
  default `target/release/pipeline`). Each runs `pipeline run --stage
  ingest --threads T` (default 1) into its own folder under --work.
- The peer runs in its own virtual environment (--venv, default
  `target/fastwarc-venv`), made on the first run with `fastwarc` and
  `resiliparse` from PyPI. It reads every `response` record with FastWARC
  (HTTP headers parsed), keeps those whose HTTP Content-Type is HTML (or
  missing), decodes the body (charset from `detect_encoding`) and calls
  `extract_plain_text` on it, as one process on one core.
- --runs N rounds (default 3); each round runs every contestant once, in
  turns (base, new, peer, base, new, peer, ...).

Prints, per run, CPU seconds (user + system of the process and its
children, from wait4), peak RSS and MB of HTML per CPU-second (HTML =
the bytes of the HTML bodies the peer read, the same input for every
contestant); then per contestant the median, and each pipeline's ratio to
the peer run by run (a pipeline run over the peer run of the same round)
and its median. --json writes all of it to FILE.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# The peer's inner loop: FastWARC's iterator, Resiliparse's extraction.
PEER = r"""
import glob, json, os, sys
from fastwarc.warc import ArchiveIterator, WarcRecordType
from resiliparse.extract.html2text import extract_plain_text
from resiliparse.parse.encoding import bytes_to_str, detect_encoding

pages = html_bytes = text_chars = 0
paths = sorted(glob.glob(os.path.join(sys.argv[1], "*.warc*")))
for path in paths:
    with open(path, "rb") as stream:
        for record in ArchiveIterator(stream, record_types=WarcRecordType.response, parse_http=True):
            ctype = (record.http_content_type or "").lower()
            if ctype and "html" not in ctype:
                continue
            body = record.reader.read()
            text = extract_plain_text(bytes_to_str(body, detect_encoding(body)))
            pages += 1
            html_bytes += len(body)
            text_chars += len(text)
print(json.dumps({"files": len(paths), "pages": pages, "html_bytes": html_bytes, "text_chars": text_chars}))
"""


def ensure_venv(venv):
    """The venv's python with fastwarc and resiliparse, installed from PyPI
    the first time."""
    python = os.path.join(venv, "bin", "python")
    probe = [python, "-c", "import fastwarc, resiliparse"]
    if os.path.exists(python) and subprocess.run(probe, capture_output=True).returncode == 0:
        return python
    print(f"making {venv} with fastwarc and resiliparse from PyPI", file=sys.stderr)
    subprocess.run([sys.executable, "-m", "venv", venv], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "--upgrade", "pip"], check=True)
    subprocess.run([python, "-m", "pip", "install", "--quiet", "fastwarc", "resiliparse"], check=True)
    subprocess.run(probe, check=True)
    return python


def timed(cmd, ok_codes=(0,)):
    """Runs cmd; returns (CPU seconds, peak RSS in MB, wall seconds, stdout)."""
    start = time.monotonic()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # wait4 gives the rusage of this child and the children it waited for.
    out = proc.stdout.read()
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    wall = time.monotonic() - start
    if proc.returncode not in ok_codes:
        sys.stderr.write(err.decode(errors="replace"))
        sys.exit(f"{cmd[0]} failed with exit code {proc.returncode}")
    return usage.ru_utime + usage.ru_stime, usage.ru_maxrss / 1024, wall, out.decode()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("crawl")
    ap.add_argument("--bin", action="append", help="[LABEL=]PATH of a pipeline release build (repeatable)")
    ap.add_argument("--runs", type=int, default=3, help="rounds of turns (default 3)")
    ap.add_argument("--venv", default=os.path.join(ROOT, "target", "fastwarc-venv"))
    ap.add_argument("--work", default=os.path.join(ROOT, "target", "ingest-vs-fastwarc"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--json", help="write every run and the summary to this file")
    args = ap.parse_args()
    files = sorted(
        os.path.join(args.crawl, f) for f in os.listdir(args.crawl) if f.endswith((".warc", ".warc.gz"))
    )
    if not files or args.runs < 1:
        sys.exit(f"no WARC files in {args.crawl}" if not files else "--runs must be at least 1")
    bins = []
    for spec in args.bin or [os.path.join(ROOT, "target", "release", "pipeline")]:
        label, _, path = spec.rpartition("=")
        bins.append((label or os.path.basename(path), os.path.abspath(path)))
    python = ensure_venv(args.venv)
    peer_script = os.path.join(args.work, "peer.py")
    os.makedirs(args.work, exist_ok=True)
    with open(peer_script, "w") as f:
        f.write(PEER)

    runs = []
    html_bytes = None
    for rnd in range(args.runs):
        for label, path in bins:
            out = os.path.join(args.work, f"out-{label}")
            cmd = [path, "--quiet", "run", "--stage", "ingest", "--threads", str(args.threads), "--force",
                   "--out", out, "--input", *files]
            # 3: the run finished but some input file could not be read.
            cpu, rss, wall, _ = timed(cmd, ok_codes=(0, 3))
            runs.append({"round": rnd, "who": label, "cpu_s": cpu, "rss_mb": rss, "wall_s": wall})
            print(f"round {rnd + 1} {label:>10}: {cpu:7.2f} CPU-s {wall:7.2f} s wall {rss:7.0f} MB RSS", flush=True)
        cpu, rss, wall, out = timed([python, peer_script, args.crawl])
        seen = json.loads(out)
        html_bytes = seen["html_bytes"]
        runs.append({"round": rnd, "who": "peer", "cpu_s": cpu, "rss_mb": rss, "wall_s": wall, **seen})
        print(f"round {rnd + 1} {'peer':>10}: {cpu:7.2f} CPU-s {wall:7.2f} s wall {rss:7.0f} MB RSS "
              f"({seen['pages']} pages, {html_bytes / 1e6:.1f} MB HTML)", flush=True)

    mb = html_bytes / 1e6
    peer = {r["round"]: r["cpu_s"] for r in runs if r["who"] == "peer"}
    summary = {}
    print(f"\n{mb:.1f} MB of HTML in {len(files)} files; {args.runs} rounds, threads {args.threads}")
    print("| | CPU-s, every run | median CPU-s | MB HTML per CPU-s (median) | ratio to peer, every round | median ratio | peak RSS MB (max) |")
    print("|---|---|---:|---:|---|---:|---:|")
    for who in [label for label, _ in bins] + ["peer"]:
        mine = [r for r in runs if r["who"] == who]
        cpus = [r["cpu_s"] for r in mine]
        ratios = [r["cpu_s"] / peer[r["round"]] for r in mine]
        med = statistics.median(cpus)
        summary[who] = {"cpu_s": cpus, "median_cpu_s": med, "mb_per_cpu_s": mb / med,
                        "ratios": ratios, "median_ratio": statistics.median(ratios),
                        "max_rss_mb": max(r["rss_mb"] for r in mine)}
        print(f"| {who} | {', '.join(f'{c:.2f}' for c in cpus)} | {med:.2f} | {mb / med:.1f} | "
              f"{', '.join(f'{x:.2f}' for x in ratios)} | {statistics.median(ratios):.2f} | "
              f"{summary[who]['max_rss_mb']:.0f} |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"crawl": args.crawl, "html_bytes": html_bytes, "runs": runs, "summary": summary}, f, indent=1)


if __name__ == "__main__":
    main()
