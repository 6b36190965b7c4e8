//! Printing diagnostics: rustc-style text, or JSON Lines.

use std::io::{IsTerminal, Write};

use clap::ValueEnum;
use gdl_syntax::{Diagnostic, SourceFile};
use serde_json::json;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Source snippets with underlines, as rustc prints them.
    Human,
    /// One JSON object per diagnostic, one per line.
    Json,
}

pub use gdl_syntax::diagnostic::to_json;

/// Diagnostics of one code printed for each file by default; the rest are counted.
pub const DEFAULT_MAX_PER_CODE: usize = 100;

/// Where diagnostics go and in which form.
pub struct Reporter {
    pub format: Format,
    /// Diagnostics to standard error (for commands whose standard output is a program text).
    pub to_stderr: bool,
    /// At most this many diagnostics of each code are printed for a file; the others are
    /// counted in one line per code (`0`: print them all). 100 KB of random bytes has tens of
    /// thousands of diagnostics, nearly all the same; nobody reads past the first few.
    pub max_per_code: usize,
}

impl Reporter {
    /// A reporter that prints every diagnostic.
    pub fn new(format: Format, to_stderr: bool) -> Reporter {
        Reporter {
            format,
            to_stderr,
            max_per_code: DEFAULT_MAX_PER_CODE,
        }
    }

    /// Prints `diagnostics` (in order), at most [`Reporter::max_per_code`] of each code, then
    /// a line per code whose diagnostics were not all printed: in JSON,
    /// `{"omitted": {"file", "code", "count"}}`. Returns an error only when the output (standard
    /// output) was closed or failed.
    pub fn emit(&self, file: &SourceFile, diagnostics: &[Diagnostic]) -> std::io::Result<()> {
        let mut text = String::new();
        let mut printed: std::collections::BTreeMap<&str, usize> = Default::default();
        let mut omitted: std::collections::BTreeMap<&str, usize> = Default::default();
        for d in diagnostics {
            let count = printed.entry(d.code).or_default();
            if self.max_per_code > 0 && *count >= self.max_per_code {
                *omitted.entry(d.code).or_default() += 1;
                continue;
            }
            *count += 1;
            match self.format {
                Format::Json => {
                    text.push_str(&to_json(file, d).to_string());
                    text.push('\n');
                }
                Format::Human => {
                    text.push_str(&file.render(d, self.color()));
                    text.push_str("\n\n");
                }
            }
        }
        for (code, count) in omitted {
            match self.format {
                Format::Json => {
                    text.push_str(
                        &json!({"omitted": {"file": file.name, "code": code, "count": count}})
                            .to_string(),
                    );
                    text.push('\n');
                }
                Format::Human => text.push_str(&format!(
                    "note: {}: {count} more {code} diagnostic{} not shown (at most {} of each code are; `--max-per-code 0` shows all)\n\n",
                    file.name,
                    if count == 1 { "" } else { "s" },
                    self.max_per_code
                )),
            }
        }
        self.write(&text)
    }

    /// A message that is not a diagnostic of the file (an I/O error, a summary): on standard
    /// error, as text or, with `--format json`, as `{"severity": "error", "message": …}`, so
    /// that the stream stays JSON Lines.
    pub fn message(&self, message: &str) {
        self.plain("error", message);
    }

    /// A note (the engine that runs, say): as [`Reporter::message`], with severity `info`.
    pub fn note(&self, message: &str) {
        self.plain("info", message);
    }

    fn plain(&self, severity: &str, message: &str) {
        match self.format {
            Format::Human => crate::out::eprint_line(message),
            Format::Json => crate::out::eprint_line(
                &json!({"severity": severity, "message": message}).to_string(),
            ),
        }
    }

    /// Whether to colour text output (a terminal, and no `NO_COLOR`).
    pub fn color(&self) -> bool {
        std::env::var_os("NO_COLOR").is_none()
            && if self.to_stderr {
                std::io::stderr().is_terminal()
            } else {
                std::io::stdout().is_terminal()
            }
    }

    fn write(&self, text: &str) -> std::io::Result<()> {
        if self.to_stderr {
            // Nowhere to report a failure to write standard error.
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
            Ok(())
        } else {
            crate::out::print(text)
        }
    }
}
