//! Diagnostics: a stable code, a severity, a message and the byte ranges they concern.
//!
//! Every layer of the toolkit reports problems with this one type, so the command line, the
//! JSON output and the editor server render them alike.

use std::fmt;

use annotate_snippets::{AnnotationKind, Group, Level, Patch, Renderer, Snippet};

use crate::span::{LineIndex, Span};

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    Error,
    Warning,
    Info,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Info => "info",
        }
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A secondary place that helps explain a diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Related {
    pub span: Span,
    pub message: String,
}

/// How safe a fix is to apply without a human looking at it (as in ruff).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applicability {
    /// The fix keeps the meaning of the game and can be applied automatically.
    Safe,
    /// The fix is probably what the author meant but may change the game.
    Unsafe,
}

/// One text replacement.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    pub span: Span,
    pub replacement: String,
}

/// A mechanical fix: edits that, applied together, resolve the diagnostic.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    pub message: String,
    pub applicability: Applicability,
    pub edits: Vec<Edit>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable code, such as `S001`; documented under `docs/codes/`.
    pub code: &'static str,
    pub severity: Severity,
    /// One sentence naming the problem.
    pub message: String,
    /// The primary place.
    pub span: Span,
    /// A short label shown under the primary place.
    pub label: Option<String>,
    pub related: Vec<Related>,
    /// How to fix it, in words.
    pub help: Option<String>,
    pub fix: Option<Fix>,
}

impl Diagnostic {
    pub fn new(
        code: &'static str,
        severity: Severity,
        span: Span,
        message: impl Into<String>,
    ) -> Diagnostic {
        Diagnostic {
            code,
            severity,
            message: message.into(),
            span,
            label: None,
            related: Vec::new(),
            help: None,
            fix: None,
        }
    }

    pub fn error(code: &'static str, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, Severity::Error, span, message)
    }

    pub fn warning(code: &'static str, span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic::new(code, Severity::Warning, span, message)
    }

    pub fn with_label(mut self, label: impl Into<String>) -> Diagnostic {
        self.label = Some(label.into());
        self
    }

    pub fn with_related(mut self, span: Span, message: impl Into<String>) -> Diagnostic {
        self.related.push(Related {
            span,
            message: message.into(),
        });
        self
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn with_fix(mut self, fix: Fix) -> Diagnostic {
        self.fix = Some(fix);
        self
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

/// A named source text with its line index, for rendering diagnostics.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    pub lines: LineIndex,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let lines = LineIndex::new(&text);
        SourceFile {
            name: name.into(),
            text,
            lines,
        }
    }

    /// 1-based line and column (characters) of a byte offset.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        self.lines.line_col(&self.text, offset)
    }

    /// Renders a diagnostic as rustc does: `file:line:col`, the source lines, an underline.
    pub fn render(&self, diagnostic: &Diagnostic, color: bool) -> String {
        let level = match diagnostic.severity {
            Severity::Error => Level::ERROR,
            Severity::Warning => Level::WARNING,
            Severity::Info => Level::INFO,
        };
        let mut spans = vec![diagnostic.span];
        spans.extend(diagnostic.related.iter().map(|r| r.span));
        let window = self.window(&spans);
        let shift = |span: Span| {
            let start = (span.start as usize).clamp(window.start, window.end) - window.start;
            let end = (span.end as usize).clamp(window.start, window.end) - window.start;
            start..end.max(start)
        };
        let source = &self.text[window.clone()];
        let first_line = self.lines.line_of(window.start as u32) + 1;
        let mut primary = AnnotationKind::Primary.span(shift(diagnostic.span));
        if let Some(label) = &diagnostic.label {
            primary = primary.label(label.as_str());
        }
        let mut snippet = Snippet::source(source)
            .line_start(first_line)
            .path(self.name.as_str())
            .fold(true)
            .annotation(primary);
        for related in &diagnostic.related {
            snippet = snippet.annotation(
                AnnotationKind::Context
                    .span(shift(related.span))
                    .label(related.message.as_str()),
            );
        }
        let mut report = vec![
            level
                .primary_title(diagnostic.message.as_str())
                .id(diagnostic.code)
                .element(snippet),
        ];
        if let Some(help) = &diagnostic.help {
            report.push(Group::with_title(
                Level::HELP.secondary_title(help.as_str()),
            ));
        }
        if let Some(fix) = &diagnostic.fix {
            let fix_spans: Vec<Span> = fix.edits.iter().map(|e| e.span).collect();
            let fix_window = self.window(&fix_spans);
            let mut snippet = Snippet::source(&self.text[fix_window.clone()])
                .line_start(self.lines.line_of(fix_window.start as u32) + 1)
                .path(self.name.as_str());
            for edit in &fix.edits {
                let start = edit.span.start as usize - fix_window.start;
                let end = edit.span.end as usize - fix_window.start;
                snippet = snippet.patch(Patch::new(start..end, edit.replacement.as_str()));
            }
            report.push(
                Level::HELP
                    .secondary_title(fix.message.as_str())
                    .element(snippet),
            );
        }
        let renderer = if color {
            Renderer::styled()
        } else {
            Renderer::plain()
        };
        renderer.render(&report)
    }

    /// The byte range of the whole lines that contain all `spans`.
    fn window(&self, spans: &[Span]) -> std::ops::Range<usize> {
        let len = self.text.len() as u32;
        let start = spans.iter().map(|s| s.start.min(len)).min().unwrap_or(0);
        let end = spans.iter().map(|s| s.end.min(len)).max().unwrap_or(0);
        let first = self.lines.line_of(start);
        // A span ending at a line start ends on the previous line, unless it is empty.
        let last_offset = if end > start { end - 1 } else { end };
        let last = self.lines.line_of(last_offset.max(start));
        let from = self.lines.line_start(first) as usize;
        let to = self.lines.line_range(&self.text, last).end;
        from..to.max(from)
    }
}

/// The JSON object of one diagnostic, as `ggp check --format json` prints it. Field names are
/// a public interface: `code`, `severity`, `message`, `file`, `start`, `end` (byte offsets, end
/// exclusive), `line`, `column` (1-based, columns in characters), and `end_line`,
/// `end_column`, `label`, `help`, `related`, `fix`.
pub fn to_json(file: &SourceFile, d: &Diagnostic) -> serde_json::Value {
    use serde_json::json;
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
