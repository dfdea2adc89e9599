//! Object-store locations: `s3://bucket/prefix` and `file:///path`, through
//! the `object_store` crate that DataFusion uses.
//!
//! This module opens stores and moves bytes; what is read and written where
//! is decided by the ingest sources ([`crate::ingest::source`]) and by the
//! mirror of an object-store output folder ([`crate::runner::mirror`]).
//!
//! S3 settings come from the usual `AWS_*` environment variables
//! (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`, `AWS_REGION`,
//! `AWS_ENDPOINT` for an S3-compatible server, `AWS_ALLOW_HTTP=true` for one
//! without TLS), as every other S3 tool reads them.
//!
//! The stages are synchronous code on rayon threads, while `object_store`
//! is async. Its requests run on a small runtime of their own
//! ([`block_on`]), never on the DataFusion runtime of the stage, so a rayon
//! thread can wait for a download without an async context of its own.

use anyhow::{bail, Context, Result};
use bytes::Bytes;
use futures::stream::BoxStream;
use futures::StreamExt;
use object_store::path::Path as ObjectPath;
use object_store::{GetOptions, GetRange, ObjectMeta, ObjectStore, ObjectStoreExt};
use std::io::{self, Read, Seek, SeekFrom};
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};

/// True when `text` is a URL (`scheme://…`) rather than a local path. Every
/// scheme counts, so that `gs://…` is refused as unsupported by
/// [`Location::parse`] instead of becoming a local folder named `gs:`.
pub fn is_url(text: &str) -> bool {
    text.split_once("://").is_some_and(|(scheme, _)| {
        scheme.len() > 1
            && scheme.starts_with(|c: char| c.is_ascii_alphabetic())
            && scheme.chars().all(|c| c.is_ascii_alphanumeric() || "+-.".contains(c))
    })
}

/// A store and the path inside it that a URL names.
#[derive(Clone)]
pub struct Location {
    pub store: Arc<dyn ObjectStore>,
    pub path: ObjectPath,
    /// The URL as given (without a trailing `/`), for messages and row values.
    pub url: String,
}

impl std::fmt::Debug for Location {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.url)
    }
}

/// The S3 bucket of `url` (credentials, region and endpoint from the
/// environment, as the AWS tools read them).
#[cfg(feature = "s3")]
fn s3_store(url: &url::Url, text: &str) -> Result<Arc<dyn ObjectStore>> {
    let bucket = url.host_str().filter(|b| !b.is_empty()).context("an s3:// URL needs a bucket")?;
    Ok(Arc::new(
        object_store::aws::AmazonS3Builder::from_env()
            .with_bucket_name(bucket)
            .build()
            .with_context(|| format!("cannot set up S3 access for {text}"))?,
    ))
}

/// Whether this binary has the S3 client (it was built with feature `s3`).
pub const S3_BUILT: bool = cfg!(feature = "s3");

/// Why a binary cannot read URLs of `scheme` (lowercase, as [`url::Url`]
/// gives it), `None` when it can: it reads `file://`, and `s3://` when
/// `s3_built`. The message names what would read it: the feature to build
/// with, or the schemes this binary reads (a typo such as `s4://` gets the
/// same answer as `gs://`). The build is a parameter so that a test built
/// with every feature checks the answer of a build without `s3` too.
pub fn unreadable_scheme(scheme: &str, s3_built: bool) -> Option<String> {
    let readable = if s3_built { "s3:// and file://" } else { "file:// (and s3:// when built with feature `s3`)" };
    match scheme {
        "file" => None,
        "s3" if s3_built => None,
        "s3" => Some(
            "this pipeline was built without S3 support; build it with `cargo build --release --features s3`".into(),
        ),
        other => Some(format!("unsupported URL scheme `{other}`: this pipeline reads {readable} URLs and local paths")),
    }
}

impl Location {
    /// Opens the store of `text` (`s3://bucket/prefix` or `file:///path`);
    /// a scheme this binary cannot read is an error that says why
    /// ([`unreadable_scheme`]).
    pub fn parse(text: &str) -> Result<Location> {
        let url = url::Url::parse(text).with_context(|| format!("`{text}` is not a valid URL"))?;
        if let Some(why) = unreadable_scheme(url.scheme(), S3_BUILT) {
            bail!("`{text}`: {why}");
        }
        let store: Arc<dyn ObjectStore> = match url.scheme() {
            #[cfg(feature = "s3")]
            "s3" => s3_store(&url, text)?,
            // `file`: the one other scheme `unreadable_scheme` lets through.
            _ => Arc::new(object_store::local::LocalFileSystem::new()),
        };
        let path = ObjectPath::from_url_path(url.path()).with_context(|| format!("`{text}`: bad object path"))?;
        Ok(Location { store, path, url: text.trim_end_matches('/').to_string() })
    }

    /// The location of `relative` (`a/b`) under this one.
    pub fn child(&self, relative: &str) -> Location {
        let mut path = self.path.clone();
        for part in relative.split('/').filter(|p| !p.is_empty()) {
            path = path.clone().join(part);
        }
        Location { store: Arc::clone(&self.store), path, url: format!("{}/{relative}", self.url) }
    }

    /// The object `path` (as listed under this location), named in URLs by
    /// its `relative` path.
    pub fn at(&self, path: ObjectPath, relative: &str) -> Location {
        Location { store: Arc::clone(&self.store), path, url: format!("{}/{relative}", self.url) }
    }

    /// Every object under this location (recursively), sorted by path.
    pub fn list(&self) -> Result<Vec<ObjectMeta>> {
        let mut all: Vec<ObjectMeta> = block_on(self.store.list(Some(&self.path)).collect::<Vec<_>>())
            .into_iter()
            .collect::<Result<_, _>>()
            .with_context(|| format!("cannot list {}", self.url))?;
        all.sort_by(|a, b| a.location.cmp(&b.location));
        Ok(all)
    }

    /// The object at this location, `None` when there is none (a prefix or
    /// a folder, which the caller lists instead).
    pub fn head(&self) -> Result<Option<ObjectMeta>> {
        match block_on(self.store.head(&self.path)) {
            Ok(meta) => Ok(Some(meta)),
            // Also what `file://` answers for a folder.
            Err(object_store::Error::NotFound { .. }) => Ok(None),
            Err(e) => Err(e).with_context(|| format!("cannot read {}", self.url)),
        }
    }

    /// The whole object.
    pub fn get(&self) -> Result<Bytes> {
        block_on(async { self.store.get(&self.path).await?.bytes().await })
            .with_context(|| format!("cannot read {}", self.url))
    }

    /// The whole object and the ETag of the version read (what a listing
    /// gives for that version), when the store has one.
    pub fn get_with_etag(&self) -> Result<(Bytes, Option<String>)> {
        block_on(async {
            let got = self.store.get(&self.path).await?;
            let tag = got.meta.e_tag.clone();
            Ok::<_, object_store::Error>((got.bytes().await?, tag))
        })
        .with_context(|| format!("cannot read {}", self.url))
    }

    /// Stores `bytes` as this object (one PUT: the object appears whole or
    /// not at all).
    pub fn put(&self, bytes: Bytes) -> Result<()> {
        block_on(self.store.put(&self.path, bytes.into())).with_context(|| format!("cannot write {}", self.url))?;
        Ok(())
    }

    /// Stores `bytes` as this object unless an object is there already
    /// (a conditional PUT, atomic in the store): false when there is one.
    pub fn create(&self, bytes: Bytes) -> Result<bool> {
        let options = object_store::PutOptions::from(object_store::PutMode::Create);
        match block_on(self.store.put_opts(&self.path, bytes.into(), options)) {
            Ok(_) => Ok(true),
            Err(object_store::Error::AlreadyExists { .. }) => Ok(false),
            Err(e) => Err(e).with_context(|| format!("cannot create {}", self.url)),
        }
    }

    /// Uploads a local file as this object: one PUT when small, a multipart
    /// upload (completed only after the last part, so again all or nothing)
    /// when large, never holding more than a few parts in memory.
    pub fn upload(&self, file: &std::path::Path) -> Result<()> {
        const SINGLE_PUT_BYTES: u64 = 32 << 20;
        const PART_BYTES: usize = 16 << 20;
        let size = std::fs::metadata(file).with_context(|| format!("cannot read {}", file.display()))?.len();
        if size <= SINGLE_PUT_BYTES {
            return self.put(Bytes::from(std::fs::read(file)?));
        }
        block_on(async {
            let upload = self.store.put_multipart(&self.path).await?;
            let mut writer = object_store::WriteMultipart::new_with_chunk_size(upload, PART_BYTES);
            let mut f = std::fs::File::open(file).map_err(|e| anyhow::anyhow!(e))?;
            let mut buf = vec![0u8; PART_BYTES];
            loop {
                let n = f.read(&mut buf)?;
                if n == 0 {
                    break;
                }
                writer.wait_for_capacity(4).await?;
                writer.write(&buf[..n]);
            }
            writer.finish().await?;
            anyhow::Ok(())
        })
        .with_context(|| format!("cannot upload {} to {}", file.display(), self.url))
    }

    /// Removes this object; one that is already gone is no error (another
    /// task may have removed it first).
    pub fn delete(&self) -> Result<()> {
        match block_on(self.store.delete(&self.path)) {
            Ok(()) | Err(object_store::Error::NotFound { .. }) => Ok(()),
            Err(e) => Err(e).with_context(|| format!("cannot remove {}", self.url)),
        }
    }

    /// A reader of this object of `size` bytes that streams it and can seek.
    pub fn reader(&self, size: u64) -> ObjectReader {
        ObjectReader { location: self.clone(), size, pos: 0, body: None, chunk: Bytes::new() }
    }
}

/// The path of `object` relative to `root` (`a/b.warc.gz`), if under it,
/// as the file or key names it: `object_store` percent-encodes characters
/// such as `~` inside its paths, and this decodes them again.
pub fn relative_path(root: &ObjectPath, object: &ObjectPath) -> Option<String> {
    let parts: Vec<String> = object
        .prefix_match(root)?
        .map(|p| percent_encoding::percent_decode_str(p.as_ref()).decode_utf8_lossy().into_owned())
        .collect();
    Some(parts.join("/"))
}

/// Runs an object-store request to completion on the I/O runtime. Must not
/// be called from inside an async task.
pub fn block_on<F: std::future::Future>(future: F) -> F::Output {
    static RUNTIME: OnceLock<tokio::runtime::Runtime> = OnceLock::new();
    RUNTIME
        .get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(2)
                .thread_name("neardup-io")
                .enable_all()
                .build()
                .expect("cannot start the object-store I/O runtime")
        })
        .block_on(future)
}

/// Streams an object with ranged GETs: reading continues one open response,
/// seeking drops it and the next read opens a new one at the new offset, so
/// a reader that seeks rarely (the archive reader, on a damaged gzip member)
/// costs one request per seek and no local copy.
pub struct ObjectReader {
    location: Location,
    size: u64,
    /// Offset of the next byte `read` returns (the first byte of `chunk`).
    pos: u64,
    body: Option<BoxStream<'static, object_store::Result<Bytes>>>,
    chunk: Bytes,
}

/// Times a broken download is resumed from where it stopped before the
/// read fails (each request has its own retries inside `object_store`).
const RESUMES: usize = 3;

impl ObjectReader {
    fn next_chunk(&mut self) -> io::Result<Option<Bytes>> {
        let mut resumes = 0;
        loop {
            if self.body.is_none() {
                let options =
                    GetOptions { range: Some(GetRange::Bounded(self.pos..self.size)), ..GetOptions::default() };
                let store = Arc::clone(&self.location.store);
                let path = self.location.path.clone();
                let result = block_on(async move { store.get_opts(&path, options).await }).map_err(io::Error::other)?;
                self.body = Some(result.into_stream());
            }
            let body = self.body.as_mut().expect("opened above");
            match block_on(body.next()) {
                Some(Ok(bytes)) => return Ok(Some(bytes)),
                None => return Ok(None),
                Some(Err(e)) => {
                    self.body = None;
                    resumes += 1;
                    if resumes > RESUMES {
                        return Err(io::Error::other(e));
                    }
                    tracing::warn!("{}: download broke at byte {} ({e}); resuming", self.location.url, self.pos);
                }
            }
        }
    }
}

impl Read for ObjectReader {
    fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
        while self.chunk.is_empty() {
            if self.pos >= self.size {
                return Ok(0);
            }
            match self.next_chunk()? {
                Some(bytes) => self.chunk = bytes,
                None => return Ok(0),
            }
        }
        let n = self.chunk.len().min(out.len());
        out[..n].copy_from_slice(&self.chunk[..n]);
        self.chunk = self.chunk.slice(n..);
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for ObjectReader {
    fn seek(&mut self, to: SeekFrom) -> io::Result<u64> {
        let target = match to {
            SeekFrom::Start(p) => Some(p),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
            SeekFrom::End(d) => self.size.checked_add_signed(d),
        }
        .ok_or_else(|| io::Error::new(io::ErrorKind::InvalidInput, "seek before the start of the object"))?;
        if target != self.pos {
            self.body = None;
            self.chunk = Bytes::new();
            self.pos = target;
        }
        Ok(target)
    }
}

/// The default cache folder of task `shard` of a run into `url`: under
/// `$XDG_CACHE_HOME` (or `~/.cache`) rather than the system temp folder,
/// which is often a small RAM-backed tmpfs, named after the URL so runs
/// against it reuse it, and after the task, because tasks running side by
/// side on one machine must not share a cache (a pull mirrors the store's
/// manifests and would remove a task's manifest before it is committed).
pub fn default_cache(url: &str, shard: crate::tables::shard::Shard) -> PathBuf {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    let name: String =
        url.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let task = if shard.is_whole() { "all".to_string() } else { format!("task-{}-of-{}", shard.index, shard.count) };
    base.join("neardup").join(name).join(task)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn object_reader_reads_and_seeks_like_a_file() {
        let dir = std::env::temp_dir().join(format!("neardup-store-test-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("data.bin");
        let data: Vec<u8> = (0..200_000u32).map(|i| (i * 7 % 251) as u8).collect();
        std::fs::write(&file, &data).unwrap();
        let url = url::Url::from_file_path(&file).unwrap().to_string();
        let location = Location::parse(&url).unwrap();
        let meta = location.head().unwrap().expect("the object exists");
        assert_eq!(meta.size, data.len() as u64);

        let mut reader = location.reader(meta.size);
        let mut all = Vec::new();
        reader.read_to_end(&mut all).unwrap();
        assert_eq!(all, data);

        reader.seek(SeekFrom::Start(150_000)).unwrap();
        let mut part = vec![0u8; 10];
        reader.read_exact(&mut part).unwrap();
        assert_eq!(part, data[150_000..150_010]);
        assert_eq!(reader.seek(SeekFrom::Current(-5)).unwrap(), 150_005);
        reader.read_exact(&mut part).unwrap();
        assert_eq!(part, data[150_005..150_015]);
        assert_eq!(reader.seek(SeekFrom::End(-3)).unwrap(), data.len() as u64 - 3);
        let mut tail = Vec::new();
        reader.read_to_end(&mut tail).unwrap();
        assert_eq!(tail, data[data.len() - 3..]);
        assert!(reader.seek(SeekFrom::Current(-1_000_000)).is_err());

        let listed = Location::parse(url::Url::from_directory_path(&dir).unwrap().as_str()).unwrap().list().unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(
            relative_path(
                &Location::parse(url::Url::from_directory_path(&dir).unwrap().as_str()).unwrap().path,
                &listed[0].location
            )
            .as_deref(),
            Some("data.bin")
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn only_s3_and_file_urls_are_locations() {
        assert!(is_url("s3://bucket/crawl/"));
        assert!(is_url("file:///data/crawl"));
        assert!(!is_url("crawl/s3://x"));
        assert!(!is_url("C://data"), "a one-letter scheme is a drive, not a URL");
        assert!(is_url("gs://bucket/run"), "unsupported schemes are URLs, refused by Location::parse");
        assert!(Location::parse("gs://bucket/run").unwrap_err().to_string().contains("unsupported URL scheme"));
        assert!(Location::parse("http://example.com/x").is_err());
        assert!(Location::parse("s3:///no-bucket").is_err());
    }

    #[test]
    fn a_scheme_this_build_cannot_read_is_named_with_what_would_read_it() {
        for s3_built in [false, true] {
            assert_eq!(unreadable_scheme("file", s3_built), None);
            for scheme in ["gs", "https", "s4"] {
                let why = unreadable_scheme(scheme, s3_built).expect("refused");
                assert!(why.contains(&format!("`{scheme}`")) && why.contains("file://"), "{why}");
                assert!(why.contains("s3://"), "{why}");
            }
        }
        assert_eq!(unreadable_scheme("s3", true), None);
        let without = unreadable_scheme("s3", false).expect("refused without the feature");
        assert!(without.contains("--features s3"), "{without}");
        // The one this binary was built as.
        assert_eq!(Location::parse("s3://bucket/crawl/").is_ok(), S3_BUILT);
        let typo = Location::parse("s4://bucket/crawl/").unwrap_err().to_string();
        assert!(typo.contains("`s4`") && typo.contains("s4://bucket/crawl/"), "{typo}");
    }
}
