//! Gold labels: human judgments of which documents are near-duplicates,
//! read from a JSON Lines file (`pipeline run --gold FILE`) so the evaluate
//! stage can score every method against them (`jobs/evaluate_gold.sql`).
//!
//! Two forms, mixable line by line:
//! - a labeled pair: `id_a` and `id_b` (or `url_a` and `url_b`) with an
//!   integer `label` (also as a string such as `"3"`) or a boolean `dup`;
//! - a cluster membership: `id` (or `url`) and `cluster` (string or number);
//!   every two members of a cluster are a near-duplicate pair.
//!
//! Ids match the corpus `id` / WARC-Record-ID of a document
//! (`documents.record_id`), numbers written as JSON writes them, so `42` and
//! `"42"` are the same id. This module only parses and checks the file;
//! thresholds on labels and matching keys to documents are SQL. A line that
//! cannot be read is an error naming its line number: silently dropping
//! labels would skew every figure computed from them.

use anyhow::{bail, Context, Result};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

use crate::ingest::corpus::id_string;

/// What a gold key names a document by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum KeyKind {
    /// The corpus `id` or WARC-Record-ID (`documents.record_id`).
    Id,
    /// The document's URL (`documents.url`).
    Url,
}

impl KeyKind {
    /// The name stored in the gold tables' `key_kind` column.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyKind::Id => "id",
            KeyKind::Url => "url",
        }
    }
}

/// One labeled pair as the file states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoldPair {
    /// How `a` and `b` name their documents.
    pub key_kind: KeyKind,
    pub a: String,
    pub b: String,
    /// Graded label (e.g. 0..3), when the line has one.
    pub label: Option<i64>,
    /// Yes/no label, when the line has `dup` and no `label`.
    pub dup: Option<bool>,
}

/// One document's cluster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GoldMember {
    /// How `key` names its document.
    pub key_kind: KeyKind,
    pub key: String,
    pub cluster: String,
}

/// Everything a gold file says, in file order (members deduplicated).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct GoldLabels {
    pub pairs: Vec<GoldPair>,
    pub members: Vec<GoldMember>,
}

/// Reads and checks a gold file.
pub fn read_gold(path: &Path) -> Result<GoldLabels> {
    let text = std::fs::read_to_string(path).with_context(|| format!("cannot read gold file {}", path.display()))?;
    parse_gold(&text).with_context(|| format!("gold file {}", path.display()))
}

/// Parses gold JSON Lines; blank lines are ignored, anything else that is
/// not a pair or a membership is an error with its line number. A key put
/// into two different clusters is an error too.
pub fn parse_gold(text: &str) -> Result<GoldLabels> {
    let mut labels = GoldLabels::default();
    let mut cluster_of: BTreeMap<(KeyKind, String), (String, usize)> = BTreeMap::new();
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let value: Value = serde_json::from_str(line).with_context(|| format!("line {number}: not JSON"))?;
        let Value::Object(map) = value else { bail!("line {number}: not a JSON object") };
        if map.contains_key("cluster") {
            let member = parse_member(&map).with_context(|| format!("line {number}"))?;
            let key = (member.key_kind, member.key.clone());
            match cluster_of.get(&key) {
                Some((cluster, _)) if *cluster == member.cluster => {}
                Some((cluster, first)) => bail!(
                    "line {number}: {} `{}` is in cluster `{}` here but in `{cluster}` on line {first}",
                    member.key_kind.as_str(),
                    member.key,
                    member.cluster
                ),
                None => {
                    cluster_of.insert(key, (member.cluster.clone(), number));
                    labels.members.push(member);
                }
            }
        } else {
            labels.pairs.push(parse_pair(&map).with_context(|| format!("line {number}"))?);
        }
    }
    Ok(labels)
}

/// The two keys of a pair line: ids when both are there, else URLs.
fn pair_keys(map: &Map<String, Value>) -> Option<(KeyKind, String, String)> {
    let id = |name: &str| map.get(name).and_then(id_string);
    let url = |name: &str| map.get(name).and_then(Value::as_str).filter(|s| !s.is_empty()).map(str::to_string);
    match ((id("id_a"), id("id_b")), (url("url_a"), url("url_b"))) {
        ((Some(a), Some(b)), _) => Some((KeyKind::Id, a, b)),
        (_, (Some(a), Some(b))) => Some((KeyKind::Url, a, b)),
        _ => None,
    }
}

fn parse_pair(map: &Map<String, Value>) -> Result<GoldPair> {
    let Some((key_kind, a, b)) = pair_keys(map) else {
        bail!("a pair needs `id_a` and `id_b` (or `url_a` and `url_b`), a cluster line needs `cluster`");
    };
    if a == b {
        bail!("a pair of {} `{a}` with itself", key_kind.as_str());
    }
    let label = match map.get("label") {
        None | Some(Value::Null) => None,
        Some(Value::Number(n)) if n.as_i64().is_some() => n.as_i64(),
        Some(Value::String(s)) if s.trim().parse::<i64>().is_ok() => s.trim().parse::<i64>().ok(),
        Some(other) => bail!("`label` must be an integer, not {other}"),
    };
    let dup = match map.get("dup") {
        None | Some(Value::Null) => None,
        Some(Value::Bool(d)) => Some(*d),
        Some(other) => bail!("`dup` must be true or false, not {other}"),
    };
    if label.is_none() && dup.is_none() {
        bail!("a pair needs a `label` (integer) or `dup` (true or false)");
    }
    // The graded label is the finer judgment: when both are given it decides.
    Ok(GoldPair { key_kind, a, b, dup: if label.is_some() { None } else { dup }, label })
}

fn parse_member(map: &Map<String, Value>) -> Result<GoldMember> {
    let (key_kind, key) = match (map.get("id").and_then(id_string), map.get("url").and_then(Value::as_str)) {
        (Some(id), _) => (KeyKind::Id, id),
        (None, Some(url)) if !url.is_empty() => (KeyKind::Url, url.to_string()),
        _ => bail!("a cluster line needs `id` (or `url`)"),
    };
    let Some(cluster) = map.get("cluster").and_then(id_string) else {
        bail!("`cluster` must be a non-empty string or a number");
    };
    Ok(GoldMember { key_kind, key, cluster })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(key_kind: KeyKind, a: &str, b: &str, label: Option<i64>, dup: Option<bool>) -> GoldPair {
        GoldPair { key_kind, a: a.into(), b: b.into(), label, dup }
    }

    #[test]
    fn pairs_by_id_or_url_with_label_or_dup() {
        let text = r#"{"id_a": "x", "id_b": "y", "label": 3}
{"id_a": 1, "id_b": 2, "label": "0", "extra": "ignored"}

{"url_a": "http://a/", "url_b": "http://b/", "dup": true}
{"id_a": "p", "id_b": "q", "url_a": "http://p/", "url_b": "http://q/", "dup": false, "label": 2}
"#;
        let g = parse_gold(text).unwrap();
        assert_eq!(
            g.pairs,
            vec![
                pair(KeyKind::Id, "x", "y", Some(3), None),
                pair(KeyKind::Id, "1", "2", Some(0), None),
                pair(KeyKind::Url, "http://a/", "http://b/", None, Some(true)),
                pair(KeyKind::Id, "p", "q", Some(2), None),
            ]
        );
        assert!(g.members.is_empty());
    }

    #[test]
    fn clusters_and_mixed_files() {
        let text = r#"{"id": "a", "cluster": 1}
{"id": "b", "cluster": "1"}
{"url": "http://c/", "cluster": "k"}
{"id": "a", "cluster": 1}
{"id_a": "a", "id_b": "z", "dup": false}
"#;
        let g = parse_gold(text).unwrap();
        let member =
            |kind, key: &str, cluster: &str| GoldMember { key_kind: kind, key: key.into(), cluster: cluster.into() };
        assert_eq!(
            g.members,
            vec![member(KeyKind::Id, "a", "1"), member(KeyKind::Id, "b", "1"), member(KeyKind::Url, "http://c/", "k")]
        );
        assert_eq!(g.pairs, vec![pair(KeyKind::Id, "a", "z", None, Some(false))]);
    }

    #[test]
    fn bad_lines_are_errors_with_their_line_number() {
        for (text, line, says) in [
            ("{\"id_a\":\"a\",\"id_b\":\"b\",\"label\":1}\nnot json", 2, "not JSON"),
            ("[1,2]", 1, "not a JSON object"),
            ("{\"id_a\":\"a\",\"label\":1}", 1, "needs `id_a` and `id_b`"),
            ("{\"id_a\":\"a\",\"id_b\":\"b\"}", 1, "needs a `label`"),
            ("{\"id_a\":\"a\",\"id_b\":\"b\",\"label\":2.5}", 1, "must be an integer"),
            ("{\"id_a\":\"a\",\"id_b\":\"b\",\"dup\":\"yes\"}", 1, "true or false"),
            ("{\"id_a\":\"a\",\"id_b\":\"a\",\"label\":3}", 1, "with itself"),
            ("{\"cluster\":1}", 1, "needs `id`"),
            ("{\"id\":\"a\",\"cluster\":null}", 1, "`cluster` must be"),
            ("{\"id\":\"a\",\"cluster\":1}\n{\"id\":\"a\",\"cluster\":2}", 2, "on line 1"),
        ] {
            let err = format!("{:#}", parse_gold(text).unwrap_err());
            assert!(err.starts_with(&format!("line {line}")) && err.contains(says), "{text}: {err}");
        }
    }
}
