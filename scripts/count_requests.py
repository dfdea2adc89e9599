#!/usr/bin/env python3
"""Counts the object-store requests of every stage, run as N tasks.

Why: at web scale a run's tables live in an object store, and what a
stage costs there is its requests. A map task that reads a whole table to
keep 1/N of it makes N x parts GETs, so a stage of N tasks over a table of
N parts makes N^2 (docs/scale.md, issue 72): this script measures how the
requests of each stage grow with the tasks.

Usage:
    scripts/count_requests.py CRAWL [--tasks 4,8] [--bin PIPELINE]
        [--work DIR] [--json FILE]

- CRAWL: the input (WARC files or a folder), read from local disk: only
  the tables' requests are counted.
- Runs moto's S3 server on loopback (`pip install 'moto[server]'`) and,
  for each N of --tasks, every stage of `pipeline run --stage all` in
  order into `s3://neardup/tasks-N`: a shardable stage as N tasks
  (`--shard I/N`), one after another, task I with its own --cache folder
  kept across the stages (a machine that runs task I of every stage, as
  on a cluster; it holds what it wrote itself), the other stages as one
  task with cache 0.
- Counts the server's access log per stage: GET (object reads and
  listings), PUT, and the others (HEAD, POST, DELETE).

Prints one table per N and the growth of each stage's GETs from one N to
the next (1.0 = constant, 2.0 = linear in the tasks when N doubles, 4.0 =
quadratic).
"""

import argparse
import json
import os
import re
import shutil
import socket
import subprocess
import sys
import time
import urllib.request

STAGES = [
    "ingest", "blocks", "boilerplate", "tokens", "exact", "stats", "descr_sample", "method_state",
    "signatures", "search_keys", "search_groups", "search_links", "search", "candidates",
    "verify_pairs", "verify", "place", "decide", "evaluate",
]
REQUEST = re.compile(r'"(GET|PUT|HEAD|POST|DELETE) (\S+) HTTP')


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(log_path):
    port = free_port()
    log = open(log_path, "w")
    child = subprocess.Popen(["moto_server", "-H", "127.0.0.1", "-p", str(port)], stdout=log, stderr=log)
    endpoint = f"http://127.0.0.1:{port}"
    deadline = time.time() + 60
    while True:
        try:
            urllib.request.urlopen(urllib.request.Request(endpoint + "/neardup", method="PUT"))
            return child, endpoint
        except OSError:
            if time.time() > deadline or child.poll() is not None:
                sys.exit("moto_server did not start (pip install 'moto[server]')")
            time.sleep(0.2)


def log_lines(path):
    with open(path, errors="replace") as f:
        return f.readlines()


def count(lines):
    counts = {"GET": 0, "PUT": 0, "other": 0}
    for line in lines:
        m = REQUEST.search(line)
        if m:
            counts[m.group(1) if m.group(1) in ("GET", "PUT") else "other"] += 1
    return counts


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("crawl")
    ap.add_argument("--tasks", default="4,8")
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(__file__), "..", "target", "release", "pipeline"))
    ap.add_argument("--work", default="target/count-requests")
    ap.add_argument("--json")
    args = ap.parse_args()
    tasks = [int(n) for n in args.tasks.split(",")]
    shutil.rmtree(args.work, ignore_errors=True)
    os.makedirs(args.work)
    log_path = os.path.join(args.work, "s3.log")
    server, endpoint = start_server(log_path)
    env = dict(os.environ, AWS_ENDPOINT=endpoint, AWS_ALLOW_HTTP="true", AWS_ACCESS_KEY_ID="test",
               AWS_SECRET_ACCESS_KEY="test", AWS_REGION="us-east-1")
    results = {}
    try:
        for n in tasks:
            out = f"s3://neardup/tasks-{n}"
            per_stage = {}
            for stage in STAGES:
                before = len(log_lines(log_path))
                for i in range(n):
                    cache = os.path.join(args.work, f"tasks-{n}", f"cache-{i}")
                    cmd = [args.bin, "--quiet", "run", "--stage", stage, "--input", args.crawl, "--out", out,
                           "--cache", cache, "--shard", f"{i}/{n}"]
                    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
                    if p.returncode == 2 and "shard" in p.stderr and i == 0:
                        # Not a map stage: one task.
                        cmd = cmd[:-2]
                        p = subprocess.run(cmd, env=env, capture_output=True, text=True)
                        if p.returncode not in (0, 3):
                            sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
                        break
                    if p.returncode not in (0, 3):
                        sys.exit(f"{' '.join(cmd)} failed ({p.returncode}):\n{p.stderr}")
                time.sleep(0.3)  # the server's log catches up
                per_stage[stage] = count(log_lines(log_path)[before:])
            results[n] = per_stage
            print(f"\n{n} tasks per map stage")
            print(f"| stage | GET | PUT | other |\n|---|---:|---:|---:|")
            for stage, c in per_stage.items():
                print(f"| {stage} | {c['GET']} | {c['PUT']} | {c['other']} |")
            total = {k: sum(c[k] for c in per_stage.values()) for k in ("GET", "PUT", "other")}
            print(f"| **all** | **{total['GET']}** | **{total['PUT']}** | **{total['other']}** |")
    finally:
        server.terminate()
        server.wait()
    for a, b in zip(tasks, tasks[1:]):
        print(f"\nGETs at {b} tasks over GETs at {a} (tasks x{b / a:g}):")
        for stage in STAGES:
            ga, gb = results[a][stage]["GET"], results[b][stage]["GET"]
            print(f"  {stage}: {ga} -> {gb} ({gb / ga:.2f}x)" if ga else f"  {stage}: {ga} -> {gb}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
