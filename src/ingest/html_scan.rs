//! The fast path of [`super::html::extract`]: the title, visible text and
//! [`PageLinks`] of a page read in one pass over its bytes, without
//! html5ever's tokenizer and tree. What it gives is the tree walk's own
//! result, or nothing.
//!
//! Why: html5ever's tokenizer, tree builder and the tree cost about 40% of
//! ingest, yet most pages are markup that a short stack of open elements
//! describes exactly: the walk's text only depends on where text comes, in
//! tree order, where block elements open and close, and which content is
//! skipped or preformatted. So the scanner tokenizes as the HTML tokenizer
//! does (tags and their attributes, comments, raw text, character
//! references with html5ever's table) and keeps the tree builder's stack of
//! open elements, its insertion modes for the head, the body and tables,
//! and its list of active formatting elements, following the rules of
//! html5ever's tree builder (`tree_builder/rules.rs`) for each tag.
//!
//! Where the tree builder would move content out of source order or
//! reopen elements, the scanner gives up ([`Doubt`]) and the page goes to
//! the tree builder: text or other markup directly in a table (foster
//! parenting), formatting elements closed out of order or left open by an
//! enclosing end tag (the adoption agency, reopened formatting elements),
//! `<p>` before `<table>` (quirks mode decides), `</br>`, `</p>` inside a
//! table, `<frameset>`, `<template>`, `<select>`, `<button>`, `<textarea>`,
//! `<plaintext>`, `<xmp>`, `<listing>`, SVG and MathML, unclosed raw text,
//! script comments that could hide a `</script>`, a NUL byte, and any tag
//! with more attributes than `max_html_attributes` or any nesting within
//! two of `max_html_depth` (so `flattened` and `too_deep` only ever come
//! from the tree path). Giving up costs only time: the page is parsed as
//! before.

use super::html::{tag_extent, Extracted, Lines};
use super::page_tree::{is_block, PageLinks};
use crate::ingest::settings::IngestConfig;
use html5ever::data::{C1_REPLACEMENTS, NAMED_ENTITIES};
use html5ever::{ns, Attribute, LocalName, QualName};

/// Why the scanner left a page to the tree builder (logged at `debug`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Doubt(pub(super) &'static str);

type Step<T = ()> = Result<T, Doubt>;

/// The title, text and links of `html` as [`super::html::extract`]'s tree
/// path gives them, or the [`Doubt`] that made the scanner stop.
pub(super) fn extract(html: &str, cfg: &IngestConfig) -> Result<Extracted, Doubt> {
    if memchr::memchr(0, html.as_bytes()).is_some() {
        return Err(Doubt("NUL byte"));
    }
    let mut scan = Scanner {
        html,
        b: html.as_bytes(),
        max_attributes: usize::try_from(cfg.max_html_attributes).unwrap_or(usize::MAX),
        max_depth: usize::try_from(cfg.max_html_depth).unwrap_or(usize::MAX),
        stack: Vec::with_capacity(32),
        formatting: Vec::new(),
        phase: Phase::BeforeHead,
        form: None,
        initial: true,
        quirks: None,
        ids: 0,
        pre: 0,
        mode: Mode::Body,
        text: Lines::default(),
        title: None,
        links: PageLinks::default(),
    };
    scan.push(Name::Known("html"))?;
    scan.run()?;
    let title = scan.title.map(|t| t.text).unwrap_or_default();
    Ok(Extracted { title, text: scan.text.text, flattened: false, links: scan.links })
}

/// An element name: one the rules name (lowercase), or another as written.
#[derive(Debug, Clone, Copy)]
enum Name<'a> {
    Known(&'static str),
    Other(&'a [u8]),
}

impl Name<'_> {
    fn known(self) -> Option<&'static str> {
        match self {
            Name::Known(k) => Some(k),
            Name::Other(_) => None,
        }
    }

    fn is(self, other: Name<'_>) -> bool {
        match (self, other) {
            (Name::Known(a), Name::Known(b)) => a == b,
            (Name::Other(a), Name::Other(b)) => a.eq_ignore_ascii_case(b),
            _ => false,
        }
    }
}

/// An open element.
#[derive(Debug, Clone, Copy)]
struct Open<'a> {
    name: Name<'a>,
    /// Tells apart elements of the same name (the form pointer and the
    /// list of active formatting elements name elements by it).
    id: u32,
    block: bool,
    special: bool,
    formatting: bool,
}

impl Open<'_> {
    fn named(&self, name: &str) -> bool {
        matches!(self.name, Name::Known(k) if k == name)
    }

    fn in_set(&self, set: &[&str]) -> bool {
        matches!(self.name, Name::Known(k) if set.contains(&k))
    }
}

/// The insertion modes before the body (the body's own come from the stack).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// `initial`, `before html` and `before head`.
    BeforeHead,
    InHead,
    AfterHead,
    /// `in body` and every mode after it.
    Body,
}

/// The body's insertion modes, from the innermost table element open
/// (`in body` for the others: they follow its rules for what they do not
/// name).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    Body,
    Table,
    TableBody,
    Row,
    Cell,
    Caption,
}

/// Scope boundaries (html5ever's `tag_sets.rs`).
const DEFAULT_SCOPE: &[&str] =
    &["applet", "caption", "html", "table", "td", "th", "marquee", "object", "select", "template"];
const LIST_SCOPE: &[&str] =
    &["applet", "caption", "html", "table", "td", "th", "marquee", "object", "select", "template", "ol", "ul"];
const BUTTON_SCOPE: &[&str] =
    &["applet", "caption", "html", "table", "td", "th", "marquee", "object", "select", "template", "button"];
const TABLE_SCOPE: &[&str] = &["html", "table", "template"];
/// The cursory implied end tags that can be open here (`option`, `rb` ...
/// never are).
const IMPLIED_END: &[&str] = &["dd", "dt", "li", "p"];
const HEADINGS: &[&str] = &["h1", "h2", "h3", "h4", "h5", "h6"];

struct Scanner<'a> {
    html: &'a str,
    b: &'a [u8],
    max_attributes: usize,
    max_depth: usize,
    /// The stack of open elements, `<html>` first.
    stack: Vec<Open<'a>>,
    /// The list of active formatting elements after the first marker in
    /// effect: an element's id, or `None` for a marker. Every element in it
    /// is open (a formatting element closed otherwise is a [`Doubt`]), so
    /// reconstructing it is never needed.
    formatting: Vec<Option<(&'static str, u32)>>,
    phase: Phase,
    /// The form element pointer.
    form: Option<u32>,
    /// Nothing but whitespace and comments read yet (the `initial` mode,
    /// where a doctype sets the quirks mode).
    initial: bool,
    /// Quirks mode (it decides whether `<table>` closes a `<p>`), or `None`
    /// for a doctype not told apart here.
    quirks: Option<bool>,
    ids: u32,
    /// `<pre>` elements open.
    pre: usize,
    /// The body's insertion mode (see [`Scanner::reset_mode`]).
    mode: Mode,
    text: Lines,
    /// The first `<title>`'s text, once it has been read.
    title: Option<Lines>,
    links: PageLinks,
}

fn space(c: u8) -> bool {
    matches!(c, b' ' | b'\t' | b'\n' | b'\r' | b'\x0c')
}

impl<'a> Scanner<'a> {
    fn run(&mut self) -> Step {
        let b = self.b;
        let mut i = 0;
        while i < b.len() {
            let at = memchr::memchr(b'<', &b[i..]).map_or(b.len(), |k| i + k);
            if at > i {
                self.characters(i, at)?;
            }
            if at == b.len() {
                break;
            }
            i = match b.get(at + 1).copied() {
                Some(b'!') if b[at..].starts_with(b"<!--") => self.comment(at)?,
                Some(b'!' | b'?') => {
                    let end = self.bogus_comment(at + 2)?;
                    if self.initial {
                        self.quirks = quirks(&b[at..end]);
                        self.initial = false;
                    }
                    end
                }
                Some(b'/') => match b.get(at + 2).copied() {
                    Some(c) if c.is_ascii_alphabetic() => self.end_tag(at + 2)?,
                    Some(b'>') => at + 3,
                    Some(_) => self.bogus_comment(at + 2)?,
                    None => return Err(Doubt("`</` at the end")),
                },
                Some(c) if c.is_ascii_alphabetic() => self.start_tag(at + 1)?,
                _ => {
                    self.characters(at, at + 1)?;
                    at + 1
                }
            };
        }
        Ok(())
    }

    /// After the comment at `at`; only comments that end at their first
    /// `-->` as both the tokenizer and [`super::html`]'s attribute cut see
    /// them.
    fn comment(&mut self, at: usize) -> Step<usize> {
        let body = &self.b[at + 4..];
        if body.starts_with(b">") || body.starts_with(b"->") {
            return Err(Doubt("abrupt comment"));
        }
        let end = memchr::memmem::find(body, b"-->").ok_or(Doubt("unclosed comment"))?;
        if memchr::memmem::find(&body[..end], b"--!>").is_some() {
            return Err(Doubt("comment ending `--!>`"));
        }
        Ok(at + 4 + end + 3)
    }

    /// After the `>` of a doctype, CDATA section, processing instruction or
    /// other bogus comment whose content starts at `from`.
    fn bogus_comment(&mut self, from: usize) -> Step<usize> {
        memchr::memchr(b'>', &self.b[from..]).map(|k| from + k + 1).ok_or(Doubt("unclosed markup declaration"))
    }

    /// A tag or text before any doctype: quirks mode.
    fn leave_initial(&mut self) {
        if self.initial {
            self.quirks = Some(true);
            self.initial = false;
        }
    }

    /// Text from `from` to `to`, by insertion mode.
    fn characters(&mut self, from: usize, to: usize) -> Step {
        let s = &self.html[from..to];
        let blank = s.bytes().all(space);
        if !blank {
            self.leave_initial();
        }
        if self.phase != Phase::Body {
            if s.contains('&') {
                return Err(Doubt("character reference before the body"));
            }
            if blank {
                return Ok(());
            }
            self.start_body()?;
        }
        if matches!(self.mode(), Mode::Table | Mode::TableBody | Mode::Row) && !blank {
            return Err(Doubt("text in a table"));
        }
        self.visible(s);
        Ok(())
    }

    /// Appends text (character references decoded) to the visible text.
    fn visible(&mut self, s: &str) {
        let (pre, text) = (self.pre > 0, &mut self.text);
        decode(s, false, &mut |piece, from_reference| {
            if !pre {
                text.push(piece);
                return;
            }
            // A newline in `<pre>` ends a line; the tokenizer makes every
            // CR and CRLF of the page a newline, not those of references.
            let newline = |c: char| c == '\n' || (c == '\r' && !from_reference);
            let mut parts = piece.split(newline);
            if let Some(first) = parts.next() {
                text.push(first);
            }
            for part in parts {
                text.end_line();
                text.push(part);
            }
        });
    }

    fn mode(&self) -> Mode {
        self.mode
    }

    /// The body's insertion mode from the innermost table element open
    /// (html5ever's "reset the insertion mode appropriately").
    fn reset_mode(&mut self) {
        self.mode =
            self.stack.iter().rev().find_map(|open| open.name.known().and_then(table_mode)).unwrap_or(Mode::Body);
    }

    /// Opens element `name` in the current node.
    fn push(&mut self, name: Name<'a>) -> Step<u32> {
        if self.stack.len() + 2 > self.max_depth {
            return Err(Doubt("near max_html_depth"));
        }
        let k = name.known();
        let block = k.is_some_and(is_block);
        if block {
            self.text.end_line();
        }
        self.pre += usize::from(k == Some("pre"));
        if let Some(mode) = k.and_then(table_mode) {
            self.mode = mode;
        }
        self.ids += 1;
        let formatting = k.is_some_and(is_formatting);
        self.stack.push(Open { name, id: self.ids, block, special: k.is_some_and(is_special), formatting });
        Ok(self.ids)
    }

    /// Closes the current node. A formatting element stays in the list of
    /// active formatting elements, to be reopened later, unless the caller
    /// clears it (`formatting_ok`).
    fn pop(&mut self, formatting_ok: bool) -> Step<Open<'a>> {
        if self.stack.len() <= 1 {
            return Err(Doubt("closing <html>"));
        }
        let open = self.stack.pop().ok_or(Doubt("closing <html>"))?;
        if open.formatting && !formatting_ok {
            return Err(Doubt("formatting element closed by another tag"));
        }
        if open.block {
            self.text.end_line();
        }
        let k = open.name.known();
        self.pre -= usize::from(k == Some("pre"));
        if k.is_some_and(is_table_element) {
            self.reset_mode();
        }
        Ok(open)
    }

    /// An element without content (void, or raw text read whole).
    fn void(&mut self, name: Name<'a>) -> Step {
        self.push(name)?;
        self.pop(false).map(drop)
    }

    fn current(&self) -> &Open<'a> {
        &self.stack[self.stack.len() - 1]
    }

    fn in_scope(&self, target: impl Fn(&Open<'a>) -> bool, boundary: &[&str]) -> bool {
        for open in self.stack.iter().rev() {
            if target(open) {
                return true;
            }
            if open.in_set(boundary) {
                return false;
            }
        }
        false
    }

    fn has_in_scope(&self, name: &str, boundary: &[&str]) -> bool {
        self.in_scope(|o| o.named(name), boundary)
    }

    /// Pops elements until one for which `last` holds is popped.
    fn pop_until(&mut self, last: impl Fn(&Open<'a>) -> bool, formatting_ok: bool) -> Step {
        loop {
            let open = self.pop(formatting_ok)?;
            if last(&open) {
                return Ok(());
            }
        }
    }

    /// Generates implied end tags, except for `except`.
    fn implied_end(&mut self, except: Option<&str>) -> Step {
        while self.current().in_set(IMPLIED_END) && !except.is_some_and(|e| self.current().named(e)) {
            self.pop(false)?;
        }
        Ok(())
    }

    fn close_p(&mut self) -> Step {
        if self.has_in_scope("p", BUTTON_SCOPE) {
            self.implied_end(Some("p"))?;
            self.pop_until(|o| o.named("p"), false)?;
        }
        Ok(())
    }

    /// Clears the list of active formatting elements up to the last marker.
    fn clear_to_marker(&mut self) {
        while let Some(entry) = self.formatting.pop() {
            if entry.is_none() {
                break;
            }
        }
    }

    /// Pops elements until the current node is one of `context`.
    fn clear_to(&mut self, context: &[&str]) -> Step {
        while !self.current().in_set(context) {
            self.pop(false)?;
        }
        Ok(())
    }

    fn start_body(&mut self) -> Step {
        if self.phase == Phase::InHead {
            self.pop(false)?;
        }
        self.phase = Phase::Body;
        self.push(Name::Known("body")).map(drop)
    }

    /// Reads the start tag whose name starts at `from`; returns where the
    /// scan goes on.
    fn start_tag(&mut self, from: usize) -> Step<usize> {
        self.leave_initial();
        let (len, tag) = tag_extent(self.b, from, self.max_attributes).ok_or(Doubt("unclosed tag"))?;
        if tag.cut.is_some() {
            return Err(Doubt("more than max_html_attributes"));
        }
        let name = name_of(&self.b[from..from + len]);
        let tag = StartTag { name, attributes: from + len, end: tag.end };
        if self.phase == Phase::Body {
            self.start_in_modes(&tag)
        } else {
            self.start_before_body(&tag)
        }
    }

    fn start_before_body(&mut self, tag: &StartTag<'a>) -> Step<usize> {
        let k = tag.name.known();
        loop {
            match (self.phase, k) {
                (_, Some("html")) => return Ok(tag.end),
                (Phase::BeforeHead, _) => {
                    self.push(Name::Known("head"))?;
                    self.phase = Phase::InHead;
                    if k == Some("head") {
                        return Ok(tag.end);
                    }
                }
                (Phase::InHead | Phase::AfterHead, Some("head")) => return Ok(tag.end),
                (_, Some("template" | "frameset")) => return Err(Doubt("<template> or <frameset>")),
                (Phase::InHead, Some(k @ ("base" | "basefont" | "bgsound" | "link" | "meta"))) => {
                    self.note(k, tag)?;
                    self.void(tag.name)?;
                    return Ok(tag.end);
                }
                (Phase::InHead, Some("title" | "noscript" | "noframes" | "style" | "script")) => {
                    return self.raw_text(tag);
                }
                (
                    Phase::AfterHead,
                    Some("base" | "basefont" | "bgsound" | "link" | "meta" | "noframes" | "script" | "style" | "title"),
                ) => {
                    // Into the head again, and out of it.
                    self.push(Name::Known("head"))?;
                    self.phase = Phase::InHead;
                    let end = self.start_before_body(tag)?;
                    self.pop(false)?;
                    self.phase = Phase::AfterHead;
                    return Ok(end);
                }
                (Phase::InHead, _) => {
                    self.pop(false)?;
                    self.phase = Phase::AfterHead;
                }
                (Phase::AfterHead, Some("body")) => {
                    self.start_body()?;
                    return Ok(tag.end);
                }
                (Phase::AfterHead, _) => {
                    self.start_body()?;
                    return self.start_in_modes(tag);
                }
                (Phase::Body, _) => return self.start_in_modes(tag),
            }
        }
    }

    fn start_in_modes(&mut self, tag: &StartTag<'a>) -> Step<usize> {
        const TABLE_PARTS: &[&str] = &["caption", "col", "colgroup", "tbody", "td", "tfoot", "th", "thead", "tr"];
        let k = tag.name.known();
        loop {
            match self.mode() {
                Mode::Body => return self.start_in_body(tag),
                Mode::Cell | Mode::Caption if !k.is_some_and(|k| TABLE_PARTS.contains(&k)) => {
                    return self.start_in_body(tag);
                }
                Mode::Cell => self.close_cell()?,
                Mode::Caption => self.close_caption()?,
                Mode::Row => match k {
                    Some("td" | "th") => {
                        self.clear_to(&["tr", "html"])?;
                        self.push(tag.name)?;
                        self.formatting.push(None);
                        return Ok(tag.end);
                    }
                    Some("caption" | "col" | "colgroup" | "tbody" | "tfoot" | "thead" | "tr") => self.close_row()?,
                    _ => return self.start_in_table(tag),
                },
                Mode::TableBody => match k {
                    Some("tr") => {
                        self.clear_to(&["tbody", "thead", "tfoot", "html"])?;
                        self.push(tag.name)?;
                        return Ok(tag.end);
                    }
                    Some("td" | "th") => {
                        self.clear_to(&["tbody", "thead", "tfoot", "html"])?;
                        self.push(Name::Known("tr"))?;
                    }
                    Some("caption" | "col" | "colgroup" | "tbody" | "tfoot" | "thead") => {
                        self.clear_to(&["tbody", "thead", "tfoot", "html"])?;
                        self.pop(false)?;
                    }
                    _ => return self.start_in_table(tag),
                },
                Mode::Table => match k {
                    Some("caption") => {
                        self.clear_to(&["table", "html"])?;
                        self.formatting.push(None);
                        self.push(tag.name)?;
                        return Ok(tag.end);
                    }
                    Some("tbody" | "thead" | "tfoot") => {
                        self.clear_to(&["table", "html"])?;
                        self.push(tag.name)?;
                        return Ok(tag.end);
                    }
                    Some("td" | "th" | "tr") => {
                        self.clear_to(&["table", "html"])?;
                        self.push(Name::Known("tbody"))?;
                    }
                    _ => return self.start_in_table(tag),
                },
            }
        }
    }

    /// The `in table` rules for what the other table modes leave to them.
    fn start_in_table(&mut self, tag: &StartTag<'a>) -> Step<usize> {
        match tag.name.known() {
            Some("script" | "style") => self.raw_text(tag),
            _ => Err(Doubt("start tag in a table outside cells")),
        }
    }

    fn start_in_body(&mut self, tag: &StartTag<'a>) -> Step<usize> {
        let Some(k) = tag.name.known() else {
            self.push(tag.name)?;
            return Ok(tag.end);
        };
        match k {
            "html" | "body" | "head" | "caption" | "col" | "colgroup" | "frame" | "tbody" | "td" | "tfoot" | "th"
            | "thead" | "tr" => {}
            "base" | "basefont" | "bgsound" | "link" | "meta" => {
                self.note(k, tag)?;
                self.void(tag.name)?;
            }
            "script" | "style" | "noscript" | "iframe" | "title" => return self.raw_text(tag),
            "address" | "article" | "aside" | "blockquote" | "center" | "details" | "dialog" | "dir" | "div" | "dl"
            | "fieldset" | "figcaption" | "figure" | "footer" | "header" | "hgroup" | "main" | "nav" | "ol" | "p"
            | "search" | "section" | "summary" | "ul" | "menu" | "pre" => {
                self.close_p()?;
                self.push(tag.name)?;
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.close_p()?;
                if self.current().in_set(HEADINGS) {
                    self.pop(false)?;
                }
                self.push(tag.name)?;
            }
            "form" => {
                if self.form.is_none() {
                    self.close_p()?;
                    self.form = Some(self.push(tag.name)?);
                }
            }
            "li" | "dd" | "dt" => {
                let closes: &[&str] = if k == "li" { &["li"] } else { &["dd", "dt"] };
                for index in (0..self.stack.len()).rev() {
                    let open = self.stack[index];
                    if open.in_set(closes) {
                        self.implied_end(open.name.known())?;
                        self.pop_until(|o| o.id == open.id, false)?;
                        break;
                    }
                    if open.special && !open.in_set(&["address", "div", "p"]) {
                        break;
                    }
                }
                self.close_p()?;
                self.push(tag.name)?;
            }
            "a" | "b" | "big" | "code" | "em" | "font" | "i" | "s" | "small" | "strike" | "strong" | "tt" | "u" => {
                let after_marker = self.formatting.iter().rev().map_while(|e| *e);
                if k == "a" && after_marker.clone().any(|(name, _)| name == "a") {
                    return Err(Doubt("<a> inside <a>"));
                }
                let id = self.push(tag.name)?;
                self.formatting.push(Some((k, id)));
            }
            "table" => {
                match self.quirks {
                    Some(false) => self.close_p()?,
                    Some(true) => {}
                    None if self.has_in_scope("p", BUTTON_SCOPE) => {
                        return Err(Doubt("<table> in <p> (quirks mode decides)"));
                    }
                    None => {}
                }
                self.push(tag.name)?;
            }
            "area" | "br" | "embed" | "img" | "keygen" | "wbr" | "input" | "param" | "source" | "track" => {
                self.void(tag.name)?;
            }
            "hr" => {
                self.close_p()?;
                self.void(tag.name)?;
            }
            "button" => {
                if self.has_in_scope("button", DEFAULT_SCOPE) {
                    self.implied_end(None)?;
                    self.pop_until(|o| o.named("button"), false)?;
                }
                self.push(tag.name)?;
            }
            "template" | "noframes" | "frameset" | "plaintext" | "listing" | "xmp" | "textarea" | "noembed"
            | "select" | "option" | "optgroup" | "rb" | "rtc" | "rp" | "rt" | "math" | "svg" | "image" | "nobr"
            | "applet" | "marquee" | "object" | "isindex" => {
                return Err(Doubt("element with rules of its own"));
            }
            _ => {
                self.push(tag.name)?;
            }
        }
        Ok(tag.end)
    }

    fn close_cell(&mut self) -> Step {
        self.implied_end(None)?;
        self.pop_until(|o| o.in_set(&["td", "th"]), true)?;
        self.clear_to_marker();
        Ok(())
    }

    fn close_caption(&mut self) -> Step {
        self.implied_end(None)?;
        self.pop_until(|o| o.named("caption"), true)?;
        self.clear_to_marker();
        Ok(())
    }

    fn close_row(&mut self) -> Step {
        self.clear_to(&["tr", "html"])?;
        self.pop(false).map(drop)
    }

    /// Reads the end tag whose name starts at `from`.
    fn end_tag(&mut self, from: usize) -> Step<usize> {
        self.leave_initial();
        let (len, tag) = tag_extent(self.b, from, self.max_attributes).ok_or(Doubt("unclosed tag"))?;
        if tag.cut.is_some() {
            return Err(Doubt("more than max_html_attributes"));
        }
        let name = name_of(&self.b[from..from + len]);
        if self.phase == Phase::Body {
            self.end_in_modes(name)?;
        } else {
            self.end_before_body(name)?;
        }
        Ok(tag.end)
    }

    fn end_before_body(&mut self, name: Name<'a>) -> Step {
        let k = name.known();
        match (self.phase, k) {
            (_, Some("template")) => Err(Doubt("</template>")),
            (Phase::BeforeHead, Some("head")) => {
                self.phase = Phase::AfterHead;
                Ok(())
            }
            (Phase::InHead, Some("head")) => {
                self.pop(false)?;
                self.phase = Phase::AfterHead;
                Ok(())
            }
            (_, Some("br")) => Err(Doubt("</br>")),
            (_, Some("body" | "html")) => self.start_body(),
            _ => Ok(()),
        }
    }

    fn end_in_modes(&mut self, name: Name<'a>) -> Step {
        let k = name.known();
        loop {
            match (self.mode(), k) {
                (Mode::Body, _) => return self.end_in_body(name),
                (Mode::Cell, Some(c @ ("td" | "th"))) => {
                    if self.has_in_scope(c, TABLE_SCOPE) {
                        self.implied_end(None)?;
                        self.pop_until(|o| o.named(c), true)?;
                        self.clear_to_marker();
                    }
                    return Ok(());
                }
                (Mode::Cell, Some("body" | "caption" | "col" | "colgroup" | "html")) => return Ok(()),
                (Mode::Cell, Some(t @ ("table" | "tbody" | "tfoot" | "thead" | "tr"))) => {
                    if !self.has_in_scope(t, TABLE_SCOPE) {
                        return Ok(());
                    }
                    self.close_cell()?;
                }
                (Mode::Cell, _) => return self.end_in_body(name),
                (Mode::Caption, _) if !k.is_some_and(is_table_element) => return self.end_in_body(name),
                (Mode::Caption, Some("caption")) => {
                    if self.has_in_scope("caption", TABLE_SCOPE) {
                        self.close_caption()?;
                    }
                    return Ok(());
                }
                (Mode::Caption, Some("table")) => {
                    if !self.has_in_scope("caption", TABLE_SCOPE) {
                        return Ok(());
                    }
                    self.close_caption()?;
                }
                (Mode::Caption, _) => return Ok(()),
                (Mode::Row, Some("tr")) => {
                    self.close_row()?;
                    return Ok(());
                }
                (Mode::Row, Some("table")) => self.close_row()?,
                (Mode::Row, Some(t @ ("tbody" | "tfoot" | "thead"))) => {
                    if !self.has_in_scope(t, TABLE_SCOPE) {
                        return Ok(());
                    }
                    self.close_row()?;
                }
                (Mode::Row, Some("body" | "caption" | "col" | "colgroup" | "html" | "td" | "th")) => return Ok(()),
                (Mode::TableBody, Some(t @ ("tbody" | "tfoot" | "thead"))) => {
                    if self.has_in_scope(t, TABLE_SCOPE) {
                        self.clear_to(&["tbody", "thead", "tfoot", "html"])?;
                        self.pop(false)?;
                    }
                    return Ok(());
                }
                (Mode::TableBody, Some("table")) => {
                    if !self.in_scope(|o| o.in_set(&["tbody", "thead", "tfoot"]), TABLE_SCOPE) {
                        return Ok(());
                    }
                    self.clear_to(&["tbody", "thead", "tfoot", "html"])?;
                    self.pop(false)?;
                }
                (Mode::TableBody, Some("body" | "caption" | "col" | "colgroup" | "html" | "td" | "th" | "tr")) => {
                    return Ok(());
                }
                (Mode::Table | Mode::TableBody | Mode::Row, _) => return self.end_in_table(name),
            }
        }
    }

    /// The `in table` rules for end tags the other table modes leave to them.
    fn end_in_table(&mut self, name: Name<'a>) -> Step {
        match name.known() {
            Some("table") => {
                if self.has_in_scope("table", TABLE_SCOPE) {
                    self.pop_until(|o| o.named("table"), false)?;
                }
                Ok(())
            }
            Some(
                "body" | "caption" | "col" | "colgroup" | "html" | "tbody" | "td" | "tfoot" | "th" | "thead" | "tr",
            ) => Ok(()),
            // Foster parenting: what they insert goes before the table.
            Some("p" | "br" | "template") => Err(Doubt("</p>, </br> or </template> in a table")),
            _ => self.end_in_body(name),
        }
    }

    fn end_in_body(&mut self, name: Name<'a>) -> Step {
        let Some(k) = name.known() else {
            return self.any_other_end(name);
        };
        match k {
            "body" | "html" => {}
            "address" | "article" | "aside" | "blockquote" | "button" | "center" | "details" | "dialog" | "dir"
            | "div" | "dl" | "fieldset" | "figcaption" | "figure" | "footer" | "header" | "hgroup" | "listing"
            | "main" | "menu" | "nav" | "ol" | "pre" | "search" | "section" | "select" | "summary" | "ul" => {
                if self.has_in_scope(k, DEFAULT_SCOPE) {
                    self.implied_end(None)?;
                    self.pop_until(|o| o.named(k), false)?;
                }
            }
            "form" => {
                let Some(form) = self.form.take() else { return Ok(()) };
                if self.in_scope(|o| o.id == form, DEFAULT_SCOPE) {
                    self.implied_end(None)?;
                    if self.current().id != form {
                        return Err(Doubt("</form> with elements open inside"));
                    }
                    self.pop(false)?;
                }
            }
            "p" => {
                if self.has_in_scope("p", BUTTON_SCOPE) {
                    self.close_p()?;
                } else {
                    self.void(Name::Known("p"))?;
                }
            }
            "li" | "dd" | "dt" => {
                let scope = if k == "li" { LIST_SCOPE } else { DEFAULT_SCOPE };
                if self.has_in_scope(k, scope) {
                    self.implied_end(Some(k))?;
                    self.pop_until(|o| o.named(k), false)?;
                }
            }
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                if self.in_scope(|o| o.in_set(HEADINGS), DEFAULT_SCOPE) {
                    self.implied_end(None)?;
                    self.pop_until(|o| o.in_set(HEADINGS), false)?;
                }
            }
            "a" | "b" | "big" | "code" | "em" | "font" | "i" | "nobr" | "s" | "small" | "strike" | "strong" | "tt"
            | "u" => return self.formatting_end(name, k),
            "br" | "template" => return Err(Doubt("</br> or </template>")),
            "applet" | "marquee" | "object" => {}
            _ => return self.any_other_end(name),
        }
        Ok(())
    }

    /// The adoption agency's simple case (the element is the current
    /// node); any other is a [`Doubt`].
    fn formatting_end(&mut self, name: Name<'a>, k: &str) -> Step {
        let after_marker = self.formatting.len() - self.formatting.iter().rev().take_while(|e| e.is_some()).count();
        let entry =
            (after_marker..self.formatting.len()).rev().find(|&i| self.formatting[i].is_some_and(|(n, _)| n == k));
        let Some(index) = entry else {
            return self.any_other_end(name);
        };
        let id = self.formatting[index].map_or(0, |(_, id)| id);
        if self.current().id != id {
            return Err(Doubt("formatting elements misnested (adoption agency)"));
        }
        self.pop(true)?;
        self.formatting.remove(index);
        Ok(())
    }

    /// The `any other end tag` rule of `in body`.
    fn any_other_end(&mut self, name: Name<'a>) -> Step {
        for index in (0..self.stack.len()).rev() {
            let open = self.stack[index];
            if open.name.is(name) {
                self.implied_end(open.name.known())?;
                return self.pop_until(|o| o.id == open.id, false);
            }
            if open.special {
                return Ok(());
            }
        }
        Ok(())
    }

    /// Reads the raw text (or RCDATA) element `tag` whole, and returns
    /// where it ends. The first `<title>`'s text is the title; the rest of
    /// raw text is not visible (`script`, `style`, `noscript`, `iframe`,
    /// and `noframes` in the head).
    fn raw_text(&mut self, tag: &StartTag<'a>) -> Step<usize> {
        let k = tag.name.known().ok_or(Doubt("raw text of an unknown element"))?;
        if self.stack.len() + 2 > self.max_depth {
            return Err(Doubt("near max_html_depth"));
        }
        let (content_end, end) = raw_text_end(self.b, tag.end, k).ok_or(Doubt("unclosed raw text"))?;
        let content = &self.html[tag.end..content_end];
        if k == "script" && memchr::memmem::find(content.as_bytes(), b"<!--").is_some() {
            let lower = content.to_ascii_lowercase();
            if lower.contains("<script") {
                return Err(Doubt("script comment (escaped script data)"));
            }
        }
        if k == "title" && self.title.is_none() {
            let mut title = Lines::default();
            decode(content, false, &mut |piece, _| title.push(piece));
            self.title = Some(title);
        }
        Ok(end)
    }

    /// Notes what a `<link>` or `<meta>` says about the page, as
    /// [`PageLinks`] does for the tree builder's elements.
    fn note(&mut self, k: &str, tag: &StartTag<'a>) -> Step {
        if k == "link" || k == "meta" {
            let attrs = attributes(self.html, tag.attributes, tag.end - 1)?;
            self.links.note(k, &attrs);
        }
        Ok(())
    }
}

/// Whether doctype `decl` (`<!...>`, `<?...>`) puts the page in quirks
/// mode, for the doctypes of generated pages; `None` for the others (and
/// for `<?...>`, which is a comment, not a doctype). Following the HTML
/// standard's lists (html5ever's `tree_builder/data.rs`): no public or
/// system identifier, or the strict and XHTML public identifiers, are not
/// quirks; HTML 4.01 Transitional and Frameset are quirks without a system
/// identifier and limited quirks (not quirks) with one.
fn quirks(decl: &[u8]) -> Option<bool> {
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
struct StartTag<'a> {
    name: Name<'a>,
    attributes: usize,
    end: usize,
}

/// The end of the content of raw text element `name` (opened before
/// `from`) and the end of its end tag: the first `</name` followed by
/// whitespace, `/` or `>` (the tokenizer's appropriate end tag).
fn raw_text_end(b: &[u8], from: usize, name: &str) -> Option<(usize, usize)> {
    let mut i = from;
    while let Some(at) = memchr::memchr(b'<', &b[i..]).map(|k| i + k) {
        let tag = &b[at + 1..];
        let named = tag.len() > name.len()
            && tag[0] == b'/'
            && tag[1..=name.len()].eq_ignore_ascii_case(name.as_bytes())
            && matches!(tag.get(name.len() + 1).copied(), Some(b'>' | b'/' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0c'));
        if named {
            let (_, end) = tag_extent(b, at + 2, usize::MAX)?;
            return Some((at, end.end));
        }
        i = at + 1;
    }
    None
}

/// The attributes of a `<link>` or `<meta>` from `from` (after its name) to
/// `end` (its `>`), as the tokenizer reads them: names lowercase, values
/// with character references decoded.
fn attributes(html: &str, from: usize, end: usize) -> Step<Vec<Attribute>> {
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
fn decode(s: &str, in_attribute: bool, put: &mut dyn FnMut(&str, bool)) {
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
fn char_ref(b: &[u8], at: usize, in_attribute: bool) -> Option<([Option<char>; 2], usize)> {
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

/// The name of a tag as written: a known one lowercase.
fn name_of(raw: &[u8]) -> Name<'_> {
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
fn is_special(name: &str) -> bool {
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
fn is_formatting(name: &str) -> bool {
    matches!(
        name,
        "a" | "b" | "big" | "code" | "em" | "font" | "i" | "nobr" | "s" | "small" | "strike" | "strong" | "tt" | "u"
    )
}

/// Elements that decide the table insertion modes.
fn is_table_element(name: &str) -> bool {
    table_mode(name).is_some()
}

/// The insertion mode inside table element `name`.
fn table_mode(name: &str) -> Option<Mode> {
    match name {
        "td" | "th" => Some(Mode::Cell),
        "tr" => Some(Mode::Row),
        "tbody" | "thead" | "tfoot" => Some(Mode::TableBody),
        "caption" => Some(Mode::Caption),
        "table" => Some(Mode::Table),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ingest::html::extract_with_tree;

    /// The scanner's result for `page`, asserted equal to the tree's.
    fn claimed(page: &str) -> Extracted {
        let cfg = IngestConfig::default();
        let fast = extract(page, &cfg).unwrap_or_else(|d| panic!("scanner left {page:?} to the tree: {}", d.0));
        assert_eq!(fast, extract_with_tree(page, &cfg).unwrap(), "{page:?}");
        fast
    }

    /// Why the scanner leaves `page` to the tree (with `cfg`).
    fn doubt_with(page: &str, cfg: &IngestConfig) -> &'static str {
        extract(page, cfg).map(|ex| panic!("scanner claimed {page:?}: {ex:?}")).unwrap_err().0
    }

    fn doubt(page: &str) -> &'static str {
        doubt_with(page, &IngestConfig::default())
    }

    #[test]
    fn documentation_pages_are_read_as_the_tree_reads_them() {
        let page = "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\">\r\n<HTML><HEAD>\
                    <TITLE>Class  Foo &amp; Bar</TITLE><link rel=\"Canonical\" href=\" /c?a=1&amp;b=2 \">\
                    <META HTTP-EQUIV=\"refresh\" content=\"0\"><SCRIPT type=\"text/javascript\"><!--\n\
                    if (a < b) x();\n//--></SCRIPT></HEAD><BODY BGCOLOR=white>\n<!-- nav -->\
                    <TABLE BORDER=1><CAPTION><span>Packages</span>&nbsp;</CAPTION>\n<TR><TH>Name<TD><B>Foo</B>\
                    <TR><TD>x<TD><CODE>int&nbsp;f()</CODE></TABLE>\n<P>Text <A HREF=\"#x\">link</A> and\
                    <UL><LI>one<LI>two</UL><DL><DT>term<DD>def<DT>t2</DL><PRE>\r\n a  b\r\n&lt;c&gt;</PRE>\
                    <H2>Head</H2><HR><div>a<br/>b</div><p>c</p></p><custom-el>d</custom-el></BODY></HTML>";
        let ex = claimed(page);
        assert_eq!(ex.title, "Class Foo & Bar");
        assert_eq!(ex.links.canonical.as_deref(), Some("/c?a=1&b=2"));
        assert!(ex.links.refresh);
        assert!(ex
            .text
            .starts_with("Packages\nName\nFoo\nx\nint f()\nText link and\none\ntwo\nterm\ndef\nt2\na b\n<c>"));
    }

    #[test]
    fn character_references_as_the_tokenizer_decodes_them() {
        let ex = claimed("<p>&notit; &copy &#128; &#x41 &AMP; &# &#x; &amp &zz; &#0; &#x110000; &#55296;</p>");
        assert_eq!(ex.text, "¬it; © € A & &# &#x; & &zz; \u{fffd} \u{fffd} \u{fffd}");
        // In an attribute, a legacy name followed by `=` or a letter stays text.
        let ex = claimed("<link rel=canonical href='/a?x=1&copy=2&copyb&copy;'>");
        assert_eq!(ex.links.canonical.as_deref(), Some("/a?x=1&copy=2&copyb©"));
        // A CR of the page is a newline in `<pre>`, a referenced one is not.
        assert_eq!(claimed("<pre>a\rb&#13;c</pre>").text, "a\nb c");
    }

    #[test]
    fn implied_and_stray_tags_follow_the_tree_builder() {
        claimed("<p>a<div>b</div>c</p>d");
        claimed("a</p>b<p>c<h1>d</h1>e");
        claimed("<h1>a<h2>b</h1>c");
        claimed("<li>a<li>b<div><li>c</div>");
        claimed("<dl><dt>a<dd>b<div><dt>c</div></dl>");
        claimed("<span>a<div>b</span>c</div>d");
        claimed("<form>a<form>b</form>c</form>d");
        claimed("<div><form><p>a</form>b");
        claimed("<b>a<table><tr><td>x</b>y</td></tr></table>z</b>");
        claimed("<td>a</td><tr>b<caption>c</caption>");
        claimed("<button>a<p>b<button>c</button>d");
        // Whether `<table>` closes `<p>` depends on the quirks mode.
        for doctype in [
            "",
            " <!-- c --><!DOCTYPE html>",
            "<!doctype HTML PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\">",
            "<!DOCTYPE HTML PUBLIC \"-//W3C//DTD HTML 4.01 Transitional//EN\" \"http://www.w3.org/TR/html4/loose.dtd\">",
            "<!DOCTYPE html PUBLIC \"-//W3C//DTD XHTML 1.0 Strict//EN\" \"http://www.w3.org/TR/xhtml1/DTD/xhtml1-strict.dtd\">",
        ] {
            claimed(&format!("{doctype}<p>a<table><tr><td>b</td></tr></table>c</p>d"));
        }
        assert_eq!(claimed("<p>a<title>T</title>b<title>U</title>").title, "T");
        assert_eq!(claimed("<noscript>x</noscript>y<iframe>z</iframe>").text, "y");
        claimed("<head></head>\n<title>t</title> <body>x</body>\n</html>\n<!-- end -->y");
    }

    #[test]
    fn constructs_the_tree_builder_moves_are_left_to_it() {
        assert_eq!(doubt("<table>text<tr><td>a</td></tr></table>"), "text in a table");
        assert_eq!(doubt("<table><div>x</div></table>"), "start tag in a table outside cells");
        assert_eq!(doubt("<table><tr><td>a</td></p></tr></table>"), "</p>, </br> or </template> in a table");
        assert_eq!(doubt("<b>x<i>y</b>z</i>"), "formatting elements misnested (adoption agency)");
        assert_eq!(doubt("<p><b>x</p>y"), "formatting element closed by another tag");
        assert_eq!(doubt("<div><b>x</div>y"), "formatting element closed by another tag");
        assert_eq!(doubt("<a href=1>1<a href=2>2"), "<a> inside <a>");
        assert_eq!(
            doubt("<!DOCTYPE html SYSTEM 'x'><p>x<table><tr><td>y</table>"),
            "<table> in <p> (quirks mode decides)"
        );
        assert_eq!(doubt("<p>x</br>y"), "</br> or </template>");
        assert_eq!(doubt("</br>y"), "</br>");
        assert_eq!(doubt("<form><div></form>x"), "</form> with elements open inside");
    }

    #[test]
    fn elements_with_rules_of_their_own_are_left_to_the_tree() {
        for page in [
            "<p><plaintext>a</p>",
            "<p><svg><title>t</title></svg>",
            "<math><mi>x</mi></math>",
            "<p>a<template><p>b</p></template>",
            "<body><frameset></frameset>",
            "<select><option>a</select>",
            "<textarea>\na</textarea>",
            "<xmp><b></xmp>",
            "<listing>\nx</listing>",
            "<nobr>a<nobr>b",
            "<object>a</object>",
        ] {
            assert_eq!(doubt(page), "element with rules of its own", "{page}");
        }
        assert_eq!(doubt("<template>x</template>"), "<template> or <frameset>");
        assert_eq!(doubt("<frameset><frame></frameset>"), "<template> or <frameset>");
    }

    #[test]
    fn tokenizer_corners_are_left_to_the_tree() {
        assert_eq!(doubt("<title>abc"), "unclosed raw text");
        assert_eq!(doubt("<p><script>x"), "unclosed raw text");
        assert_eq!(doubt("<script><!--<script>x</script>--></script>y"), "script comment (escaped script data)");
        assert_eq!(doubt("a\0b"), "NUL byte");
        assert_eq!(doubt("<!-->x"), "abrupt comment");
        assert_eq!(doubt("<!--a--!><p>b-->"), "comment ending `--!>`");
        assert_eq!(doubt("<!--a"), "unclosed comment");
        assert_eq!(doubt("<!DOCTYPE html"), "unclosed markup declaration");
        assert_eq!(doubt("a<p class='x"), "unclosed tag");
        assert_eq!(doubt("a</"), "`</` at the end");
        assert_eq!(doubt("&amp;<p>x"), "character reference before the body");
        assert_eq!(doubt("<link rel=canonical href='/a\r\nb'>"), "CR in an attribute value");
        // A script comment without a `<script` inside is read.
        assert_eq!(claimed("<script><!-- if (a</b) x(); --></script>y").text, "y");
    }

    #[test]
    fn limits_are_left_to_the_tree() {
        let deep = "<div>".repeat(600) + "x";
        assert_eq!(doubt(&deep), "near max_html_depth");
        let tight = IngestConfig { max_html_depth: 6, max_html_attributes: 1, ..IngestConfig::default() };
        assert_eq!(doubt_with("<div><div><div><div><div>x", &tight), "near max_html_depth");
        assert_eq!(doubt_with("<p a b>x", &tight), "more than max_html_attributes");
        assert_eq!(doubt_with("<p>x</p a b>", &tight), "more than max_html_attributes");
        // Within the limits, the same page is read.
        assert!(extract("<p a>x</p>", &tight).is_ok());
    }
}
