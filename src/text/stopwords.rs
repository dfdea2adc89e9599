//! Placeholder until the stop lists land.
pub fn stop_words(_lang: &str) -> &'static [&'static str] { &[] }
