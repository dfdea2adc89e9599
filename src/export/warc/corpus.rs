//! Corpus files (JSON Lines, Parquet) in the WARC export: each kept
//! document a WARC/1.1 record of its text (or HTML), its other fields kept
//! ([`legacy::corpus_header`]).

use anyhow::{Context, Result};
use std::io::{self, BufRead, BufReader, Read};

use super::sink::{write_member, RecordSink};
use crate::export::cdxj::Entry;
use crate::export::job::{Decision, ExportSummary, RunFile};
use crate::export::legacy::{self, CorpusRecord};
use crate::ingest::corpus;
use crate::ingest::digest::payload_digest;
use crate::ingest::source::{RandomAccess, Source};

/// The kept documents of a corpus file, each as a WARC/1.1 record (see
/// [`legacy::corpus_header`]); rejected lines are no records and stay out.
pub(super) fn corpus_file(
    file: &RunFile,
    source: &Source,
    decisions: &[Decision],
    fallback_date: &str,
    sink: &mut dyn RecordSink,
    summary: &mut ExportSummary,
) -> Result<()> {
    let kept: Vec<&Decision> = decisions.iter().filter(|d| d.kept).collect();
    summary.add("documents_removed", (decisions.len() - kept.len()) as u64);
    let mut write = |d: &Decision, format: &str, text: &str, html: bool, fields: &str| -> Result<()> {
        let id = legacy::record_id(&file.name, d.offset);
        let date = d.crawl_date.as_deref().and_then(legacy::w3c_utc).unwrap_or_else(|| fallback_date.to_string());
        let record = CorpusRecord { url: &d.url, id: &id, date: &date, format, html, fields };
        let header = legacy::corpus_header(&record, text.len() as u64);
        let (offset, length) = write_member(sink, |out| {
            out.write_all(&header)?;
            out.write_all(text.as_bytes())?;
            out.write_all(b"\r\n\r\n")
        })?;
        let entry = sink.indexes().then(|| Entry {
            record_type: if html { "resource" } else { "conversion" }.into(),
            url: legacy::clean_uri(&d.url),
            date: date.clone(),
            content_type: Some(if html { "text/html" } else { "text/plain" }.into()),
            digest: Some(payload_digest(text.as_bytes())),
            ..Entry::default()
        });
        sink.written(entry.as_ref(), offset, length)?;
        summary.add("records_converted", 1);
        Ok(())
    };
    match corpus::open_lines(source).context("cannot read the input file")? {
        Some(stream) => {
            let mut lines = BufReader::with_capacity(1 << 20, stream);
            let mut position = 0u64;
            let mut line = Vec::new();
            for d in kept {
                let Some(gap) = d.offset.checked_sub(position) else {
                    anyhow::bail!("two documents share the line at {}: the corpus changed since the run", d.offset);
                };
                let skipped = io::copy(&mut (&mut lines).take(gap), &mut io::sink())?;
                position += skipped;
                line.clear();
                position += lines.read_until(b'\n', &mut line)? as u64;
                let value: serde_json::Value =
                    serde_json::from_slice(&line).with_context(|| format!("line at {} is no longer JSON", d.offset))?;
                let serde_json::Value::Object(mut fields) = value else {
                    anyhow::bail!("line at {} is no longer a JSON object", d.offset);
                };
                let as_text = |v: Option<serde_json::Value>| match v {
                    Some(serde_json::Value::String(s)) => Some(s),
                    _ => None,
                };
                let (text, html) = (as_text(fields.remove("text")), as_text(fields.remove("html")));
                let rest = serde_json::to_string(&fields)?;
                let Some((body, html)) = body_of(text.as_deref(), html.as_deref()) else {
                    anyhow::bail!("line at {} has no text any more", d.offset);
                };
                write(d, "jsonl", body, html, &rest)?;
            }
        }
        None => parquet_rows(source, &kept, &mut |d, text, html, rest| write(d, "parquet", text, html, rest))?,
    }
    Ok(())
}

/// What a corpus record holds: its text when ingest read the text
/// ([`corpus::text_is_used`]), else its HTML (then `true`).
fn body_of<'a>(text: Option<&'a str>, html: Option<&'a str>) -> Option<(&'a str, bool)> {
    match (corpus::text_is_used(text), text, html) {
        (true, Some(text), _) => Some((text, false)),
        (_, _, Some(html)) => Some((html, true)),
        _ => None,
    }
}

/// Calls `write` for each row of a Parquet corpus that `kept` names (by
/// row number, in order) with its text (or HTML, then `true`) and its other
/// columns as one JSON object.
fn parquet_rows(
    source: &Source,
    kept: &[&Decision],
    write: &mut dyn FnMut(&Decision, &str, bool, &str) -> Result<()>,
) -> Result<()> {
    use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
    let reader = match source.random_access().context("cannot read the input file")? {
        RandomAccess::File(f) => ParquetRecordBatchReaderBuilder::try_new(f)?.build()?,
        RandomAccess::Bytes(b) => ParquetRecordBatchReaderBuilder::try_new(b)?.build()?,
    };
    let mut wanted = kept.iter().peekable();
    let mut first_row = 0u64;
    for batch in reader {
        let batch = batch?;
        let rows = batch.num_rows() as u64;
        if wanted.peek().is_none_or(|d| d.offset >= first_row + rows) {
            first_row += rows;
            continue;
        }
        let text_of = |name: &str| -> Result<Option<arrow::array::ArrayRef>> {
            batch
                .column_by_name(name)
                .map(|c| arrow::compute::cast(c, &arrow::datatypes::DataType::Utf8))
                .transpose()
                .map_err(Into::into)
        };
        let (texts, htmls) = (text_of("text")?, text_of("html")?);
        let others: Vec<usize> = (0..batch.num_columns())
            .filter(|&i| !["text", "html"].contains(&batch.schema().field(i).name().as_str()))
            .collect();
        let mut json = Vec::new();
        let mut writer = arrow::json::LineDelimitedWriter::new(&mut json);
        writer.write(&batch.project(&others)?)?;
        writer.finish()?;
        let fields: Vec<&str> = std::str::from_utf8(&json)?.lines().collect();
        while let Some(d) = wanted.next_if(|d| d.offset < first_row + rows) {
            let i = (d.offset - first_row) as usize;
            let value = |column: &Option<arrow::array::ArrayRef>| {
                use arrow::array::{Array, AsArray};
                column.as_ref().filter(|c| c.is_valid(i)).map(|c| c.as_string::<i32>().value(i).to_string())
            };
            let (text, html) = (value(&texts), value(&htmls));
            let rest = fields.get(i).copied().unwrap_or("{}");
            let Some((body, html)) = body_of(text.as_deref(), html.as_deref()) else {
                anyhow::bail!("row {} has no text any more", d.offset);
            };
            write(d, body, html, rest)?;
        }
        first_row += rows;
    }
    Ok(())
}
