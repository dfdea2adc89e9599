#!/usr/bin/env python3
"""Turns the runs of scripts/bench.sh into tables and bench.json.

For every run folder (one per scale) it reads the stage manifests
(`_manifests/<stage>.json`: wall_seconds, cpu_seconds, report.rows) and the
`/usr/bin/time -v` output of each stage's process (`_time/<stage>.txt`: peak
RSS), and prints per stage: input MB, documents, wall and CPU seconds,
documents per second, MB per CPU-second (throughput per core) and peak RSS.
With several scales it prints, for every stage, the growth of CPU time,
wall time and peak RSS from one scale to the next, and the exponent
log(cpu growth) / log(document growth): 1.0 is linear, 2.0 quadratic;
with three or more scales, the same from the smallest to the largest.

Usage: bench_report.py JSON_OUT SCALE:RUN_DIR:INPUT_BYTES [...]
"""

import json
import math
import re
import sys
from pathlib import Path

# The stages bench.sh runs, in its order (its STAGES): a stage left out here
# is missing from every total.
STAGES = ["ingest", "blocks", "boilerplate", "tokens", "exact", "stats", "descr_sample", "method_state", "signatures", "search_keys", "search_groups", "search_links", "search", "candidates", "verify_pairs", "verify", "place", "decide", "evaluate"]


def peak_rss_mb(time_file):
    """Maximum resident set size from GNU time's -v output, in MB."""
    try:
        text = time_file.read_text()
    except OSError:
        return None
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", text)
    return int(m.group(1)) / 1024 if m else None


def read_run(scale, run_dir, input_bytes):
    run_dir = Path(run_dir)
    mb = input_bytes / 1e6
    ingest = json.loads((run_dir / "_manifests" / "ingest.json").read_text())
    docs = ingest["report"]["rows"].get("documents", 0)
    stages = []
    for stage in STAGES:
        path = run_dir / "_manifests" / f"{stage}.json"
        if not path.exists():
            continue
        m = json.loads(path.read_text())
        wall, cpu = m["wall_seconds"], m["cpu_seconds"]
        stages.append(
            {
                "stage": stage,
                "wall_seconds": round(wall, 3),
                "cpu_seconds": round(cpu, 3),
                "docs_per_second": round(docs / wall, 1) if wall > 0 else None,
                "mb_per_cpu_second": round(mb / cpu, 3) if cpu > 0 else None,
                "peak_rss_mb": peak_rss_mb(run_dir / "_time" / f"{stage}.txt"),
                "rows": m["report"]["rows"],
            }
        )
    rss = [s["peak_rss_mb"] for s in stages if s["peak_rss_mb"] is not None]
    return {
        "scale": scale,
        "input_mb": round(mb, 3),
        "documents": docs,
        "wall_seconds": round(sum(s["wall_seconds"] for s in stages), 3),
        "cpu_seconds": round(sum(s["cpu_seconds"] for s in stages), 3),
        "peak_rss_mb": max(rss) if rss else None,
        "stages": stages,
    }


def fmt(v, digits=2):
    if v is None:
        return "-"
    if isinstance(v, float):
        return f"{v:.{digits}f}"
    return str(v)


def print_table(headers, rows):
    widths = [max(len(str(h)), *(len(r[i]) for r in rows)) for i, h in enumerate(headers)]
    print("  ".join(h.rjust(w) if i else h.ljust(w) for i, (h, w) in enumerate(zip(headers, widths))))
    for r in rows:
        print("  ".join(c.rjust(w) if i else c.ljust(w) for i, (c, w) in enumerate(zip(r, widths))))


def ratio(b, a):
    return b / a if a and b is not None else None


def growth(runs, pairs=None):
    """Growth of every stage between the runs of each pair (default:
    consecutive scales)."""
    out = []
    for prev, cur in pairs if pairs is not None else zip(runs, runs[1:]):
        doc_factor = ratio(cur["documents"], prev["documents"])
        by_stage = {s["stage"]: s for s in prev["stages"]}
        for s in cur["stages"] + [dict(cur, stage="total")]:
            p = by_stage.get(s["stage"]) if s["stage"] != "total" else prev
            if p is None:
                continue
            cpu = ratio(s["cpu_seconds"], p["cpu_seconds"])
            exponent = (
                math.log(cpu) / math.log(doc_factor) if cpu and doc_factor and doc_factor > 1 and cpu > 0 else None
            )
            out.append(
                {
                    "from_scale": prev["scale"],
                    "to_scale": cur["scale"],
                    "stage": s["stage"],
                    "document_factor": round(doc_factor, 3) if doc_factor else None,
                    "cpu_factor": round(cpu, 3) if cpu else None,
                    "wall_factor": round(ratio(s["wall_seconds"], p["wall_seconds"]) or 0, 3),
                    "rss_factor": round(ratio(s["peak_rss_mb"], p["peak_rss_mb"]) or 0, 3),
                    "exponent": round(exponent, 2) if exponent is not None else None,
                }
            )
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    json_out = sys.argv[1]
    runs = []
    for spec in sys.argv[2:]:
        scale, run_dir, input_bytes = spec.rsplit(":", 2)
        runs.append(read_run(int(scale), run_dir, int(input_bytes)))
    for run in runs:
        print(f"\nscale {run['scale']}: {run['documents']} documents, {run['input_mb']:.2f} MB input")
        rows = [
            [
                s["stage"],
                fmt(run["input_mb"]),
                str(run["documents"]),
                fmt(s["wall_seconds"]),
                fmt(s["cpu_seconds"]),
                fmt(s["docs_per_second"], 1),
                fmt(s["mb_per_cpu_second"], 3),
                fmt(s["peak_rss_mb"], 1),
            ]
            for s in run["stages"]
        ]
        rows.append(
            ["total", fmt(run["input_mb"]), str(run["documents"]), fmt(run["wall_seconds"]), fmt(run["cpu_seconds"]),
             fmt(run["documents"] / run["wall_seconds"] if run["wall_seconds"] else None, 1),
             fmt(run["input_mb"] / run["cpu_seconds"] if run["cpu_seconds"] else None, 3), fmt(run["peak_rss_mb"], 1)]
        )
        print_table(["stage", "input MB", "docs", "wall s", "CPU s", "docs/s", "MB/s/core", "peak RSS MB"], rows)
    grow = growth(runs)
    if grow:
        print("\ngrowth between consecutive scales (exponent: 1.0 linear, 2.0 quadratic)")
        print_table(
            ["scales", "stage", "docs x", "CPU x", "wall x", "RSS x", "exponent"],
            [
                [f"{g['from_scale']}->{g['to_scale']}", g["stage"], fmt(g["document_factor"]), fmt(g["cpu_factor"]),
                 fmt(g["wall_factor"]), fmt(g["rss_factor"]), fmt(g["exponent"])]
                for g in grow
            ],
        )
    overall = growth(runs, [(runs[0], runs[-1])]) if len(runs) > 2 else []
    if overall:
        print(f"\nexponent from the smallest to the largest scale ({runs[0]['scale']} -> {runs[-1]['scale']})")
        print_table(
            ["stage", "docs x", "CPU x", "RSS x", "exponent"],
            [[g["stage"], fmt(g["document_factor"]), fmt(g["cpu_factor"]), fmt(g["rss_factor"]), fmt(g["exponent"])]
             for g in overall],
        )
    Path(json_out).write_text(json.dumps({"runs": runs, "growth": grow, "overall": overall}, indent=2) + "\n")
    print(f"\nwrote {json_out}")


if __name__ == "__main__":
    main()
