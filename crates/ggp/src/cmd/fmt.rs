//! `ggp fmt`: the canonical prefix layout.

use std::path::PathBuf;

use gdl_syntax::{Diagnostic, SourceFile};

use crate::report::{Format, Reporter};
use crate::{INPUT_ERRORS, SUCCESS, USAGE_OR_IO, input, out};

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
    let reporter = Reporter::new(args.format, true);
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
            let _ = reporter.emit(&file, &errors);
            reporter.message(&format!(
                "ggp fmt: {} not formatted: {}",
                file.name,
                input::why_not_rewritten(&errors)
            ));
            status = status.max(INPUT_ERRORS);
            continue;
        };
        let printed = if args.check {
            if formatted != input.text {
                status = status.max(INPUT_ERRORS);
                out::outln!("would reformat {}", input.name)
            } else {
                Ok(())
            }
        } else if args.write && input.name != "<stdin>" {
            if formatted != input.text
                && let Err(message) = input::write_atomically(path, &formatted)
            {
                reporter.message(&format!("ggp fmt: {message}"));
                status = status.max(USAGE_OR_IO);
            }
            Ok(())
        } else {
            out::print(&formatted)
        };
        match printed {
            Ok(()) => {}
            // `ggp fmt … | head` has what it wanted.
            Err(e) if out::is_closed(&e) => return status,
            Err(e) => {
                reporter.message(&format!("ggp fmt: cannot write standard output: {e}"));
                return USAGE_OR_IO;
            }
        }
    }
    status
}
