//! The element names and sets the rules read: names the rules know,
//! scope boundaries, special and formatting elements, table modes
//! (html5ever's `tag_sets.rs` and `rules.rs`).

/// The body's insertion modes, from the innermost table element open
/// (`in body` for the others: they follow its rules for what they do not
/// name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    Body,
    Table,
    TableBody,
    Row,
    Cell,
    Caption,
}

/// An element name: one the rules name (lowercase), or another as written.
#[derive(Debug, Clone, Copy)]
pub(super) enum Name<'a> {
    Known(&'static str),
    Other(&'a [u8]),
}

impl Name<'_> {
    pub(super) fn known(self) -> Option<&'static str> {
        match self {
            Name::Known(k) => Some(k),
            Name::Other(_) => None,
        }
    }

    pub(super) fn is(self, other: Name<'_>) -> bool {
        match (self, other) {
            (Name::Known(a), Name::Known(b)) => a == b,
            (Name::Other(a), Name::Other(b)) => a.eq_ignore_ascii_case(b),
            _ => false,
        }
    }
}

/// Scope boundaries (html5ever's `tag_sets.rs`).
pub(super) const DEFAULT_SCOPE: &[&str] =
    &["applet", "caption", "html", "table", "td", "th", "marquee", "object", "select", "template"];
pub(super) const LIST_SCOPE: &[&str] =
    &["applet", "caption", "html", "table", "td", "th", "marquee", "object", "select", "template", "ol", "ul"];
pub(super) const BUTTON_SCOPE: &[&str] =
    &["applet", "caption", "html", "table", "td", "th", "marquee", "object", "select", "template", "button"];
pub(super) const TABLE_SCOPE: &[&str] = &["html", "table", "template"];
/// The cursory implied end tags that can be open here (`option`, `rb` ...
/// never are).
pub(super) const IMPLIED_END: &[&str] = &["dd", "dt", "li", "p"];
pub(super) const HEADINGS: &[&str] = &["h1", "h2", "h3", "h4", "h5", "h6"];

/// The name of a tag as written: a known one lowercase.
pub(super) fn name_of(raw: &[u8]) -> Name<'_> {
    let mut buf = [0u8; 10];
    if raw.len() > buf.len() {
        return Name::Other(raw);
    }
    for (lower, c) in buf.iter_mut().zip(raw) {
        *lower = c.to_ascii_lowercase();
    }
    known(&buf[..raw.len()]).map_or(Name::Other(raw), Name::Known)
}

macro_rules! known_names {
    ($($name:literal)*) => {
        /// The name the rules know that `lower` is, if any.
        fn known(lower: &[u8]) -> Option<&'static str> {
            match lower {
                $(x if x == $name.as_bytes() => Some($name),)*
                _ => None,
            }
        }
    };
}

known_names!(
    "a" "address" "applet" "area" "article" "aside" "b" "base" "basefont" "bgsound" "big" "blockquote" "body"
    "br" "button" "caption" "center" "code" "col" "colgroup" "dd" "details" "dialog" "dir" "div" "dl" "dt" "em"
    "embed" "fieldset" "figcaption" "figure" "font" "footer" "form" "frame" "frameset" "h1" "h2" "h3" "h4" "h5"
    "h6" "head" "header" "hgroup" "hr" "html" "i" "iframe" "image" "img" "input" "isindex" "keygen" "legend" "li"
    "link" "listing" "main" "marquee" "math" "menu" "meta" "nav" "nobr" "noembed" "noframes" "noscript" "object"
    "ol" "optgroup" "option" "p" "param" "plaintext" "pre" "rb" "rp" "rt" "rtc" "s" "script" "search" "section"
    "select" "small" "source" "strike" "strong" "style" "summary" "svg" "table" "tbody" "td" "template" "textarea"
    "tfoot" "th" "thead" "title" "tr" "track" "tt" "u" "ul" "wbr" "xmp"
);

/// html5ever's `special_tag` set.
pub(super) fn is_special(name: &str) -> bool {
    matches!(
        name,
        "address"
            | "applet"
            | "area"
            | "article"
            | "aside"
            | "base"
            | "basefont"
            | "bgsound"
            | "blockquote"
            | "body"
            | "br"
            | "button"
            | "caption"
            | "center"
            | "col"
            | "colgroup"
            | "dd"
            | "details"
            | "dir"
            | "div"
            | "dl"
            | "dt"
            | "embed"
            | "fieldset"
            | "figcaption"
            | "figure"
            | "footer"
            | "form"
            | "frame"
            | "frameset"
            | "h1"
            | "h2"
            | "h3"
            | "h4"
            | "h5"
            | "h6"
            | "head"
            | "header"
            | "hgroup"
            | "hr"
            | "html"
            | "iframe"
            | "img"
            | "input"
            | "isindex"
            | "li"
            | "link"
            | "listing"
            | "main"
            | "marquee"
            | "menu"
            | "meta"
            | "nav"
            | "noembed"
            | "noframes"
            | "noscript"
            | "object"
            | "ol"
            | "p"
            | "param"
            | "plaintext"
            | "pre"
            | "script"
            | "section"
            | "select"
            | "source"
            | "style"
            | "summary"
            | "table"
            | "tbody"
            | "td"
            | "template"
            | "textarea"
            | "tfoot"
            | "th"
            | "thead"
            | "title"
            | "tr"
            | "track"
            | "ul"
            | "wbr"
            | "xmp"
    )
}

/// The formatting elements of the list of active formatting elements.
pub(super) fn is_formatting(name: &str) -> bool {
    matches!(
        name,
        "a" | "b" | "big" | "code" | "em" | "font" | "i" | "nobr" | "s" | "small" | "strike" | "strong" | "tt" | "u"
    )
}

/// Elements that decide the table insertion modes.
pub(super) fn is_table_element(name: &str) -> bool {
    table_mode(name).is_some()
}

/// The insertion mode inside table element `name`.
pub(super) fn table_mode(name: &str) -> Option<Mode> {
    match name {
        "td" | "th" => Some(Mode::Cell),
        "tr" => Some(Mode::Row),
        "tbody" | "thead" | "tfoot" => Some(Mode::TableBody),
        "caption" => Some(Mode::Caption),
        "table" => Some(Mode::Table),
        _ => None,
    }
}
