//! `pipeline export`: what a finished run decided, written out as a
//! deduplicated crawl or corpus.
//!
//! The `decisions` table says of every document whether it is kept or
//! removed as a duplicate of a named kept document. This module turns that
//! into files a user can take away, in one of four formats, each one type
//! behind [`Format`]:
//!
//! - `parquet` and `jsonl` ([`rows`]): one row per kept document (with
//!   `--removed`, per removed one) with its visible text in its original
//!   case, the host's boilerplate lines left out (`schemas/export_documents.json`);
//! - `warc` ([`warc`]): the input crawl minus the removed documents, read
//!   again from the input files record by record: WARC/1.x records copied
//!   byte for byte, each as a gzip member of its own; ARC, WARC/0.x and
//!   corpus records rewritten as WARC/1.1 ([`legacy`]). With `--removed`, a
//!   record per removed document naming its kept copy: a standard
//!   `revisit` where its payload is byte for byte the kept copy's, a
//!   `metadata` note that replay tools do not resolve otherwise;
//! - `cdxj` ([`cdxj`]): pywb's index of exactly what `warc` writes.
//!
//! The input files are those of the run's ingest manifest, in its order;
//! `--shard I/N` takes the files whose index is I mod N and writes one part
//! of each output, so N tasks export a crawl side by side. Memory stays
//! bounded whatever the crawl: the decisions stream out of one sorted query
//! (DataFusion spills it), and the WARC formats hold one input file's
//! decisions and record headers at a time. Outputs appear whole or not at
//! all ([`output`]).
//!
//! Not done here: deciding what is kept (stage `decide`), and reading
//! input files that are gone (an error naming them; `--input` says where
//! the crawl is now).

mod cdxj;
mod job;
mod legacy;
mod output;
mod rows;
mod warc;

use job::{decided_file_names, part_name, Job, RunFile};
pub use job::{ExportOptions, ExportSummary, Format};

use anyhow::Result;
use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use crate::ingest::inputs::expand_inputs;
use crate::ingest::source::Source;
use crate::stages::stage::{MissingInput, AS_GIVEN};
use crate::tables::columns::{decisions, documents};
use crate::tables::shard::Shard;

/// The input files of the run in `out`, in its ingest manifest's order.
/// `decided_names` are the names the `decisions` table gives files: the
/// path the run read a file by or its label, whichever the tables use.
fn run_files(out: &Path, decided_names: &[String]) -> Result<Vec<RunFile>> {
    let manifest = crate::tables::manifest::finished_manifest(out, "ingest").ok_or_else(|| {
        MissingInput(format!(
            "{}: no finished ingest stage; run `pipeline run --out {}` first",
            out.display(),
            out.display()
        ))
    })?;
    let listed = manifest.external_inputs["files"].as_array().cloned().unwrap_or_default();
    // The path each file was read by, as the tables name it; manifests
    // written before the files were known by their canonical path had it
    // in the file's entry.
    let given = manifest.external_inputs[AS_GIVEN]["paths"].as_array().cloned().unwrap_or_default();
    let decided: HashSet<&str> = decided_names.iter().map(String::as_str).collect();
    let mut files = Vec::new();
    for (i, entry) in listed.iter().enumerate() {
        let path = given.get(i).unwrap_or(&entry["path"]).as_str();
        let (Some(path), Some(label)) = (path, entry["label"].as_str()) else { continue };
        let name = if decided.contains(label) && !decided.contains(path) { label } else { path };
        // A relative path is relative to where the run ran.
        let at = match &manifest.working_dir {
            Some(dir) if !crate::storage::location::is_url(path) && Path::new(path).is_relative() => {
                Path::new(dir).join(path).display().to_string()
            }
            _ => path.to_string(),
        };
        files.push(RunFile {
            name: name.to_string(),
            path: at,
            label: label.to_string(),
            source: None,
            version: entry["version"].clone(),
        });
    }
    Ok(files)
}

/// Finds each of `files` where the run read it or, when `inputs` is given,
/// by its label under `inputs`. Files that cannot be found are a
/// [`MissingInput`] error naming them all.
fn locate(files: &mut [RunFile], inputs: &[String]) -> Result<()> {
    let moved: BTreeMap<String, Source> = if inputs.is_empty() {
        BTreeMap::new()
    } else {
        let (found, problems, _) = expand_inputs(inputs);
        for p in &problems {
            tracing::warn!("--input: {p}");
        }
        found.into_iter().map(|f| (f.label, f.source)).collect()
    };
    let mut gone = Vec::new();
    for file in files.iter_mut() {
        let found = if inputs.is_empty() {
            match source_at(&file.path) {
                Ok(Some(source)) => Some(source),
                Ok(None) => {
                    gone.push(format!("{} (gone)", absolute(&file.path)));
                    None
                }
                Err(e) => {
                    gone.push(format!("{} ({e:#})", absolute(&file.path)));
                    None
                }
            }
        } else {
            let found = moved.get(&file.label).cloned();
            if found.is_none() {
                gone.push(format!("{} (not under --input {})", file.label, inputs.join(" ")));
            }
            found
        };
        if let Some(source) = found {
            // Offsets into a file that changed since the run point at other
            // records: the removed documents would be written again.
            match changed_since_run(&file.version, &source.version(), inputs.is_empty()) {
                Some(why) => gone.push(format!("{} (changed since the run: {why})", absolute(&source.name()))),
                None => file.source = Some(source),
            }
        }
    }
    if !gone.is_empty() {
        let hint = if inputs.is_empty() { "; give --input where the crawl is now" } else { "" };
        return Err(MissingInput(format!(
            "{} input file(s) of the run cannot be read again: {}{hint}",
            gone.len(),
            gone.join(", ")
        ))
        .into());
    }
    Ok(())
}

/// `path` made absolute, for messages: a run's relative paths are
/// relative to where it ran, which may not be where the export runs.
fn absolute(path: &str) -> String {
    if crate::storage::location::is_url(path) {
        return path.to_string();
    }
    std::path::absolute(path).map_or_else(|_| path.to_string(), |p| p.display().to_string())
}

/// How the file a run read (`then`, its [`Source::version`]) differs from
/// the one found now, or `None` when it is the same: the size (and ETag of
/// an object) always, the modification time only where the run read it
/// (a copy elsewhere has a time of its own).
fn changed_since_run(then: &serde_json::Value, now: &serde_json::Value, same_place: bool) -> Option<String> {
    let differs = |key: &str| then.get(key).is_some_and(|a| !a.is_null() && now.get(key).is_some_and(|b| a != b));
    if differs("size") {
        return Some(format!("{} bytes then, {} now", then["size"], now["size"]));
    }
    if differs("e_tag") {
        return Some(format!("ETag {} then, {} now", then["e_tag"], now["e_tag"]));
    }
    if same_place && (differs("mtime_ns") || differs("last_modified")) {
        return Some("same size, modified since".into());
    }
    None
}

/// The input file at `path` as a run named it (a path relative to where it
/// ran, or an object URL); `None` when it is not there any more.
fn source_at(path: &str) -> Result<Option<Source>> {
    if crate::storage::location::is_url(path) {
        let location = crate::storage::location::Location::parse(path)?;
        return Ok(location.head()?.map(|meta| Source::Object {
            location,
            size: meta.size,
            e_tag: meta.e_tag.clone(),
            last_modified_unix: meta.last_modified.timestamp(),
        }));
    }
    let p = PathBuf::from(path);
    Ok(p.is_file().then_some(Source::File(p)))
}

/// The files task `shard` exports: those whose index in the run's listing
/// is I mod N, in the order of their names (the order of the decisions
/// query).
fn shard_files(files: Vec<RunFile>, shard: Shard) -> Vec<RunFile> {
    let mut mine: Vec<RunFile> = files
        .into_iter()
        .enumerate()
        .filter(|(i, _)| *i as u64 % shard.count as u64 == shard.index as u64)
        .map(|(_, f)| f)
        .collect();
    mine.sort_by(|a, b| a.name.cmp(&b.name));
    mine
}

/// Exports what `options` say; see the module doc.
pub fn export(options: &ExportOptions, runtime: &tokio::runtime::Runtime) -> Result<ExportSummary> {
    let out = &options.out;
    let mut needed = vec![decisions::TABLE, documents::TABLE];
    let text_rows = matches!(options.format, Format::Parquet | Format::Jsonl);
    if text_rows && !options.keep_boilerplate {
        needed.push(crate::tables::columns::boilerplate::TABLE);
    }
    if !text_rows {
        needed.push(crate::tables::columns::ingest_files::TABLE);
    }
    for table in needed {
        if !crate::tables::write::table_exists(out, table) {
            return Err(MissingInput(format!(
                "table `{table}` is missing in {}: run the pipeline (`pipeline run --out {}`) first",
                out.display(),
                out.display()
            ))
            .into());
        }
    }
    let session = runtime.block_on(crate::tables::sql::session_spilling_to(out, options.memory, &options.spill))?;
    // Batches of a thousand rows: a sort of texts spills batch by batch,
    // and 8,192 texts make one batch larger than a small pool.
    let session = crate::tables::sql::one_stream(crate::tables::sql::with_batch_size(session, 1024)?)?;
    let decided = runtime.block_on(decided_file_names(&session))?;
    let mut files = shard_files(run_files(out, &decided)?, options.shard);
    // The WARC formats read the input files again: the kept export its
    // records, the removed one the HTTP headers of its revisits.
    if matches!(options.format, Format::Warc | Format::Cdxj) {
        locate(&mut files, &options.inputs)?;
    }
    let destination = output::Destination::open(&options.to, &options.spill)?;
    let name = part_name(options.format, options.removed, options.shard);
    tracing::info!(
        files = files.len(),
        shard = %options.shard,
        format = ?options.format,
        removed = options.removed,
        "exporting to {}",
        destination.describe(&name)
    );
    let started = std::time::Instant::now();
    let mut summary = ExportSummary::default();
    let job = Job { options, runtime, session: &session, files: &files, out };
    summary.written = match options.format {
        Format::Parquet | Format::Jsonl => rows::export(&job, &destination, &name, &mut summary)?,
        Format::Warc | Format::Cdxj => warc::export(&job, &destination, &name, &mut summary)?,
    };
    summary.add("input_files", files.len() as u64);
    let counts: Vec<String> = summary.counts.iter().map(|(k, v)| format!("{k}={v}")).collect();
    tracing::info!(seconds = format!("{:.2}", started.elapsed().as_secs_f64()), counts = %counts.join(" "), "export written to {}", summary.written);
    Ok(summary)
}

#[cfg(test)]
mod tests {
    use super::job::files_predicate;
    use super::*;

    /// Size and ETag must match wherever the file is found now; the
    /// modification time only where the run read it.
    #[test]
    fn what_counts_as_an_input_changed_since_the_run() {
        let then = serde_json::json!({"size": 10, "mtime_ns": 5});
        assert_eq!(changed_since_run(&then, &serde_json::json!({"size": 10, "mtime_ns": 5}), true), None);
        assert_eq!(changed_since_run(&then, &serde_json::json!({"size": 10, "mtime_ns": 6}), false), None);
        assert!(changed_since_run(&then, &serde_json::json!({"size": 10, "mtime_ns": 6}), true).is_some());
        let grown = changed_since_run(&then, &serde_json::json!({"size": 11, "mtime_ns": 5}), false);
        assert_eq!(grown.as_deref(), Some("10 bytes then, 11 now"));
        let object = serde_json::json!({"size": 10, "e_tag": "\"a\""});
        assert!(changed_since_run(&object, &serde_json::json!({"size": 10, "e_tag": "\"b\""}), false).is_some());
        // A manifest without versions (older runs) refuses nothing.
        assert_eq!(changed_since_run(&serde_json::Value::Null, &then, true), None);
    }

    #[test]
    fn parts_are_named_by_kind_task_and_format() {
        assert_eq!(part_name(Format::Warc, false, Shard::WHOLE), "kept.warc.gz");
        assert_eq!(part_name(Format::Jsonl, true, Shard { index: 2, count: 4 }), "removed-2-of-4.jsonl");
        assert_eq!(part_name(Format::Cdxj, false, Shard { index: 0, count: 2 }), "kept-0-of-2.cdxj");
    }

    #[test]
    fn a_shard_takes_every_nth_file_of_the_listing_in_name_order() {
        let files: Vec<RunFile> = ["c", "a", "d", "b", "e"]
            .iter()
            .map(|n| RunFile {
                name: n.to_string(),
                path: n.to_string(),
                label: n.to_string(),
                source: None,
                version: serde_json::Value::Null,
            })
            .collect();
        let names = |s: Shard| shard_files(files.clone(), s).into_iter().map(|f| f.name).collect::<Vec<_>>();
        assert_eq!(names(Shard { index: 0, count: 2 }), ["c", "d", "e"]);
        assert_eq!(names(Shard { index: 1, count: 2 }), ["a", "b"]);
        assert_eq!(names(Shard::WHOLE), ["a", "b", "c", "d", "e"]);
        let two = shard_files(files, Shard { index: 1, count: 2 });
        assert_eq!(files_predicate("f", &two, Shard { index: 1, count: 2 }), "f IN ('a', 'b')");
        assert_eq!(files_predicate("f", &two, Shard::WHOLE), "TRUE");
        let odd = [RunFile {
            name: "it's".into(),
            path: "x".into(),
            label: "x".into(),
            source: None,
            version: serde_json::Value::Null,
        }];
        assert_eq!(files_predicate("f", &odd, Shard { index: 0, count: 3 }), "f IN ('it''s')");
    }
}
