//! `ggp fmt`: the canonical prefix layout.

use std::io::Write;
use std::path::PathBuf;

use gdl_syntax::{Diagnostic, SourceFile};

use crate::report::{Format, Reporter};
use crate::{INPUT_ERRORS, SUCCESS, USAGE_OR_IO, input};

#[derive(clap::Args)]
pub struct Args {
    /// Game descriptions (prefix KIF); `-` reads standard input.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// Rewrite the files in place instead of printing them.
    #[arg(long, conflicts_with = "check")]
    write: bool,
    /// Print nothing; exit with 1 if a file is not formatted.
    #[arg(long)]
    check: bool,
    /// How to print diagnostics (on standard error).
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
}

pub fn run(args: Args) -> u8 {
    let reporter = Reporter {
        format: args.format,
        to_stderr: true,
    };
    let mut status = SUCCESS;
    for path in &args.files {
        let input = match input::read(path) {
            Ok(input) => input,
            Err(message) => {
                reporter.message(&format!("ggp fmt: {message}"));
                status = status.max(USAGE_OR_IO);
                continue;
            }
        };
        let mut errors: Vec<Diagnostic> = input.decode_diagnostics.clone();
        let formatted = if errors.is_empty() {
            match gdl_syntax::format_text(&input.text) {
                Ok(text) => Some(text),
                Err(diagnostics) => {
                    errors.extend(diagnostics);
                    None
                }
            }
        } else {
            None
        };
        let Some(formatted) = formatted else {
            let file = SourceFile::new(&input.name, input.text);
            reporter.emit(&file, &errors);
            reporter.message(&format!(
                "ggp fmt: {} not formatted: it has {} error{}",
                file.name,
                errors.len(),
                if errors.len() == 1 { "" } else { "s" }
            ));
            status = status.max(INPUT_ERRORS);
            continue;
        };
        if args.check {
            if formatted != input.text {
                println!("would reformat {}", input.name);
                status = status.max(INPUT_ERRORS);
            }
        } else if args.write && input.name != "<stdin>" {
            if formatted != input.text
                && let Err(message) = input::write_atomically(path, &formatted)
            {
                reporter.message(&format!("ggp fmt: {message}"));
                status = status.max(USAGE_OR_IO);
            }
        } else {
            let _ = std::io::stdout().lock().write_all(formatted.as_bytes());
        }
    }
    status
}
