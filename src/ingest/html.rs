//! HTML payload → text (spec §0 step 1): charset decision and decoding,
//! visible text extraction, title and language.
//!
//! The charset comes from the HTTP header, then a `<meta>` declaration in
//! the first 4 KB, then chardetng's guess, in that order; decoding never
//! fails (bad bytes become U+FFFD). The text is what a walk of the html5ever
//! tree gives (built by [`PageTree`], which keeps only what the text needs):
//! iterative (deeply nested pages cannot overflow the stack), it drops
//! `head`, `script`, `style`, `noscript`, `template`, `iframe`, comments and
//! tags, and ends a line at block-level elements. No boilerplate removal.
//!
//! Most pages never get a tree: [`extract`] first runs the scanner of
//! [`html_scan`], which reads title, text and links in one pass with the
//! tree builder's stack of open elements, and gives up on any page whose
//! tree it cannot follow exactly (foster parenting, the adoption agency,
//! foreign content, templates, unclosed raw text, nesting near the depth
//! limit, a tag past the attribute limit ...: see its documentation). Only
//! those pages are parsed by html5ever, as below; the tests hold the two to
//! the same result (`tests/html_scan.rs`). On documentation crawls the
//! scanner takes most pages (docs/benchmarks.md).
//!
//! Nesting depth is bounded. html5ever's tree builder scans its stack of
//! open elements for most tags, so its work grows with the square of the
//! nesting depth: a 1 MB page of 200,000 nested `<div>`s took minutes. The
//! page is fed to it in small chunks through a sink that records the depth
//! of every node placed ([`PageTree`]); once the tree nests deeper than
//! `max_html_depth`, parsing stops and the page is parsed again with the
//! elements beyond that depth dropped ([`flatten`]; browsers flatten such
//! pages too: Chromium's parser stops nesting at depth 512). A page that
//! still nests deeper than twice the limit (markup that the simple model of
//! [`flatten`] misjudges, such as stray end tags that html5ever ignores) is
//! [`TooDeep`]. Either way a parse costs O(size × limit). The tokenizer
//! compares each attribute of a tag with the earlier ones, so tags are cut
//! after `max_html_attributes` attributes first, and the attributes that
//! neither the tree builder nor the page's links read are not given to it
//! at all ([`drop_attributes`]).

use super::html_scan;
pub use super::markup::Extracted;
use super::markup::{end_tag_of, tag_extent, Lines, Tag};
pub use super::page_tree::PageLinks;
use super::page_tree::{is_block, PageNode, PageTree, Part};
use crate::ingest::settings::IngestConfig;
use ego_tree::Tree;
use encoding_rs::Encoding;
use html5ever::driver::{parse_document, ParseOpts};
use html5ever::tendril::{StrTendril, TendrilSink};
use std::borrow::Cow;
use std::collections::HashMap;

/// How far into the payload `<meta charset>` is looked for.
const META_SCAN_BYTES: usize = 4096;

/// How much of the payload chardetng sees (enough to decide; bounded cost).
const DETECT_BYTES: usize = 64 << 10;

/// Where the charset decision came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CharsetSource {
    /// A byte order mark.
    Bom,
    /// The HTTP `Content-Type` charset parameter.
    Header,
    /// A `<meta>` declaration.
    Meta,
    /// chardetng's guess.
    Detected,
}

/// Decides the encoding of an HTML payload: BOM, `header_charset` (the HTTP
/// charset parameter), `<meta>` in the first 4 KB, then detection.
pub fn decide_charset(payload: &[u8], header_charset: Option<&str>) -> (&'static Encoding, CharsetSource) {
    if let Some((enc, _)) = Encoding::for_bom(payload) {
        return (enc, CharsetSource::Bom);
    }
    if let Some(enc) = header_charset.and_then(|l| Encoding::for_label(l.trim().as_bytes())) {
        return (html_encoding(enc), CharsetSource::Header);
    }
    if let Some(enc) = meta_charset(&payload[..payload.len().min(META_SCAN_BYTES)]) {
        return (html_encoding(enc), CharsetSource::Meta);
    }
    let mut det = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    det.feed(&payload[..payload.len().min(DETECT_BYTES)], true);
    (det.guess(None, chardetng::Utf8Detection::Allow), CharsetSource::Detected)
}

/// The HTML standard's overrides: a declared UTF-16 in a byte-oriented page
/// means UTF-8, `x-user-defined` means windows-1252.
fn html_encoding(enc: &'static Encoding) -> &'static Encoding {
    if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
        encoding_rs::UTF_8
    } else if enc == encoding_rs::X_USER_DEFINED {
        encoding_rs::WINDOWS_1252
    } else {
        enc
    }
}

/// The charset named by a `<meta charset=...>` or `<meta http-equiv=...
/// content="...; charset=...">` tag in `head`.
pub fn meta_charset(head: &[u8]) -> Option<&'static Encoding> {
    let lower = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(i) = find(&lower[from..], b"<meta") {
        let start = from + i + 5;
        let end = lower[start..].iter().position(|b| *b == b'>').map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(c) = find(tag, b"charset") {
            let rest = &tag[c + 7..];
            let rest = trim_start(rest);
            if let Some(rest) = rest.strip_prefix(b"=") {
                let rest = trim_start(rest);
                let rest = rest.strip_prefix(b"\"").or_else(|| rest.strip_prefix(b"'")).unwrap_or(rest);
                let len =
                    rest.iter().position(|b| b.is_ascii_whitespace() || b"\"';/>".contains(b)).unwrap_or(rest.len());
                if let Some(enc) = Encoding::for_label(&rest[..len]) {
                    return Some(enc);
                }
            }
        }
        from = end.max(start);
    }
    None
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn trim_start(b: &[u8]) -> &[u8] {
    let n = b.iter().take_while(|c| c.is_ascii_whitespace()).count();
    &b[n..]
}

/// Decodes `payload` with `enc` (a BOM wins), replacing bad bytes.
/// Borrowed when the payload is already valid UTF-8 text of that encoding
/// (most pages): the text is extracted from the record's bytes without a
/// copy of the page.
pub fn decode<'a>(payload: &'a [u8], enc: &'static Encoding) -> Cow<'a, str> {
    enc.decode(payload).0
}

/// A page whose tree nests deeper than twice `max_html_depth` even after
/// [`flatten`]: parsing it further would cost the square of its depth.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TooDeep {
    /// The depth the flattened page's tree was stopped at.
    pub limit: u32,
}

/// Extracts the title and the visible text of an HTML document (spec §0.1)
/// within `cfg`'s limits: tags are cut after `max_html_attributes`
/// attributes (and lose those the text does not need), a tree nesting deeper than `max_html_depth` is parsed again
/// flattened (see the module documentation), and one still deeper than
/// twice that is [`TooDeep`].
pub fn extract(html: &str, cfg: &IngestConfig) -> Result<Extracted, TooDeep> {
    match scan(html, cfg) {
        Ok(extracted) => Ok(extracted),
        Err(why) => {
            tracing::debug!(why, bytes = html.len(), "html: page left to the tree builder");
            extract_with_tree(html, cfg)
        }
    }
}

/// [`extract`]'s fast path alone: the scanner of [`html_scan`], or why it
/// left the page to the tree builder. Public for the differential tests and
/// the benchmark, which hold it to [`extract_with_tree`].
#[doc(hidden)]
pub fn scan(html: &str, cfg: &IngestConfig) -> Result<Extracted, &'static str> {
    html_scan::extract(html, cfg).map_err(|doubt| doubt.0)
}

/// [`extract`] by html5ever's tree, for every page: what the scanner of
/// [`html_scan`] must give whenever it gives something (tests and
/// benchmarks compare the two).
#[doc(hidden)]
pub fn extract_with_tree(html: &str, cfg: &IngestConfig) -> Result<Extracted, TooDeep> {
    let max_depth = cfg.max_html_depth;
    let (limited, cut_attributes) =
        drop_attributes(html, usize::try_from(cfg.max_html_attributes).unwrap_or(usize::MAX));
    let html = limited.as_ref();
    let ((tree, links), flattened) = match parse_bounded(html, max_depth) {
        Some(parsed) => (parsed, cut_attributes),
        None => {
            let limit = max_depth.saturating_mul(2);
            (parse_bounded(&flatten(html, max_depth), limit).ok_or(TooDeep { limit })?, true)
        }
    };
    let (title, text) = walk(&tree);
    Ok(Extracted { title, text, flattened, links })
}

/// The title (whitespace collapsed) and the visible text of a parsed page,
/// by an iterative walk of its tree.
fn walk(tree: &Tree<PageNode>) -> (String, String) {
    use ego_tree::iter::Edge;
    let mut text = Lines::default();
    let mut title: Option<String> = None;
    let mut in_title = 0usize;
    let mut skip = 0usize;
    let mut pre = 0usize;
    for edge in tree.root().traverse() {
        match edge {
            Edge::Open(node) => match &node.value().part {
                Part::Element(_, role) => {
                    if role.title && title.is_none() {
                        in_title += 1;
                    }
                    if role.skipped {
                        skip += 1;
                    } else if skip == 0 && role.block {
                        text.end_line();
                    }
                    pre += usize::from(role.pre);
                }
                Part::Text(t) => {
                    let t: &str = t;
                    if in_title > 0 {
                        title.get_or_insert_with(String::new).push_str(t);
                    } else if skip == 0 {
                        if pre > 0 {
                            let mut parts = t.split('\n');
                            if let Some(first) = parts.next() {
                                text.push(first);
                            }
                            for part in parts {
                                text.end_line();
                                text.push(part);
                            }
                        } else {
                            text.push(t);
                        }
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                if let Part::Element(_, role) = &node.value().part {
                    if role.title && in_title > 0 {
                        in_title -= 1;
                        title.get_or_insert_with(String::new);
                    }
                    if role.skipped {
                        skip = skip.saturating_sub(1);
                    } else if skip == 0 && role.block {
                        text.end_line();
                    }
                    pre = pre.saturating_sub(usize::from(role.pre));
                }
            }
        }
    }
    (collapse(&title.unwrap_or_default()), text.text)
}

/// How much of the page the tree builder gets at a time: the depth is
/// checked between chunks, so a page is dropped at most this far past the
/// point where its tree got too deep.
const FEED_BYTES: usize = 8 << 10;

/// Parses `html` as a document, or `None` as soon as its tree nests deeper
/// than `max_depth` (the document node is depth 0, `<html>` 1, `<body>` 2).
fn parse_bounded(html: &str, max_depth: u32) -> Option<(Tree<PageNode>, PageLinks)> {
    let mut parser = parse_document(PageTree::new(), ParseOpts::default());
    let mut rest = html;
    while !rest.is_empty() {
        let mut cut = rest.len().min(FEED_BYTES);
        while !rest.is_char_boundary(cut) {
            cut += 1;
        }
        let (chunk, tail) = rest.split_at(cut);
        parser.process(StrTendril::from_slice(chunk));
        if parser.tokenizer.sink.sink.deepest() > max_depth {
            return None;
        }
        rest = tail;
    }
    let (tree, deepest, links) = parser.finish();
    (deepest <= max_depth).then_some((tree, links))
}

/// Elements that have no content and never nest.
fn is_void(name: &str) -> bool {
    matches!(
        name,
        "area"
            | "base"
            | "basefont"
            | "bgsound"
            | "br"
            | "col"
            | "embed"
            | "frame"
            | "hr"
            | "img"
            | "input"
            | "keygen"
            | "link"
            | "meta"
            | "param"
            | "source"
            | "track"
            | "wbr"
    )
}

/// Elements whose content is text up to their end tag, not markup.
fn is_raw_text(name: &str) -> bool {
    matches!(
        name,
        "script"
            | "style"
            | "xmp"
            | "iframe"
            | "noembed"
            | "noframes"
            | "noscript"
            | "textarea"
            | "title"
            | "plaintext"
    )
}

/// Tag names longer than this are compared by their start only.
const MAX_TAG_NAME: usize = 32;

/// One piece of markup found at a `<`.
enum Markup<'a> {
    /// A start tag: lowercase name, whether it ends in `/>`, and its extent.
    Start(Cow<'a, str>, bool, Tag),
    /// An end tag: lowercase name and its extent.
    End(Cow<'a, str>, Tag),
    /// A comment, doctype or processing instruction ending there.
    Other(usize),
    /// A `<` that starts nothing (text).
    Text,
}

/// `html` with the elements nested deeper than `max_depth` removed: their
/// start and end tags are dropped (a block element's start tag becomes
/// `<br>`, so the text keeps its lines) and their content is kept. Depth
/// follows a simple model of open elements, linear in the page: a start tag
/// opens an element (void, raw-text and `/>` ones excepted), an end tag
/// closes the innermost open element of its name and those inside it, and
/// an end tag with no open element of its name is dropped. `<html>` and
/// `<body>` count even when implied.
fn flatten(html: &str, max_depth: u32) -> String {
    let b = html.as_bytes();
    let limit = (max_depth as usize).saturating_sub(2);
    let mut out = String::with_capacity(html.len());
    let mut open: Vec<(String, bool)> = Vec::new();
    let mut open_names: HashMap<String, usize> = HashMap::new();
    let mut kept = 0usize;
    let (mut i, mut copied) = (0usize, 0usize);
    while let Some(at) = memchr::memchr(b'<', &b[i..]).map(|k| i + k) {
        let Some(markup) = markup_at(b, at, usize::MAX) else { break };
        let mut drop_tag = |out: &mut String, end: usize, replacement: &str| {
            out.push_str(&html[copied..at]);
            out.push_str(replacement);
            copied = end;
        };
        i = match markup {
            Markup::Text => at + 1,
            Markup::Other(end) => end,
            Markup::Start(name, self_closing, Tag { end, .. }) => {
                if name == "plaintext" {
                    break;
                }
                if is_raw_text(&name) {
                    raw_text_end(b, end, &name)
                } else if is_void(&name) || self_closing {
                    end
                } else {
                    let keep = kept < limit;
                    if keep {
                        kept += 1;
                    } else {
                        drop_tag(&mut out, end, if is_block(&name) { "<br>" } else { "" });
                    }
                    *open_names.entry(name.to_string()).or_default() += 1;
                    open.push((name.into_owned(), keep));
                    end
                }
            }
            Markup::End(name, Tag { end, .. }) => {
                let mut closed_kept = false;
                if open_names.get(name.as_ref()).is_some_and(|n| *n > 0) {
                    while let Some((top, was_kept)) = open.pop() {
                        kept -= usize::from(was_kept);
                        if let Some(n) = open_names.get_mut(&top) {
                            *n -= 1;
                        }
                        if top == name {
                            closed_kept = was_kept;
                            break;
                        }
                    }
                }
                if !closed_kept {
                    drop_tag(&mut out, end, "");
                }
                end
            }
        };
    }
    out.push_str(&html[copied..]);
    out
}

/// Elements whose attributes the tree builder or [`PageLinks`] reads:
/// `link` and `meta` (canonical URL, refresh), `input` (`type=hidden`
/// stays in a table), `annotation-xml` (`encoding` makes HTML inside
/// MathML), `font` (`color`, `face` or `size` end SVG and MathML content)
/// and `template` (`shadowrootmode`).
fn attributes_matter(name: &str) -> bool {
    matches!(name, "link" | "meta" | "input" | "annotation-xml" | "font" | "template")
}

/// `html` with the attributes of every start tag dropped but those of
/// [`attributes_matter`]'s elements, which are cut after their first `max`
/// attributes instead (as end tags are); true when some tag had more than
/// `max`. Borrowed when no tag changes.
///
/// Why: the text never depends on the other attributes, but html5ever's
/// tokenizer reads them character by character into buffers of their own
/// (link targets and titles are most of a generated page's bytes), and
/// compares each attribute of a tag with all the earlier ones (to drop
/// duplicates), so a tag with n attributes costs n². The same scan finds
/// both.
fn drop_attributes(html: &str, max: usize) -> (Cow<'_, str>, bool) {
    let b = html.as_bytes();
    let mut out = String::new();
    let mut cut_any = false;
    let (mut i, mut copied) = (0usize, 0usize);
    while let Some(at) = memchr::memchr(b'<', &b[i..]).map(|k| i + k) {
        let Some(markup) = markup_at(b, at, max) else { break };
        let (name, tag, start, self_closing) = match markup {
            Markup::Text => {
                i = at + 1;
                continue;
            }
            Markup::Other(end) => {
                i = end;
                continue;
            }
            Markup::Start(name, self_closing, tag) => (name, tag, true, self_closing),
            Markup::End(name, tag) => (name, tag, false, false),
        };
        cut_any |= tag.cut.is_some();
        let name_start = at + if start { 1 } else { 2 };
        let name_end = b[name_start..tag.end]
            .iter()
            .position(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c' | b'/' | b'>'))
            .map_or(tag.end, |k| name_start + k);
        if start && !attributes_matter(&name) && name_end + 1 < tag.end {
            out.push_str(&html[copied..name_end]);
            out.push_str(if self_closing { "/>" } else { ">" });
            copied = tag.end;
        } else if let Some(cut) = tag.cut {
            out.push_str(&html[copied..cut]);
            out.push('>');
            copied = tag.end;
        }
        if start && name == "plaintext" {
            break;
        }
        i = if start && is_raw_text(&name) { raw_text_end(b, tag.end, &name) } else { tag.end };
    }
    if copied == 0 {
        return (Cow::Borrowed(html), cut_any);
    }
    out.push_str(&html[copied..]);
    (Cow::Owned(out), cut_any)
}

/// The markup starting at the `<` at `at`, or `None` when it runs to the
/// end of the page (the rest is then kept as it is). Tags note where their
/// attribute number `max_attributes + 1` starts.
fn markup_at(b: &[u8], at: usize, max_attributes: usize) -> Option<Markup<'_>> {
    let next = |k: usize| b.get(at + k).copied().unwrap_or(0);
    let close = |from: usize| memchr::memchr(b'>', &b[from..]).map(|k| from + k + 1);
    match next(1) {
        b'!' if b[at..].starts_with(b"<!--") => {
            b[at + 4..].windows(3).position(|w| w == b"-->").map(|k| Markup::Other(at + 4 + k + 3))
        }
        b'!' | b'?' => close(at + 1).map(Markup::Other),
        b'/' if next(2).is_ascii_alphabetic() => {
            let (name, tag) = scan_tag(b, at + 2, max_attributes)?;
            Some(Markup::End(name, tag))
        }
        b'/' => close(at + 2).map(Markup::Other),
        c if c.is_ascii_alphabetic() => {
            let (name, tag) = scan_tag(b, at + 1, max_attributes)?;
            let self_closing = b[..tag.end - 1].iter().rev().find(|c| !c.is_ascii_whitespace()) == Some(&b'/');
            Some(Markup::Start(name, self_closing, tag))
        }
        _ => Some(Markup::Text),
    }
}

/// The lowercase name of the tag whose name starts at `from`, and its
/// extent. Attributes are told apart as the HTML tokenizer does (a `>`
/// inside a quoted value does not end the tag; `a/b` and `a=""b` are two
/// attributes each).
fn scan_tag(b: &[u8], from: usize, max_attributes: usize) -> Option<(Cow<'_, str>, Tag)> {
    let (len, tag) = tag_extent(b, from, max_attributes)?;
    let raw = &b[from..from + len.min(MAX_TAG_NAME)];
    let name = match String::from_utf8_lossy(raw) {
        Cow::Borrowed(s) if !s.bytes().any(|c| c.is_ascii_uppercase()) => Cow::Borrowed(s),
        other => Cow::Owned(other.to_ascii_lowercase()),
    };
    Some((name, tag))
}

/// Where the content of raw-text element `name` (opened before `from`)
/// ends: after its end tag, or at the end of the page.
fn raw_text_end(b: &[u8], from: usize, name: &str) -> usize {
    end_tag_of(b, from, name, true).and_then(|(_, end)| end).unwrap_or(b.len())
}

/// Collapses runs of whitespace to one space and trims.
fn collapse(s: &str) -> String {
    let mut lines = Lines::default();
    lines.push(s);
    lines.text
}

/// How much text the language detector looks at (it is linear in the text).
const LANG_SAMPLE_CHARS: usize = 10_000;

/// ISO 639-1 code of the text's language, or `""` when whatlang is not
/// confident (short or mixed text) or the language has no 639-1 code.
pub fn detect_lang(text: &str) -> String {
    let sample = text.char_indices().nth(LANG_SAMPLE_CHARS).map_or(text, |(i, _)| &text[..i]);
    match whatlang::detect(sample) {
        Some(info) if info.is_reliable() => iso639_1(info.lang()).to_string(),
        _ => String::new(),
    }
}

/// Maps whatlang's languages (ISO 639-3) to ISO 639-1.
fn iso639_1(lang: whatlang::Lang) -> &'static str {
    use whatlang::Lang::*;
    match lang {
        Epo => "eo",
        Eng => "en",
        Rus => "ru",
        Cmn => "zh",
        Spa => "es",
        Por => "pt",
        Ita => "it",
        Ben => "bn",
        Fra => "fr",
        Deu => "de",
        Ukr => "uk",
        Kat => "ka",
        Ara => "ar",
        Hin => "hi",
        Jpn => "ja",
        Heb => "he",
        Yid => "yi",
        Pol => "pl",
        Amh => "am",
        Jav => "jv",
        Kor => "ko",
        Nob => "nb",
        Dan => "da",
        Swe => "sv",
        Fin => "fi",
        Tur => "tr",
        Nld => "nl",
        Hun => "hu",
        Ces => "cs",
        Ell => "el",
        Bul => "bg",
        Bel => "be",
        Mar => "mr",
        Kan => "kn",
        Ron => "ro",
        Slv => "sl",
        Hrv => "hr",
        Srp => "sr",
        Mkd => "mk",
        Lit => "lt",
        Lav => "lv",
        Est => "et",
        Tam => "ta",
        Vie => "vi",
        Urd => "ur",
        Tha => "th",
        Guj => "gu",
        Uzb => "uz",
        Pan => "pa",
        Aze => "az",
        Ind => "id",
        Tel => "te",
        Pes => "fa",
        Mal => "ml",
        Ori => "or",
        Mya => "my",
        Nep => "ne",
        Sin => "si",
        Khm => "km",
        Tuk => "tk",
        Aka => "ak",
        Zul => "zu",
        Sna => "sn",
        Afr => "af",
        Lat => "la",
        Slk => "sk",
        Cat => "ca",
        Tgl => "tl",
        Hye => "hy",
        Cym => "cy",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charset_from_header_wins() {
        let page = b"<meta charset=\"koi8-r\"><p>abc</p>";
        let (enc, src) = decide_charset(page, Some("windows-1251"));
        assert_eq!((enc.name(), src), ("windows-1251", CharsetSource::Header));
        // An unknown header label falls through to the meta tag.
        let (enc, src) = decide_charset(page, Some("no-such-charset"));
        assert_eq!((enc.name(), src), ("KOI8-R", CharsetSource::Meta));
    }

    #[test]
    fn charset_from_meta_forms() {
        assert_eq!(meta_charset(b"<META CHARSET='Shift_JIS'>").unwrap().name(), "Shift_JIS");
        let http_equiv = b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=windows-1252\">";
        assert_eq!(meta_charset(http_equiv).unwrap().name(), "windows-1252");
        assert_eq!(meta_charset(b"<meta name=x content=y><p>charset=utf-8"), None);
        // Declared UTF-16 in an ASCII-compatible page means UTF-8.
        let (enc, _) = decide_charset(b"<meta charset=utf-16><p>x", None);
        assert_eq!(enc, encoding_rs::UTF_8);
    }

    #[test]
    fn charset_detected_for_windows_1251_russian() {
        let text = "<html><body><p>Съешь же ещё этих мягких французских булок, да выпей чаю. \
                    Широкая электрификация южных губерний даст мощный толчок подъёму сельского \
                    хозяйства.</p></body></html>";
        let (bytes, _, _) = encoding_rs::WINDOWS_1251.encode(text);
        let (enc, src) = decide_charset(&bytes, None);
        assert_eq!((enc.name(), src), ("windows-1251", CharsetSource::Detected));
        let decoded = decode(&bytes, enc);
        assert_eq!(decoded, text);
        let ex = extract(&decoded, &IngestConfig::default()).unwrap();
        assert!(ex.text.starts_with("Съешь же ещё"));
        assert_eq!(detect_lang(&ex.text), "ru");
    }

    #[test]
    fn bom_and_bad_bytes() {
        let (enc, src) = decide_charset(b"\xef\xbb\xbf<p>x</p>", Some("iso-8859-1"));
        assert_eq!((enc, src), (encoding_rs::UTF_8, CharsetSource::Bom));
        assert_eq!(decode(b"a\xffb", encoding_rs::UTF_8), "a\u{fffd}b");
    }

    #[test]
    fn scripts_styles_comments_dropped_entities_decoded() {
        let html = "<html><head><title> My  &amp; Title </title><style>p{color:red}</style>\
                    <script>var x = 1;</script></head><body><!-- a comment -->\
                    <script>alert('no')</script><noscript>enable js</noscript>\
                    <template><p>hidden</p></template>\
                    <p>Caf&eacute; &lt;tag&gt; &#8364;5&nbsp;now</p></body></html>";
        let ex = extract(html, &IngestConfig::default()).unwrap();
        assert_eq!(ex.title, "My & Title");
        assert_eq!(ex.text, "Café <tag> €5 now");
    }

    #[test]
    fn blocks_end_lines_and_whitespace_collapses() {
        let html = "<body>Intro <b>bold</b>  text<div>First\n   block</div><ul><li>one</li><li>two</li></ul>\
                    <table><tr><td>a</td><td>b</td></tr></table>line<br>break<h1>Head</h1>\
                    <p>  </p><span>inline</span> tail<pre>x  y\nz</pre></body>";
        let ex = extract(html, &IngestConfig::default()).unwrap();
        assert_eq!(ex.text, "Intro bold text\nFirst block\none\ntwo\na\nb\nline\nbreak\nHead\ninline tail\nx y\nz");
        assert_eq!(ex.title, "");
    }

    #[test]
    fn flatten_drops_deep_tags_and_keeps_text_raw_text_and_comments() {
        let page = "<div><div><div><b>x</b><DIV>y</div><script>var s = '<div>';</script><!-- <div> -->\
                    <p title='a>b'>z</p></div></div></div>";
        let flat = "<div><div><br>x<br>y<script>var s = '<div>';</script><!-- <div> --><br>z</div></div>";
        assert_eq!(flatten(page, 4), flat);
        let depth = |max_html_depth| IngestConfig { max_html_depth, ..IngestConfig::default() };
        let ex = extract(page, &depth(4)).unwrap();
        assert_eq!((ex.text.as_str(), ex.flattened), ("x\ny\nz", true));
        assert!(!extract(page, &depth(8)).unwrap().flattened);
        // Unterminated markup is kept as it is.
        assert_eq!(flatten("<div><div><p>a<!-- b", 3), "<div><br><br>a<!-- b");
        assert_eq!(flatten("<div><div><p title=\"x", 3), "<div><br><p title=\"x");
    }

    #[test]
    fn attributes_are_dropped_or_cut_after_max() {
        // Separators as the tokenizer sees them: spaces, `/`, a quoted value
        // followed directly by a name; `>` inside quotes; script content is
        // not markup.
        let page = "<meta a b=1 c = 'x>y' d/e f=\"\"g>one</P x><script>'<i a b c d>'</script><link a b>two";
        let (dropped, cut) = drop_attributes(page, 2);
        assert_eq!(dropped, "<meta a b=1 >one</P x><script>'<i a b c d>'</script><link a b>two");
        assert!(cut);
        assert!(matches!(drop_attributes(page, 7), (Cow::Borrowed(_), false)));
        assert_eq!(drop_attributes(page, 6), (Cow::Owned(page.replace("f=\"\"g>", "f=\"\">")), true));
        // A quoted value ends only at its own quote.
        assert_eq!(drop_attributes("<input a='x\"y>' b c>t", 2).0, "<input a='x\"y>' b >t");
        // Other start tags lose every attribute (a `/>` is kept: it closes
        // SVG elements); their count still decides `flattened`.
        let other = "<p class=x title='a>b' a b>one <a href=\"/x\">two</a> <svg><path d=\"M0\"/></svg><br/>";
        assert_eq!(
            drop_attributes(other, 256),
            (Cow::Owned("<p>one <a>two</a> <svg><path/></svg><br/>".into()), false)
        );
        assert!(drop_attributes(other, 3).1);
        let cfg = IngestConfig { max_html_attributes: 2, ..IngestConfig::default() };
        let ex = extract(page, &cfg).unwrap();
        assert_eq!((ex.text.as_str(), ex.flattened), ("one\ntwo", true));
        assert!(!extract(page, &IngestConfig::default()).unwrap().flattened);
        // What the page says about itself is still read.
        let head = "<link rel=canonical href=/c title=t><meta http-equiv=refresh content=0><p id=x>text";
        let ex = extract(head, &IngestConfig::default()).unwrap();
        assert_eq!((ex.links.canonical.as_deref(), ex.links.refresh, ex.text.as_str()), (Some("/c"), true, "text"));
    }

    #[test]
    fn text_is_the_same_with_attributes_dropped() {
        // Pages whose tree depends on attributes (a hidden input stays in
        // its table, `font color` leaves SVG, `annotation-xml`'s encoding
        // makes HTML) and pages whose attributes hold markup.
        let pages = [
            "<table><tr><td>a</td></tr><input type=hidden name=x>b<tr><td>c</td></tr></table>",
            "<svg><text>in svg <font color=red>out</font> after</text></svg><p>p",
            "<math><annotation-xml encoding='text/html'><div>html</div></annotation-xml></math>x",
            "<div title='<p>not a tag</p>' data-x=\"a>b\">visible<span class=s>more</span></div>",
            "<template shadowrootmode=open><p>shadow</p></template><p>light",
            "<ul><li value=3>one<li class=x>two</ul><pre class=c>\nx  y\n z</pre>",
        ];
        for page in pages {
            let parse = |html: &str| parse_bounded(html, 512).map(|(tree, links)| (walk(&tree), links));
            let (dropped, _) = drop_attributes(page, 256);
            assert_eq!(parse(page), parse(&dropped), "{page}");
        }
    }

    /// The lines as they were built before [`Lines`]: each line collapsed
    /// with `split_whitespace`, empty ones dropped, joined with `\n`.
    fn lines_oracle(pieces: &[(String, bool)]) -> String {
        let (mut lines, mut line) = (Vec::new(), String::new());
        for (piece, ends_line) in pieces {
            line.push_str(piece);
            if *ends_line {
                lines.push(line.split_whitespace().collect::<Vec<_>>().join(" "));
                line.clear();
            }
        }
        lines.push(line.split_whitespace().collect::<Vec<_>>().join(" "));
        lines.retain(|l| !l.is_empty());
        lines.join("\n")
    }

    proptest::proptest! {
        #[test]
        fn lines_collapse_as_split_whitespace_does(
            pieces in proptest::collection::vec(
                ("[ \t\n\r\x0b\x0c\u{1c}\u{85}\u{a0}\u{2009}\u{3000}ab\u{e9}\u{4e2d}]{0,12}", proptest::bool::ANY),
                0..12,
            )
        ) {
            let mut lines = Lines::default();
            for (piece, ends_line) in &pieces {
                lines.push(piece);
                if *ends_line {
                    lines.end_line();
                }
            }
            proptest::prop_assert_eq!(lines.text, lines_oracle(&pieces));
        }
    }

    #[test]
    fn language_codes() {
        assert_eq!(
            detect_lang(
                "The committee said on Tuesday that the new library will open next spring, \
                 and that the old building will be turned into a museum of local history."
            ),
            "en"
        );
        assert_eq!(detect_lang("x"), "");
        assert_eq!(detect_lang(""), "");
    }
}
