//! What the archive reader yields: records as stored ([`RawRecord`], with
//! their [`Extent`]), unreadable regions, and a summary of the file.

/// The container format of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ArchiveFormat {
    /// A WARC record (any version: 0.17, 0.18, 1.0, 1.1).
    Warc,
    /// An ARC record (v1 or v2), including the `filedesc://` header record.
    Arc,
}

/// One record as stored in the archive, before any interpretation of its
/// block. Built by [`super::scan_archive`], consumed by [`crate::ingest::record::process_record`].
#[derive(Debug, Clone, PartialEq)]
pub struct RawRecord {
    /// Where the record starts: the compressed offset of its gzip member when
    /// the record starts a member (per-record gzip, and the first record of a
    /// whole-file gzip), otherwise the offset in the uncompressed stream
    /// (uncompressed files, later records of a whole-file gzip).
    pub offset: u64,
    /// WARC or ARC.
    pub format: ArchiveFormat,
    /// The WARC-Type (`response`, `resource`, `revisit`, `request`,
    /// `warcinfo`, `metadata`, `conversion`, ...; a record without one is a
    /// `missing_warc_type` [`ArchiveEvent::Malformed`] instead), or
    /// `arc` for an ARC record and `filedesc` for the ARC file header record.
    pub record_type: String,
    /// WARC-Record-ID as written (with its angle brackets); `None` for ARC.
    pub record_id: Option<String>,
    /// WARC-Target-URI (angle brackets removed) or the ARC URL; may contain spaces.
    pub target_uri: Option<String>,
    /// WARC-Date as written, or the ARC date converted to ISO 8601
    /// (`2008-04-30T20:48:25Z`); not validated here (may be `null`).
    pub date: Option<String>,
    /// WARC-Refers-To, or WARC-Refers-To-Target-URI when the former is missing.
    pub refers_to: Option<String>,
    /// WARC-Payload-Digest.
    pub payload_digest: Option<String>,
    /// Every WARC-Concurrent-To (record ids with their angle brackets): the
    /// records of the same capture (a response and its request, metadata),
    /// which an export keeps or leaves out together.
    pub concurrent_to: Vec<String>,
    /// Content-Type of the block (e.g. `application/http; msgtype=response`);
    /// for ARC the MIME type of the header line (the type of the HTTP payload).
    pub content_type: Option<String>,
    /// The value of a WARC-Truncated header: the crawler cut the payload
    /// (`length`, `time`, `disconnect`, ...).
    pub warc_truncated: Option<String>,
    /// The block (at most `max_block_bytes` of it, see `too_large`).
    pub block: Vec<u8>,
    /// Number of block bytes present in the file (the declared length unless
    /// the record is truncated or was cut at an embedded record header).
    pub block_len: u64,
    /// The block was longer than `max_block_bytes`; `block` holds its start only.
    pub too_large: bool,
    /// The file (or its gzip stream) ended before the declared block length.
    pub truncated: bool,
    /// Where the record's bytes are: enough to cut it out of the file again.
    pub extent: Extent,
}

/// Where a record's bytes are in its file. A record's bytes run from its
/// header line to the end of the blank bytes after its block (its trailing
/// line ends), so the records of a file and the bytes between them that
/// are no record add up to the whole file.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Extent {
    /// Bytes from [`RawRecord::offset`] to the end of the record, so that
    /// `[offset, offset + length)` cuts it out as a CDX index does: counted
    /// in the file when the record is a gzip member of its own
    /// (per-record gzip; then `own_member`), in the decompressed stream
    /// otherwise (uncompressed files, whole-file gzip). `None` for a record
    /// that starts a gzip member but ends inside it, before another record
    /// (its offset is in the file, its end only in the stream).
    pub length: Option<u64>,
    /// The record is one gzip member, and nothing else is in it:
    /// `[offset, offset + length)` of the file is that member.
    pub own_member: bool,
    /// Where the record starts in the decompressed stream ([`super::StreamReader`]
    /// reads it; the file itself when uncompressed).
    pub stream_offset: u64,
    /// The record's bytes in the decompressed stream.
    pub stream_length: u64,
    /// The block has the length its header declares and the next record
    /// (or the end of the data) follows it: not cut short by the end of
    /// the data, nor at a record header found inside it, nor followed by
    /// bytes that start no record (a wrong Content-Length). A record that
    /// is not intact cannot be copied as it is: its header would announce
    /// bytes that are not there, or leave out bytes that are.
    pub intact: bool,
}

/// What the reader found at one place in the file.
#[derive(Debug, Clone, PartialEq)]
pub enum ArchiveEvent {
    /// A record, possibly truncated or too large (see its flags).
    Record(RawRecord),
    /// Bytes that could not be read as a record. Each event stands for one
    /// record (or one run of unreadable bytes) of the file.
    Malformed {
        /// Where the bad record or the unreadable bytes start (same convention
        /// as [`RawRecord::offset`]; for `bad_gzip` between records, the
        /// compressed offset of the bad member).
        offset: u64,
        /// The record type when the header could be read that far.
        record_type: Option<String>,
        /// The target URI when the header could be read that far.
        target_uri: Option<String>,
        /// Short snake_case reason: `malformed_record`, `truncated`,
        /// `bad_gzip`, `unsupported_compression`, `missing_warc_type`.
        reason: String,
        /// Human-readable explanation.
        detail: String,
    },
}

/// Summary of one scanned file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ArchiveInfo {
    /// Format of the first record: `WARC/1.0`, `WARC/0.17`, ..., `ARC/1`,
    /// `ARC/2`, or `unknown` when no record header was found.
    pub format: String,
    /// `none`, `gzip_per_record` (several gzip members), `gzip_whole_file`
    /// (one member), or the name of an unsupported compression (`lz4`,
    /// `zstd`, `bzip2`, `xz`).
    pub compression: String,
    /// Size of the file in bytes, as read (compressed).
    pub bytes: u64,
    /// Number of bytes after decompression.
    pub uncompressed_bytes: u64,
    /// Where the end of the file cut it short, if it did.
    pub cut: Option<Cut>,
}

/// Where the end of a file cut it short, as a copy or a download that
/// stopped part way does: the data ended inside a record (its header or
/// its block, shorter than its `Content-Length`) or inside a gzip member.
/// The reader keeps what it read, and the caller is told, since what the
/// file held past the cut is gone without a trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Where the cut record starts ([`RawRecord::offset`]'s convention), or
    /// the compressed offset of the cut gzip member when only its end (the
    /// trailer, or bytes after the last record) is missing.
    pub offset: u64,
    /// Records and malformed regions read before the cut, whole.
    pub records_before: u64,
}
