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

use super::markup::{tag_extent, Extracted, Lines};
use super::page_tree::{is_block, PageLinks};
use crate::ingest::settings::IngestConfig;
mod elements;
mod lexer;
mod rules;

use elements::{is_formatting, is_special, is_table_element, name_of, table_mode, Mode, Name};
use elements::{BUTTON_SCOPE, DEFAULT_SCOPE, HEADINGS, IMPLIED_END, LIST_SCOPE, TABLE_SCOPE};
pub(super) use lexer::Doubt;
use lexer::{attributes, decode, quirks, raw_text_end, space, StartTag, Step};

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
}

impl<'a> Scanner<'a> {
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
