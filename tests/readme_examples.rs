//! The README's examples that run on the bundled sample, run as written, so
//! that a reader who copies them gets no error (a stale URL, a column that
//! was renamed).
//!
//! A runnable example is a ```` ```sh ```` block of `README.md` directly
//! below the line `<!-- runs on the sample -->`. The blocks run in README
//! order, all in one scratch folder holding a link `sample-data` to the
//! bundled sample: there `run` without `--input` reads the sample and
//! writes `out`, as in a fresh clone, and the later blocks query, explain
//! and export that `out`. In each block, lines ending in a backslash are
//! joined with the next, blank and comment lines are left out, and every
//! command runs with `sh -c` and must exit 0.
//!
//! One substitution: the program invocation, `cargo run --release --bin
//! pipeline --` or a bare `pipeline` at the start of a command, becomes the
//! `pipeline` binary of this build (`CARGO_BIN_EXE_pipeline`, the debug
//! build the tests run). A release build inside the test would cost CI the
//! minutes of a second full build of the crate, for the same program.
//!
//! The test also counts the marked blocks: a marker removed (or an example
//! dropped) fails it until [`MARKED_BLOCKS`] says so.

use std::path::Path;
use std::process::Command;

mod common;
use common::temp_dir;

/// The line that marks the next ```` ```sh ```` block as runnable on the sample.
const MARKER: &str = "<!-- runs on the sample -->";

/// The marked blocks of the README: the run and the questions of "Two
/// commands", the status, query and report of "Usage", the exports, and the
/// saved query of "Querying".
const MARKED_BLOCKS: usize = 5;

/// What the README spells for the program, and what replaces it.
const CARGO_RUN: &str = "cargo run --release --bin pipeline --";

/// A marked block: its first line's number in README.md and its text.
struct Block {
    line: usize,
    text: String,
}

/// The ```` ```sh ```` blocks directly below a marker, in README order.
fn marked_blocks(readme: &str) -> Vec<Block> {
    let lines: Vec<&str> = readme.lines().collect();
    let mut blocks = Vec::new();
    let mut i = 0;
    while i < lines.len() {
        if lines[i].trim() == MARKER {
            assert_eq!(
                lines.get(i + 1).map(|l| l.trim_end()),
                Some("```sh"),
                "README.md line {}: {MARKER} must stand directly above a ```sh block",
                i + 1
            );
            let start = i + 2;
            let len = lines[start..]
                .iter()
                .position(|l| l.trim_end() == "```")
                .unwrap_or_else(|| panic!("README.md line {}: the block is not closed", i + 2));
            blocks.push(Block { line: start + 1, text: lines[start..start + len].join("\n") });
            i = start + len;
        }
        i += 1;
    }
    blocks
}

/// The commands of a block: a line ending in a backslash joined with the
/// next (as the shell does, backslash and line end removed), blank lines
/// and comment lines left out.
fn commands(block: &str) -> Vec<String> {
    let mut commands = Vec::new();
    let mut current = String::new();
    for line in block.lines() {
        if current.is_empty() && (line.trim().is_empty() || line.trim_start().starts_with('#')) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => current.push_str(head),
            None => {
                current.push_str(line);
                commands.push(std::mem::take(&mut current));
            }
        }
    }
    assert!(current.is_empty(), "the block ends in a backslash:\n{block}");
    commands
}

/// `command` with the program invocation replaced by `binary` (quoted for
/// the shell).
fn with_binary(command: &str, binary: &str) -> String {
    let binary = format!("'{}'", binary.replace('\'', r"'\''"));
    let command = command.replace(CARGO_RUN, &binary);
    let trimmed = command.trim_start();
    match trimmed.strip_prefix("pipeline ") {
        Some(rest) => format!("{binary} {rest}"),
        None => command,
    }
}

#[test]
fn readme_examples_run_on_the_sample() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let readme = std::fs::read_to_string(root.join("README.md")).unwrap();
    let blocks = marked_blocks(&readme);
    assert!(
        blocks.len() >= MARKED_BLOCKS,
        "README.md has {} blocks marked {MARKER}, expected at least {MARKED_BLOCKS}",
        blocks.len()
    );

    let dir = temp_dir("readme-examples");
    std::os::unix::fs::symlink(root.join("sample-data"), dir.join("sample-data")).unwrap();
    let binary = env!("CARGO_BIN_EXE_pipeline");
    let mut ran = 0;
    for block in &blocks {
        let commands = commands(&block.text);
        assert!(!commands.is_empty(), "README.md line {}: a marked block without a command", block.line);
        for command in commands {
            let command = with_binary(&command, binary);
            // Every marked example runs the program, not a build of it.
            assert!(
                command.contains(binary) && !command.contains("cargo "),
                "README.md line {}: a marked example must call `pipeline` or `{CARGO_RUN}`: {command}",
                block.line
            );
            let o = Command::new("sh").arg("-c").arg(&command).current_dir(&dir).output().unwrap();
            assert!(
                o.status.success(),
                "README.md, the block at line {}:\n{}\n\nthe command\n  {command}\nexited with {}\n--- stdout\n{}\n--- stderr\n{}",
                block.line,
                block.text,
                o.status,
                String::from_utf8_lossy(&o.stdout),
                String::from_utf8_lossy(&o.stderr)
            );
            ran += 1;
        }
    }
    eprintln!("{ran} commands of {} marked README blocks ran", blocks.len());
    // What the examples write in a clone (`out`, the exports, a saved
    // query) is ignored by git: a reader who ran them has a clean `git
    // status`.
    for entry in std::fs::read_dir(&dir).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name == "sample-data" {
            continue;
        }
        let ignored = Command::new("git")
            .args(["check-ignore", "--quiet", "--no-index", &name])
            .current_dir(root)
            .status()
            .expect("git, to read .gitignore");
        assert!(ignored.success(), "the README's examples write `{name}` in a clone, which .gitignore does not ignore");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn commands_join_continuations_and_skip_comments() {
    let block = "# a comment\npipeline query --out out \\\n  \"SELECT 1\"\n\npipeline report --out out   # trailing\n";
    assert_eq!(commands(block), ["pipeline query --out out   \"SELECT 1\"", "pipeline report --out out   # trailing"]);
    assert_eq!(with_binary("pipeline report", "/b/p"), "'/b/p' report");
    assert_eq!(with_binary("cargo run --release --bin pipeline -- run", "/b/p"), "'/b/p' run");
    assert_eq!(with_binary("echo pipeline", "/b/p"), "echo pipeline");
}
