//! Which records of an input archive the kept export leaves out: the
//! removed documents, and the `request` and `metadata` records that belong
//! to them.
//!
//! A record belongs to a removed document when they are linked by
//! WARC-Concurrent-To in either direction (or, for metadata, by
//! WARC-Refers-To), or when it is a request for the same target URI right
//! before a removed response that nothing else links (wget and wpull write
//! the request first). A record a kept one names is never left out.

use std::collections::{HashMap, HashSet};

use super::scan::Record;

/// What happens to a record of the kept export.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Fate {
    /// Written: copied or rewritten.
    Copied,
    /// A removed document.
    Removed,
    /// A request or metadata record of a removed document.
    Linked,
}

/// The fate of each record of a file whose removed documents start at
/// `removed` offsets (see the module doc).
pub(super) fn plan(records: &[Record], removed: &HashSet<u64>) -> Vec<Fate> {
    let mut fate: Vec<Fate> =
        records.iter().map(|r| if removed.contains(&r.offset) { Fate::Removed } else { Fate::Copied }).collect();
    let belongs = |r: &Record| matches!(r.record_type.as_str(), "request" | "metadata");
    let by_id: HashMap<&str, usize> =
        records.iter().enumerate().filter_map(|(i, r)| r.record_id.as_deref().map(|id| (id, i))).collect();
    let removed_ids: HashSet<&str> = records
        .iter()
        .zip(&fate)
        .filter(|(_, f)| **f == Fate::Removed)
        .filter_map(|(r, _)| r.record_id.as_deref())
        .collect();
    // What kept records name: never left out for a removed one.
    let named_by_kept: HashSet<&str> = records
        .iter()
        .zip(&fate)
        .filter(|(r, f)| **f == Fate::Copied && !belongs(r))
        .flat_map(|(r, _)| r.concurrent_to.iter().map(String::as_str))
        .collect();
    for i in 0..records.len() {
        if fate[i] != Fate::Removed {
            continue;
        }
        for id in &records[i].concurrent_to {
            if let Some(&j) = by_id.get(id.as_str()) {
                if belongs(&records[j]) && fate[j] == Fate::Copied && !named_by_kept.contains(id.as_str()) {
                    fate[j] = Fate::Linked;
                }
            }
        }
        if i > 0 {
            let before = &records[i - 1];
            let unlinked = before.concurrent_to.is_empty()
                && before.record_id.as_deref().is_none_or(|id| !named_by_kept.contains(id));
            if before.record_type == "request"
                && fate[i - 1] == Fate::Copied
                && unlinked
                && before.target_uri.is_some()
                && before.target_uri == records[i].target_uri
            {
                fate[i - 1] = Fate::Linked;
            }
        }
    }
    for (r, f) in records.iter().zip(fate.iter_mut()) {
        let links_removed = r.concurrent_to.iter().any(|id| removed_ids.contains(id.as_str()))
            || (r.record_type == "metadata" && r.refers_to.as_deref().is_some_and(|id| removed_ids.contains(id)));
        if *f == Fate::Copied && belongs(r) && links_removed {
            *f = Fate::Linked;
        }
    }
    fate
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::archive::Extent;

    fn record(offset: u64, record_type: &str, id: &str, uri: &str, concurrent: &[&str]) -> Record {
        Record {
            offset,
            extent: Extent::default(),
            record_type: record_type.into(),
            record_id: (!id.is_empty()).then(|| id.to_string()),
            target_uri: Some(uri.into()),
            concurrent_to: concurrent.iter().map(|s| s.to_string()).collect(),
            refers_to: None,
            block_len: 0,
            member_ends_well: false,
            http: false,
            entry: None,
        }
    }

    #[test]
    fn requests_and_metadata_of_removed_documents_go_with_them() {
        use Fate::*;
        // Heritrix: response, then request and metadata naming it.
        let heritrix = [
            record(0, "warcinfo", "<w>", "", &[]),
            record(1, "response", "<r1>", "http://a/", &[]),
            record(2, "request", "<q1>", "http://a/", &["<r1>"]),
            record(3, "metadata", "<m1>", "http://a/", &["<r1>"]),
            record(4, "response", "<r2>", "http://b/", &[]),
            record(5, "request", "<q2>", "http://b/", &["<r2>"]),
        ];
        assert_eq!(plan(&heritrix, &HashSet::from([1])), [Copied, Removed, Linked, Linked, Copied, Copied]);
        // wget: the request first, named by the response.
        let wget = [
            record(0, "request", "<q1>", "http://a/", &[]),
            record(1, "response", "<r1>", "http://a/", &["<q1>"]),
            record(2, "request", "<q2>", "http://b/", &[]),
            record(3, "response", "<r2>", "http://b/", &["<q2>"]),
        ];
        assert_eq!(plan(&wget, &HashSet::from([3])), [Copied, Copied, Linked, Removed]);
        // No links at all: the request for the same URI right before.
        let bare = [
            record(0, "request", "", "http://a/", &[]),
            record(1, "response", "", "http://a/", &[]),
            record(2, "request", "", "http://b/", &[]),
            record(3, "response", "", "http://c/", &[]),
        ];
        assert_eq!(plan(&bare, &HashSet::from([1, 3])), [Linked, Removed, Copied, Removed]);
        // A request a kept record names stays, whatever is next to it.
        let shared = [
            record(0, "request", "<q>", "http://a/", &[]),
            record(1, "response", "<r1>", "http://a/", &["<q>"]),
            record(2, "response", "<r2>", "http://a/", &["<q>"]),
        ];
        assert_eq!(plan(&shared, &HashSet::from([2])), [Copied, Copied, Removed]);
    }
}
