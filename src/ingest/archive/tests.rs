//! The archive reader on archives written here, damaged every way it meets.

use super::*;
use std::io::{Read, Write};

/// Writes `bytes` to a fresh temporary file and scans it.
fn scan_bytes(name: &str, bytes: &[u8], max_block: u64) -> (ArchiveInfo, Vec<ArchiveEvent>) {
    let dir = std::env::temp_dir().join(format!("neardup-archive-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    let mut events = Vec::new();
    let info = scan_archive(&path, max_block, &mut |e| events.push(e)).unwrap();
    std::fs::remove_file(&path).unwrap();
    (info, events)
}

fn warc(rtype: &str, uri: &str, block: &str) -> String {
    format!(
        "WARC/1.0\r\nWARC-Type: {rtype}\r\nWARC-Target-URI: {uri}\r\nWARC-Date: null\r\n\
         Content-Length: {}\r\n\r\n{block}\r\n\r\n",
        block.len()
    )
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

/// (offset, record type or reason, block) of each event.
fn summary(events: &[ArchiveEvent]) -> Vec<(u64, String, String)> {
    events
        .iter()
        .map(|e| match e {
            ArchiveEvent::Record(r) => {
                let mut kind = r.record_type.clone();
                if r.truncated {
                    kind.push_str("+truncated");
                }
                if r.too_large {
                    kind.push_str("+too_large");
                }
                (r.offset, kind, String::from_utf8_lossy(&r.block).into_owned())
            }
            ArchiveEvent::Malformed { offset, reason, .. } => (*offset, reason.clone(), String::new()),
        })
        .collect()
}

#[test]
fn arc_dates() {
    assert_eq!(arc_date_to_iso("20080430204825").as_deref(), Some("2008-04-30T20:48:25Z"));
    assert_eq!(arc_date_to_iso("200804302048").as_deref(), Some("2008-04-30T20:48:00Z"));
    assert_eq!(arc_date_to_iso("2008").as_deref(), Some("2008-01-01T00:00:00Z"));
    assert_eq!(arc_date_to_iso("null"), None);
    assert_eq!(arc_date_to_iso("201404010000000000"), None);
    assert_eq!(arc_date_to_iso("2008043"), None);
}

#[test]
fn plain_warc_records_and_offsets() {
    let a = warc("warcinfo", "x", "software: test");
    let b = warc("response", "<http://e.com/a b>", "HTTP/1.1 200 OK\r\n\r\nhi");
    let (info, ev) = scan_bytes("plain.warc", format!("{a}{b}").as_bytes(), 1 << 20);
    assert_eq!((info.format.as_str(), info.compression.as_str()), ("WARC/1.0", "none"));
    assert_eq!(
        summary(&ev),
        vec![
            (0, "warcinfo".into(), "software: test".into()),
            (a.len() as u64, "response".into(), "HTTP/1.1 200 OK\r\n\r\nhi".into())
        ]
    );
    let ArchiveEvent::Record(r) = &ev[1] else { panic!() };
    assert_eq!((r.target_uri.as_deref(), r.date.as_deref()), (Some("http://e.com/a b"), Some("null")));
}

#[test]
fn per_record_gzip_offsets_are_member_starts() {
    let a = gz(warc("warcinfo", "x", "info").as_bytes());
    let b = gz(warc("resource", "y", "<p>page</p>").as_bytes());
    let (info, ev) = scan_bytes("members.warc.gz", &[a.clone(), b].concat(), 1 << 20);
    assert_eq!(info.compression, "gzip_per_record");
    assert_eq!(summary(&ev)[1].0, a.len() as u64);
    // Whole-file gzip: offsets in the uncompressed stream.
    let first = warc("warcinfo", "x", "info");
    let whole = gz(format!("{first}{}", warc("resource", "y", "z")).as_bytes());
    let (info, ev) = scan_bytes("whole.warc.gz", &whole, 1 << 20);
    assert_eq!(info.compression, "gzip_whole_file");
    assert_eq!(summary(&ev)[1].0, first.len() as u64);
}

/// The records of `events` as (offset, length).
fn extents(events: &[ArchiveEvent]) -> Vec<(u64, u64)> {
    events
        .iter()
        .map(|e| match e {
            ArchiveEvent::Record(r) => (r.offset, r.extent.length.expect("every record here has a length")),
            ArchiveEvent::Malformed { reason, .. } => panic!("unexpected {reason}"),
        })
        .collect()
}

fn gunzip(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    flate2::read::MultiGzDecoder::new(data).read_to_end(&mut out).unwrap();
    out
}

#[test]
fn offset_and_length_cut_out_exactly_one_record() {
    let arc_body = "HTTP/1.0 200 OK\nContent-Type: text/html\n\n<p>x</p>";
    let warcs = [
        warc("warcinfo", "x", "software: test"),
        warc("response", "http://e.com/a", "HTTP/1.1 200 OK\r\n\r\nhi"),
        // LF-only line ends and extra blank lines after the block count as the record's.
        "WARC/1.0\nWARC-Type: request\nContent-Length: 3\n\nGET\n\n\n\n".to_string(),
    ];
    let arcs = [
        "filedesc://t.arc 0.0.0.0 20080430204825 text/plain 10\n1 0 Test\n\n".to_string(),
        format!("http://e.com/a 1.2.3.4 20080430204826 text/html {}\n{arc_body}\n", arc_body.len()),
        "dns:e.com 1.2.3.4 20080430204827 text/dns 3\nabc\n".to_string(),
    ];
    for (kind, records) in [("warc", &warcs), ("arc", &arcs)] {
        let plain = records.concat();
        // Plain: the slice of the file is the record.
        let (_, ev) = scan_bytes(&format!("extent.{kind}"), plain.as_bytes(), 1 << 20);
        let cut: Vec<&[u8]> =
            extents(&ev).iter().map(|&(o, l)| &plain.as_bytes()[o as usize..(o + l) as usize]).collect();
        assert_eq!(cut, records.iter().map(|r| r.as_bytes()).collect::<Vec<_>>(), "{kind} plain");
        // Per-record gzip: the slice of the file is the record's member.
        let members: Vec<Vec<u8>> = records.iter().map(|r| gz(r.as_bytes())).collect();
        let file = members.concat();
        let (info, ev) = scan_bytes(&format!("extent.{kind}.gz"), &file, 1 << 20);
        assert_eq!(info.compression, "gzip_per_record");
        let cut: Vec<&[u8]> = extents(&ev).iter().map(|&(o, l)| &file[o as usize..(o + l) as usize]).collect();
        assert_eq!(cut, members.iter().map(Vec::as_slice).collect::<Vec<_>>(), "{kind} per-record gzip");
        // Whole-file gzip: the slice of the decompressed stream is the record.
        let (info, ev) = scan_bytes(&format!("extent-whole.{kind}.gz"), &gz(plain.as_bytes()), 1 << 20);
        assert_eq!(info.compression, "gzip_whole_file");
        let stream = gunzip(&gz(plain.as_bytes()));
        let cut: Vec<&[u8]> = extents(&ev).iter().map(|&(o, l)| &stream[o as usize..(o + l) as usize]).collect();
        assert_eq!(cut, records.iter().map(|r| r.as_bytes()).collect::<Vec<_>>(), "{kind} whole-file gzip");
    }
}

/// The bytes of `data`'s decompressed stream, as [`StreamReader`] gives them.
fn stream_of(name: &str, data: &[u8]) -> Vec<u8> {
    let dir = std::env::temp_dir().join(format!("neardup-archive-stream-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, data).unwrap();
    let mut out = Vec::new();
    StreamReader::open(&Input::File(path.clone())).unwrap().read_to_end(&mut out).unwrap();
    std::fs::remove_file(&path).unwrap();
    out
}

#[test]
fn stream_extents_cut_records_out_of_the_stream_reader_even_after_a_corrupt_member() {
    let records = [warc("resource", "a", "one"), warc("resource", "b", "two"), warc("resource", "c", "three")];
    let mut members: Vec<Vec<u8>> = records.iter().map(|r| gz(r.as_bytes())).collect();
    let n = members[1].len();
    members[1][n / 2..n - 8].iter_mut().for_each(|x| *x = 0xff);
    for (name, data) in [
        ("stream-plain.warc", records.concat().into_bytes()),
        ("stream-whole.warc.gz", gz(records.concat().as_bytes())),
        ("stream-corrupt.warc.gz", members.concat()),
    ] {
        let (_, ev) = scan_bytes(name, &data, 1 << 20);
        let stream = stream_of(name, &data);
        for e in &ev {
            let ArchiveEvent::Record(r) = e else { continue };
            let x = r.extent;
            let cut = &stream[x.stream_offset as usize..(x.stream_offset + x.stream_length) as usize];
            let i = ["a", "b", "c"].iter().position(|u| r.target_uri.as_deref() == Some(*u)).unwrap();
            let expected = &records[i];
            assert_eq!(cut, expected.as_bytes(), "{name}");
            assert!(x.intact, "{name}");
            assert_eq!(x.own_member, name == "stream-corrupt.warc.gz", "{name}");
        }
    }
}

#[test]
fn a_record_sharing_its_member_has_no_length_and_a_cut_member_runs_to_the_end() {
    let (a, b, c) = (warc("resource", "a", "one"), warc("resource", "b", "two"), warc("resource", "c", "three"));
    // Member 1 holds a; member 2 holds b and c: b starts a member but ends inside it.
    let first = gz(a.as_bytes());
    let file = [first.clone(), gz(format!("{b}{c}").as_bytes())].concat();
    let (_, ev) = scan_bytes("extent-shared.warc.gz", &file, 1 << 20);
    let lengths: Vec<Option<u64>> = ev
        .iter()
        .map(|e| match e {
            ArchiveEvent::Record(r) => r.extent.length,
            ArchiveEvent::Malformed { .. } => panic!("malformed"),
        })
        .collect();
    // c starts inside the member: offset and length in the stream.
    assert_eq!(lengths, [Some(first.len() as u64), None, Some(c.len() as u64)]);
    // A last member cut short: the truncated record runs to the end of the file.
    let last = gz(c.as_bytes());
    let file = [first.clone(), last[..last.len() - 12].to_vec()].concat();
    let (_, ev) = scan_bytes("extent-cutmember.warc.gz", &file, 1 << 20);
    let ArchiveEvent::Record(r) = &ev[1] else { panic!() };
    assert!(r.truncated);
    assert_eq!((r.offset, r.extent.length), (first.len() as u64, Some((file.len() - first.len()) as u64)));
    assert!(!r.extent.intact && !r.extent.own_member);
}

#[test]
fn concurrent_records_are_named() {
    let rec = "WARC/1.0\r\nWARC-Type: request\r\nWARC-Concurrent-To: <urn:uuid:a>\r\n\
               WARC-Concurrent-To: <urn:uuid:b>\r\nContent-Length: 0\r\n\r\n\r\n\r\n";
    let (_, ev) = scan_bytes("extent-concurrent.warc", rec.as_bytes(), 100);
    let ArchiveEvent::Record(r) = &ev[0] else { panic!() };
    assert_eq!(r.concurrent_to, ["<urn:uuid:a>", "<urn:uuid:b>"]);
}

#[test]
fn wrong_content_length_resyncs() {
    // Declared length too long: the block swallows the next record's header,
    // which is found inside it.
    let good = warc("response", "b", "second");
    let bad = "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 100\r\n\r\nfirst\r\n\r\n";
    let data = format!("{bad}{good}");
    let (_, ev) = scan_bytes("long.warc", data.as_bytes(), 1 << 20);
    let s = summary(&ev);
    assert_eq!(s.len(), 2, "{s:?}");
    assert_eq!((s[0].1.as_str(), s[1].0, s[1].2.as_str()), ("response", bad.len() as u64, "second"));
    // Declared length too short: the rest is reported, the next record is read.
    let bad = "WARC/1.0\r\nWARC-Type: request\r\nContent-Length: 3\r\n\r\nabcdef\r\n\r\n";
    let (_, ev) = scan_bytes("short.warc", format!("{bad}{good}").as_bytes(), 1 << 20);
    let kinds: Vec<String> = summary(&ev).into_iter().map(|s| s.1).collect();
    assert_eq!(kinds, ["request", "malformed_record", "response"]);
    // Followed by bytes that start no record: not intact (a copy would keep the lie).
    let intact: Vec<bool> =
        ev.iter().filter_map(|e| if let ArchiveEvent::Record(r) = e { Some(r.extent.intact) } else { None }).collect();
    assert_eq!(intact, [false, true]);
    // Missing Content-Length: malformed, then resync.
    let bad = "WARC/1.0\r\nWARC-Type: response\r\n\r\nno length here\r\n";
    let (_, ev) = scan_bytes("nolen.warc", format!("{bad}{good}").as_bytes(), 1 << 20);
    let kinds: Vec<String> = summary(&ev).into_iter().map(|s| s.1).collect();
    assert_eq!(kinds, ["malformed_record", "response"]);
}

#[test]
fn missing_warc_type_and_impossible_lengths() {
    let good = warc("response", "b", "second");
    // No WARC-Type: its own reject; the block is read past, the next
    // record read.
    let no_type = "WARC/1.0\r\nWARC-Target-URI: a\r\nContent-Length: 5\r\n\r\nfirst\r\n\r\n";
    let (_, ev) = scan_bytes("notype.warc", format!("{no_type}{good}").as_bytes(), 1 << 20);
    let s = summary(&ev);
    assert_eq!((s[0].1.as_str(), s[1].0, s[1].1.as_str()), ("missing_warc_type", no_type.len() as u64, "response"));
    let ArchiveEvent::Malformed { target_uri, record_type, .. } = &ev[0] else { panic!() };
    assert_eq!((target_uri.as_deref(), record_type), (Some("a"), &None));
    // A Content-Length beyond u64: malformed, reading resumes at the next record.
    let huge = "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 18446744073709551616\r\n\r\nbody\r\n\r\n";
    let (_, ev) = scan_bytes("huge.warc", format!("{huge}{good}").as_bytes(), 1 << 20);
    let kinds: Vec<String> = summary(&ev).into_iter().map(|s| s.1).collect();
    assert_eq!(kinds, ["malformed_record", "response"]);
    // The largest u64, beyond the end of the file: a truncated record.
    let max = "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 18446744073709551615\r\n\r\nbody";
    let (_, ev) = scan_bytes("max.warc", max.as_bytes(), 1 << 20);
    assert_eq!(summary(&ev), vec![(0, "response+truncated".into(), "body".into())]);
}

#[test]
fn truncated_and_too_large_blocks() {
    let rec = warc("response", "a", "0123456789");
    let (_, ev) = scan_bytes("trunc.warc", &rec.as_bytes()[..rec.len() - 9], 1 << 20);
    assert_eq!(summary(&ev), vec![(0, "response+truncated".into(), "01234".into())]);
    let (_, ev) = scan_bytes("big.warc", format!("{rec}{rec}").as_bytes(), 4);
    let s = summary(&ev);
    assert_eq!(s[0], (0, "response+too_large".into(), "0123".into()));
    assert_eq!(s[1].0, rec.len() as u64);
    // Ends inside the header.
    let (_, ev) = scan_bytes("hdr.warc", b"WARC/1.0\r\nWARC-Type: response\r\n", 100);
    assert_eq!(summary(&ev)[0].1, "truncated");
}

#[test]
fn bad_gzip_member_is_skipped() {
    let a = gz(warc("resource", "a", "one").as_bytes());
    let mut b = gz(warc("resource", "b", "two").as_bytes());
    let n = b.len();
    b[n / 2..n - 8].iter_mut().for_each(|x| *x = 0xff);
    let c = gz(warc("resource", "c", "three").as_bytes());
    let (_, ev) = scan_bytes("bad.warc.gz", &[a.clone(), b.clone(), c].concat(), 1 << 20);
    let s = summary(&ev);
    assert_eq!(s.len(), 3, "{s:?}");
    assert_eq!((s[0].2.as_str(), s[2].2.as_str()), ("one", "three"));
    assert_eq!((s[1].0, s[1].1.as_str()), (a.len() as u64, "bad_gzip"));
    assert_eq!(s[2].0, (a.len() + b.len()) as u64);
    // Garbage between members, and a gzip stream cut short.
    let tail = gz(warc("resource", "d", "four").as_bytes());
    let (_, ev) = scan_bytes("junk.warc.gz", &[a.clone(), b"junk".to_vec(), tail.clone()].concat(), 1 << 20);
    let kinds: Vec<String> = summary(&ev).into_iter().map(|s| s.1).collect();
    assert_eq!(kinds, ["resource", "bad_gzip", "resource"]);
    // Only the trailer cut: the data is complete. Data cut: truncated record.
    for (cut, last) in [(4, "resource"), (12, "resource+truncated")] {
        let data = [a.clone(), tail[..tail.len() - cut].to_vec()].concat();
        let (_, ev) = scan_bytes("cut.warc.gz", &data, 1 << 20);
        let kinds: Vec<String> = summary(&ev).into_iter().map(|s| s.1).collect();
        assert_eq!(kinds, ["resource", last], "cut {cut}");
    }
}

#[test]
fn a_file_cut_short_says_where_and_after_how_many_records() {
    let a = gz(warc("resource", "a", "one").as_bytes());
    let b = gz(warc("resource", "b", "two").as_bytes());
    let whole = [a.clone(), b.clone()].concat();
    assert_eq!(scan_bytes("whole.warc.gz", &whole, 1 << 20).0.cut, None);
    // Cut in the last member's data (its record a truncated one), or in its
    // trailer only (every record whole, the member still cut).
    for (cut, records_before) in [(12, 1), (4, 2)] {
        let (info, _) = scan_bytes("cut.warc.gz", &whole[..whole.len() - cut], 1 << 20);
        assert_eq!(info.cut, Some(Cut { offset: a.len() as u64, records_before }), "cut {cut}");
    }
    // Uncompressed: a block shorter than its Content-Length, and a header
    // the file ends inside.
    let rec = warc("response", "a", "0123456789");
    let two = format!("{rec}{rec}");
    let (info, _) = scan_bytes("cut.warc", &two.as_bytes()[..two.len() - 9], 1 << 20);
    assert_eq!(info.cut, Some(Cut { offset: rec.len() as u64, records_before: 1 }));
    let (info, _) = scan_bytes("cut-header.warc", format!("{rec}WARC/1.0\r\nWARC-Type: resp").as_bytes(), 1 << 20);
    assert_eq!(info.cut, Some(Cut { offset: rec.len() as u64, records_before: 1 }));
    // A payload the crawler cut (WARC-Truncated) is a whole record of a whole file.
    let crawler_cut =
        "WARC/1.0\r\nWARC-Type: response\r\nWARC-Truncated: length\r\nContent-Length: 3\r\n\r\nabc\r\n\r\n";
    assert_eq!(scan_bytes("crawler-cut.warc", crawler_cut.as_bytes(), 1 << 20).0.cut, None);
    // A corrupt member in the middle is `bad_gzip`, not a cut.
    let mut bad = b.clone();
    let n = bad.len();
    bad[n / 2..n - 8].iter_mut().for_each(|x| *x = 0xff);
    assert_eq!(scan_bytes("bad.warc.gz", &[a.clone(), bad, a.clone()].concat(), 1 << 20).0.cut, None);
}

#[test]
fn headers_with_lying_lengths_on_every_line_cost_linear_time_and_memory() {
    // Fuzzing: each record read the rest of the file as its block and
    // pushed it back, keeping the consumed bytes: a 1 MB file of such
    // headers took gigabytes. Each block still ends at the first record
    // header on a later line (the header at its start is its content).
    let head = "WARC/1.0\r\nWARC-Type: response\r\nContent-Length: 99999999\r\n\r\n";
    let (_, ev) = scan_bytes("lying.warc", head.repeat(4000).as_bytes(), 1 << 20);
    let s = summary(&ev);
    assert_eq!(s.len(), 2000);
    for (i, e) in s.iter().enumerate() {
        // The last block runs to the end of the file.
        let kind = if i == 1999 { "response+truncated" } else { "response" };
        assert_eq!((e.0, e.1.as_str(), e.2.as_str()), ((2 * i * head.len()) as u64, kind, head));
    }
}

#[test]
fn gzip_magic_flood_is_one_bad_gzip_per_member_start() {
    // Fuzzing: a file of gzip magic bytes took minutes per megabyte (a
    // 64 KB header scan and a buffer refill per three bytes). Each magic
    // is a member start with an impossible header now; the record after
    // the flood (and junk skipped in resynchronizing) is still read.
    let flood = [0x1f, 0x8b, 0x08].repeat(20_000);
    let junk = vec![b'x'; 2048];
    let good = gz(warc("resource", "a", "after").as_bytes());
    let (info, ev) = scan_bytes("flood.warc.gz", &[flood.clone(), junk, good].concat(), 1 << 20);
    let s = summary(&ev);
    assert_eq!(s.len(), 20_001);
    assert!(s[..20_000].iter().enumerate().all(|(i, e)| e.0 == 3 * i as u64 && e.1 == "bad_gzip"));
    assert_eq!((s[20_000].0, s[20_000].2.as_str()), (flood.len() as u64 + 2048, "after"));
    assert_eq!(info.compression, "gzip_per_record");
    // A plausible header with a long file name is still a member.
    let mut named = vec![0x1f, 0x8b, 0x08, 0x08, 0, 0, 0, 0, 0, 0xff];
    named.extend_from_slice(&[b'n'; 1000]);
    named.push(0);
    let mut enc = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    let rec = warc("resource", "b", "named");
    enc.write_all(rec.as_bytes()).unwrap();
    named.extend_from_slice(&enc.finish().unwrap());
    named.extend_from_slice(&crc32fast::hash(rec.as_bytes()).to_le_bytes());
    named.extend_from_slice(&(rec.len() as u32).to_le_bytes());
    let (_, ev) = scan_bytes("named.warc.gz", &named, 1 << 20);
    assert_eq!(summary(&ev), vec![(0, "resource".into(), "named".into())]);
}

#[test]
fn arc_records_with_spaces_and_bad_lengths() {
    let body = "HTTP/1.0 200 OK\nContent-Type: text/html\n\n<p>x</p>";
    let data = format!(
        "filedesc://t.arc 0.0.0.0 20080430204825 text/plain 10\n1 0 Test\n\n\
         http://e.com/a b c 1.2.3.4 20080430204826 text/html {}\n{body}\n\
         http://e.com/bad 1.2.3.4 20080430204826 text/html abc\n\n\
         dns:e.com 1.2.3.4 20080430204827 text/dns 3\nabc\n",
        body.len()
    );
    let (info, ev) = scan_bytes("t.arc", data.as_bytes(), 1 << 20);
    assert_eq!(info.format, "ARC/1");
    let kinds: Vec<String> = summary(&ev).into_iter().map(|s| s.1).collect();
    assert_eq!(kinds, ["filedesc", "arc", "malformed_record", "arc"]);
    let ArchiveEvent::Record(r) = &ev[1] else { panic!() };
    assert_eq!(r.target_uri.as_deref(), Some("http://e.com/a b c"));
    assert_eq!(r.date.as_deref(), Some("2008-04-30T20:48:26Z"));
    assert_eq!(r.content_type.as_deref(), Some("text/html"));
    assert_eq!(r.block, body.as_bytes());
}

#[test]
fn unsupported_and_garbage_files() {
    let (info, ev) = scan_bytes("x.lz4", &[0x04, 0x22, 0x4d, 0x18, 1, 2, 3], 100);
    assert_eq!(info.compression, "lz4");
    assert_eq!(summary(&ev), vec![(0, "unsupported_compression".into(), String::new())]);
    let (info, ev) = scan_bytes("junk.bin", b"hello\nworld\n", 100);
    assert_eq!(info.format, "unknown");
    assert_eq!(summary(&ev), vec![(0, "malformed_record".into(), String::new())]);
    let (_, ev) = scan_bytes("empty.warc", b"", 100);
    assert!(ev.is_empty());
}
