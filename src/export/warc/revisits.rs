//! The removed export (`--removed`): no input is read; each removed
//! document becomes a `revisit` record naming its kept copy under
//! [`legacy::NEAR_DUPLICATE_PROFILE`].

use anyhow::Result;

use super::sink::{write_member, RecordSink};
use crate::export::cdxj::Entry;
use crate::export::legacy::{self, Revisit};
use crate::export::{Decision, ExportSummary};
use crate::ingest::corpus;

/// The removed export of one file: a revisit record per removed document.
pub(super) fn revisits(
    decisions: &[Decision],
    fallback_date: &str,
    sink: &mut dyn RecordSink,
    summary: &mut ExportSummary,
) -> Result<()> {
    for d in decisions.iter().filter(|d| !d.kept) {
        let Some(kept) = &d.kept_copy else {
            summary.add("removed_without_kept_copy", 1);
            continue;
        };
        // A WARC record (any version) keeps its id, whatever its shape; an
        // ARC record (no id) or a corpus line gets the id its conversion
        // gets. A kept copy of an earlier crawl is named by its URL and
        // date only: the history keeps no record id.
        let kept_id = match &kept.record_id {
            _ if kept.crawl.is_some() => None,
            Some(id) if !corpus::is_corpus_file(std::path::Path::new(&kept.warc_file)) => Some(id.clone()),
            _ => Some(legacy::record_id(&kept.warc_file, kept.warc_offset)),
        };
        let date = d.crawl_date.as_deref().and_then(legacy::w3c_utc).unwrap_or_else(|| fallback_date.to_string());
        // A kept copy without a valid date was written with the fallback
        // date, as this revisit is.
        let kept_date =
            kept.crawl_date.as_deref().and_then(legacy::w3c_utc).unwrap_or_else(|| fallback_date.to_string());
        let record = legacy::revisit_record(&Revisit {
            doc_id: d.doc_id,
            url: &d.url,
            date: &date,
            reason: &d.reason,
            similarity: d.similarity,
            kept_url: &kept.url,
            kept_date: &kept_date,
            kept_id: kept_id.as_deref(),
        });
        let (offset, length) = write_member(sink, |out| out.write_all(&record))?;
        let entry = Entry { record_type: "revisit".into(), url: legacy::clean_uri(&d.url), date, ..Entry::default() };
        sink.written(Some(&entry), offset, length)?;
        summary.add("revisit_records", 1);
    }
    Ok(())
}
