//! `--format parquet|jsonl`: one row per kept document (with `--removed`,
//! per removed one) with the visible text a reader sees, in its original
//! case: `documents.text` without the lines that are its host's
//! boilerplate (the `boilerplate` table, matched as the `tokens` stage
//! matches them, [`crate::text::boilerplate::Boilerplate::strip`]), or with them
//! under `--keep-boilerplate`. The columns are `schemas/export_documents.json`'s.
//!
//! The rows come out of one query over `decisions` and `documents`, in
//! crawl order (input file, then offset), and are written a batch at a
//! time by one of the two row formats, each a [`RowWriter`].

use anyhow::{Context, Result};
use arrow::array::{Array, RecordBatch};
use parquet::arrow::ArrowWriter;
use rayon::prelude::*;

use super::job::{files_predicate, ExportSummary, Format, Job, KeptCopyLookup};
use super::output::{Destination, OutputFile};
use crate::tables::columns::{decisions, documents, export_documents};
use crate::tables::write::Rows as _;
use crate::text::boilerplate::Boilerplate;

/// A row format: takes batches of `export_documents` rows.
trait RowWriter {
    /// Writes a batch.
    fn write(&mut self, batch: &RecordBatch) -> Result<()>;
    /// Ends the file; returns it for publishing.
    fn finish(self: Box<Self>) -> Result<OutputFile>;
}

/// Parquet, as the pipeline writes its tables (zstd).
struct ParquetRows(ArrowWriter<OutputFile>);

impl RowWriter for ParquetRows {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.0.write(batch)?;
        // 64 Ki texts are a row group of gigabytes on a crawl of long
        // pages: cut it by size too, as the pipeline's tables are.
        if self.0.in_progress_size() >= crate::tables::write::ROW_GROUP_BYTES {
            self.0.flush()?;
        }
        Ok(())
    }
    fn finish(self: Box<Self>) -> Result<OutputFile> {
        Ok(self.0.into_inner()?)
    }
}

/// JSON Lines: one object per row, null fields left out, ids as strings
/// ([`crate::tables::json`]).
struct JsonRows(arrow::json::LineDelimitedWriter<OutputFile>);

impl RowWriter for JsonRows {
    fn write(&mut self, batch: &RecordBatch) -> Result<()> {
        self.0.write(&crate::tables::json::lossless(batch)?)?;
        Ok(())
    }
    fn finish(mut self: Box<Self>) -> Result<OutputFile> {
        self.0.finish()?;
        Ok(self.0.into_inner())
    }
}

/// Writes this task's rows to file `name` of `destination`; returns where
/// it went.
pub(super) fn export(job: &Job, destination: &Destination, name: &str, summary: &mut ExportSummary) -> Result<String> {
    let boilerplate = if job.options.keep_boilerplate {
        Boilerplate::default()
    } else {
        job.runtime.block_on(crate::stages::boilerplate::load_boilerplate(job.session))?
    };
    let file = destination.create(name)?;
    let schema = crate::tables::schema::arrow_schema(export_documents::TABLE);
    let mut writer: Box<dyn RowWriter> = match job.options.format {
        Format::Parquet => {
            Box::new(ParquetRows(ArrowWriter::try_new(file, schema, Some(crate::tables::write::writer_properties()?))?))
        }
        _ => Box::new(JsonRows(arrow::json::LineDelimitedWriter::new(file))),
    };
    let own = files_predicate("d.warc_file", job.files, job.options.shard);
    let kept = if job.options.removed { "NOT d.is_kept" } else { "d.is_kept" };
    let lookup = KeptCopyLookup::of(job.out)?;
    let sql = format!(
        "SELECT d.doc_id, d.url, d.crawl_date, d.cluster_id, d.cluster_size, d.reason, d.duplicate_of, \
         {}, d.similarity, t.text FROM decisions d JOIN documents t ON t.doc_id = d.doc_id {} \
         WHERE {kept} AND {own} ORDER BY d.warc_file, d.warc_offset",
        lookup.columns, lookup.joins
    );
    let mut batches = job.stream(&sql)?;
    let (mut rows, mut stripped) = (0u64, 0u64);
    while let Some(batch) = batches.next()? {
        let (out, lines_left_out) = export_batch(&batch, &boilerplate)?;
        rows += out.num_rows() as u64;
        stripped += lines_left_out;
        writer.write(&out).with_context(|| format!("cannot write {}", destination.describe(name)))?;
    }
    let written = destination.publish(writer.finish()?)?;
    summary.add("documents", rows);
    summary.add("boilerplate_lines_left_out", stripped);
    Ok(written)
}

/// One batch of the query as `export_documents` rows, the texts stripped
/// in parallel; and the boilerplate lines left out.
fn export_batch(batch: &RecordBatch, boilerplate: &Boilerplate) -> Result<(RecordBatch, u64)> {
    let (urls, texts) = (decisions::url(batch)?, documents::text(batch)?);
    let stripped: Vec<(String, u64)> = (0..batch.num_rows())
        .into_par_iter()
        .map(|i| {
            let s = boilerplate.strip(urls.value(i), texts.value(i));
            if s.removed_lines == 0 && !s.all_template {
                // Nothing left out: the text as it is (blank lines too).
                (texts.value(i).to_string(), 0)
            } else {
                (s.text, u64::from(s.removed_lines))
            }
        })
        .collect();
    let (ids, dates) = (decisions::doc_id(batch)?, decisions::crawl_date(batch)?);
    let (clusters, sizes) = (decisions::cluster_id(batch)?, decisions::cluster_size(batch)?);
    let (reasons, of, similarity) =
        (decisions::reason(batch)?, decisions::duplicate_of(batch)?, decisions::similarity(batch)?);
    let text_of = |name: &str| crate::tables::column::<arrow::array::StringArray>(batch, name);
    let (kept_crawl, kept_url, kept_date) = (text_of("kept_crawl")?, text_of("kept_url")?, text_of("kept_date")?);
    let optional =
        |column: &arrow::array::StringArray, i: usize| column.is_valid(i).then(|| column.value(i).to_string());
    let mut rows = export_documents::Rows::default();
    let mut left_out = 0;
    for (i, (text, removed)) in stripped.into_iter().enumerate() {
        left_out += removed;
        rows.doc_id.append_value(ids.value(i));
        rows.url.append_value(urls.value(i));
        rows.crawl_date.append_option(dates.is_valid(i).then(|| dates.value(i)));
        rows.cluster_id.append_option(clusters.is_valid(i).then(|| clusters.value(i)));
        rows.duplicates.append_value(if sizes.is_valid(i) { sizes.value(i).saturating_sub(1) } else { 0 });
        rows.reason.append_value(reasons.value(i));
        rows.duplicate_of.append_option(of.is_valid(i).then(|| of.value(i)));
        rows.duplicate_of_crawl.append_option(optional(kept_crawl, i));
        rows.duplicate_of_url.append_option(optional(kept_url, i));
        rows.duplicate_of_date.append_option(optional(kept_date, i));
        rows.similarity.append_option(similarity.is_valid(i).then(|| similarity.value(i)));
        rows.text.append_value(&text);
    }
    Ok((rows.finish()?, left_out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_keep_the_original_case_without_the_hosts_template_lines() {
        let mut b = Boilerplate::default();
        b.insert("example.org", crate::text::boilerplate::block_key("Home | Docs").unwrap());
        let schema = std::sync::Arc::new(arrow::datatypes::Schema::new(vec![
            arrow::datatypes::Field::new("doc_id", arrow::datatypes::DataType::UInt64, false),
            arrow::datatypes::Field::new("url", arrow::datatypes::DataType::Utf8, false),
            arrow::datatypes::Field::new("crawl_date", arrow::datatypes::DataType::Utf8, true),
            arrow::datatypes::Field::new("cluster_id", arrow::datatypes::DataType::UInt64, true),
            arrow::datatypes::Field::new("cluster_size", arrow::datatypes::DataType::UInt64, true),
            arrow::datatypes::Field::new("reason", arrow::datatypes::DataType::Utf8, false),
            arrow::datatypes::Field::new("duplicate_of", arrow::datatypes::DataType::UInt64, true),
            arrow::datatypes::Field::new("kept_url", arrow::datatypes::DataType::Utf8, true),
            arrow::datatypes::Field::new("kept_date", arrow::datatypes::DataType::Utf8, true),
            arrow::datatypes::Field::new("kept_crawl", arrow::datatypes::DataType::Utf8, true),
            arrow::datatypes::Field::new("similarity", arrow::datatypes::DataType::Float64, true),
            arrow::datatypes::Field::new("text", arrow::datatypes::DataType::Utf8, false),
        ]));
        use arrow::array::{Float64Array, StringArray, UInt64Array};
        let batch = RecordBatch::try_new(
            schema,
            vec![
                std::sync::Arc::new(UInt64Array::from(vec![1, 2])),
                std::sync::Arc::new(StringArray::from(vec!["https://example.org/a", "doc-2"])),
                std::sync::Arc::new(StringArray::from(vec![Some("2024-01-01T00:00:00Z"), None])),
                std::sync::Arc::new(UInt64Array::from(vec![Some(1), None])),
                std::sync::Arc::new(UInt64Array::from(vec![Some(3), None])),
                std::sync::Arc::new(StringArray::from(vec!["kept", "repeat"])),
                std::sync::Arc::new(UInt64Array::from(vec![None::<u64>, Some(7)])),
                std::sync::Arc::new(StringArray::from(vec![None, Some("https://example.org/b")])),
                std::sync::Arc::new(StringArray::from(vec![None, Some("2026-12-01T00:00:00Z")])),
                std::sync::Arc::new(StringArray::from(vec![None, Some("2026-12-01")])),
                std::sync::Arc::new(Float64Array::from(vec![None::<f64>, Some(0.9)])),
                std::sync::Arc::new(StringArray::from(vec!["Home | Docs\nRelease NOTES 1.2", "Home | Docs\n\nBody"])),
            ],
        )
        .unwrap();
        let (rows, left_out) = export_batch(&batch, &b).unwrap();
        assert_eq!(left_out, 1);
        let texts = export_documents::text(&rows).unwrap();
        assert_eq!((texts.value(0), texts.value(1)), ("Release NOTES 1.2", "Home | Docs\n\nBody"));
        let duplicates = export_documents::duplicates(&rows).unwrap();
        assert_eq!((duplicates.value(0), duplicates.value(1)), (2, 0));
        assert!(export_documents::crawl_date(&rows).unwrap().is_null(1));
        // A repeat names its kept copy in an earlier crawl: crawl, URL, date.
        let crawls = export_documents::duplicate_of_crawl(&rows).unwrap();
        let (urls, dates) =
            (export_documents::duplicate_of_url(&rows).unwrap(), export_documents::duplicate_of_date(&rows).unwrap());
        assert!(crawls.is_null(0) && urls.is_null(0) && dates.is_null(0));
        assert_eq!(
            (crawls.value(1), urls.value(1), dates.value(1)),
            ("2026-12-01", "https://example.org/b", "2026-12-01T00:00:00Z")
        );
    }
}
