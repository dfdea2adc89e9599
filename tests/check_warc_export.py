#!/usr/bin/env python3
"""Reads a `pipeline export --format warc` file record by record with
warcio, as another tool would, and compares it with the input crawl.

    check_warc_export.py EXPORT.warc.gz [--inputs FILE...] [--profile URI [--kept KEPT]] [--cdxj INDEX]

Checks, failing with a message (exit 1) at the first problem:
- every record of the export is one gzip member, and warcio reads it;
- a record whose WARC-Record-ID is that of a record of a WARC/1.x input is
  byte for byte that input record (uncompressed), whatever the input's
  compression (inputs warcio itself cannot read are listed, not compared);
- a record converted from ARC, WARC/0.x or a corpus is WARC/1.1 and says
  what it was (WARC-Source-Format);
- with --profile, every record is a revisit under that profile, naming its
  kept copy (WARC-Refers-To-Target-URI, a W3C date in WARC-Refers-To-Date);
  with --kept KEPT.warc.gz too, its WARC-Refers-To is the id of a record of
  the kept export with that URI, and WARC-Refers-To-Date that record's date;
- with --cdxj, the index is sorted, names this file, and has one line per
  response, revisit, resource and metadata record (pywb's default), whose
  offset and length are that record's gzip member and whose url and
  timestamp are its WARC-Target-URI and WARC-Date.

Prints one JSON object of counts on stdout for the Rust test to compare
with the tables: records by type, byte-identical, converted, and the
record ids seen.

warcio missing is exit code 3 (the Rust test fails on it under
NEARDUP_REQUIRE_SHARED=1, as `.ci/run` sets).
"""

import argparse
import gzip
import io
import json
import re
import sys
import zlib

try:
    from warcio.archiveiterator import ArchiveIterator
except ImportError:
    print("warcio is not installed (pip install warcio)", file=sys.stderr)
    sys.exit(3)


def fail(message):
    print(message, file=sys.stderr)
    sys.exit(1)


def decompressed(data):
    """A file's bytes, gunzipped member by member when it is gzip."""
    if not data.startswith(b"\x1f\x8b"):
        return data
    out = []
    while data:
        d = zlib.decompressobj(wbits=31)
        out.append(d.decompress(data))
        data = d.unused_data.lstrip(b"\x00\r\n ")
    return b"".join(out)


def input_records(path):
    """(record id, uncompressed bytes) of each record of a WARC/1.x file
    (from its header line to the next record's); None when warcio cannot
    read the file."""
    data = decompressed(open(path, "rb").read())
    if not re.match(rb"WARC/1\.[01]\r?\n", data[:16]):
        return {}
    records = []
    it = ArchiveIterator(io.BytesIO(data), check_digests=False)
    try:
        for record in it:
            it.read_to_end(record)
            records.append((record.rec_headers.get_header("WARC-Record-ID"), it.get_record_offset()))
    except Exception:  # a damaged input: warcio cannot say where its records are
        return None
    found = []
    for i, (rid, offset) in enumerate(records):
        end = records[i + 1][1] if i + 1 < len(records) else len(data)
        found.append((rid, data[offset:end]))
    return found


_INPUT_BYTES = None


def input_bytes(paths):
    """Every input file's decompressed bytes, read once."""
    global _INPUT_BYTES
    if _INPUT_BYTES is None:
        _INPUT_BYTES = [decompressed(open(p, "rb").read()) for p in paths]
    return _INPUT_BYTES


W3C = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("export")
    ap.add_argument("--inputs", nargs="*", default=[])
    ap.add_argument("--profile")
    ap.add_argument("--kept")
    ap.add_argument("--cdxj")
    args = ap.parse_args()

    kept = {}
    if args.kept:
        for record in ArchiveIterator(open(args.kept, "rb"), check_digests=False):
            h = record.rec_headers
            kept[h.get_header("WARC-Record-ID")] = (h.get_header("WARC-Target-URI"), h.get_header("WARC-Date"))

    originals = {}
    unreadable = []
    for path in args.inputs:
        found = input_records(path)
        if found is None:
            unreadable.append(path)
            continue
        # Ids are not unique across files (copies, test files): any input
        # record of the id will do.
        for rid, raw in found:
            originals.setdefault(rid, set()).add(raw)

    data = open(args.export, "rb").read()
    indexed = {}
    counts = {"records": 0, "identical": 0, "converted": 0, "by_type": {}, "ids": [], "inputs_warcio_cannot_read": unreadable}
    it = ArchiveIterator(io.BytesIO(data), check_digests=False)
    for record in it:
        it.read_to_end(record)
        offset, length = it.get_record_offset(), it.get_record_length()
        member = data[offset:offset + length]
        d = zlib.decompressobj(wbits=31)
        raw = d.decompress(member)
        if not d.eof or d.unused_data:
            fail(f"record at {offset}: not exactly one gzip member")
        if len(list(ArchiveIterator(io.BytesIO(raw)))) != 1:
            fail(f"record at {offset}: its gzip member does not hold exactly one record")
        headers = record.rec_headers
        rid = headers.get_header("WARC-Record-ID")
        rtype = record.rec_type
        counts["records"] += 1
        counts["by_type"][rtype] = counts["by_type"].get(rtype, 0) + 1
        counts["ids"].append(rid)
        if not rid or not headers.get_header("WARC-Date"):
            fail(f"record at {offset}: no WARC-Record-ID or WARC-Date")
        if headers.get_header("WARC-Source-Format"):
            counts["converted"] += 1
            if not raw.startswith(b"WARC/1.1\r\n"):
                fail(f"converted record {rid} is not WARC/1.1")
            if not W3C.match(headers.get_header("WARC-Date")):
                fail(f"converted record {rid}: WARC-Date {headers.get_header('WARC-Date')} is no W3C date")
        elif rid in originals:
            # Line ends after a record's closing CRLF CRLF are the gap to
            # the next record, not part of the record (ClueWeb12's extra LF
            # in copycat/0000tw-00.warc.gz); the export writes none.
            # Ids are not unique across the inputs, and warcio cannot
            # read some of them (header lines ending CR CR LF): a record
            # found byte for byte in an input file is its input record, up
            # to its end, which the export writes as CRLF CRLF whatever the
            # input had there (pywb's missing-status-text.warc ends its
            # record with CR CR LF CR CR LF).
            trimmed = {o.rstrip(b"\r\n") for o in originals[rid]}
            body = raw[:-4] if raw.endswith(b"\r\n\r\n") else raw
            if (
                raw not in originals[rid]
                and raw.rstrip(b"\r\n") not in trimmed
                and not any(body in whole for whole in input_bytes(args.inputs))
            ):
                some = next(iter(originals[rid]))
                fail(f"record {rid} ({rtype}) differs from its input record:\n{raw[:300]!r}\n{some[:300]!r}")
            counts["identical"] += 1
        fields = headers.get_header("Content-Type") or ""
        if rtype in ("response", "revisit") or (rtype in ("resource", "metadata") and fields != "application/warc-fields"):
            indexed[offset] = (length, headers.get_header("WARC-Target-URI"), headers.get_header("WARC-Date"))
        if args.profile:
            if rtype != "revisit" or headers.get_header("WARC-Profile") != args.profile:
                fail(f"record {rid}: not a revisit under {args.profile}")
            if not headers.get_header("WARC-Refers-To-Target-URI"):
                fail(f"revisit {rid} names no kept copy")
            kept_date = headers.get_header("WARC-Refers-To-Date")
            if kept_date is None or not W3C.match(kept_date):
                fail(f"revisit {rid}: WARC-Refers-To-Date {kept_date} is no W3C date")
            if args.kept:
                refers_to = headers.get_header("WARC-Refers-To")
                if refers_to not in kept:
                    fail(f"revisit {rid}: WARC-Refers-To {refers_to} is no record of {args.kept}")
                kept_uri, kept_record_date = kept[refers_to]
                if (kept_uri, kept_record_date) != (headers.get_header("WARC-Refers-To-Target-URI"), kept_date):
                    fail(f"revisit {rid} names {refers_to} as {headers.get_header('WARC-Refers-To-Target-URI')} "
                         f"at {kept_date}, but that record is {kept_uri} at {kept_record_date}")
            if record.length != 0:
                fail(f"revisit {rid} has a block")
    if args.cdxj:
        check_index(args.cdxj, args.export, indexed)
        counts["index_lines"] = len(indexed)
    print(json.dumps(counts))


def check_index(path, warc, indexed):
    lines = open(path, encoding="utf-8").read().splitlines()
    if lines != sorted(lines, key=lambda l: l.encode("utf-8")):
        fail(f"{path} is not sorted")
    seen = set()
    name = warc.rsplit("/", 1)[-1]
    for line in lines:
        key, timestamp, fields = line.split(" ", 2)
        entry = json.loads(fields)
        offset, length = int(entry["offset"]), int(entry["length"])
        if entry["filename"] != name:
            fail(f"{path}: {line} names {entry['filename']}, not {name}")
        if offset not in indexed or indexed[offset][0] != length:
            fail(f"{path}: {line} is no record's gzip member")
        _, url, date = indexed[offset]
        digits = re.sub(r"\D", "", date)
        dated = len(digits) < 8 or timestamp[:8] == digits[:8]
        if entry["url"] != url.replace(" ", "%20") or not re.match(r"^\d{14}$", timestamp) or not dated:
            fail(f"{path}: {line} does not say the record's url {url} and date {date}")
        seen.add(offset)
    if seen != set(indexed):
        fail(f"{path}: {len(set(indexed) - seen)} records of the WARC are not in the index")


if __name__ == "__main__":
    main()
