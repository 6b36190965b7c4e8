//! `ggp check`: every diagnostic of the syntax layer and of the static checks.

use std::path::PathBuf;

use gdl_syntax::{Diagnostic, Severity, SourceFile};

use crate::report::{Format, Reporter};
use crate::{INPUT_ERRORS, SUCCESS, USAGE_OR_IO, input};

#[derive(clap::Args)]
pub struct Args {
    /// Game descriptions (prefix KIF); `-` reads standard input.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// How to print diagnostics (on standard output).
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// Codes not to report, comma-separated (`--ignore W010,W009`).
    #[arg(long, value_delimiter = ',')]
    ignore: Vec<String>,
}

pub fn run(args: Args) -> u8 {
    let reporter = Reporter {
        format: args.format,
        to_stderr: false,
    };
    let mut status = SUCCESS;
    let (mut errors, mut warnings) = (0usize, 0usize);
    for path in &args.files {
        let input = match input::read(path) {
            Ok(input) => input,
            Err(message) => {
                reporter.message(&format!("ggp check: {message}"));
                status = status.max(USAGE_OR_IO);
                continue;
            }
        };
        let mut diagnostics: Vec<Diagnostic> = input.decode_diagnostics;
        diagnostics.extend(gdl_check::check(&input.text).diagnostics);
        diagnostics.retain(|d| {
            !args
                .ignore
                .iter()
                .any(|code| code.eq_ignore_ascii_case(d.code))
        });
        diagnostics.sort_by_key(|d| d.span);
        errors += diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Error)
            .count();
        warnings += diagnostics
            .iter()
            .filter(|d| d.severity == Severity::Warning)
            .count();
        if diagnostics.iter().any(Diagnostic::is_error) {
            status = status.max(INPUT_ERRORS);
        }
        let file = SourceFile::new(input.name, input.text);
        reporter.emit(&file, &diagnostics);
    }
    if args.format == Format::Human && (errors > 0 || warnings > 0) {
        reporter.message(&format!(
            "{errors} error{}, {warnings} warning{}",
            if errors == 1 { "" } else { "s" },
            if warnings == 1 { "" } else { "s" }
        ));
    }
    status
}
