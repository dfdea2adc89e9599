//! `pipeline`, the command line of neardup: [`neardup::cli`] has its
//! commands, options and exit codes.

fn main() -> std::process::ExitCode {
    neardup::cli::main()
}
