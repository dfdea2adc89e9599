//! The canonical URL of a page: the one `[dedup] keep = "canonical-url"`
//! prefers to keep among copies of the same page.
//!
//! A page that declares `<link rel="canonical" href>` names it; the
//! declared URL is resolved against the page's own URL. Otherwise the
//! canonical URL is the page's URL without its fragment and without the
//! query parameters that only track where a visitor came from (newsletter
//! `utm_*` tags, ad click ids): `/a?utm_source=news#top` and `/a` are the
//! same page, and `/a` is the copy to keep.

/// Query parameters that never change the page served: campaign tags and
/// click ids of the common analytics and ad networks. A name ending in `*`
/// is a prefix.
pub const TRACKING_PARAMETERS: &[&str] =
    &["utm_*", "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "mc_cid", "mc_eid", "igshid", "_ga"];

/// True when query parameter `name` is a tracking parameter.
fn is_tracking(name: &str) -> bool {
    TRACKING_PARAMETERS.iter().any(|t| match t.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *t,
    })
}

/// The canonical URL of the page at `url` that declares `declared` (the
/// `href` of its `<link rel="canonical">`, if any). An unparseable URL is
/// only cut at its fragment.
pub fn canonical_url(url: &str, declared: Option<&str>) -> String {
    let Ok(mut page) = url::Url::parse(url) else {
        return url.split('#').next().unwrap_or(url).to_string();
    };
    if let Some(mut canonical) = declared.and_then(|d| page.join(d).ok()) {
        canonical.set_fragment(None);
        return canonical.into();
    }
    page.set_fragment(None);
    if page.query().is_some() {
        // The query is rebuilt from the pairs kept, as written: decoding
        // and encoding them again could change a URL that has no tracking
        // parameter at all.
        let kept: Vec<&str> = page
            .query()
            .unwrap_or_default()
            .split('&')
            .filter(|pair| {
                let name = pair.split('=').next().unwrap_or_default();
                !pair.is_empty() && !is_tracking(name)
            })
            .collect();
        let query = kept.join("&");
        page.set_query((!query.is_empty()).then_some(query.as_str()));
    }
    page.into()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tracking_parameters_and_the_fragment_are_dropped() {
        let c = |u: &str| canonical_url(u, None);
        assert_eq!(c("https://example.org/a?utm_source=newsletter&utm_medium=mail"), "https://example.org/a");
        assert_eq!(c("https://example.org/a?id=3&fbclid=XY&b=2#top"), "https://example.org/a?id=3&b=2");
        assert_eq!(c("https://example.org/a?gclid=1"), "https://example.org/a");
        // Nothing to drop: the URL as it was (no re-encoding).
        assert_eq!(c("https://example.org/a?q=caf%C3%A9&x"), "https://example.org/a?q=caf%C3%A9&x");
        // `utm` alone is not a campaign tag.
        assert_eq!(c("http://h/p?utm=1"), "http://h/p?utm=1");
        assert_eq!(c("not a url#frag"), "not a url");
    }

    #[test]
    fn a_declared_canonical_url_wins_and_is_resolved() {
        assert_eq!(
            canonical_url("https://example.org/news/a?utm_source=x", Some("/news/a")),
            "https://example.org/news/a"
        );
        assert_eq!(canonical_url("https://example.org/x/y", Some("z.html#s")), "https://example.org/x/z.html");
        assert_eq!(canonical_url("https://example.org/x", Some("https://other.org/p")), "https://other.org/p");
    }
}
