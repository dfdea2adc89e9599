//! Writing a command's result and messages when the reader may have gone:
//! `pipeline query … | head -2`, `pipeline run … 2>&1 | head -3`.
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe fails with "Broken
//! pipe" instead of ending the process as it ends `cat` or `grep`; and
//! `println!` and `eprintln!` panic on it. A reader that closed the pipe
//! has all it wanted: here such a write is done, not an error, and the
//! command ends as it would have (exit 0 for a query; a run goes on to its
//! end, its tables and exit code unchanged, its later lines unread).
//! Other write errors (a full disk under `> file`) stay errors.

use std::io::{ErrorKind, Write};

/// Writes `text` (UTF-8, or a query's bytes) to stdout; a closed stdout is
/// not an error.
pub fn print(text: impl AsRef<[u8]>) -> std::io::Result<()> {
    let mut stdout = std::io::stdout().lock();
    unless_closed(stdout.write_all(text.as_ref()).and_then(|()| stdout.flush()))
}

/// Writes `text` and a line feed to stderr, ignoring every error: stderr is
/// where write errors would be reported, so there is nowhere left to say it.
pub fn eprint_line(text: &str) {
    let _ = std::io::stderr().lock().write_all(format!("{text}\n").as_bytes());
}

/// `result`, with a write to a closed pipe counted as done.
fn unless_closed(result: std::io::Result<()>) -> std::io::Result<()> {
    match result {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        other => other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_closed_pipe_counts_as_done() {
        assert!(unless_closed(Err(ErrorKind::BrokenPipe.into())).is_ok());
        assert!(unless_closed(Err(ErrorKind::StorageFull.into())).is_err());
        assert!(unless_closed(Ok(())).is_ok());
    }
}
