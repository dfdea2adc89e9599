//! The canonical URL of a page: the one `[dedup] keep = "canonical-url"`
//! prefers to keep among copies of the same page.
//!
//! A page that declares `<link rel="canonical" href>` names it; the
//! declared URL is resolved against the page's own URL. Otherwise the
//! canonical URL is the page's URL without its fragment, without the query
//! parameters that only track where a visitor came from (newsletter `utm_*`
//! tags, ad click ids) and without the session ids that servers put in URLs
//! for visitors without cookies (`?sid=`, `?PHPSESSID=`, `;jsessionid=`):
//! `/a?utm_source=news#top`, `/a;jsessionid=F00?sid=9` and `/a` are the same
//! page, and `/a` is the copy to keep.

/// Query parameters that never change the page served: campaign tags and
/// click ids of the common analytics and ad networks. A name ending in `*`
/// is a prefix.
pub const TRACKING_PARAMETERS: &[&str] =
    &["utm_*", "fbclid", "gclid", "dclid", "gbraid", "wbraid", "msclkid", "yclid", "mc_cid", "mc_eid", "igshid", "_ga"];

/// Query parameters that carry a visitor's session, as the common server
/// frameworks name them (PHP, Java servlets, ASP, ColdFusion, osCommerce and
/// Zen Cart, and the generic spellings), matched without regard to case: a
/// crawler without cookies gets a new one on every visit, so one page is
/// fetched under as many URLs. Short names that sites also use for content
/// (`s` for a search, `id`, `session` for a conference's session) are not
/// listed: dropping them would merge distinct pages' canonical URLs.
pub const SESSION_PARAMETERS: &[&str] = &[
    "sid",
    "phpsessid",
    "jsessionid",
    "sessionid",
    "session_id",
    "sessid",
    "sess_id",
    "aspsessionid*",
    "cfid",
    "cftoken",
    "oscsid",
    "zenid",
];

/// True when query parameter `name` only tracks the visitor: a tracking
/// parameter, or a session id (any case).
fn is_tracking(name: &str) -> bool {
    let matches = |t: &&str, name: &str| match t.strip_suffix('*') {
        Some(prefix) => name.starts_with(prefix),
        None => name == *t,
    };
    TRACKING_PARAMETERS.iter().any(|t| matches(t, name))
        || SESSION_PARAMETERS.iter().any(|t| matches(t, &name.to_ascii_lowercase()))
}

/// `path` without the `;jsessionid=…` path parameter that Java servlet
/// containers append to a segment (`/a;jsessionid=F00/b` is `/a/b`); other
/// path parameters are kept. `None` when there is none.
fn without_session_path_parameter(path: &str) -> Option<String> {
    let lowered = path.to_ascii_lowercase();
    if !lowered.contains(";jsessionid=") {
        return None;
    }
    let segments: Vec<String> = path
        .split('/')
        .map(|segment| {
            segment
                .split(';')
                .enumerate()
                .filter(|(i, part)| *i == 0 || !part.to_ascii_lowercase().starts_with("jsessionid="))
                .map(|(_, part)| part)
                .collect::<Vec<_>>()
                .join(";")
        })
        .collect();
    Some(segments.join("/"))
}

/// True when `url` is an http or https URL (the scheme in any case): a page
/// a reader can be sent to. Pages at any other (`javascript:`, `about:`, a
/// relative path a malformed record gave) are counted at ingest
/// (`ingest_files.not_http_url`) and never kept over an http(s) copy
/// (`crate::verify::settings::DedupConfig::keep_order`).
pub fn is_http_url(url: &str) -> bool {
    let scheme = url.split_once(':').map_or("", |(scheme, _)| scheme);
    scheme.eq_ignore_ascii_case("http") || scheme.eq_ignore_ascii_case("https")
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
    if let Some(path) = without_session_path_parameter(page.path()) {
        page.set_path(&path);
    }
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
    #[test]
    fn only_http_and_https_urls_are_web_pages() {
        for url in ["http://a/", "HTTPS://a/b", "https:x"] {
            assert!(super::is_http_url(url), "{url}");
        }
        for url in ["javascript:alert(1)", "/just/a/path", "about:blank", "ftp://a/", "", "httpx://a/"] {
            assert!(!super::is_http_url(url), "{url}");
        }
    }

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
    fn session_ids_are_dropped_in_any_case_and_content_keys_kept() {
        let c = |u: &str| canonical_url(u, None);
        assert_eq!(c("https://example.org/a?sid=9f3c"), "https://example.org/a");
        assert_eq!(c("https://example.org/a?PHPSESSID=abc&page=2"), "https://example.org/a?page=2");
        assert_eq!(c("https://example.org/a?p=1&JSESSIONID=x&SessionId=y&session_id=z"), "https://example.org/a?p=1");
        assert_eq!(c("https://shop.example/c?cPath=3&osCsid=77&zenid=5"), "https://shop.example/c?cPath=3");
        assert_eq!(c("https://example.org/a?ASPSESSIONIDQQ=1&CFID=2&CFTOKEN=3&sessid=4"), "https://example.org/a");
        // Content keys that look alike stay: a search, an id, a session of
        // a conference, and names that only contain a session parameter.
        for url in [
            "https://example.org/?s=deduplication",
            "https://example.org/item?id=42",
            "https://example.org/talks?session=3",
            "https://example.org/a?sidebar=left&side=2",
            "https://example.org/a?xsid=1",
        ] {
            assert_eq!(c(url), url);
        }
    }

    #[test]
    fn the_jsessionid_path_parameter_is_dropped_and_other_path_parameters_kept() {
        let c = |u: &str| canonical_url(u, None);
        assert_eq!(c("https://example.org/docs/a.html;jsessionid=0A1B2C?x=1"), "https://example.org/docs/a.html?x=1");
        assert_eq!(c("https://example.org/app;JSESSIONID=F00/page"), "https://example.org/app/page");
        assert_eq!(c("https://example.org/a;v=2;jsessionid=F00;lang=en"), "https://example.org/a;v=2;lang=en");
        assert_eq!(c("https://example.org/a;v=2"), "https://example.org/a;v=2");
        // Both forms at once, with a tracking parameter.
        assert_eq!(c("http://h/p;jsessionid=1?sid=2&utm_source=x&q=3"), "http://h/p?q=3");
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
