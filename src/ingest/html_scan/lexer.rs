//! What the scanner reads as the HTML tokenizer does: doctypes' quirks,
//! start tags' attributes, raw text's end, and character references
//! (with html5ever's own tables).

use super::elements::Name;
use crate::ingest::markup::end_tag_of;
use html5ever::data::{C1_REPLACEMENTS, NAMED_ENTITIES};
use html5ever::{ns, Attribute, LocalName, QualName};

/// Why the scanner left a page to the tree builder (logged at `debug`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Doubt(pub(crate) &'static str);

/// A step of the scanner: done, or a [`Doubt`].
pub(super) type Step<T = ()> = Result<T, Doubt>;

/// HTML whitespace.
pub(super) fn space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

/// Whether doctype `decl` (`<!...>`, `<?...>`) puts the page in quirks
/// mode, for the doctypes of generated pages; `None` for the others (and
/// for `<?...>`, which is a comment, not a doctype). Following the HTML
/// standard's lists (html5ever's `tree_builder/data.rs`): no public or
/// system identifier, or the strict and XHTML public identifiers, are not
/// quirks; HTML 4.01 Transitional and Frameset are quirks without a system
/// identifier and limited quirks (not quirks) with one.
pub(super) fn quirks(decl: &[u8]) -> Option<bool> {
    let text = std::str::from_utf8(decl).ok()?;
    let rest = text.get(..9).filter(|d| d.eq_ignore_ascii_case("<!doctype")).map(|_| &text[9..text.len() - 1])?;
    let mut words = rest.split_ascii_whitespace();
    if !words.next().is_some_and(|n| n.eq_ignore_ascii_case("html")) {
        return None;
    }
    let quoted: Vec<&str> = rest.split('"').skip(1).step_by(2).collect();
    match words.next() {
        None => Some(false),
        Some(public) if public.eq_ignore_ascii_case("public") => {
            let system = match quoted.get(1) {
                None => false,
                Some(s) if s.starts_with("http://www.w3.org/") => true,
                Some(_) => return None,
            };
            let id = quoted.first()?;
            let is = |name: &str| id.eq_ignore_ascii_case(name);
            if is("-//W3C//DTD HTML 4.01//EN")
                || is("-//W3C//DTD XHTML 1.0 Strict//EN")
                || is("-//W3C//DTD XHTML 1.0 Transitional//EN")
                || is("-//W3C//DTD XHTML 1.0 Frameset//EN")
                || is("-//W3C//DTD XHTML 1.1//EN")
            {
                Some(false)
            } else if is("-//W3C//DTD HTML 4.01 Transitional//EN") || is("-//W3C//DTD HTML 4.01 Frameset//EN") {
                Some(!system)
            } else {
                None
            }
        }
        Some(_) => None,
    }
}

/// A start tag read: its name, where its attributes start and its end.
pub(super) struct StartTag<'a> {
    pub(super) name: Name<'a>,
    pub(super) attributes: usize,
    pub(super) end: usize,
}

/// The end of the content of raw text element `name` (opened before
/// `from`) and the end of its end tag: the first `</name` followed by
/// whitespace, `/` or `>` (the tokenizer's appropriate end tag).
pub(super) fn raw_text_end(b: &[u8], from: usize, name: &str) -> Option<(usize, usize)> {
    let (at, end) = end_tag_of(b, from, name, false)?;
    Some((at, end?))
}

/// The attributes of a `<link>` or `<meta>` from `from` (after its name) to
/// `end` (its `>`), as the tokenizer reads them: names lowercase, values
/// with character references decoded.
pub(super) fn attributes(html: &str, from: usize, end: usize) -> Step<Vec<Attribute>> {
    let b = html.as_bytes();
    let mut out = Vec::new();
    let mut i = from;
    while i < end {
        if space(b[i]) || b[i] == b'/' {
            i += 1;
            continue;
        }
        let name_start = i;
        i += 1;
        while i < end && !space(b[i]) && b[i] != b'/' && b[i] != b'=' {
            i += 1;
        }
        let name = html[name_start..i].to_ascii_lowercase();
        while i < end && space(b[i]) {
            i += 1;
        }
        let mut value = String::new();
        if i < end && b[i] == b'=' {
            i += 1;
            while i < end && space(b[i]) {
                i += 1;
            }
            let (from, to) = if i < end && (b[i] == b'"' || b[i] == b'\'') {
                let close = memchr::memchr(b[i], &b[i + 1..end]).ok_or(Doubt("attribute quote"))?;
                let range = (i + 1, i + 1 + close);
                i += close + 2;
                range
            } else {
                let start = i;
                while i < end && !space(b[i]) {
                    i += 1;
                }
                (start, i)
            };
            let raw = &html[from..to];
            if raw.contains('\r') {
                return Err(Doubt("CR in an attribute value"));
            }
            decode(raw, true, &mut |piece, _| value.push_str(piece));
        }
        out.push(Attribute { name: QualName::new(None, ns!(), LocalName::from(name)), value: value.into() });
    }
    Ok(out)
}

/// Calls `put` with the pieces of `s`, its character references decoded
/// (`true`: a reference's characters) as html5ever's tokenizer does, in
/// text or in an attribute value (`in_attribute`).
pub(super) fn decode(s: &str, in_attribute: bool, put: &mut dyn FnMut(&str, bool)) {
    let b = s.as_bytes();
    let mut i = 0;
    while let Some(at) = memchr::memchr(b'&', &b[i..]).map(|k| i + k) {
        put(&s[i..at], false);
        match char_ref(b, at, in_attribute) {
            Some((chars, len)) => {
                let mut buf = [0u8; 8];
                let mut n = 0;
                for c in chars.into_iter().flatten() {
                    n += c.encode_utf8(&mut buf[n..]).len();
                }
                put(std::str::from_utf8(&buf[..n]).unwrap_or_default(), true);
                i = at + len;
            }
            None => {
                put("&", false);
                i = at + 1;
            }
        }
    }
    put(&s[i..], false);
}

/// The characters of the character reference at `b[at]` (a `&`) and its
/// length in bytes, or `None` when the `&` is text (html5ever's
/// `char_ref` tokenizer; the text stops where `b` does).
pub(super) fn char_ref(b: &[u8], at: usize, in_attribute: bool) -> Option<([Option<char>; 2], usize)> {
    let first = *b.get(at + 1)?;
    if first == b'#' {
        let mut i = at + 2;
        let hex = matches!(b.get(i), Some(b'x' | b'X'));
        i += usize::from(hex);
        let base = if hex { 16 } else { 10 };
        let (start, mut num, mut too_big) = (i, 0u32, false);
        while let Some(digit) = b.get(i).and_then(|c| char::from(*c).to_digit(base)) {
            num = num.wrapping_mul(base);
            too_big |= num > 0x10FFFF;
            num = num.wrapping_add(digit);
            i += 1;
        }
        if i == start {
            return None;
        }
        i += usize::from(b.get(i) == Some(&b';'));
        let c = match num {
            n if n > 0x10FFFF || too_big => '\u{fffd}',
            0 | 0xD800..=0xDFFF => '\u{fffd}',
            0x80..=0x9F => C1_REPLACEMENTS[(num - 0x80) as usize].or(char::from_u32(num)).unwrap_or('\u{fffd}'),
            n => char::from_u32(n).unwrap_or('\u{fffd}'),
        };
        return Some(([Some(c), None], i - at));
    }
    if !first.is_ascii_alphanumeric() {
        return None;
    }
    // The longest name in the table that the text starts with, growing the
    // name while it is a prefix of one.
    let (mut j, mut found) = (at + 1, None);
    while j < b.len() && b[j].is_ascii() {
        j += 1;
        let Ok(name) = std::str::from_utf8(&b[at + 1..j]) else { break };
        match NAMED_ENTITIES.get(name) {
            Some(&(c1, c2)) => {
                if c1 != 0 {
                    found = Some((j - at - 1, c1, c2));
                }
            }
            None => break,
        }
    }
    let (len, c1, c2) = found?;
    let last = b[at + len];
    let next = b.get(at + 1 + len).copied();
    if in_attribute && last != b';' && next.is_some_and(|c| c == b'=' || c.is_ascii_alphanumeric()) {
        return None;
    }
    let c2 = if c2 == 0 { None } else { char::from_u32(c2) };
    Some(([char::from_u32(c1), c2], len + 1))
}
