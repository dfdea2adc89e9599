//! `--format cdxj`: pywb's CDXJ index of the WARC that `--format warc`
//! writes with the same options, so replay and extraction tools find each
//! record by URL: one line per `response`, `revisit`, `resource` and
//! `metadata` record (not `application/warc-fields` ones), as pywb's
//! `cdxj-indexer` writes them by default:
//!
//! `com,example)/page 20140103030321 {"url": "http://example.com/page", "mime": "text/html", "status": "200", "digest": "sha1:…", "length": "1043", "offset": "333", "filename": "kept.warc.gz"}`
//!
//! The key is the URL's SURT ([`surt`]), the timestamp the record's
//! WARC-Date in UTC; offset and length are the record's gzip member in the
//! WARC file. Lines are sorted bytewise (as `LC_ALL=C sort` and pywb sort
//! them), in memory up to [`RUN_BYTES`] and beyond that by sorted runs on
//! disk merged at the end.

use anyhow::{Context, Result};
use std::collections::BinaryHeap;
use std::io::{BufRead, BufReader, BufWriter, Write};
use std::path::PathBuf;

use super::output::Destination;

/// What an index line says of one record, besides where it is.
#[derive(Debug, Clone, Default)]
pub(super) struct Entry {
    /// WARC-Type.
    pub record_type: String,
    /// WARC-Target-URI.
    pub url: String,
    /// WARC-Date.
    pub date: String,
    /// The record's Content-Type.
    pub content_type: Option<String>,
    /// The HTTP response's Content-Type, when the block is one.
    pub http_mime: Option<String>,
    /// The HTTP status, when the block is a response.
    pub status: Option<u16>,
    /// WARC-Payload-Digest, or the SHA-1 of the payload when it has none.
    pub digest: Option<String>,
}

impl Entry {
    /// Whether pywb's indexer lists such a record by default.
    fn indexed(&self) -> bool {
        let fields = self.content_type.as_deref().is_some_and(|c| c.starts_with("application/warc-fields"));
        match self.record_type.as_str() {
            "response" | "revisit" => true,
            "resource" | "metadata" => !fields,
            _ => false,
        }
    }

    /// The index line of the record at `[offset, offset + length)` of
    /// `filename`, or `None` for a record the index leaves out. A record
    /// whose WARC-Date holds no date (`null`) is listed at `fallback_date`.
    pub(super) fn line(&self, offset: u64, length: u64, filename: &str, fallback_date: &str) -> Option<String> {
        if !self.indexed() {
            return None;
        }
        let mime = match self.record_type.as_str() {
            "revisit" => Some("warc/revisit".to_string()),
            "response" => self.http_mime.clone(),
            _ => self.content_type.clone(),
        }
        .map(|m| m.split([';', ' ', '\t']).next().unwrap_or("").trim().to_string())
        .filter(|m| !m.is_empty());
        // Spaces percent-encoded, as warcio reads such a WARC-Target-URI:
        // a key is one field of a space-separated line.
        let url = super::legacy::clean_uri(&self.url);
        let mut fields: Vec<(&str, String)> = vec![("url", url.clone())];
        if let Some(m) = mime {
            fields.push(("mime", m));
        }
        if let Some(s) = self.status {
            fields.push(("status", s.to_string()));
        }
        if let Some(d) = &self.digest {
            fields.push(("digest", d.clone()));
        }
        fields.push(("length", length.to_string()));
        fields.push(("offset", offset.to_string()));
        fields.push(("filename", filename.to_string()));
        let json: Vec<String> = fields
            .iter()
            .map(|(k, v)| format!("\"{k}\": {}", serde_json::to_string(v).unwrap_or_else(|_| "\"\"".into())))
            .collect();
        let dated = self.date.chars().filter(char::is_ascii_digit).count() >= 8;
        let timestamp = super::legacy::timestamp14(if dated { &self.date } else { fallback_date });
        Some(format!("{} {timestamp} {{{}}}", surt(&url), json.join(", ")))
    }
}

/// The SURT form of a URL, as pywb keys its index (the `surt` package's
/// defaults): scheme, `www.` (or `www2.` …), user info, default port and
/// fragment dropped, the host's labels reversed and joined by commas and
/// closed by `)`, path and query lowercased, a trailing slash dropped
/// (not the root's), query arguments sorted; `dns:www.example.com` is
/// `com,example,www)`. A URL without a host (`urn:…`) is lowercased as it
/// is. Session ids are not stripped (the package strips some).
pub(super) fn surt(url: &str) -> String {
    if let Some(host) = url.trim().strip_prefix("dns:") {
        // dns:host names a host, not a path.
        return format!("{})", host.to_ascii_lowercase().split('.').rev().collect::<Vec<_>>().join(","));
    }
    let Ok(parsed) = url::Url::parse(url.trim()) else { return url.trim().to_ascii_lowercase() };
    let Some(host) = parsed.host_str().filter(|h| !h.is_empty()) else {
        return url.trim().to_ascii_lowercase();
    };
    let host = host.to_ascii_lowercase();
    let host = host.trim_end_matches('.');
    let massaged = match host.strip_prefix("www") {
        Some(rest) => match rest.trim_start_matches(|c: char| c.is_ascii_digit()).strip_prefix('.') {
            Some(after) if !after.is_empty() => after,
            _ => host,
        },
        None => host,
    };
    let mut key: String = massaged.split('.').rev().collect::<Vec<_>>().join(",");
    if let Some(port) = parsed.port() {
        key.push_str(&format!(":{port}"));
    }
    key.push(')');
    let path = parsed.path().to_lowercase();
    let path = if path.len() > 1 { path.trim_end_matches('/') } else { path.as_str() };
    key.push_str(if path.is_empty() { "/" } else { path });
    if let Some(query) = parsed.query().filter(|q| !q.is_empty()) {
        let lower = query.to_lowercase();
        let mut args: Vec<&str> = lower.split('&').collect();
        args.sort_by(|a, b| {
            let split = |s: &'_ str| -> (String, String) {
                let (k, v) = s.split_once('=').unwrap_or((s, ""));
                (k.to_string(), v.to_string())
            };
            split(a).cmp(&split(b))
        });
        key.push('?');
        key.push_str(&args.join("&"));
    }
    key
}

/// Bytes of index lines sorted in memory before they go to a sorted run on
/// disk.
const RUN_BYTES: usize = 32 << 20;

/// Index lines sorted with bounded memory: in memory up to [`RUN_BYTES`],
/// then as sorted runs on disk (scratch files beside the output) merged at
/// the end.
pub(super) struct Sorter {
    lines: Vec<String>,
    bytes: usize,
    runs: Vec<PathBuf>,
    /// Names the scratch files of the runs.
    name: String,
}

impl Sorter {
    /// A sorter whose runs are named after output file `name`.
    pub(super) fn new(name: &str) -> Sorter {
        Sorter { lines: Vec::new(), bytes: 0, runs: Vec::new(), name: name.to_string() }
    }

    /// Adds a line (without its line end).
    pub(super) fn push(&mut self, line: String, destination: &Destination) -> Result<()> {
        self.bytes += line.len() + std::mem::size_of::<String>();
        self.lines.push(line);
        if self.bytes >= RUN_BYTES {
            self.spill(destination)?;
        }
        Ok(())
    }

    fn spill(&mut self, destination: &Destination) -> Result<()> {
        self.lines.sort_unstable();
        let path = destination.scratch_path(&format!("{}.run-{}", self.name, self.runs.len()));
        let _creating = crate::process::interrupt::unpublished_write(&crate::tables::write::UNPUBLISHED)?;
        let mut w =
            BufWriter::new(std::fs::File::create(&path).with_context(|| format!("cannot create {}", path.display()))?);
        for line in self.lines.drain(..) {
            writeln!(w, "{line}")?;
        }
        w.flush().with_context(|| format!("cannot write {}", path.display()))?;
        self.runs.push(path);
        self.bytes = 0;
        Ok(())
    }

    /// Writes every line in order to `out`; returns how many.
    pub(super) fn write_sorted(mut self, out: &mut dyn Write) -> Result<u64> {
        self.lines.sort_unstable();
        if self.runs.is_empty() {
            for line in &self.lines {
                writeln!(out, "{line}")?;
            }
            return Ok(self.lines.len() as u64);
        }
        // Merge the runs and the lines still in memory.
        let mut sources: Vec<Box<dyn Iterator<Item = std::io::Result<String>>>> = Vec::new();
        for path in &self.runs {
            let file = std::fs::File::open(path).with_context(|| format!("cannot read {}", path.display()))?;
            sources.push(Box::new(BufReader::new(file).lines()));
        }
        sources.push(Box::new(std::mem::take(&mut self.lines).into_iter().map(Ok)));
        let mut heap = BinaryHeap::new();
        for (i, source) in sources.iter_mut().enumerate() {
            if let Some(line) = source.next() {
                heap.push(std::cmp::Reverse((line?, i)));
            }
        }
        let mut written = 0;
        while let Some(std::cmp::Reverse((line, i))) = heap.pop() {
            writeln!(out, "{line}")?;
            written += 1;
            if let Some(next) = sources[i].next() {
                heap.push(std::cmp::Reverse((next?, i)));
            }
        }
        Ok(written)
    }
}

impl Drop for Sorter {
    fn drop(&mut self) {
        for path in &self.runs {
            let _ = std::fs::remove_file(path);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn surt_keys_as_pywb_makes_them() {
        for (url, key) in [
            ("http://example.com?example=1", "com,example)/?example=1"),
            ("https://www.Example.com/A/B/?b=2&a=1#frag", "com,example)/a/b?a=1&b=2"),
            ("http://www2.archive.org:8080/", "org,archive:8080)/"),
            ("http://www.archive.org:80/robots.txt", "org,archive)/robots.txt"),
            ("http://www.com/", "com)/"),
            ("http://user:pw@host.example.org/x", "org,example,host)/x"),
            ("dns:www.archive.org", "org,archive,www)"),
            ("http://93.184.216.34/", "34,216,184,93)/"),
            ("urn:X-wpull:log", "urn:x-wpull:log"),
        ] {
            assert_eq!(surt(url), key, "{url}");
        }
    }

    #[test]
    fn index_lines_as_pywb_writes_them() {
        let e = Entry {
            record_type: "response".into(),
            url: "http://example.com?example=1".into(),
            date: "2014-01-03T03:03:21Z".into(),
            content_type: Some("application/http; msgtype=response".into()),
            http_mime: Some("text/html; charset=utf-8".into()),
            status: Some(200),
            digest: Some("sha1:B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A".into()),
        };
        assert_eq!(
            e.line(333, 1043, "kept.warc.gz", "F").unwrap(),
            "com,example)/?example=1 20140103030321 {\"url\": \"http://example.com?example=1\", \"mime\": \"text/html\", \
             \"status\": \"200\", \"digest\": \"sha1:B2LTWWPUOYAH7UIPQ7ZUPQ4VMBSVC36A\", \"length\": \"1043\", \
             \"offset\": \"333\", \"filename\": \"kept.warc.gz\"}"
        );
        let revisit = Entry { record_type: "revisit".into(), http_mime: None, status: None, digest: None, ..e.clone() };
        assert!(revisit.line(0, 1, "f", "F").unwrap().contains("\"mime\": \"warc/revisit\""));
        let undated = Entry { date: "null".into(), ..e.clone() };
        assert!(undated.line(0, 1, "f", "2020-01-02T03:04:05Z").unwrap().contains(" 20200102030405 {"));
        for skipped in ["request", "warcinfo"] {
            assert_eq!(Entry { record_type: skipped.into(), ..e.clone() }.line(0, 1, "f", "F"), None);
        }
        let fields =
            Entry { record_type: "metadata".into(), content_type: Some("application/warc-fields".into()), ..e.clone() };
        assert_eq!(fields.line(0, 1, "f", "F"), None);
    }

    #[test]
    fn many_lines_sort_through_runs_on_disk() {
        let dir = std::env::temp_dir().join(format!("neardup-cdxj-sort-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let destination = Destination::open(dir.to_str().unwrap(), &dir).unwrap();
        let mut sorter = Sorter::new("t.cdxj");
        let lines: Vec<String> = (0..2000u32).map(|i| format!("{:08}", (i * 7919) % 2000)).collect();
        for (i, line) in lines.iter().enumerate() {
            sorter.push(line.clone(), &destination).unwrap();
            if i % 500 == 499 {
                sorter.spill(&destination).unwrap();
            }
        }
        assert_eq!(sorter.runs.len(), 4);
        let mut out = Vec::new();
        assert_eq!(sorter.write_sorted(&mut out).unwrap(), 2000);
        let mut expected = lines;
        expected.sort();
        assert_eq!(String::from_utf8(out).unwrap(), expected.iter().map(|l| format!("{l}\n")).collect::<String>());
        let left: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
        assert!(left.is_empty(), "the runs are removed: {left:?}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
