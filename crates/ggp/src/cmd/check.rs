//! `ggp check`: every diagnostic of the syntax layer and of the static checks.

use std::path::PathBuf;

use gdl_syntax::{Diagnostic, Severity, SourceFile};

use crate::report::{DEFAULT_MAX_PER_CODE, Format, Reporter};
use crate::{INPUT_ERRORS, SUCCESS, USAGE_OR_IO, input, out, progress};

#[derive(clap::Args)]
pub struct Args {
    /// Game descriptions (prefix KIF); `-` reads standard input.
    #[arg(required = true)]
    files: Vec<PathBuf>,
    /// How to print diagnostics (on standard output).
    #[arg(long, value_enum, default_value = "human")]
    format: Format,
    /// Codes not to report, comma-separated, in any letter case (`--ignore W010,W009`).
    #[arg(long, value_delimiter = ',', value_parser = diagnostic_code)]
    ignore: Vec<String>,
    /// Print at most this many diagnostics of each code per file, and count the rest (0: all).
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_PER_CODE)]
    max_per_code: usize,
}

/// A clap value parser for a diagnostic code `ggp check` can report (`w010` is `W010`).
pub fn diagnostic_code(text: &str) -> Result<String, String> {
    let code = text.trim().to_ascii_uppercase();
    let known = gdl_syntax::codes::SYNTAX_CODES
        .iter()
        .map(|c| c.code)
        .chain(gdl_check::codes::CHECK_CODES.iter().map(|c| c.code))
        .any(|c| c == code);
    if known {
        Ok(code)
    } else {
        Err(format!(
            "`{text}` is not a code `ggp check` reports (S001…, E001…, W001…; see docs/codes/README.md)"
        ))
    }
}

pub fn run(args: Args) -> u8 {
    let reporter = Reporter {
        format: args.format,
        to_stderr: false,
        max_per_code: args.max_per_code,
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
        let spinner = progress::Spinner::for_input("checking", &input);
        let mut diagnostics: Vec<Diagnostic> = input.decode_diagnostics;
        diagnostics.extend(gdl_check::check(&input.text).diagnostics);
        drop(spinner);
        diagnostics.retain(|d| !args.ignore.iter().any(|code| code == d.code));
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
        if let Err(e) = reporter.emit(&file, &diagnostics) {
            // `ggp check … | head` has what it wanted.
            if out::is_closed(&e) {
                return status;
            }
            reporter.message(&format!("ggp check: cannot write the diagnostics: {e}"));
            return USAGE_OR_IO;
        }
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
