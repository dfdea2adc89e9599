//! HTML text helpers for the report: escaping and number formatting.
//!
//! Everything the report shows from the data (URLs, titles, reject details,
//! method ids) goes through [`escape`], so a crawled page whose title holds
//! markup can neither break the page nor inject anything into it. The same
//! escaping is valid inside the inline SVG, which the HTML parser reads too.

/// Escapes `&`, `<`, `>`, `"` and `'` so that `text` is safe both as element
/// content and inside a quoted attribute value.
pub fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            _ => escaped.push(c),
        }
    }
    escaped
}

/// Shortens `text` to at most `max_chars` characters (not bytes, so a
/// multi-byte character is never cut), marking a cut with `…`.
pub fn truncate_chars(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        None => text.to_string(),
        Some(_) => {
            let kept: String = text.chars().take(max_chars.saturating_sub(1)).collect();
            format!("{kept}…")
        }
    }
}

/// A ratio in [0, 1] with three decimals, or `–` when there is none (a
/// method that found no pair has no precision).
pub fn ratio(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |v| format!("{v:.3}"))
}

/// A count with thousands separators (`1,234,567`), easier to read at a
/// glance than a long run of digits.
pub fn grouped(count: i64) -> String {
    let digits = count.unsigned_abs().to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3 + 1);
    if count < 0 {
        out.push('-');
    }
    for (i, digit) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(digit);
    }
    out
}

/// Seconds with two decimals, for stage timings.
pub fn seconds(value: f64) -> String {
    format!("{value:.2}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_replaces_every_markup_character() {
        assert_eq!(
            escape(r#"<a href="x">Tom & Jerry's</a>"#),
            "&lt;a href=&quot;x&quot;&gt;Tom &amp; Jerry&#39;s&lt;/a&gt;"
        );
        assert_eq!(escape("Привет, мир"), "Привет, мир");
        assert_eq!(escape("&amp;"), "&amp;amp;");
    }

    #[test]
    fn truncate_counts_characters_not_bytes() {
        assert_eq!(truncate_chars("короткий", 8), "короткий");
        assert_eq!(truncate_chars("короткий", 5), "коро…");
        assert_eq!(truncate_chars("", 3), "");
    }

    #[test]
    fn counts_get_thousands_separators() {
        assert_eq!(grouped(0), "0");
        assert_eq!(grouped(999), "999");
        assert_eq!(grouped(1000), "1,000");
        assert_eq!(grouped(1_234_567), "1,234,567");
        assert_eq!(grouped(-45_000), "-45,000");
    }

    #[test]
    fn ratios_and_seconds_are_fixed_width() {
        assert_eq!(ratio(Some(2.0 / 3.0)), "0.667");
        assert_eq!(ratio(Some(1.0)), "1.000");
        assert_eq!(ratio(None), "–");
        assert_eq!(seconds(1.005_1), "1.01");
    }
}
