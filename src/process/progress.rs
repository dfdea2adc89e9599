//! A long stage's progress: a bar on stderr when stderr is a terminal, and
//! otherwise a log line now and then (every 10 seconds, or every
//! `NEARDUP_PROGRESS_SECONDS`), so a run whose log goes to a file or a pipe
//! still says how far a long stage got, without a line per item.
//!
//! The stages count each finished unit of work (a file, a document), from
//! any thread: [`Progress`] is shared by rayon's workers.

use indicatif::{HumanBytes, ProgressBar, ProgressStyle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

/// The environment variable that sets the seconds between two progress
/// lines of a stage when stderr is no terminal (a decimal number; 0 logs
/// every step, which the tests use).
pub const INTERVAL_VARIABLE: &str = "NEARDUP_PROGRESS_SECONDS";

/// Seconds between two progress lines by default: often enough to see a
/// run is alive, rarely enough to keep the log short.
const DEFAULT_INTERVAL_SECONDS: f64 = 10.0;

/// One stage's progress: the terminal's bar, or the log's lines.
pub struct Progress {
    /// Drawn on a terminal; hidden (and free) otherwise.
    bar: ProgressBar,
    /// The log lines when there is no bar.
    log: Option<LogLines>,
}

/// What the progress lines of the log count, and when the next is due.
struct LogLines {
    stage: String,
    /// `bytes`, or the items counted (`docs`).
    unit: &'static str,
    total: u64,
    done: AtomicU64,
    started: Instant,
    interval_ms: u64,
    /// Milliseconds after `started` when the next line is due.
    next_ms: AtomicU64,
}

/// A byte-counting progress labelled `stage`: a bar when `show` is on,
/// log lines otherwise.
pub fn bar(show: bool, total_bytes: u64, stage: &str) -> Progress {
    progress(show, total_bytes, stage, "bytes", "{bytes}/{total_bytes} {bytes_per_sec}".into())
}

/// An item-counting progress (documents, pairs): a bar when `show` is on,
/// log lines otherwise.
pub fn counter(show: bool, total: u64, stage: &str, unit: &'static str) -> Progress {
    progress(show, total, stage, unit, format!("{{pos}}/{{len}} {unit} {{per_sec}}"))
}

fn progress(show: bool, total: u64, stage: &str, unit: &'static str, counts: String) -> Progress {
    if !show {
        let interval_ms = (interval_seconds() * 1000.0) as u64;
        let log = LogLines {
            stage: stage.to_string(),
            unit,
            total,
            done: AtomicU64::new(0),
            started: Instant::now(),
            interval_ms,
            next_ms: AtomicU64::new(interval_ms),
        };
        return Progress { bar: ProgressBar::hidden(), log: Some(log) };
    }
    let bar = ProgressBar::new(total);
    let template = format!("{{prefix}} [{{elapsed_precise}}] {{wide_bar}} {counts} eta {{eta}}");
    bar.set_style(ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    bar.set_prefix(stage.to_string());
    Progress { bar, log: None }
}

/// The seconds between two progress lines: [`INTERVAL_VARIABLE`] when it
/// holds a number of seconds that is not negative, else the default.
fn interval_seconds() -> f64 {
    std::env::var(INTERVAL_VARIABLE)
        .ok()
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .unwrap_or(DEFAULT_INTERVAL_SECONDS)
}

impl Progress {
    /// `n` more units done.
    pub fn inc(&self, n: u64) {
        self.bar.inc(n);
        if let Some(log) = &self.log {
            log.reached(log.done.fetch_add(n, Ordering::Relaxed) + n);
        }
    }

    /// `done` units done in all (never moves back).
    pub fn set_position(&self, done: u64) {
        self.bar.set_position(done);
        if let Some(log) = &self.log {
            log.reached(log.done.fetch_max(done, Ordering::Relaxed).max(done));
        }
    }

    /// Removes the bar; the stage's done line follows.
    pub fn finish_and_clear(&self) {
        self.bar.finish_and_clear();
    }
}

impl LogLines {
    /// Logs `done` when a line is due; the one thread that moves the due
    /// time on writes it, so threads never log the same interval twice.
    fn reached(&self, done: u64) {
        let now_ms = self.started.elapsed().as_millis() as u64;
        let due = self.next_ms.load(Ordering::Relaxed);
        if now_ms < due
            || self
                .next_ms
                .compare_exchange(due, now_ms + self.interval_ms, Ordering::Relaxed, Ordering::Relaxed)
                .is_err()
        {
            return;
        }
        let seconds = (now_ms as f64 / 1000.0).max(0.001);
        let per_second = done as f64 / seconds;
        let percent = if self.total == 0 { 100.0 } else { done as f64 * 100.0 / self.total as f64 };
        let (counts, rate) = if self.unit == "bytes" {
            (
                format!("{} of {}", HumanBytes(done), HumanBytes(self.total)),
                format!("{}/s", HumanBytes(per_second as u64)),
            )
        } else {
            (format!("{done} of {} {}", self.total, self.unit), format!("{per_second:.1} {}/s", self.unit))
        };
        tracing::info!(
            stage = self.stage.as_str(),
            done,
            total = self.total,
            unit = self.unit,
            per_second = (per_second * 10.0).round() / 10.0,
            "progress: {counts} ({percent:.0}%), {rate}"
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_log_line_is_due_once_per_interval_whatever_the_steps() {
        let lines = LogLines {
            stage: "verify".into(),
            unit: "docs",
            total: 10,
            done: AtomicU64::new(0),
            started: Instant::now(),
            interval_ms: 60_000,
            next_ms: AtomicU64::new(0),
        };
        lines.reached(1);
        // Logged once: the next line is due a minute later.
        let next = lines.next_ms.load(Ordering::Relaxed);
        assert!(next >= 60_000, "{next}");
        lines.reached(2);
        assert_eq!(lines.next_ms.load(Ordering::Relaxed), next, "not due again within the interval");
    }

    #[test]
    fn a_progress_without_a_terminal_counts_from_every_thread() {
        use rayon::prelude::*;
        let progress = counter(false, 1000, "verify", "docs");
        (0..1000).into_par_iter().for_each(|_| progress.inc(1));
        assert_eq!(progress.log.as_ref().unwrap().done.load(Ordering::Relaxed), 1000);
        progress.set_position(10);
        assert_eq!(progress.log.as_ref().unwrap().done.load(Ordering::Relaxed), 1000, "never moves back");
    }
}
