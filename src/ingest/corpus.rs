//! Text corpora as input, beside crawl archives: JSON Lines (plain, gzip or
//! zstd) and Parquet files whose records carry `id`, `url`, `text` and
//! `html`, as Hugging Face dumps, WET extracts turned into JSONL and labeled
//! benchmarks do.
//!
//! Each line (row) becomes a document whose `doc_id` is derived as for a
//! WARC record: xxh3_64 of `"{file}\n{id}"`, the corpus `id` standing in for
//! the WARC-Record-ID (and kept as the document's `record_id`, so gold
//! labels can name it). `url` is optional and defaults to the id; `text` is
//! taken as it is (ends trimmed); a record without `text` but with `html`
//! gets the text and title the HTML extractor finds. A line that is not a
//! JSON object, has no usable id or no text becomes a reject with its byte
//! offset, so `records = documents + rejects` holds per file. Blank lines
//! are not records. The reader never panics: a compressed stream that breaks
//! off ends the file with one reject; only a file that cannot be opened (or
//! a Parquet file without the needed columns, or whose `url`, `text` or
//! `html` column is not a string) is an error of the whole file.
//!
//! Not done here: other field names (`content`, `raw_content`, ...) and
//! crawl dates; map them to `text` beforehand.

use super::html;
use super::record::{check_text_length, cut_text, not_content, too_deep, Document, Outcome, Reject};
use super::source::{RandomAccess, Source};
use super::summary::{FileSummary, BATCH_BYTES, BATCH_RECORDS};
use crate::ingest::settings::IngestConfig;
use arrow::array::{Array, ArrayRef, AsArray, RecordBatch};
use arrow::datatypes::DataType;
use parquet::arrow::arrow_reader::{ArrowReaderOptions, ParquetRecordBatchReaderBuilder};
use parquet::arrow::ProjectionMask;
use rayon::prelude::*;
use serde_json::Value;
use std::io::{self, BufRead, BufReader, Read};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use xxhash_rust::xxh3::xxh3_64;

/// The fields of a corpus record. Records are read by these names.
const ID: &str = "id";
const URL: &str = "url";
const TEXT: &str = "text";
const HTML: &str = "html";

/// JSON syntax can take more bytes than the text it encodes (`\u00e9` is six
/// bytes for two), so a line may be this many times the payload limit, plus
/// room for the other fields, before it is cut unread.
const LINE_SIZE_FACTOR: u64 = 2;
const LINE_ALLOWANCE: u64 = 1 << 20;

/// A Parquet corpus row costs at least this many bytes of the file: a row
/// needs its own `id`, and distinct ids cannot be stored in less. A page
/// header or run length that claims billions of rows in a few bytes (found
/// by fuzzing: a 4,444-byte file read for minutes, a reject per empty row)
/// stops the file with one `too_many_rows` reject once the rows read pass
/// the file's size over this.
const PARQUET_MIN_BYTES_PER_ROW: u64 = 1;

/// How a corpus file is stored, decided from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum CorpusFormat {
    /// JSON Lines in the given compression.
    Jsonl(Compression),
    /// A Parquet table.
    Parquet,
}

/// Compression of a JSON Lines file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Compression {
    None,
    Gzip,
    Zstd,
}

impl Compression {
    fn name(self) -> &'static str {
        match self {
            Compression::None => "none",
            Compression::Gzip => "gzip",
            Compression::Zstd => "zstd",
        }
    }
}

/// File name endings of corpus files (lowercase). `.json.gz` is the JSON
/// Lines convention of Dolma and many Hugging Face dumps; a bare `.json` is
/// usually one JSON document, not lines, and is not taken.
const ENDINGS: &[(&str, CorpusFormat)] = &[
    (".jsonl", CorpusFormat::Jsonl(Compression::None)),
    (".ndjson", CorpusFormat::Jsonl(Compression::None)),
    (".jsonl.gz", CorpusFormat::Jsonl(Compression::Gzip)),
    (".json.gz", CorpusFormat::Jsonl(Compression::Gzip)),
    (".ndjson.gz", CorpusFormat::Jsonl(Compression::Gzip)),
    (".jsonl.zst", CorpusFormat::Jsonl(Compression::Zstd)),
    (".json.zst", CorpusFormat::Jsonl(Compression::Zstd)),
    (".parquet", CorpusFormat::Parquet),
];

fn corpus_format(path: &Path) -> Option<CorpusFormat> {
    let name = path.file_name()?.to_string_lossy().to_ascii_lowercase();
    ENDINGS.iter().find(|(end, _)| name.ends_with(end)).map(|(_, f)| *f)
}

/// Is this file a text corpus (by its name) rather than a crawl archive?
pub fn is_corpus_file(path: &Path) -> bool {
    corpus_format(path).is_some()
}

/// The record type corpus rejects carry: `line` (JSONL) or `row` (Parquet).
pub fn record_type(path: &Path) -> &'static str {
    match corpus_format(path) {
        Some(CorpusFormat::Parquet) => "row",
        _ => "line",
    }
}

/// A record id as text: strings as they are (an empty one is no id), numbers
/// as JSON writes them (`42`, `1.5`), anything else is no id. Gold files go
/// through the same function, so `42` and `"42"` name the same record.
pub fn id_string(v: &Value) -> Option<String> {
    match v {
        Value::String(s) if !s.is_empty() => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// The fields of one record, read but not yet checked.
#[derive(Debug, Clone, Default, PartialEq)]
struct Fields {
    id: Option<String>,
    url: Option<String>,
    text: Option<String>,
    html: Option<String>,
}

/// A record before it is turned into an outcome: its fields, or why they
/// could not be read.
type Parsed = Result<Fields, (&'static str, String)>;

/// Reads one corpus file and calls `sink` with the outcome of every record,
/// in file order (records are processed in parallel batches, as archive
/// records are). `file` is the name the file goes by in ids and rows.
/// Returns `Err` only when the file cannot be opened, or is a Parquet file
/// that cannot be read as one, lacks the `id` and `text`/`html` columns or
/// has a `url`, `text` or `html` column that is not a string.
pub fn ingest_corpus(
    source: &Source,
    file: &str,
    cfg: &IngestConfig,
    sink: &mut dyn FnMut(Outcome),
) -> io::Result<FileSummary> {
    let format = corpus_format(&source.name_path())
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "not a corpus file name"))?;
    let mut summary = FileSummary::new(file);
    summary.bytes = source.size()?;
    let mut emit = |outcome: Outcome, summary: &mut FileSummary| {
        summary.count(&outcome);
        sink(outcome);
    };
    match format {
        CorpusFormat::Jsonl(compression) => {
            summary.format = "jsonl".into();
            summary.compression = compression.name().into();
            let mut lines = BufReader::with_capacity(1 << 16, jsonl_stream(source, compression)?);
            read_jsonl(&mut lines, compression, file, cfg, &mut |o| emit(o, &mut summary))?;
        }
        CorpusFormat::Parquet => {
            summary.format = "parquet".into();
            match source.random_access()? {
                RandomAccess::File(f) => read_parquet(f, file, cfg, &mut summary, &mut emit)?,
                RandomAccess::Bytes(b) => read_parquet(b, file, cfg, &mut summary, &mut emit)?,
            }
        }
    }
    Ok(summary)
}

/// The decompressed bytes of a JSON Lines file.
fn jsonl_stream(source: &Source, compression: Compression) -> io::Result<Box<dyn Read>> {
    let raw = source.open()?;
    Ok(match compression {
        Compression::None => Box::new(raw),
        Compression::Gzip => Box::new(flate2::read::MultiGzDecoder::new(raw)),
        Compression::Zstd => Box::new(zstd::stream::read::Decoder::new(raw)?),
    })
}

/// The decompressed bytes of a JSON Lines corpus file, where its
/// documents' offsets and lengths count (for a reader that cuts lines out
/// of it again, the export); `None` for a Parquet corpus, whose documents
/// are rows, or a name that is no corpus.
pub fn open_lines(source: &Source) -> io::Result<Option<Box<dyn Read>>> {
    match corpus_format(&source.name_path()) {
        Some(CorpusFormat::Jsonl(compression)) => Ok(Some(jsonl_stream(source, compression)?)),
        _ => Ok(None),
    }
}

/// Whether a corpus record's text is its `text` field (else its `html`):
/// `text` when it has more than whitespace, as ingest decides.
pub fn text_is_used(text: Option<&str>) -> bool {
    text.is_some_and(|t| !t.trim().is_empty())
}

/// Reads JSON Lines in parallel batches. A read error inside the stream (a
/// damaged or cut compressed file) ends the file with one reject.
fn read_jsonl(
    lines: &mut dyn BufRead,
    compression: Compression,
    file: &str,
    cfg: &IngestConfig,
    emit: &mut dyn FnMut(Outcome),
) -> io::Result<()> {
    let cap = cfg.max_payload_bytes.saturating_mul(LINE_SIZE_FACTOR).saturating_add(LINE_ALLOWANCE);
    let cap = usize::try_from(cap).unwrap_or(usize::MAX);
    let mut batch: Vec<(u64, u64, Parsed)> = Vec::new();
    let mut batch_bytes = 0usize;
    let flush = |batch: &mut Vec<(u64, u64, Parsed)>, emit: &mut dyn FnMut(Outcome)| {
        let outcomes: Vec<Outcome> = batch
            .par_drain(..)
            .map(|(offset, length, parsed)| outcome_of(offset, Some(length), parsed, file, "line", cfg))
            .collect();
        outcomes.into_iter().for_each(emit);
    };
    let mut offset = 0u64;
    let mut line = Vec::new();
    loop {
        let read = match read_line_capped(lines, cap, &mut line) {
            Ok(r) => r,
            Err(e) => {
                flush(&mut batch, emit);
                let reason = match compression {
                    Compression::None => "read_error",
                    Compression::Gzip => "bad_gzip",
                    Compression::Zstd => "bad_zstd",
                };
                emit(reject(file, offset, "line", None, reason, format!("reading stopped here: {e}")));
                return Ok(());
            }
        };
        let Some(LineRead { consumed, cut }) = read else { break };
        let parsed = if cut {
            Err(("too_large", format!("line longer than {cap} bytes")))
        } else if line.iter().all(u8::is_ascii_whitespace) {
            offset += consumed;
            continue;
        } else {
            batch_bytes += line.len();
            parse_json_line(&line)
        };
        batch.push((offset, consumed, parsed));
        offset += consumed;
        if batch.len() >= BATCH_RECORDS || batch_bytes >= BATCH_BYTES {
            flush(&mut batch, emit);
            batch_bytes = 0;
        }
    }
    flush(&mut batch, emit);
    Ok(())
}

/// How one line was read.
struct LineRead {
    /// Bytes taken from the stream, line end included.
    consumed: u64,
    /// The line was longer than the cap: `line` holds its start only.
    cut: bool,
}

/// Reads up to the next `\n` into `line` (without it), keeping at most `cap`
/// bytes but consuming the whole line; `None` at the end of the stream.
fn read_line_capped(r: &mut dyn BufRead, cap: usize, line: &mut Vec<u8>) -> io::Result<Option<LineRead>> {
    line.clear();
    let mut consumed = 0u64;
    let mut cut = false;
    loop {
        let available = match r.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            return Ok((consumed > 0).then_some(LineRead { consumed, cut }));
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1),
            None => (available, available.len()),
        };
        let room = cap.saturating_sub(line.len());
        cut |= chunk.len() > room;
        line.extend_from_slice(&chunk[..chunk.len().min(room)]);
        let at_end = done > chunk.len();
        r.consume(done);
        consumed += done as u64;
        if at_end {
            if line.last() == Some(&b'\r') {
                line.pop();
            }
            return Ok(Some(LineRead { consumed, cut }));
        }
    }
}

/// One JSON line → its fields.
fn parse_json_line(line: &[u8]) -> Parsed {
    let value: Value = serde_json::from_slice(line).map_err(|e| ("bad_json", format!("{e}")))?;
    let Value::Object(map) = value else {
        return Err(("bad_json", "the line is JSON but not an object".into()));
    };
    let text_field = |name: &str| -> Result<Option<String>, (&'static str, String)> {
        match map.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(other) => Err(("bad_field", format!("`{name}` is {}, not a string", json_kind(other)))),
        }
    };
    Ok(Fields {
        id: map.get(ID).and_then(id_string),
        url: text_field(URL)?,
        text: text_field(TEXT)?,
        html: text_field(HTML)?,
    })
}

fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Runs `f`, turning a panic into its message. The Parquet reader (arrow-rs)
/// panics on some damaged files instead of returning an error (found by
/// fuzzing: `assert!`s on bit widths, `unimplemented!` schema types); such a
/// file must end as a file error or a reject like any other damage.
fn no_panic<T>(f: impl FnOnce() -> T) -> Result<T, String> {
    catch_unwind(AssertUnwindSafe(f)).map_err(|p| {
        let msg = p.downcast_ref::<&str>().map(|s| s.to_string()).or_else(|| p.downcast_ref::<String>().cloned());
        format!("the Parquet reader panicked: {}", msg.unwrap_or_else(|| "no message".into()))
    })
}

/// Reads a Parquet corpus batch by batch (only the four columns it needs).
/// The Arrow schema a writer may embed is not read: the columns are cast to
/// text anyway, and decoding it is where damaged files made the reader panic.
fn read_parquet<R: parquet::file::reader::ChunkReader + 'static>(
    input: R,
    file: &str,
    cfg: &IngestConfig,
    summary: &mut FileSummary,
    emit: &mut dyn FnMut(Outcome, &mut FileSummary),
) -> io::Result<()> {
    let invalid = |e: String| io::Error::new(io::ErrorKind::InvalidData, e);
    let options = ArrowReaderOptions::new().with_skip_arrow_metadata(true);
    let builder = no_panic(|| ParquetRecordBatchReaderBuilder::try_new_with_options(input, options))
        .map_err(|m| invalid(format!("not a readable Parquet file: {m}")))?
        .map_err(|e| invalid(format!("not a readable Parquet file: {e}")))?;
    let metadata = builder.metadata().clone();
    summary.compression = metadata
        .row_groups()
        .first()
        .and_then(|g| g.columns().first())
        .map_or_else(|| "none".into(), |c| codec_name(c.compression()));
    let schema = builder.schema().clone();
    let position = |name: &str| schema.fields().iter().position(|f| f.name() == name);
    let wanted = [ID, URL, TEXT, HTML].map(position);
    if wanted[0].is_none() || (wanted[2].is_none() && wanted[3].is_none()) {
        let have: Vec<&str> = schema.fields().iter().map(|f| f.name().as_str()).collect();
        return Err(invalid(format!("a Parquet corpus needs columns `id` and `text` (or `html`); it has {have:?}")));
    }
    // A `text` column of numbers or lists is a mistake in the file, not text
    // to guess from: the whole file is refused, as a missing column is.
    for name in [URL, TEXT, HTML] {
        if let Ok(field) = schema.field_with_name(name) {
            if !is_string_type(field.data_type()) {
                return Err(invalid(format!("column `{name}` is {}, not a string", field.data_type())));
            }
        }
    }
    // Leaf indices of the wanted top-level columns (all flat when usable).
    let roots: Vec<usize> = wanted.iter().flatten().copied().collect();
    let mask = ProjectionMask::roots(builder.parquet_schema(), roots);
    let mut reader = no_panic(|| builder.with_projection(mask).with_batch_size(BATCH_RECORDS).build())
        .map_err(|m| invalid(format!("cannot read Parquet file: {m}")))?
        .map_err(|e| invalid(format!("cannot read Parquet file: {e}")))?;
    let max_rows = summary.bytes / PARQUET_MIN_BYTES_PER_ROW;
    let mut row = 0u64;
    loop {
        if row > max_rows {
            let detail = format!("{row} rows read from a file of {} bytes: the rest is not read", summary.bytes);
            emit(reject(file, row, "row", None, "too_many_rows", detail), summary);
            return Ok(());
        }
        let failed = match no_panic(|| reader.next()) {
            Ok(None) => break,
            Ok(Some(Ok(b))) => Ok(b),
            Ok(Some(Err(e))) => Err(e.to_string()),
            Err(m) => Err(m),
        };
        let batch = match failed {
            Ok(b) => b,
            Err(e) => {
                let r = reject(file, row, "row", None, "bad_parquet", format!("reading stopped here: {e}"));
                emit(r, summary);
                return Ok(());
            }
        };
        let columns = [ID, URL, TEXT, HTML].map(|name| string_column(&batch, name)).into_iter();
        let columns: Vec<Option<ArrayRef>> = columns.collect::<Result<_, _>>().map_err(invalid)?;
        let parsed: Vec<(u64, Parsed)> = (0..batch.num_rows())
            .map(|i| {
                let get = |c: &Option<ArrayRef>| {
                    c.as_ref().filter(|a| a.is_valid(i)).map(|a| a.as_string::<i32>().value(i).to_string())
                };
                let id = get(&columns[0]).filter(|s| !s.is_empty());
                let fields = Fields { id, url: get(&columns[1]), text: get(&columns[2]), html: get(&columns[3]) };
                (row + i as u64, Ok(fields))
            })
            .collect();
        row += batch.num_rows() as u64;
        let outcomes: Vec<Outcome> =
            parsed.into_par_iter().map(|(offset, p)| outcome_of(offset, None, p, file, "row", cfg)).collect();
        for o in outcomes {
            emit(o, summary);
        }
    }
    Ok(())
}

/// UTF-8 string types, plain or dictionary-encoded.
fn is_string_type(t: &DataType) -> bool {
    match t {
        DataType::Utf8 | DataType::LargeUtf8 | DataType::Utf8View => true,
        DataType::Dictionary(_, values) => is_string_type(values),
        _ => false,
    }
}

/// Column `name` of the batch cast to UTF-8 text (numbers become their
/// decimal form), `None` when the file has no such column.
fn string_column(batch: &RecordBatch, name: &str) -> Result<Option<ArrayRef>, String> {
    let Some(column) = batch.column_by_name(name) else { return Ok(None) };
    arrow::compute::cast(column, &DataType::Utf8)
        .map(Some)
        .map_err(|e| format!("column `{name}` of type {} cannot be read as text: {e}", column.data_type()))
}

/// `SNAPPY` → `snappy`, `ZSTD(ZstdLevel(3))` → `zstd`, `UNCOMPRESSED` → `none`.
fn codec_name(c: parquet::basic::Compression) -> String {
    match c {
        parquet::basic::Compression::UNCOMPRESSED => "none".into(),
        other => {
            let debug = format!("{other:?}");
            debug.split('(').next().unwrap_or(&debug).to_ascii_lowercase()
        }
    }
}

fn reject(file: &str, offset: u64, record_type: &str, url: Option<String>, reason: &str, detail: String) -> Outcome {
    Outcome::Reject(Reject {
        warc_file: file.to_string(),
        warc_offset: offset,
        record_type: record_type.to_string(),
        url,
        reason: reason.to_string(),
        detail,
    })
}

/// A record's fields → a document, or the reason it is not one. `length`:
/// the bytes of a JSON line, line end included (none for a Parquet row).
fn outcome_of(
    offset: u64,
    length: Option<u64>,
    parsed: Parsed,
    file: &str,
    record_type: &str,
    cfg: &IngestConfig,
) -> Outcome {
    let fields = match parsed {
        Ok(f) => f,
        Err((reason, detail)) => return reject(file, offset, record_type, None, reason, detail),
    };
    let url = fields.url.clone().filter(|u| !u.trim().is_empty()).or_else(|| fields.id.clone());
    let fail = |reason: &str, detail: String| reject(file, offset, record_type, url.clone(), reason, detail);
    let Some(id) = fields.id else {
        return fail("missing_id", "no `id` (a non-empty string or a number)".into());
    };
    let has_text = text_is_used(fields.text.as_deref());
    let (source, mime) = match (fields.text, fields.html) {
        (Some(text), _) if has_text => (text, "text/plain"),
        (_, Some(html)) => (html, "text/html"),
        (Some(_), None) => return fail("empty_text", "`text` is empty".into()),
        (None, None) => return fail("missing_text", "neither `text` nor `html`".into()),
    };
    // Checked before the HTML is parsed: the limit bounds that work too.
    let raw_bytes = source.len() as u64;
    if raw_bytes > cfg.max_payload_bytes {
        return fail("too_large", format!("{mime} of {raw_bytes} bytes"));
    }
    let (mut text, title, flattened, links) = if mime == "text/html" {
        match html::extract(&source, cfg) {
            Ok(ex) => (ex.text, ex.title, ex.flattened, ex.links),
            Err(e) => {
                let (reason, detail) = too_deep(e, cfg);
                return fail(reason, detail);
            }
        }
    } else {
        (source.trim().to_string(), String::new(), false, html::PageLinks::default())
    };
    if let Err((reason, detail)) = check_text_length(&text, cfg) {
        return fail(reason, detail);
    }
    let text_truncated = cut_text(&mut text, cfg.max_text_bytes);
    let url = url.unwrap_or_default();
    Outcome::Document(Document {
        not_content: not_content(&url, None, links.refresh, &text, cfg),
        canonical_url: super::canonical::canonical_url(&url, links.canonical.as_deref()),
        doc_id: xxh3_64(format!("{file}\n{id}").as_bytes()),
        record_id: Some(id),
        url,
        warc_file: file.to_string(),
        warc_offset: offset,
        warc_length: length,
        crawl_date: None,
        http_status: None,
        content_type: Some(mime.to_string()),
        charset: "utf-8".into(),
        title,
        lang: html::detect_lang(&text),
        text,
        raw_bytes,
        payload_digest: super::digest::payload_digest(source.as_bytes()),
        flattened,
        text_truncated,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// Ingests `content` written to a temporary file named `name`.
    fn ingest_bytes(name: &str, content: &[u8], cfg: &IngestConfig) -> (FileSummary, Vec<Outcome>) {
        let dir = std::env::temp_dir().join(format!("neardup-corpus-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name);
        std::fs::write(&path, content).unwrap();
        let mut outcomes = Vec::new();
        let summary = ingest_corpus(&Source::File(path.clone()), name, cfg, &mut |o| outcomes.push(o)).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        (summary, outcomes)
    }

    fn doc(o: &Outcome) -> &Document {
        match o {
            Outcome::Document(d) => d,
            other => panic!("expected a document, got {other:?}"),
        }
    }

    fn rejected(o: &Outcome) -> (u64, &str) {
        match o {
            Outcome::Reject(r) => (r.warc_offset, r.reason.as_str()),
            other => panic!("expected a reject, got {other:?}"),
        }
    }

    #[test]
    fn corpus_files_are_told_by_name() {
        for yes in ["a.jsonl", "b.JSONL.gz", "c.json.gz", "d.jsonl.zst", "e.parquet", "f.ndjson"] {
            assert!(is_corpus_file(Path::new(yes)), "{yes}");
        }
        for no in ["a.json", "b.warc.gz", "c.wet", "jsonl", "d.parquet.bak"] {
            assert!(!is_corpus_file(Path::new(no)), "{no}");
        }
        assert_eq!((record_type(Path::new("x.parquet")), record_type(Path::new("x.jsonl"))), ("row", "line"));
    }

    #[test]
    fn jsonl_lines_become_documents_or_rejects_at_their_offsets() {
        // Offsets: the sum of the lengths of the lines before, plus one `\n`
        // each (Python: len(line.encode()) + 1 accumulated).
        let lines = [
            r#"{"id": "a", "url": "http://x/a", "text": "  Hello world  "}"#, // 0, 59 bytes
            r#"{"id": 7, "text": "numeric id"}"#,                             // 60, 31 bytes
            r#"{"id": "h", "html": "<html><title>T</title><body><p>From html</p></body></html>"}"#, // 92, 81
            "not json",                                                       // 174, 8
            r#"{"id": "m"}"#,                                                 // 183, 11
            r#"{"id": "e", "text": "   "}"#,                                  // 195, 26
            r#"{"url": "http://x/noid", "text": "t"}"#,                       // 222, 37
            "",                                                               // 260: blank, not a record
            r#"[1, 2]"#,                                                      // 261, 6
            r#"{"id": "n", "text": 5}"#,                                      // 268, 22
            r#"{"id": "a", "text": "same id again"}"#,                        // 291, no newline after
        ];
        let content = lines.join("\n");
        let (s, out) = ingest_bytes("small.jsonl", content.as_bytes(), &IngestConfig::default());
        assert_eq!((s.format.as_str(), s.compression.as_str(), s.bytes), ("jsonl", "none", content.len() as u64));
        assert_eq!((s.records, s.documents, s.rejects, s.revisits, s.skipped), (10, 4, 6, 0, 0));
        assert_eq!(out.len(), 10);
        let a = doc(&out[0]);
        assert_eq!((a.text.as_str(), a.url.as_str(), a.record_id.as_deref()), ("Hello world", "http://x/a", Some("a")));
        assert_eq!((a.warc_offset, a.doc_id), (0, xxh3_64(b"small.jsonl\na")));
        assert_eq!((a.content_type.as_deref(), a.raw_bytes, a.http_status), (Some("text/plain"), 15, None));
        let n = doc(&out[1]);
        assert_eq!((n.record_id.as_deref(), n.url.as_str(), n.warc_offset), (Some("7"), "7", 60));
        let h = doc(&out[2]);
        assert_eq!(
            (h.text.as_str(), h.title.as_str(), h.content_type.as_deref()),
            ("From html", "T", Some("text/html"))
        );
        assert_eq!(h.warc_offset, 92);
        assert_eq!(rejected(&out[3]), (174, "bad_json"));
        assert_eq!(rejected(&out[4]), (183, "missing_text"));
        assert_eq!(rejected(&out[5]), (195, "empty_text"));
        assert_eq!(rejected(&out[6]), (222, "missing_id"));
        assert_eq!(rejected(&out[7]), (261, "bad_json"));
        assert_eq!(rejected(&out[8]), (268, "bad_field"));
        // The repeated id is a document here; the ingest stage rejects it
        // as duplicate_record_id (it has the same doc_id).
        assert_eq!(doc(&out[9]).doc_id, a.doc_id);
        assert_eq!(doc(&out[9]).warc_offset, 291);
        // Offset and length cut each document's line (with its line end) out of the file.
        for (o, line) in [(0, lines[0]), (1, lines[1]), (2, lines[2]), (9, lines[10])] {
            let d = doc(&out[o]);
            let (from, length) = (d.warc_offset as usize, d.warc_length.expect("a JSON line has a length") as usize);
            assert_eq!(content[from..from + length].trim_end_matches('\n'), line);
        }
        assert_eq!(a.warc_length, Some(60));
    }

    #[test]
    fn crlf_line_ends_and_size_limits() {
        let content = "{\"id\":\"a\",\"text\":\"0123456789\"}\r\n{\"id\":\"b\",\"text\":\"xy\"}\r\n";
        let cfg = IngestConfig { max_payload_bytes: 5, min_text_chars: 1, ..IngestConfig::default() };
        let (s, out) = ingest_bytes("crlf.jsonl", content.as_bytes(), &cfg);
        assert_eq!((s.records, s.documents), (2, 1));
        assert_eq!(rejected(&out[0]), (0, "too_large"));
        assert_eq!((doc(&out[1]).text.as_str(), doc(&out[1]).warc_offset), ("xy", 32));
        let cfg = IngestConfig { max_payload_bytes: 1 << 20, min_text_chars: 3, ..IngestConfig::default() };
        let (_, out) = ingest_bytes("crlf.jsonl", content.as_bytes(), &cfg);
        assert_eq!(rejected(&out[1]), (32, "empty_text"));
    }

    #[test]
    fn overlong_line_is_cut_and_the_next_line_still_read() {
        let mut r = io::Cursor::new(b"abcdefgh\nxy\n".to_vec());
        let mut line = Vec::new();
        let first = read_line_capped(&mut r, 3, &mut line).unwrap().unwrap();
        assert_eq!((first.consumed, first.cut, line.as_slice()), (9, true, &b"abc"[..]));
        let second = read_line_capped(&mut r, 3, &mut line).unwrap().unwrap();
        assert_eq!((second.consumed, second.cut, line.as_slice()), (3, false, &b"xy"[..]));
        assert!(read_line_capped(&mut r, 3, &mut line).unwrap().is_none());
    }

    #[test]
    fn gzip_and_zstd_jsonl_and_a_broken_gzip_stream() {
        let content = "{\"id\":1,\"text\":\"one\"}\n{\"id\":2,\"text\":\"two\"}\n";
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
        gz.write_all(content.as_bytes()).unwrap();
        let gz = gz.finish().unwrap();
        let (s, out) = ingest_bytes("c.jsonl.gz", &gz, &IngestConfig::default());
        assert_eq!((s.compression.as_str(), s.documents, s.bytes), ("gzip", 2, gz.len() as u64));
        assert_eq!(doc(&out[1]).warc_offset, 22); // offsets in the decompressed text
        let zst = zstd::encode_all(content.as_bytes(), 3).unwrap();
        let (s, _) = ingest_bytes("c.json.zst", &zst, &IngestConfig::default());
        assert_eq!((s.compression.as_str(), s.documents), ("zstd", 2));
        // Cut in the middle of the deflate stream: whatever lines came out
        // before stay, then one bad_gzip reject ends the file.
        let (s, out) = ingest_bytes("cut.jsonl.gz", &gz[..gz.len() / 2], &IngestConfig::default());
        assert_eq!(s.records, s.documents + s.rejects);
        assert_eq!(rejected(out.last().unwrap()).1, "bad_gzip");
    }

    #[test]
    fn a_zstd_stream_cut_short_ends_with_a_reject() {
        // Several zstd blocks (128 KB of input each at most) in 800 KB of
        // lines, few of them (each document costs a language detection,
        // slow in a debug build): the blocks before the cut decode.
        let padding = "words of a line ".repeat(25);
        let lines: String =
            (0..2_000).map(|i| format!("{{\"id\":{i},\"text\":\"line number {i} {padding}\"}}\n")).collect();
        assert!(lines.len() > 6 * 128 * 1024);
        let zst = zstd::encode_all(lines.as_bytes(), 3).unwrap();
        let (s, out) = ingest_bytes("cut.jsonl.zst", &zst[..zst.len() / 2], &IngestConfig::default());
        assert_eq!(s.records, s.documents + s.rejects);
        assert!(s.documents > 0 && s.documents < 2_000, "{s:?}");
        let (_, reason) = rejected(out.last().unwrap());
        assert_eq!((reason, s.rejects), ("bad_zstd", 1));
    }

    /// Writes a Parquet file with the given columns.
    fn parquet_bytes(columns: Vec<(&str, ArrayRef)>) -> Vec<u8> {
        let batch = RecordBatch::try_from_iter(columns).unwrap();
        let mut buf = Vec::new();
        let mut w = parquet::arrow::ArrowWriter::try_new(&mut buf, batch.schema(), None).unwrap();
        w.write(&batch).unwrap();
        w.close().unwrap();
        buf
    }

    #[test]
    fn parquet_rows_with_numeric_ids_nulls_and_html() {
        use arrow::array::{Int64Array, StringArray};
        use std::sync::Arc;
        let bytes = parquet_bytes(vec![
            ("id", Arc::new(Int64Array::from(vec![Some(10), Some(11), None, Some(13)])) as ArrayRef),
            ("text", Arc::new(StringArray::from(vec![Some("ten"), None, Some("x"), None]))),
            ("html", Arc::new(StringArray::from(vec![None, Some("<p>eleven</p>"), None, None]))),
            ("extra", Arc::new(StringArray::from(vec!["a", "b", "c", "d"]))),
        ]);
        let (s, out) = ingest_bytes("t.parquet", &bytes, &IngestConfig::default());
        assert_eq!((s.format.as_str(), s.records, s.documents, s.rejects), ("parquet", 4, 2, 2));
        let ten = doc(&out[0]);
        assert_eq!(
            (ten.record_id.as_deref(), ten.url.as_str(), ten.doc_id),
            (Some("10"), "10", xxh3_64(b"t.parquet\n10"))
        );
        assert_eq!((doc(&out[1]).text.as_str(), doc(&out[1]).warc_offset), ("eleven", 1));
        assert_eq!(doc(&out[1]).warc_length, None, "a row has a number, not bytes");
        assert_eq!(rejected(&out[2]), (2, "missing_id"));
        assert_eq!(rejected(&out[3]), (3, "missing_text"));
    }

    /// A few bytes of run-length encoding can claim millions of rows; each
    /// empty row would be a reject of its own (a 4,444-byte file found by
    /// fuzzing kept the reader busy for minutes). Reading stops once the
    /// rows outnumber the file's bytes, with one `too_many_rows` reject, and
    /// the counts still add up.
    #[test]
    fn parquet_claiming_more_rows_than_bytes_stops_with_one_reject() {
        use arrow::array::StringArray;
        use std::sync::Arc;
        let rows = 1_000_000;
        let nulls = || Arc::new(StringArray::from(vec![None::<&str>; rows])) as ArrayRef;
        let bytes = parquet_bytes(vec![("id", nulls()), ("text", nulls())]);
        assert!(bytes.len() < 20_000, "the run-length encoded nulls are small: {} bytes", bytes.len());
        let (s, out) = ingest_bytes("bomb.parquet", &bytes, &IngestConfig::default());
        assert_eq!(s.records, out.len() as u64);
        assert_eq!((s.records, s.documents), (s.rejects, 0));
        assert!(s.records <= bytes.len() as u64 + BATCH_RECORDS as u64 + 1, "{} rows read", s.records);
        let (offset, reason) = rejected(out.last().unwrap());
        assert_eq!((offset, reason), (s.records - 1, "too_many_rows"));
        assert!(out[..out.len() - 1].iter().all(|o| rejected(o).1 == "missing_id"));
    }

    #[test]
    fn parquet_without_the_needed_columns_or_not_parquet_is_a_file_error() {
        use arrow::array::StringArray;
        use std::sync::Arc;
        let dir = std::env::temp_dir().join(format!("neardup-corpus-bad-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let no_text = dir.join("no_text.parquet");
        std::fs::write(&no_text, parquet_bytes(vec![("id", Arc::new(StringArray::from(vec!["a"])) as ArrayRef)]))
            .unwrap();
        let garbage = dir.join("garbage.parquet");
        std::fs::write(&garbage, b"PAR1 this is not parquet").unwrap();
        for p in [&no_text, &garbage] {
            let err =
                ingest_corpus(&Source::File(p.to_path_buf()), "x", &IngestConfig::default(), &mut |_| {}).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData, "{}", p.display());
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn parquet_text_columns_that_are_not_strings_are_a_file_error() {
        use arrow::array::{Int64Array, ListArray, StringArray};
        use arrow::datatypes::Int32Type;
        use std::sync::Arc;
        let dir = std::env::temp_dir().join(format!("neardup-corpus-types-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let ids = || Arc::new(StringArray::from(vec!["a"])) as ArrayRef;
        let list = ListArray::from_iter_primitive::<Int32Type, _, _>(vec![Some(vec![Some(1)])]);
        for (name, column, column_type) in [
            ("numbers.parquet", Arc::new(Int64Array::from(vec![7])) as ArrayRef, "Int64"),
            ("lists.parquet", Arc::new(list) as ArrayRef, "List"),
        ] {
            let path = dir.join(name);
            std::fs::write(&path, parquet_bytes(vec![("id", ids()), ("text", column)])).unwrap();
            let err = ingest_corpus(&Source::File(path), name, &IngestConfig::default(), &mut |_| {}).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::InvalidData);
            let message = err.to_string();
            assert!(message.starts_with("column `text` is ") && message.contains(column_type), "{message}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn parquet_files_that_make_the_reader_panic_are_file_errors_or_rejects() {
        // Found by fuzzing (minimized): arrow-rs panics on these instead of
        // returning an error: a bit width over 64 in a data page
        // (`assertion failed: num_bits <= size_of::<T>() * 8`), and a
        // damaged embedded Arrow schema (`unwrap()` on `None`).
        let bit_width = concat!(
            "504152311504150c150e4c15021500120000600200000064311506150a150a5c150415001504151015041500121c00000004",
            "15901504154c35001806736368656d61150600150c25021802696425004c1c000000150c250218047465787425004c1c0000",
            "00150c2502180468746d6c25004c1c000000160c193c193c26001c150c19350006101918026964150e160416621664263226",
            "08292c15041500150200150015101502003c160419061926020200000026001c150c193500061019180474657874150e1604",
            "16e21016cc0b26fe0b266c292c15041500150200150015101502003c16801019061926020200000026001c150c1935000610",
            "19180468746d6c150e160416ea2016de1526dc2126b80c292c15041500150200150015101502003c16802019061926000400",
            "000016ae3216042608168e2200193c26001c150c19350006101918026964150e1604166e167026cc22269622292c15041500",
            "150200150015101502003c160819061926000400000026001c150c193500061019180474657874150e160416ea2016961626",
            "e238268623292c15041500150200150015101502003c16802019061926000400000026001c150c193500061019180468746d",
            "6c150e160416ea2016961626f84e269c39292c15041500150200150015101502003c16802019061926000400000016c24216",
            "04269622169c2d00193c26001c150c19350006101918026964150e1604166e167026e84f26b24f292c150415001502001500",
            "15101502003c160819061926000400000026001c150c193500061019180474657874150e160416822916e21926ca6926a250",
            "292c15041500150200150015101502003c16982819061926000400000026001c150c193500061019180468746d6c150e1604",
            "16822916e21926ac830126846a292c15041500150200150015101502003c16982819061926000400000016f252160426b24f",
            "16b43400191c180c4152524f573a736368656d611898022f2f2f2f2f38674141414151414141414141414b41417741426741",
            "464141674143674141414141424241414d41414141434141494141414142414149414141414241414141414d414141427341",
            "4141414d41414141415141414143772f2f2f2f41414142425241414141415941414141424141414141414141414145414141",
            "4161485274624141414141436b2f2f2f2f32502f2f2f77414141515551414141414741414141415141414141414141414142",
            "4141414148526c65485141414141417a502f2f2f78414146414149414159414277414d414141414541415141414141414141",
            "4242524141414141594141414142414141414141414141414341414141615751414141514142414145414141414141414141",
            "413d3d001820706172717565742d6370702d6172726f77207630207c2040612032362e302e31193c1c00001c00001c000000",
            "e603000050415231",
        );
        let arrow_schema = concat!(
            "1504193c35001806736368656d61150400150c25021802696425004c1c0000001502250218047465787400160c191c192c26",
            "001c150c193500061019180269641504160c16b80116e801267426081c36002802643518026430111100192c150415001502",
            "00150015101502003c161819061926000c00000026001c15021935000610191804746578741504160c16c00116800226d402",
            "26f0011c1804050000001804000000001600280405000000180400000000111100192c15041500150200150015101502003c",
            "29061926000c00000016f802160c260816e82700191c180c4152524f573a736368656d6118ec012f2f2f2f2f366741414141",
            "51414141414141414b41417741426741464141674143674141414141424241414d4141414143414149414241414141414941",
            "4141414241414141414941414142514141414142414141414d6a2f2f2f384141414543454141414143414141414145414141",
            "414141414141415141414142305a586830414141414141674144414149414163414341414141414141414145674141414145",
            "4141554141674142674148414141417741415141424141414141414141454645414141414267414141414541414141414141",
            "4141414941414142705a41414142414145414151414141413d001820706172717565742d6370702d6172726f772076657273",
            "696f6e2031332e302e31192c1c00001c0000000702000050415231",
        );
        for (name, hex) in [("bit_width.parquet", bit_width), ("arrow_schema.parquet", arrow_schema)] {
            let bytes: Vec<u8> =
                (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap()).collect();
            let dir = std::env::temp_dir().join(format!("neardup-corpus-{}-panic", std::process::id()));
            std::fs::create_dir_all(&dir).unwrap();
            let path = dir.join(name);
            std::fs::write(&path, &bytes).unwrap();
            let mut outcomes = Vec::new();
            let result = ingest_corpus(&Source::File(path), name, &IngestConfig::default(), &mut |o| outcomes.push(o));
            std::fs::remove_dir_all(&dir).unwrap();
            match result {
                // A file error (unreadable, or a column of the wrong type).
                Err(e) => assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{name}: {e}"),
                Ok(summary) => {
                    assert_eq!(summary.records, outcomes.len() as u64, "{name}");
                    assert!(
                        outcomes.iter().any(|o| matches!(o, Outcome::Reject(r) if r.reason == "bad_parquet")),
                        "{name}"
                    );
                }
            }
        }
    }

    #[test]
    fn ids_from_strings_and_numbers_only() {
        use serde_json::json;
        assert_eq!(id_string(&json!("x")), Some("x".into()));
        assert_eq!(id_string(&json!(42)), Some("42".into()));
        assert_eq!(id_string(&json!(1.5)), Some("1.5".into()));
        for none in [json!(""), json!(null), json!(true), json!([1]), json!({"a": 1})] {
            assert_eq!(id_string(&none), None, "{none}");
        }
    }
}
