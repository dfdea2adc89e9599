#!/usr/bin/env python3
"""Reads a `pipeline export --format warc` file record by record with
warcio, as another tool would, and compares it with the input crawl.

    check_warc_export.py EXPORT.warc.gz [--inputs FILE...] [--removed [--kept KEPT]] [--cdxj INDEX]

Checks, failing with a message (exit 1) at the first problem:
- every record of the export is one gzip member, and warcio reads it;
- a record whose WARC-Record-ID is that of a record of a WARC/1.x input is
  byte for byte that input record (uncompressed), whatever the input's
  compression (inputs warcio itself cannot read are listed, not compared);
- a record converted from ARC, WARC/0.x or a corpus is WARC/1.1 and says
  what it was (WARC-Source-Format);
- with --removed (the `--removed` export), every record is about a removed
  URL and names its kept copy, in one of two forms:
  - a revisit under the identical-payload-digest profile, with
    WARC-Payload-Digest, WARC-Refers-To-Target-URI, a W3C date in
    WARC-Refers-To-Date, and as block an HTTP response header (status line
    to blank line) or nothing;
  - a metadata record of type application/warc-fields whose block names
    the kept record (kept-target-uri, kept-date, kept-record-id), the
    reason and the similarity, with no field a replay tool follows
    (WARC-Refers-To*, WARC-Profile);
  with --kept KEPT.warc.gz too, the kept record named (WARC-Refers-To,
  kept-record-id) is a record of the kept export with that URI and date,
  and a revisit's payload digest is that record's payload digest (its
  WARC-Payload-Digest, else computed as warcio does): a revisit is only
  written for a byte-identical payload;
- with --cdxj, the index is sorted, names this file, and has one line per
  response, revisit, resource and metadata record (pywb's default), whose
  offset and length are that record's gzip member and whose url and
  timestamp are its WARC-Target-URI and WARC-Date.

Prints one JSON object of counts on stdout for the Rust test to compare
with the tables: records by type, byte-identical, converted, and the
record ids seen, and with --removed the revisits and notes.

warcio missing is exit code 3 (the Rust test fails on it under
NEARDUP_REQUIRE_SHARED=1, as `.ci/run` sets).
"""

import argparse
import base64
import hashlib
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

IDENTICAL_PAYLOAD = "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest"


def payload_digest(record):
    """A record's WARC-Payload-Digest, else the SHA-1 of its payload as
    stored (after the HTTP header, not decoded), as warcio and pywb compute
    it."""
    stored = record.rec_headers.get_header("WARC-Payload-Digest")
    if stored:
        return stored
    sha1 = hashlib.sha1()
    while True:
        piece = record.raw_stream.read(1 << 16)
        if not piece:
            break
        sha1.update(piece)
    return "sha1:" + base64.b32encode(sha1.digest()).decode("ascii").rstrip("=")


def warc_fields(block):
    """The `name: value` lines of an application/warc-fields block."""
    fields = {}
    for line in block.decode("utf-8").split("\r\n"):
        if line:
            name, _, value = line.partition(": ")
            fields[name] = value
    return fields


def check_removed(record, block, kept, counts):
    """A record of the removed export: a revisit of an identical payload
    or a note, naming its kept copy (see the module doc)."""
    headers = record.rec_headers
    rid = headers.get_header("WARC-Record-ID")
    if record.rec_type == "revisit":
        counts["revisits"] += 1
        if headers.get_header("WARC-Profile") != IDENTICAL_PAYLOAD:
            fail(f"revisit {rid} is not under {IDENTICAL_PAYLOAD}")
        digest = headers.get_header("WARC-Payload-Digest")
        if not digest:
            fail(f"revisit {rid} has no WARC-Payload-Digest")
        if block and not (block.startswith(b"HTTP/") and (block.endswith(b"\n\r\n") or block.endswith(b"\n\n"))):
            fail(f"revisit {rid}: its block is no HTTP response header: {block[:200]!r}")
        if block:
            counts["revisits_with_http_header"] += 1
        kept_uri, kept_date = headers.get_header("WARC-Refers-To-Target-URI"), headers.get_header("WARC-Refers-To-Date")
        kept_id = headers.get_header("WARC-Refers-To")
    elif record.rec_type == "metadata":
        counts["notes"] += 1
        if headers.get_header("Content-Type") != "application/warc-fields":
            fail(f"note {rid} is not application/warc-fields")
        followed = [n for n, _ in headers.headers if n.lower().startswith("warc-refers-to") or n.lower() == "warc-profile"]
        if followed:
            fail(f"note {rid} has fields replay tools follow: {followed}")
        fields = warc_fields(block)
        if fields.get("reason") not in ("near_duplicate", "exact_duplicate"):
            fail(f"note {rid}: no reason in {fields}")
        kept_uri, kept_date, kept_id = fields.get("kept-target-uri"), fields.get("kept-date"), fields.get("kept-record-id")
        digest = None
    else:
        fail(f"record {rid} of the removed export is a {record.rec_type}")
    if not kept_uri:
        fail(f"{rid} names no kept copy")
    if kept_date is None or not W3C.match(kept_date):
        fail(f"{rid}: the kept copy's date {kept_date} is no W3C date")
    if kept:
        if kept_id not in kept:
            fail(f"{rid}: the kept record {kept_id} is no record of the kept export")
        kept_record_uri, kept_record_date, kept_digest = kept[kept_id]
        if (kept_record_uri, kept_record_date) != (kept_uri, kept_date):
            fail(f"{rid} names {kept_id} as {kept_uri} at {kept_date}, but that record is "
                 f"{kept_record_uri} at {kept_record_date}")
        if digest is not None and digest != kept_digest:
            fail(f"revisit {rid}: payload digest {digest}, but its kept copy's is {kept_digest}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("export")
    ap.add_argument("--inputs", nargs="*", default=[])
    ap.add_argument("--removed", action="store_true")
    ap.add_argument("--kept")
    ap.add_argument("--cdxj")
    args = ap.parse_args()

    kept = {}
    if args.kept:
        for record in ArchiveIterator(open(args.kept, "rb"), check_digests=False):
            h = record.rec_headers
            digest = payload_digest(record) if record.rec_type in ("response", "resource", "conversion") else None
            kept[h.get_header("WARC-Record-ID")] = (h.get_header("WARC-Target-URI"), h.get_header("WARC-Date"), digest)

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
    if args.removed:
        counts.update({"revisits": 0, "revisits_with_http_header": 0, "notes": 0})
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
        if args.removed:
            # The block as stored: the record's bytes after its header, to
            # its length.
            block = raw[raw.index(b"\r\n\r\n") + 4:][: record.length]
            check_removed(record, block, kept, counts)
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
