//! Log output on stderr: lines for people, or one JSON object per line for
//! log collectors (`pipeline --log-format json`).
//!
//! Text lines carry ANSI colours only when stderr is a terminal (and
//! `NO_COLOR` is unset): cron mail, journald and CI logs get plain text.
//! JSON lines have the keys `time` (RFC 3339, UTC), `level`, `stage` (the
//! stage running, or null), `message`, `target` and `fields` (everything
//! else the event carried, numbers as numbers; `rows`, the rows written
//! per table, as an object of numbers: [`Counts`]).

use serde_json::{Map, Value};
use std::io::{IsTerminal, Write};
use std::sync::Mutex;
use tracing::field::{Field, Visit};
use tracing_subscriber::layer::{Context, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{EnvFilter, Layer};

/// How log events are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum LogFormat {
    /// One line per event for people; coloured on a terminal only.
    Text,
    /// One JSON object per line (time, level, stage, message, fields).
    Json,
}

/// Installs the process's logger: events passing `filter`, written to
/// stderr in `format`.
pub fn init(format: LogFormat, filter: EnvFilter) {
    match format {
        LogFormat::Text => {
            let ansi = std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none();
            tracing_subscriber::fmt()
                .fmt_fields(escaped_fields())
                .with_env_filter(filter)
                .with_ansi(ansi)
                .with_writer(std::io::stderr)
                // Its own report of a failed write is an `eprintln!`,
                // which panics when stderr is a closed pipe (`2>&1 | head`).
                .log_internal_errors(false)
                .init();
        }
        LogFormat::Json => tracing_subscriber::registry().with(JsonLines.with_filter(filter)).init(),
    }
}

/// Event fields as `name=value` (the message bare), every control
/// character escaped ([`crate::process::terminal::escape_controls`]): fields carry
/// crawled URLs, titles and error messages, and the colours of a text line
/// are the formatter's, never the data's. (JSON lines escape them anyway.)
fn escaped_fields() -> impl for<'w> tracing_subscriber::fmt::FormatFields<'w> + 'static {
    use tracing_subscriber::field::MakeExt;
    tracing_subscriber::fmt::format::debug_fn(|w, field, value| {
        let value = format!("{value:?}");
        let value = crate::process::terminal::escape_controls(&value);
        match field.name() {
            "message" => write!(w, "{value}"),
            name => write!(w, "{name}={value}"),
        }
    })
    .delimited(" ")
}

/// The stage running in this process. The runner runs one stage at a time,
/// and a stage's work runs on rayon threads that no tracing span follows, so
/// the JSON lines take the stage from here rather than from a span.
static STAGE: Mutex<Option<&'static str>> = Mutex::new(None);

/// Marks `stage` as running until the guard is dropped.
pub fn enter_stage(stage: &'static str) -> StageGuard {
    *STAGE.lock().unwrap_or_else(|e| e.into_inner()) = Some(stage);
    StageGuard
}

/// The stage running in this process, if any.
pub fn running_stage() -> Option<&'static str> {
    *STAGE.lock().unwrap_or_else(|e| e.into_inner())
}

/// Ends the mark of [`enter_stage`] when dropped, however the stage ends.
pub struct StageGuard;

impl Drop for StageGuard {
    fn drop(&mut self) {
        *STAGE.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// The fields whose values are [`Counts`]: JSON lines hold them as
/// objects, not as the text the event recorded.
const COUNTS_FIELDS: [&str; 1] = ["rows"];

/// Numbers by name (rows per table, a stage's counters) as a log field
/// (`rows = %Counts(&map)`, named in [`COUNTS_FIELDS`]): the compact JSON
/// object, which a text line shows as it is and a JSON line holds as an
/// object of numbers, for a log collector to sum without parsing prose.
pub struct Counts<'a>(pub &'a std::collections::BTreeMap<String, u64>);

impl std::fmt::Display for Counts<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", serde_json::json!(self.0))
    }
}

/// The layer writing one JSON object per event.
struct JsonLines;

impl<S: tracing::Subscriber> Layer<S> for JsonLines {
    fn on_event(&self, event: &tracing::Event<'_>, _ctx: Context<'_, S>) {
        let mut fields = FieldMap(Map::new());
        event.record(&mut fields);
        let mut fields = fields.0;
        let message = fields.remove("message").unwrap_or(Value::String(String::new()));
        let running = *STAGE.lock().unwrap_or_else(|e| e.into_inner());
        let stage = fields.remove("stage").unwrap_or_else(|| running.map_or(Value::Null, |s| Value::String(s.into())));
        let meta = event.metadata();
        let line = serde_json::json!({
            "time": rfc3339_now(),
            "level": meta.level().as_str().to_ascii_lowercase(),
            "stage": stage,
            "message": message,
            "target": meta.target(),
            "fields": fields,
        });
        // One write per line, so lines from several threads never interleave.
        let _ = std::io::stderr().lock().write_all(format!("{line}\n").as_bytes());
    }
}

/// The fields of one event as JSON values.
struct FieldMap(Map<String, Value>);

impl Visit for FieldMap {
    fn record_f64(&mut self, field: &Field, value: f64) {
        self.0.insert(field.name().into(), serde_json::Number::from_f64(value).map_or(Value::Null, Value::Number));
    }
    fn record_i64(&mut self, field: &Field, value: i64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_u64(&mut self, field: &Field, value: u64) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_bool(&mut self, field: &Field, value: bool) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_str(&mut self, field: &Field, value: &str) {
        self.0.insert(field.name().into(), value.into());
    }
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        self.0.insert(field.name().into(), debug_value(field.name(), format!("{value:?}")));
    }
}

/// A field's value as it recorded its text: an object for the fields of
/// [`COUNTS_FIELDS`], the text itself otherwise.
fn debug_value(name: &str, text: String) -> Value {
    let counts = COUNTS_FIELDS.contains(&name).then(|| serde_json::from_str::<Map<String, Value>>(&text));
    match counts {
        Some(Ok(object)) => Value::Object(object),
        _ => text.into(),
    }
}

/// Now as `YYYY-MM-DDTHH:MM:SS.mmmZ`.
fn rfc3339_now() -> String {
    let now = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
    let millis = now.subsec_millis();
    format!("{}.{millis:03}Z", utc_text(now.as_secs()).replace(' ', "T"))
}

/// Seconds since the Unix epoch, now (0 on a clock before 1970).
pub fn now_unix() -> u64 {
    std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map(|d| d.as_secs()).unwrap_or(0)
}

/// Seconds since the Unix epoch as `YYYY-MM-DD HH:MM:SS` (UTC), by the
/// civil-from-days algorithm of Howard Hinnant (proleptic Gregorian).
pub fn utc_text(unix_seconds: u64) -> String {
    let days = (unix_seconds / 86_400) as i64;
    let secs = unix_seconds % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era = (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    format!("{year:04}-{month:02}-{day:02} {:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_are_objects_of_numbers_in_json_lines_and_compact_json_in_text() {
        let rows: std::collections::BTreeMap<String, u64> =
            [("documents".to_string(), 295), ("rejects".into(), 2)].into();
        assert_eq!(Counts(&rows).to_string(), r#"{"documents":295,"rejects":2}"#);
        assert_eq!(debug_value("rows", Counts(&rows).to_string())["documents"], 295);
        // Another field keeps its text, even when it looks like an object.
        assert_eq!(debug_value("message", Counts(&rows).to_string()), r#"{"documents":295,"rejects":2}"#);
    }

    #[test]
    fn utc_text_matches_known_dates() {
        assert_eq!(utc_text(0), "1970-01-01 00:00:00");
        // `date -u -d @951782400`: the leap day of a year divisible by 400.
        assert_eq!(utc_text(951_782_400), "2000-02-29 00:00:00");
        // `date -u -d @1795578634`
        assert_eq!(utc_text(1_795_578_634), "2026-11-25 03:50:34");
        assert_eq!(utc_text(4_107_542_399), "2100-02-28 23:59:59");
    }
}
