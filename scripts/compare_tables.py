#!/usr/bin/env python3
"""Checks that two output folders hold the same tables, row for row.

Usage: scripts/compare_tables.py [--bin PIPELINE] [--except TABLE.COLUMN ...]
                                 [--only TABLE ...] BEFORE_DIR AFTER_DIR

For a change that must not alter results (a refactor, a faster method):
run the old and the new binary over the same input into two folders, then
compare them here. Every table of either folder (each sub-folder that is
not `_manifests` or hidden) is read through `pipeline query` as JSON lines,
the lines are sorted (row order inside a table is not part of its meaning
for most tables, and sorting makes the check independent of part files),
and the two sorted lists must be equal. `--except documents.text` leaves a
column out, for a change that alters that column on purpose; a column only
one side has (one a change adds or removes) is a difference unless it is
left out so, and then the other columns are compared.

Prints one line per table (`same`, `DIFFERENT`, `only in BEFORE`/`AFTER`)
with row counts, and for a different table the first rows of each side
that the other lacks. Exit code 0 when every table is the same, 1 when any
differs, 2 for bad usage.
"""

import argparse
import collections
import hashlib
import json
import os
import subprocess
import sys


def tables_of(folder):
    """The table names of an output folder: its sub-folders, without the
    manifests and hidden work folders."""
    return {
        name
        for name in os.listdir(folder)
        if os.path.isdir(os.path.join(folder, name)) and not name.startswith(("_", "."))
    }


def query_lines(binary, folder, sql, what):
    """The JSON lines `pipeline query` gives for `sql` over `folder`."""
    result = subprocess.run(
        [binary, "--quiet", "query", "--out", folder, "--format", "json", sql],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        sys.exit(f"{what} in {folder} failed: {result.stderr.strip()}")
    return [line for line in result.stdout.splitlines() if line.strip()]


def sorted_rows(binary, folder, table, excluded):
    """The rows of `table` as sorted JSON lines, without the columns in
    `excluded`."""
    select = f"* EXCLUDE ({', '.join(excluded)})" if excluded else "*"
    return sorted(query_lines(binary, folder, f"SELECT {select} FROM {table}", f"query of `{table}`"))


def columns_of(binary, folder, table):
    """The column names of `table`, in order."""
    lines = query_lines(binary, folder, f"DESCRIBE {table}", f"DESCRIBE of `{table}`")
    return [json.loads(line)["column_name"] for line in lines]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bin", default=os.environ.get("PIPELINE", "target/release/pipeline"),
                        help="the pipeline binary used to read the tables (default: target/release/pipeline)")
    parser.add_argument("--except", dest="excepted", action="append", default=[], metavar="TABLE.COLUMN",
                        help="a column left out of the comparison (repeatable)")
    parser.add_argument("--only", action="append", default=[], metavar="TABLE",
                        help="compare only these tables (repeatable)")
    parser.add_argument("before")
    parser.add_argument("after")
    args = parser.parse_args()

    excluded = collections.defaultdict(list)
    for item in args.excepted:
        table, dot, column = item.partition(".")
        if not dot or not table or not column:
            parser.error(f"--except takes TABLE.COLUMN, not `{item}`")
        excluded[table].append(column)

    before, after = tables_of(args.before), tables_of(args.after)
    names = sorted(set(args.only) if args.only else before | after)
    same = True
    for table in names:
        if table not in after:
            print(f"{table}: only in {args.before}")
            same = False
            continue
        if table not in before:
            print(f"{table}: only in {args.after}")
            same = False
            continue
        old_columns = columns_of(args.bin, args.before, table)
        new_columns = columns_of(args.bin, args.after, table)
        one_sided = [c for c in old_columns + new_columns
                     if (c in old_columns) != (c in new_columns) and c not in excluded[table]]
        if one_sided:
            print(f"{table}: DIFFERENT columns, only on one side: {', '.join(one_sided)}")
            same = False
            continue
        old = sorted_rows(args.bin, args.before, table, [c for c in excluded[table] if c in old_columns])
        new = sorted_rows(args.bin, args.after, table, [c for c in excluded[table] if c in new_columns])
        if old == new:
            digest = hashlib.md5("\n".join(old).encode()).hexdigest()[:12]
            print(f"{table}: same ({len(old)} rows, md5 {digest})")
            continue
        same = False
        print(f"{table}: DIFFERENT ({len(old)} rows before, {len(new)} after)")
        old_count, new_count = collections.Counter(old), collections.Counter(new)
        for label, rows in (("only before", old_count - new_count), ("only after", new_count - old_count)):
            for row in list(rows.elements())[:3]:
                print(f"    {label}: {row[:300]}")
    sys.exit(0 if same else 1)


if __name__ == "__main__":
    main()
