//! Progress bars on stderr for long stages, only when stderr is a terminal
//! (logs and CI output stay clean otherwise).

use indicatif::{ProgressBar, ProgressStyle};

/// A byte-counting bar labelled `stage`, or a hidden one when `show` is off.
pub fn bar(show: bool, total_bytes: u64, stage: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total_bytes);
    bar.set_style(
        ProgressStyle::with_template(
            "{prefix} [{elapsed_precise}] {wide_bar} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| ProgressStyle::default_bar()),
    );
    bar.set_prefix(stage.to_string());
    bar
}

/// An item-counting bar (documents, pairs), or a hidden one.
pub fn counter(show: bool, total: u64, stage: &str, unit: &str) -> ProgressBar {
    if !show {
        return ProgressBar::hidden();
    }
    let bar = ProgressBar::new(total);
    let template =
        format!("{{prefix}} [{{elapsed_precise}}] {{wide_bar}} {{pos}}/{{len}} {unit} {{per_sec}} eta {{eta}}");
    bar.set_style(ProgressStyle::with_template(&template).unwrap_or_else(|_| ProgressStyle::default_bar()));
    bar.set_prefix(stage.to_string());
    bar
}
