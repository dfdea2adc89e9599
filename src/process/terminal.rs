//! Text for a terminal: crawled text with its control characters escaped.
//!
//! A crawl can carry any byte sequence in a title, a URL or a page, and a
//! terminal obeys the control sequences it is sent: colours, cursor moves,
//! window titles, even keyboard remapping on some terminals. Everything the
//! program writes for people (`explain`, `query --format table`, error
//! messages, `query --format csv` when its output is a terminal) goes
//! through [`escape_controls`]; machine formats written to a file or a pipe
//! (CSV, JSON, Parquet) keep the data as it is.

use std::borrow::Cow;
use std::fmt::Write;

/// `text` with every control character but line feeds written as an
/// escape: C0 controls and DEL as `\x1b`, C1 controls (U+0080–U+009F, which
/// some terminals read as 8-bit escape sequences) as `\u{9b}`. Tabs are
/// escaped too (they would misalign tables); line feeds are the layout of
/// the text and stay.
pub fn escape_controls(text: &str) -> Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return Cow::Borrowed(text);
    }
    let mut escaped = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        match c {
            c if !needs_escape(c) => escaped.push(c),
            c if (c as u32) < 0x80 => {
                let _ = write!(escaped, "\\x{:02x}", c as u32);
            }
            c => {
                let _ = write!(escaped, "\\u{{{:x}}}", c as u32);
            }
        }
    }
    Cow::Owned(escaped)
}

fn needs_escape(c: char) -> bool {
    c != '\n' && c.is_control()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_sequences_are_escaped_and_text_kept() {
        assert!(matches!(escape_controls("plain text\nline two"), Cow::Borrowed(_)));
        assert_eq!(escape_controls("Rivers \x1b[31mRED\x1b[0m"), "Rivers \\x1b[31mRED\\x1b[0m");
        assert_eq!(escape_controls("a\rb\tc\x07\x7f"), "a\\x0db\\x09c\\x07\\x7f");
        assert_eq!(escape_controls("csi \u{9b}2J ok"), "csi \\u{9b}2J ok");
        // Printable text outside ASCII is not touched.
        assert_eq!(escape_controls("Ærø – 東京 \u{a0}"), "Ærø – 東京 \u{a0}");
    }
}
