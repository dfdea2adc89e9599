//! Input discovery: which files and objects `--input` names, each read once
//! under a stable name (its label), whatever paths, links or URLs led to it.

use anyhow::Result;
use std::collections::hash_map::Entry;
use std::collections::{BTreeMap, HashMap};
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use super::corpus;
use super::source::Source;
use crate::storage::location;

/// Expands input arguments into a sorted list of input files. Folders are
/// read recursively and contribute files whose names look like archives
/// (`.warc`, `.arc`, `.wet`, `.wat`, optionally compressed) or text corpora
/// (`.jsonl`, `.parquet`, ...: see [`corpus::is_corpus_file`]); a path given
/// explicitly is always taken. An object-store URL (`s3://bucket/crawl/`,
/// `file:///data/crawl`) is an object or, like a folder, a prefix listed
/// recursively. The files are listed in the order of their
/// [`Source::identity`] (canonical path or URL), so that the same inputs
/// named otherwise list the same. Links are followed (see [`Walker`]), and
/// a local file reached by several paths (links, hard links, an input
/// given twice) is read once, under the first of its paths in that order.
/// Two files with the same name would give the same document ids, so the
/// second one is reported instead of read. Returns the files, the problems (inputs not
/// read: exit code 3) and warnings for the log (loops, odd names), which
/// the caller logs once.
pub fn expand_inputs(inputs: &[String]) -> (Vec<InputFile>, Vec<String>, Vec<String>) {
    let mut files = Vec::new();
    let mut problems = Vec::new();
    let mut walker = Walker::default();
    for input in inputs {
        let path = Path::new(input);
        if location::is_url(input) {
            if let Err(e) = list_objects(input, &mut files) {
                problems.push(format!("{input}: {e:#}"));
            }
        } else if path.is_file() {
            files.push(InputFile { source: Source::File(path.to_path_buf()), label: file_name(path) });
        } else if path.is_dir() {
            walker.walk(path, &mut files, &mut problems);
        } else if input.contains(['*', '?', '[']) {
            match glob::glob(input) {
                Ok(paths) => {
                    let before = files.len();
                    for p in paths.flatten() {
                        if p.is_file() {
                            files.push(InputFile { label: file_name(&p), source: Source::File(p) });
                        } else if p.is_dir() {
                            walker.walk(&p, &mut files, &mut problems);
                        }
                    }
                    if files.len() == before {
                        problems.push(format!("{input}: the pattern matches no file"));
                    }
                }
                Err(e) => problems.push(format!("{input}: bad glob pattern: {e}")),
            }
        } else {
            problems.push(format!("{input}: no such file or folder"));
        }
    }
    // In the order of what the files are, not of how they were named: the
    // listing decides the part files and each task's share, which another
    // spelling of the same inputs must not change.
    files.sort_by_cached_key(|f| (f.source.identity(), f.source.name()));
    files.dedup_by(|a, b| matches!(a.source, Source::Object { .. }) && a.source.name() == b.source.name());
    let mut read_as: HashMap<(u64, u64), String> = HashMap::new();
    files.retain(|f| {
        let Source::File(path) = &f.source else { return true };
        let Ok(meta) = std::fs::metadata(path) else { return true };
        match read_as.entry((meta.dev(), meta.ino())) {
            Entry::Occupied(first) => {
                tracing::debug!("{}: the same file as {}; read once, as the latter", path.display(), first.get());
                false
            }
            Entry::Vacant(slot) => {
                slot.insert(f.source.name());
                true
            }
        }
    });
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    files.retain(|f| {
        if let Some(first) = seen.get(&f.label) {
            problems.push(format!(
                "{}: goes by the same name `{}` as {}; skipped (its document ids would collide)",
                f.source.name(),
                f.label,
                first
            ));
            false
        } else {
            seen.insert(f.label.clone(), f.source.name());
            true
        }
    });
    let mut warnings = walker.loops;
    for f in &files {
        if let Source::File(path) = &f.source {
            if path.to_str().is_none() {
                warnings.push(format!(
                    "{}: the path is not UTF-8; the file goes by `{}` in document ids and tables",
                    path.display(),
                    f.label
                ));
            }
        }
    }
    (files, problems, warnings)
}

/// Reads input folders recursively, following links to files and folders
/// wherever they point: a crawl laid out with links to other disks is read
/// whole, each file labelled by its path under the input folder. Each
/// folder is read once, known by its device and inode: a link back to a
/// folder it is inside (`again -> .`) is a loop, noted once (a warning, not
/// a failure) and not followed, and a second way to a folder already read
/// is skipped.
/// Entries are read in name order, so the labels never depend on the order
/// the file system lists them in.
#[derive(Default)]
struct Walker {
    /// Folders read so far (device, inode) and the path they were read by.
    read: HashMap<(u64, u64), PathBuf>,
    /// One message per link that loops back.
    loops: Vec<String>,
}

impl Walker {
    /// Adds the archives and corpora under `root`, labelled by their path
    /// relative to it.
    fn walk(&mut self, root: &Path, files: &mut Vec<InputFile>, problems: &mut Vec<String>) {
        self.visit(root, root, &mut Vec::new(), files, problems);
    }

    fn visit(
        &mut self,
        root: &Path,
        dir: &Path,
        inside: &mut Vec<(u64, u64)>,
        files: &mut Vec<InputFile>,
        problems: &mut Vec<String>,
    ) {
        let listing = std::fs::metadata(dir).and_then(|meta| Ok((meta, std::fs::read_dir(dir)?)));
        let (meta, entries) = match listing {
            Ok(l) => l,
            Err(e) => {
                problems.push(format!("{}: cannot read the folder: {e}", dir.display()));
                return;
            }
        };
        let id = (meta.dev(), meta.ino());
        if inside.contains(&id) {
            self.loops.push(format!("{}: a link back to a folder it is inside (a loop); not followed", dir.display()));
            return;
        }
        if let Some(first) = self.read.get(&id) {
            tracing::debug!("{}: the same folder as {}; read once, as the latter", dir.display(), first.display());
            return;
        }
        self.read.insert(id, dir.to_path_buf());
        let mut paths: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
        paths.sort();
        inside.push(id);
        for p in paths {
            if p.is_dir() {
                self.visit(root, &p, inside, files, problems);
            } else if looks_like_archive(&p) {
                let label = p.strip_prefix(root).map_or_else(|_| file_name(&p), |r| r.to_string_lossy().into_owned());
                files.push(InputFile { source: Source::File(p), label });
            }
        }
        inside.pop();
    }
}

/// An archive to read and the name it goes by in document ids: its path
/// relative to the folder (or object prefix) given as input, or its file
/// name when given directly, so ids stay the same when the crawl is moved.
#[derive(Debug, Clone)]
pub struct InputFile {
    pub source: Source,
    pub label: String,
}

/// Adds the object `url` names or, when it names none, the archives and
/// corpora listed under it as a prefix.
fn list_objects(url: &str, files: &mut Vec<InputFile>) -> Result<()> {
    let root = location::Location::parse(url)?;
    let object = |location: location::Location, meta: &object_store::ObjectMeta| Source::Object {
        location,
        size: meta.size,
        e_tag: meta.e_tag.clone(),
        last_modified_unix: meta.last_modified.timestamp(),
    };
    if let Some(meta) = root.head()? {
        let source = object(root.clone(), &meta);
        files.push(InputFile { label: source.file_name(), source });
        return Ok(());
    }
    let before = files.len();
    for meta in root.list()? {
        let Some(label) = location::relative_path(&root.path, &meta.location) else { continue };
        if looks_like_archive(Path::new(&label)) {
            files.push(InputFile { source: object(root.at(meta.location.clone(), &label), &meta), label });
        }
    }
    anyhow::ensure!(files.len() > before, "no archive or corpus object found under this URL");
    Ok(())
}

fn looks_like_archive(p: &Path) -> bool {
    let name = file_name(p).to_ascii_lowercase();
    [".warc", ".arc", ".wet", ".wat"].iter().any(|ext| name.contains(ext)) || corpus::is_corpus_file(p)
}

fn file_name(p: &Path) -> String {
    p.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default()
}
