//! Text blocks and site boilerplate.
//!
//! `documents.text` holds one line per block-level element of the page. On
//! a templated site the navigation, headers and footers are the same lines
//! on every page of the host, and on short pages they dominate every
//! comparison: two release-notes pages of different versions look alike
//! because of 200 characters of menu, not because of their article. A line
//! is *boilerplate* of its host when it is found on many pages of that host
//! (decided by `jobs/boilerplate.sql` over the `blocks` table, see
//! [`crate::stages::blocks`]); the text that signatures and verification
//! see leaves those lines out ([`Boilerplate::strip`]).
//!
//! A line is identified by [`block_key`]: the hash of the line with its
//! whitespace collapsed and its case folded, so that indentation or a
//! capitalised menu entry do not make a template line look new.

use foldhash::{HashMap, HashSet};

/// The host a document's URL names, lowercased; None when the URL has none
/// (a corpus line without URL): such documents have no site template.
pub fn host_of(url: &str) -> Option<String> {
    let parsed = url::Url::parse(url).ok()?;
    let host = parsed.host_str()?;
    (!host.is_empty()).then(|| host.to_ascii_lowercase())
}

/// `line` as verification reads it: words separated by single spaces, no
/// leading or trailing space, lowercase (Unicode full case mapping).
pub fn fold_line(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    fold_line_into(line, &mut out);
    out
}

/// Appends [`fold_line`] of `line` to `out`. Most words are ASCII, whose
/// lowercase is a byte map done in place; the others are mapped character
/// by character (`char::to_lowercase`, so without `str::to_lowercase`'s
/// final-sigma rule, as verification texts always were).
fn fold_line_into(line: &str, out: &mut String) {
    if is_collapsed_ascii(line.as_bytes()) {
        let start = out.len();
        out.push_str(line);
        out[start..].make_ascii_lowercase();
        return;
    }
    let start = out.len();
    for word in line.split_whitespace() {
        if out.len() > start {
            out.push(' ');
        }
        if word.is_ascii() {
            let from = out.len();
            out.push_str(word);
            out[from..].make_ascii_lowercase();
        } else {
            out.extend(word.chars().flat_map(char::to_lowercase));
        }
    }
}

/// Whether `line` is ASCII with its words already separated by single
/// spaces and no space at either end, so that folding it only lowercases
/// it. Ingest writes the lines of HTML pages this way, and one pass over
/// the bytes costs less than splitting them into words (the fold was 8% of
/// the tokens stage).
fn is_collapsed_ascii(line: &[u8]) -> bool {
    let mut after_space = true;
    for &c in line {
        let whitespace = (c as char).is_whitespace();
        if !c.is_ascii() || (whitespace && (c != b' ' || after_space)) {
            return false;
        }
        after_space = c == b' ';
    }
    !after_space || line.is_empty()
}

/// The key of a folded line: xxh3 of its bytes; None for a blank line.
fn folded_key(folded: &str) -> Option<u64> {
    (!folded.is_empty()).then(|| xxhash_rust::xxh3::xxh3_64(folded.as_bytes()))
}

/// The key of a line: xxh3 of its folded form; None for a blank line.
pub fn block_key(line: &str) -> Option<u64> {
    folded_key(&fold_line(line))
}

/// The distinct block keys of a text, sorted (one `blocks` row each).
pub fn distinct_block_keys(text: &str) -> Vec<u64> {
    let mut folded = String::new();
    let mut keys: Vec<u64> = text
        .lines()
        .filter_map(|line| {
            folded.clear();
            fold_line_into(line, &mut folded);
            folded_key(&folded)
        })
        .collect();
    keys.sort_unstable();
    keys.dedup();
    keys
}

/// A document's text with its host's boilerplate lines left out.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Stripped {
    /// The kept lines, as in `documents.text` (one per line): the input of
    /// tokenization, hence of every signature.
    pub text: String,
    /// The kept lines folded ([`fold_line`]) and joined by single spaces:
    /// the visible text verification compares.
    pub visible: String,
    /// Lines left out as boilerplate.
    pub removed_lines: u32,
    /// Characters of the lines left out (as in `documents.text`).
    pub removed_chars: u32,
    /// Every non-blank line was boilerplate, so nothing was left out: a
    /// page made of template only (an error or login page) is compared
    /// whole rather than as an empty text.
    pub all_template: bool,
}

/// The boilerplate lines of every host: the `boilerplate` table in memory
/// (one entry per template line of a host, a small table).
#[derive(Debug, Clone, Default)]
pub struct Boilerplate {
    hosts: HashMap<String, HashSet<u64>>,
}

impl Boilerplate {
    /// Adds one row of the `boilerplate` table.
    pub fn insert(&mut self, host: &str, key: u64) {
        self.hosts.entry(host.to_string()).or_default().insert(key);
    }

    /// Number of (host, line) entries.
    pub fn len(&self) -> usize {
        self.hosts.values().map(HashSet::len).sum()
    }

    /// True when no host has boilerplate.
    pub fn is_empty(&self) -> bool {
        self.hosts.is_empty()
    }

    /// True when `line` is a template line of `host`.
    pub fn is_template(&self, host: Option<&str>, line: &str) -> bool {
        match (host.and_then(|h| self.hosts.get(h)), block_key(line)) {
            (Some(keys), Some(key)) => keys.contains(&key),
            _ => false,
        }
    }

    /// The text of a document at `url` without its host's template lines.
    /// Each line is folded once, for its key and for the visible text.
    pub fn strip(&self, url: &str, text: &str) -> Stripped {
        let host = host_of(url);
        let keys = host.as_deref().and_then(|h| self.hosts.get(h));
        let mut out = Stripped::default();
        let mut kept_any = false;
        let mut folded = String::new();
        for line in text.lines() {
            folded.clear();
            fold_line_into(line, &mut folded);
            let Some(key) = folded_key(&folded) else { continue };
            if keys.is_some_and(|k| k.contains(&key)) {
                out.removed_lines += 1;
                out.removed_chars = out.removed_chars.saturating_add(line.chars().count() as u32);
            } else {
                kept_any = true;
                push_line(&mut out, line, &folded);
            }
        }
        if !kept_any && out.removed_lines > 0 {
            out = Stripped { all_template: true, ..Stripped::default() };
            for line in text.lines() {
                folded.clear();
                fold_line_into(line, &mut folded);
                if !folded.is_empty() {
                    push_line(&mut out, line, &folded);
                }
            }
        }
        out
    }
}

/// Appends a kept line and its folded form.
fn push_line(out: &mut Stripped, line: &str, folded: &str) {
    if !out.text.is_empty() {
        out.text.push('\n');
        out.visible.push(' ');
    }
    out.text.push_str(line);
    out.visible.push_str(folded);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hosts_are_lowercase_and_optional() {
        assert_eq!(host_of("https://Docs.Example.ORG:8080/a?b#c").as_deref(), Some("docs.example.org"));
        assert_eq!(host_of("doc-17"), None);
        assert_eq!(host_of(""), None);
        assert_eq!(host_of("file:///tmp/x.html"), None);
    }

    #[test]
    fn lines_fold_whitespace_and_case() {
        assert_eq!(fold_line("  Home \t|  ÜBER uns  "), "home | über uns");
        // Every Unicode space separates words (U+000B and U+3000 too), and
        // non-ASCII words map char by char: a final capital sigma gives σ.
        assert_eq!(fold_line("ΟΔΟΣ\u{0B}Straße\u{3000}ÀB"), "οδοσ straße àb");
        assert_eq!(block_key("Home | Über uns"), block_key("  home   |  über UNS"));
        assert_eq!(block_key(" \t "), None);
        assert_eq!(distinct_block_keys("a\nb\n\nA\n").len(), 2);
    }

    proptest::proptest! {
        /// Folding is splitting on Unicode whitespace, lowercasing each
        /// word char by char and joining with single spaces, whichever
        /// path a line takes.
        #[test]
        fn folding_is_split_lowercase_join(line in "[ \t\r\x0b\x0c\u{1c}\u{85}\u{a0}\u{3000}aZ.\u{e9}\u{3a3}]{0,16}") {
            let oracle: Vec<String> =
                line.split_whitespace().map(|w| w.chars().flat_map(char::to_lowercase).collect()).collect();
            proptest::prop_assert_eq!(fold_line(&line), oracle.join(" "));
        }
    }

    #[test]
    fn collapsed_ascii_lines_take_the_short_path() {
        for line in ["Home | Docs", "a", ""] {
            assert!(is_collapsed_ascii(line.as_bytes()), "{line:?}");
        }
        for line in [" a", "a ", "a  b", "a\tb", "a\x0bb", "über"] {
            assert!(!is_collapsed_ascii(line.as_bytes()), "{line:?}");
        }
    }

    fn site() -> Boilerplate {
        let mut b = Boilerplate::default();
        for line in ["Home | Download | Docs", "© 2024 Example project"] {
            b.insert("example.org", block_key(line).unwrap());
        }
        b
    }

    #[test]
    fn template_lines_of_the_host_are_left_out() {
        let text = "Home | Download | Docs\nRelease 1.2.3\n  Fixes a   SECURITY issue.\n© 2024 Example project";
        let s = site().strip("https://example.org/news/1.2.3.html", text);
        assert_eq!(s.text, "Release 1.2.3\n  Fixes a   SECURITY issue.");
        assert_eq!(s.visible, "release 1.2.3 fixes a security issue.");
        assert_eq!((s.removed_lines, s.removed_chars), (2, 22 + 22));
        assert!(!s.all_template);
    }

    #[test]
    fn other_hosts_and_hostless_documents_keep_every_line() {
        let text = "Home | Download | Docs\nBody";
        for url in ["https://mirror.example.net/x", "corpus-line-7"] {
            let s = site().strip(url, text);
            assert_eq!((s.text.as_str(), s.removed_lines), (text, 0), "{url}");
            assert_eq!(s.visible, "home | download | docs body");
        }
    }

    #[test]
    fn a_page_of_template_only_is_kept_whole() {
        let s = site().strip("https://example.org/404", "Home | Download | Docs\n\n© 2024 Example project\n");
        assert!(s.all_template);
        assert_eq!(s.text, "Home | Download | Docs\n© 2024 Example project");
        assert_eq!(s.removed_lines, 0);
    }
}
