//! HTML payload → text (spec §0 step 1): charset decision and decoding,
//! visible text extraction, title and language.
//!
//! The charset comes from the HTTP header, then a `<meta>` declaration in
//! the first 4 KB, then chardetng's guess, in that order; decoding never
//! fails (bad bytes become U+FFFD). Text extraction walks the html5ever tree
//! iteratively (deeply nested pages cannot overflow the stack), drops
//! `head`, `script`, `style`, `noscript`, `template`, `iframe`, comments and
//! tags, and ends a line at block-level elements. No boilerplate removal.

use encoding_rs::Encoding;
use scraper::Html;

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
pub fn decode(payload: &[u8], enc: &'static Encoding) -> String {
    enc.decode(payload).0.into_owned()
}

/// Title and visible text of an HTML document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Extracted {
    /// Text of the first `<title>`, whitespace collapsed.
    pub title: String,
    /// Visible text: one line per block, whitespace collapsed within lines,
    /// no empty lines, lines joined with `\n`.
    pub text: String,
}

/// Elements whose content is not visible text.
fn is_skipped(name: &str) -> bool {
    matches!(name, "head" | "script" | "style" | "noscript" | "template" | "title" | "iframe")
}

/// Elements that end a line (before and after them).
fn is_block(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "article"
            | "aside"
            | "blockquote"
            | "body"
            | "br"
            | "caption"
            | "center"
            | "dd"
            | "details"
            | "dialog"
            | "dir"
            | "div"
            | "dl"
            | "dt"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "frameset"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "header"
            | "hgroup"
            | "hr"
            | "html"
            | "legend"
            | "li"
            | "main"
            | "menu"
            | "nav"
            | "ol"
            | "option"
            | "p"
            | "pre"
            | "section"
            | "summary"
            | "table"
            | "tbody"
            | "td"
            | "tfoot"
            | "th"
            | "thead"
            | "tr"
            | "ul"
    )
}

/// Extracts the title and the visible text of an HTML document (spec §0.1).
pub fn extract(html: &str) -> Extracted {
    use ego_tree::iter::Edge;
    use scraper::Node;
    let doc = Html::parse_document(html);
    let mut lines: Vec<String> = Vec::new();
    let mut line = String::new();
    let mut title: Option<String> = None;
    let mut in_title = 0usize;
    let mut skip = 0usize;
    let mut pre = 0usize;
    for edge in doc.tree.root().traverse() {
        match edge {
            Edge::Open(node) => match node.value() {
                Node::Element(el) => {
                    let name = el.name();
                    if name == "title" && title.is_none() {
                        in_title += 1;
                    }
                    if is_skipped(name) {
                        skip += 1;
                    } else if skip == 0 && is_block(name) {
                        end_line(&mut line, &mut lines);
                    }
                    if name == "pre" {
                        pre += 1;
                    }
                }
                Node::Text(t) => {
                    if in_title > 0 {
                        title.get_or_insert_with(String::new).push_str(t);
                    } else if skip == 0 {
                        if pre > 0 {
                            let mut parts = t.split('\n');
                            if let Some(first) = parts.next() {
                                line.push_str(first);
                            }
                            for part in parts {
                                end_line(&mut line, &mut lines);
                                line.push_str(part);
                            }
                        } else {
                            line.push_str(t);
                        }
                    }
                }
                _ => {}
            },
            Edge::Close(node) => {
                if let Node::Element(el) = node.value() {
                    let name = el.name();
                    if name == "title" && in_title > 0 {
                        in_title -= 1;
                        title.get_or_insert_with(String::new);
                    }
                    if is_skipped(name) {
                        skip = skip.saturating_sub(1);
                    } else if skip == 0 && is_block(name) {
                        end_line(&mut line, &mut lines);
                    }
                    if name == "pre" {
                        pre = pre.saturating_sub(1);
                    }
                }
            }
        }
    }
    end_line(&mut line, &mut lines);
    Extracted { title: collapse(&title.unwrap_or_default()), text: lines.join("\n") }
}

/// Ends the current line: keeps it (whitespace collapsed) unless empty.
fn end_line(line: &mut String, lines: &mut Vec<String>) {
    let collapsed = collapse(line);
    if !collapsed.is_empty() {
        lines.push(collapsed);
    }
    line.clear();
}

/// Collapses runs of whitespace to one space and trims.
fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
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
        let ex = extract(&decoded);
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
        let ex = extract(html);
        assert_eq!(ex.title, "My & Title");
        assert_eq!(ex.text, "Café <tag> €5 now");
    }

    #[test]
    fn blocks_end_lines_and_whitespace_collapses() {
        let html = "<body>Intro <b>bold</b>  text<div>First\n   block</div><ul><li>one</li><li>two</li></ul>\
                    <table><tr><td>a</td><td>b</td></tr></table>line<br>break<h1>Head</h1>\
                    <p>  </p><span>inline</span> tail<pre>x  y\nz</pre></body>";
        let ex = extract(html);
        assert_eq!(ex.text, "Intro bold text\nFirst block\none\ntwo\na\nb\nline\nbreak\nHead\ninline tail\nx y\nz");
        assert_eq!(ex.title, "");
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
