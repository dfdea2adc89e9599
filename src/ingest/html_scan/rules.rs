//! The tree builder's rules for each start and end tag, as the scanner
//! follows them (html5ever's `tree_builder/rules.rs`): before the body,
//! in the body, and in the table modes. Where a rule would move content or
//! reopen elements, the tag is a [`Doubt`].

use super::*;

impl<'a> Scanner<'a> {
    pub(super) fn start_before_body(&mut self, tag: &StartTag<'a>) -> Step<usize> {
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

    pub(super) fn start_in_modes(&mut self, tag: &StartTag<'a>) -> Step<usize> {
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
    pub(super) fn start_in_table(&mut self, tag: &StartTag<'a>) -> Step<usize> {
        match tag.name.known() {
            Some("script" | "style") => self.raw_text(tag),
            _ => Err(Doubt("start tag in a table outside cells")),
        }
    }

    pub(super) fn start_in_body(&mut self, tag: &StartTag<'a>) -> Step<usize> {
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

    pub(super) fn close_cell(&mut self) -> Step {
        self.implied_end(None)?;
        self.pop_until(|o| o.in_set(&["td", "th"]), true)?;
        self.clear_to_marker();
        Ok(())
    }

    pub(super) fn close_caption(&mut self) -> Step {
        self.implied_end(None)?;
        self.pop_until(|o| o.named("caption"), true)?;
        self.clear_to_marker();
        Ok(())
    }

    pub(super) fn close_row(&mut self) -> Step {
        self.clear_to(&["tr", "html"])?;
        self.pop(false).map(drop)
    }

    /// Reads the end tag whose name starts at `from`.
    pub(super) fn end_tag(&mut self, from: usize) -> Step<usize> {
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

    pub(super) fn end_before_body(&mut self, name: Name<'a>) -> Step {
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

    pub(super) fn end_in_modes(&mut self, name: Name<'a>) -> Step {
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
    pub(super) fn end_in_table(&mut self, name: Name<'a>) -> Step {
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

    pub(super) fn end_in_body(&mut self, name: Name<'a>) -> Step {
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
    pub(super) fn formatting_end(&mut self, name: Name<'a>, k: &str) -> Step {
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
    pub(super) fn any_other_end(&mut self, name: Name<'a>) -> Step {
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
}
