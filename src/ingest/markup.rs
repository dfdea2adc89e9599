//! What the two readers of a page's markup share: the tree walk of
//! [`super::html`] and the scanner of [`super::html_scan`]. The extent of
//! a tag as the HTML tokenizer reads it ([`tag_extent`]), the visible text
//! built line by line ([`Lines`]), and what both give ([`Extracted`]).
//! A module of its own so that neither reader imports the other's
//! internals (`html` calls the scanner; the scanner needs these).

use super::page_tree::PageLinks;

/// Title and visible text of an HTML document.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Extracted {
    /// Text of the first `<title>`, whitespace collapsed.
    pub title: String,
    /// Visible text: one line per block, whitespace collapsed within lines,
    /// no empty lines, lines joined with `\n`.
    pub text: String,
    /// The markup was simplified to stay within the limits: elements nested
    /// deeper than `max_html_depth` or attributes beyond
    /// `max_html_attributes` dropped.
    pub flattened: bool,
    /// What the page says about itself (canonical URL, refresh).
    pub links: PageLinks,
}

/// Where a tag ends, and where its attributes beyond the limit start.
pub(super) struct Tag {
    /// After the tag's `>`.
    pub(super) end: usize,
    /// The start of its attribute number `max_attributes + 1`, if it has one.
    pub(super) cut: Option<usize>,
}

/// States of the HTML tokenizer inside a tag, after its name.
#[derive(Clone, Copy)]
enum InTag {
    BeforeName,
    Name,
    AfterName,
    BeforeValue,
    Quoted(u8),
    Unquoted,
    AfterQuoted,
}

/// The length of the name of the tag whose name starts at `from` (as
/// written, case kept), and the tag's extent: `html`'s `scan_tag` without the
/// lowercase copy of the name, for [`super::html_scan`], which reads names
/// in place.
pub(super) fn tag_extent(b: &[u8], from: usize, max_attributes: usize) -> Option<(usize, Tag)> {
    let space = |c: u8| matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c');
    let len = b[from..].iter().position(|c| space(*c) || *c == b'/' || *c == b'>').unwrap_or(b.len() - from);
    let (mut state, mut attributes, mut cut) = (InTag::BeforeName, 0usize, None);
    let mut next = from + len;
    while let Some(&c) = b.get(next) {
        if let InTag::Quoted(q) = state {
            // Only its closing quote ends a quoted value (link targets and
            // titles make up most of a tag): jump to it.
            next += memchr::memchr(q, &b[next..])? + 1;
            state = InTag::AfterQuoted;
            continue;
        }
        let at = next;
        next += 1;
        if c == b'>' {
            return Some((len, Tag { end: at + 1, cut }));
        }
        state = match (state, c) {
            (InTag::Quoted(_), _) => unreachable!("quoted values are skipped whole"),
            (InTag::BeforeValue, b'"' | b'\'') => InTag::Quoted(c),
            (InTag::BeforeValue, c) if space(c) => InTag::BeforeValue,
            (InTag::BeforeValue, _) => InTag::Unquoted,
            (InTag::Unquoted, c) if space(c) => InTag::BeforeName,
            (InTag::Unquoted, _) => InTag::Unquoted,
            (InTag::Name | InTag::AfterName, b'=') => InTag::BeforeValue,
            (_, b'/') => InTag::BeforeName,
            (InTag::Name, c) if !space(c) => InTag::Name,
            (InTag::Name | InTag::AfterName, c) if space(c) => InTag::AfterName,
            (InTag::AfterQuoted | InTag::BeforeName, c) if space(c) => InTag::BeforeName,
            // A new attribute name starts (after a name, a quoted value or a separator).
            _ => {
                attributes += 1;
                if attributes == max_attributes.saturating_add(1) {
                    cut = Some(at);
                }
                InTag::Name
            }
        };
    }
    None
}

/// The first end tag `</name` of raw text element `name` (opened before
/// `from`) that the tokenizer takes as its appropriate end tag: its start,
/// and the end of its extent if the tag closes. A `</name` at the very end
/// of the input counts only when `at_input_end`: the tree walk lets the
/// page's end close it, the scanner wants the character after the name.
pub(super) fn end_tag_of(b: &[u8], from: usize, name: &str, at_input_end: bool) -> Option<(usize, Option<usize>)> {
    let mut i = from;
    while let Some(at) = memchr::memchr(b'<', &b[i..]).map(|k| i + k) {
        let tag = &b[at + 1..];
        let named = tag.len() > name.len()
            && tag[0] == b'/'
            && tag[1..=name.len()].eq_ignore_ascii_case(name.as_bytes())
            && match tag.get(name.len() + 1).copied() {
                None => at_input_end,
                Some(c) => matches!(c, b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c'),
            };
        if named {
            return Some((at, tag_extent(b, at + 2, usize::MAX).map(|(_, end)| end.end)));
        }
        i = at + 1;
    }
    None
}

/// Visible text built line by line: whitespace runs collapse to one space,
/// lines are trimmed, empty lines dropped, lines joined with `\n`. The
/// same text as collapsing each line with `split_whitespace` and joining
/// the non-empty ones, without keeping the lines apart first.
#[derive(Default)]
pub(super) struct Lines {
    /// The text so far.
    pub(super) text: String,
    /// The current line has a word.
    in_line: bool,
    /// Whitespace came after the current line's last word.
    space: bool,
}

impl Lines {
    /// Appends `piece` to the current line.
    pub(super) fn push(&mut self, piece: &str) {
        let mut rest = piece;
        while !rest.is_empty() {
            let blank = leading(rest, true);
            if blank > 0 {
                self.space = true;
                rest = &rest[blank..];
                continue;
            }
            let word = leading(rest, false);
            if self.in_line {
                if self.space {
                    self.text.push(' ');
                }
            } else {
                if !self.text.is_empty() {
                    self.text.push('\n');
                }
                self.in_line = true;
            }
            self.space = false;
            self.text.push_str(&rest[..word]);
            rest = &rest[word..];
        }
    }

    /// Ends the current line.
    pub(super) fn end_line(&mut self) {
        self.in_line = false;
        self.space = false;
    }
}

/// The length in bytes of the run of whitespace (`blank`) or of
/// non-whitespace at the start of `s`, whitespace as `char::is_whitespace`
/// (and so `split_whitespace`) means it.
fn leading(s: &str, blank: bool) -> usize {
    let b = s.as_bytes();
    let mut i = 0;
    while i < b.len() {
        let (is_space, len) = if b[i] < 0x80 {
            (matches!(b[i], b' ' | b'\t' | b'\n' | b'\x0b' | b'\x0c' | b'\r'), 1)
        } else {
            let c = s[i..].chars().next().unwrap_or_default();
            (c.is_whitespace(), c.len_utf8())
        };
        if is_space != blank {
            break;
        }
        i += len;
    }
    i
}
