//! Printing diagnostics: rustc-style text, or JSON Lines.

use std::io::{IsTerminal, Write};

use clap::ValueEnum;
use gdl_syntax::diagnostic::Applicability;
use gdl_syntax::{Diagnostic, SourceFile};
use serde_json::json;

#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Source snippets with underlines, as rustc prints them.
    Human,
    /// One JSON object per diagnostic, one per line.
    Json,
}

/// The JSON object of one diagnostic. Field names are a public interface: `code`, `severity`,
/// `message`, `file`, `start`, `end` (byte offsets, end exclusive), `line`, `column` (1-based,
/// columns in characters), and `end_line`, `end_column`, `label`, `help`, `related`, `fix`.
pub fn to_json(file: &SourceFile, d: &Diagnostic) -> serde_json::Value {
    let (line, column) = file.line_col(d.span.start);
    let (end_line, end_column) = file.line_col(d.span.end);
    let related: Vec<_> = d
        .related
        .iter()
        .map(|r| {
            let (line, column) = file.line_col(r.span.start);
            json!({"message": r.message, "start": r.span.start, "end": r.span.end,
                   "line": line, "column": column})
        })
        .collect();
    let fix = d.fix.as_ref().map(|f| {
        json!({
            "message": f.message,
            "applicability": match f.applicability {
                Applicability::Safe => "safe",
                Applicability::Unsafe => "unsafe",
            },
            "edits": f.edits.iter().map(|e| json!({
                "start": e.span.start, "end": e.span.end, "replacement": e.replacement
            })).collect::<Vec<_>>(),
        })
    });
    json!({
        "code": d.code,
        "severity": d.severity.as_str(),
        "message": d.message,
        "file": file.name,
        "start": d.span.start,
        "end": d.span.end,
        "line": line,
        "column": column,
        "end_line": end_line,
        "end_column": end_column,
        "label": d.label,
        "help": d.help,
        "related": related,
        "fix": fix,
    })
}

/// Where diagnostics go and in which form.
pub struct Reporter {
    pub format: Format,
    /// Diagnostics to standard error (for commands whose standard output is a program text).
    pub to_stderr: bool,
}

impl Reporter {
    pub fn emit(&self, file: &SourceFile, diagnostics: &[Diagnostic]) {
        let mut text = String::new();
        for d in diagnostics {
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
        self.write(&text);
    }

    /// A plain message (an I/O error, a summary), on standard error in every format.
    pub fn message(&self, message: &str) {
        eprintln!("{message}");
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

    fn write(&self, text: &str) {
        // A closed pipe (`ggp check … | head`) is not an error worth a panic.
        let _ = if self.to_stderr {
            std::io::stderr().lock().write_all(text.as_bytes())
        } else {
            std::io::stdout().lock().write_all(text.as_bytes())
        };
    }
}
