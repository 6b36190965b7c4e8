//! The answers to requests, each a function of an [`Analysis`]: the protocol's positions are
//! converted at the edge, everything inside works in byte offsets.

use std::collections::HashMap;

use gdl_syntax::ast::Keyword;
use gdl_syntax::diagnostic::Applicability;
use gdl_syntax::infix::{constant_to_infix, variable_to_infix};
use gdl_syntax::{Diagnostic, Severity, Span};
use lsp_types as lsp;
use lsp_types::Url;

use crate::analysis::Analysis;
use crate::docs;
use crate::document::Notation;
pub use crate::errors::{Edit, EditError, RenameError};
use crate::index::{Index, MOD_DECLARATION, MOD_DISTINGUISHED, Symbol, SymbolKind};

/// The legend of semantic tokens: the order of [`TokenClass`].
pub fn token_legend() -> lsp::SemanticTokensLegend {
    lsp::SemanticTokensLegend {
        token_types: vec![
            lsp::SemanticTokenType::KEYWORD,
            lsp::SemanticTokenType::FUNCTION,
            lsp::SemanticTokenType::STRUCT,
            lsp::SemanticTokenType::ENUM_MEMBER,
            lsp::SemanticTokenType::VARIABLE,
            lsp::SemanticTokenType::NUMBER,
            lsp::SemanticTokenType::COMMENT,
        ],
        token_modifiers: vec![
            lsp::SemanticTokenModifier::DECLARATION,
            lsp::SemanticTokenModifier::DEFAULT_LIBRARY,
        ],
    }
}

/// Where the documentation of the codes is, for the diagnostics' `codeDescription`.
#[derive(Clone, Debug)]
pub struct Settings {
    /// A URL ending in `/`; `<CODE>.md` is appended.
    pub code_docs: String,
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            code_docs: concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/docs/codes/").into(),
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Diagnostics

pub fn diagnostics(analysis: &Analysis, uri: &Url, settings: &Settings) -> Vec<lsp::Diagnostic> {
    analysis
        .diagnostics
        .iter()
        .map(|d| diagnostic(analysis, uri, d, settings))
        .collect()
}

fn diagnostic(
    analysis: &Analysis,
    uri: &Url,
    d: &Diagnostic,
    settings: &Settings,
) -> lsp::Diagnostic {
    let mut message = d.message.clone();
    if let Some(help) = &d.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let related: Vec<lsp::DiagnosticRelatedInformation> = d
        .related
        .iter()
        .map(|r| lsp::DiagnosticRelatedInformation {
            location: lsp::Location::new(uri.clone(), analysis.range(r.span)),
            message: r.message.clone(),
        })
        .collect();
    let unnecessary = matches!(d.code, "W009" | "W010");
    lsp::Diagnostic {
        range: analysis.range(d.span),
        severity: Some(match d.severity {
            Severity::Error => lsp::DiagnosticSeverity::ERROR,
            Severity::Warning => lsp::DiagnosticSeverity::WARNING,
            Severity::Info => lsp::DiagnosticSeverity::INFORMATION,
        }),
        code: Some(lsp::NumberOrString::String(d.code.into())),
        code_description: Url::parse(&format!("{}{}.md", settings.code_docs, d.code))
            .ok()
            .map(|href| lsp::CodeDescription { href }),
        source: Some("ggp".into()),
        message,
        related_information: (!related.is_empty()).then_some(related),
        tags: unnecessary.then(|| vec![lsp::DiagnosticTag::UNNECESSARY]),
        data: None,
    }
}

// ---------------------------------------------------------------------------------------------
// Formatting

/// Why a document is not formatted or converted.
pub fn refusal(analysis: &Analysis, edit: Edit) -> EditError {
    let errors = analysis
        .diagnostics
        .iter()
        .filter(|d| d.is_error() && is_syntax(d.code))
        .count();
    EditError::SyntaxErrors { edit, errors }
}

fn is_syntax(code: &str) -> bool {
    gdl_syntax::codes::SYNTAX_CODES
        .iter()
        .any(|c| c.code == code)
}

/// The document in `ggp fmt`'s layout (for infix, the converter's canonical infix layout), as
/// the smallest edit, or why not.
pub fn format_document(analysis: &Analysis) -> Result<Vec<lsp::TextEdit>, EditError> {
    if analysis.has_syntax_errors() {
        return Err(refusal(analysis, Edit::Format));
    }
    let formatted = match analysis.notation {
        Notation::Prefix => gdl_syntax::format_text(&analysis.text),
        Notation::Infix => gdl_syntax::infix::infix_to_prefix(&analysis.text)
            .and_then(|prefix| gdl_syntax::prefix_to_infix(&prefix)),
    }
    .map_err(|errors| EditError::Refused {
        edit: Edit::Format,
        message: errors[0].message.clone(),
    })?;
    Ok(minimal_edit(
        analysis,
        Span::new(0, analysis.text.len() as u32),
        &formatted,
    )
    .collect())
}

/// The top-level forms a range touches, in `ggp fmt`'s layout (prefix only).
pub fn format_range(
    analysis: &Analysis,
    range: lsp::Range,
) -> Result<Vec<lsp::TextEdit>, EditError> {
    if analysis.notation == Notation::Infix {
        return format_document(analysis);
    }
    if analysis.has_syntax_errors() {
        return Err(refusal(analysis, Edit::Format));
    }
    let text = &*analysis.text;
    let wanted = analysis.lines.span(text, range);
    let (tree, _) = gdl_syntax::cst::parse_tree(text);
    let top = tree.top_level();
    let touched: Vec<Span> = top
        .iter()
        .map(|&id| tree.span(id))
        .filter(|s| s.start <= wanted.end && wanted.start <= s.end)
        .collect();
    let (Some(first), Some(last)) = (touched.first(), touched.last()) else {
        return Ok(Vec::new());
    };
    let mut region = first.cover(*last);
    // A comment after the last form, on its line, goes with it.
    if let Some(&next) = top.iter().find(|&&id| tree.span(id).start >= region.end)
        && tree.kind(next) == gdl_syntax::cst::NodeKind::Comment
        && !text[region.end as usize..tree.span(next).start as usize].contains(['\n', '\r'])
    {
        region.end = tree.span(next).end;
    }
    let piece = region.text(text);
    let formatted = gdl_syntax::format_text(piece).map_err(|errors| EditError::Refused {
        edit: Edit::Format,
        message: errors[0].message.clone(),
    })?;
    Ok(minimal_edit(analysis, region, formatted.trim_end_matches('\n')).collect())
}

/// One edit replacing `span` by `new`, narrowed to what differs.
fn minimal_edit<'a>(
    analysis: &'a Analysis,
    span: Span,
    new: &'a str,
) -> impl Iterator<Item = lsp::TextEdit> + 'a {
    let old = span.text(&analysis.text);
    let mut prefix = old
        .bytes()
        .zip(new.bytes())
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(prefix) || !new.is_char_boundary(prefix) {
        prefix -= 1;
    }
    let max_suffix = (old.len() - prefix).min(new.len() - prefix);
    let mut suffix = old
        .bytes()
        .rev()
        .zip(new.bytes().rev())
        .take(max_suffix)
        .take_while(|(a, b)| a == b)
        .count();
    while !old.is_char_boundary(old.len() - suffix) || !new.is_char_boundary(new.len() - suffix) {
        suffix -= 1;
    }
    let changed = (old.len() != new.len()) || prefix < old.len();
    let replaced = Span::new(
        span.start + prefix as u32,
        span.start + (old.len() - suffix) as u32,
    );
    changed
        .then(|| lsp::TextEdit {
            range: analysis.range(replaced),
            new_text: new[prefix..new.len() - suffix].to_string(),
        })
        .into_iter()
}

// ---------------------------------------------------------------------------------------------
// Navigation

fn location(uri: &Url, analysis: &Analysis, span: Span) -> lsp::Location {
    lsp::Location::new(uri.clone(), analysis.range(span))
}

/// Definitions of the name at `offset`: every head that defines a relation (every head a
/// function or a constant occurs in), the places that bind a variable.
pub fn definition(analysis: &Analysis, uri: &Url, offset: u32) -> Vec<lsp::Location> {
    let index = analysis.index();
    let Some(at) = index.occurrence_at(offset) else {
        return Vec::new();
    };
    let mut places: Vec<Span> = index
        .occurrences_of(at.symbol)
        .filter(|o| o.defining)
        .map(|o| o.span)
        .collect();
    if places.is_empty() && index.symbol(at.symbol).key.kind == SymbolKind::Variable {
        places.extend(index.occurrences_of(at.symbol).map(|o| o.span).take(1));
    }
    places
        .into_iter()
        .map(|span| location(uri, analysis, span))
        .collect()
}

pub fn references(
    analysis: &Analysis,
    uri: &Url,
    offset: u32,
    include_declaration: bool,
) -> Vec<lsp::Location> {
    let index = analysis.index();
    let Some(at) = index.occurrence_at(offset) else {
        return Vec::new();
    };
    index
        .occurrences_of(at.symbol)
        .filter(|o| include_declaration || !o.defining)
        .map(|o| location(uri, analysis, o.span))
        .collect()
}

pub fn highlights(analysis: &Analysis, offset: u32) -> Vec<lsp::DocumentHighlight> {
    let index = analysis.index();
    let Some(at) = index.occurrence_at(offset) else {
        return Vec::new();
    };
    index
        .occurrences_of(at.symbol)
        .map(|o| lsp::DocumentHighlight {
            range: analysis.range(o.span),
            kind: Some(if o.defining {
                lsp::DocumentHighlightKind::WRITE
            } else {
                lsp::DocumentHighlightKind::READ
            }),
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// Hover

fn lines_of(analysis: &Analysis, spans: impl Iterator<Item = Span>) -> String {
    let mut lines: Vec<usize> = spans.map(|s| analysis.lines.line_of(s.start) + 1).collect();
    lines.dedup();
    let shown: Vec<String> = lines.iter().take(8).map(usize::to_string).collect();
    let more = if lines.len() > 8 { ", …" } else { "" };
    format!(
        "line{} {}{more}",
        if lines.len() == 1 { "" } else { "s" },
        shown.join(", ")
    )
}

fn count(n: usize, what: &str) -> String {
    format!("{n} {what}{}", if n == 1 { "" } else { "s" })
}

/// The text of a span on one line, shortened.
fn snippet(text: &str, span: Span) -> String {
    let flat: String = span
        .text(text)
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    if flat.chars().count() > 70 {
        let cut: String = flat.chars().take(69).collect();
        format!("{cut}…")
    } else {
        flat
    }
}

fn symbol_hover(analysis: &Analysis, index: &Index, id: u32) -> String {
    let symbol = index.symbol(id);
    let occurrences: Vec<_> = index.occurrences_of(id).collect();
    let defining: Vec<Span> = occurrences
        .iter()
        .filter(|o| o.defining)
        .map(|o| o.span)
        .collect();
    let uses = occurrences.len() - defining.len();
    match symbol.key.kind {
        SymbolKind::Relation => {
            let mut out = format!(
                "**relation** `{}` — arity {}",
                symbol.spelling, symbol.key.arity
            );
            if let Some(reserved) = symbol.distinguished() {
                out.push_str(" (a GDL relation)");
                if let Some(doc) = docs::keyword(reserved.name()) {
                    out.push_str("\n\n");
                    out.push_str(doc);
                }
            }
            if defining.is_empty() {
                out.push_str("\n\nDefined by no rule or fact.");
            } else {
                let items = occurrences
                    .iter()
                    .filter(|o| o.defining)
                    .map(|o| o.item)
                    .collect::<std::collections::BTreeSet<_>>()
                    .len();
                out.push_str(&format!(
                    "\n\nDefined by {} on {}.",
                    count(items, "rule or fact"),
                    lines_of(analysis, defining.iter().copied())
                ));
            }
            out.push_str(&format!(" Used {}.", count(uses, "time")));
            out
        }
        SymbolKind::Function => format!(
            "**function** `{}` — arity {}\n\nIn {} ({}); {} elsewhere.",
            symbol.spelling,
            symbol.key.arity,
            count(defining.len(), "head"),
            if defining.is_empty() {
                "none".into()
            } else {
                lines_of(analysis, defining.iter().copied())
            },
            count(uses, "use")
        ),
        SymbolKind::Constant => {
            let mut out = format!("**constant** `{}`", symbol.spelling);
            if is_role(index, id) {
                out.push_str(" — a role");
            }
            if let Some(doc) =
                docs::keyword(&symbol.key.name).filter(|_| &*symbol.key.name == "random")
            {
                out.push_str("\n\n");
                out.push_str(doc);
            }
            out.push_str(&format!("\n\nOccurs {}.", count(occurrences.len(), "time")));
            out
        }
        SymbolKind::Variable => {
            let mut out = format!("**variable** `?{}`", symbol.spelling);
            if analysis.notation == Notation::Infix
                && let Some(infix) = variable_to_infix(&symbol.spelling)
            {
                out = format!("**variable** `{infix}`");
            }
            if let Some(item) = occurrences
                .first()
                .and_then(|o| index.items.get(o.item as usize))
            {
                let line = analysis.lines.line_of(item.span.start) + 1;
                out.push_str(&format!(
                    " of the {} on line {line}",
                    if item.rule { "rule" } else { "fact" }
                ));
            }
            let mut lines: Vec<usize> = occurrences
                .iter()
                .filter(|o| o.defining)
                .map(|o| analysis.lines.line_of(o.span.start))
                .collect();
            lines.dedup();
            if lines.is_empty() {
                out.push_str("\n\nBound by no positive literal of its rule.");
            } else {
                out.push_str("\n\nBound on:");
                for line in lines.iter().take(6) {
                    let content = analysis.lines.line_text(&analysis.text, *line);
                    let shown = snippet(content, Span::new(0, content.len() as u32));
                    out.push_str(&format!(
                        "\n- line {}: `{}`",
                        line + 1,
                        shown.replace('`', "'")
                    ));
                }
            }
            out
        }
    }
}

fn is_role(index: &Index, constant: u32) -> bool {
    index.occurrences_of(constant).any(|o| {
        index.items.get(o.item as usize).is_some_and(|item| {
            !item.rule
                && item.head.is_some_and(|h| {
                    index.symbol(h).distinguished() == Some(gdl_check::Reserved::Role)
                })
        })
    })
}

pub fn hover(analysis: &Analysis, offset: u32) -> Option<lsp::Hover> {
    let index = analysis.index();
    let text = &*analysis.text;
    let mut parts: Vec<String> = Vec::new();
    let mut range = None;
    if let Some(at) = index.occurrence_at(offset) {
        parts.push(symbol_hover(analysis, index, at.symbol));
        range = Some(at.span);
    } else if let Some(word) = word_at(text, offset, analysis.notation) {
        let word_text = word.text(text);
        let keyword = Keyword::of(word_text)
            .map(|_| word_text)
            .or(gdl_syntax::gdl3::is_knows(word_text).then_some(gdl_syntax::gdl3::KNOWS))
            .or(match word_text {
                "~" => Some("not"),
                "|" => Some("or"),
                "&" => Some("and"),
                ":-" => Some("<="),
                _ => None,
            });
        if let Some(doc) = keyword.and_then(docs::keyword) {
            parts.push(doc.to_string());
            range = Some(word);
        } else if is_code(word_text)
            && let Some(summary) = docs::code_summary(word_text)
        {
            parts.push(summary);
            range = Some(word);
        }
    }
    for d in &analysis.diagnostics {
        if d.span.start <= offset
            && offset <= d.span.end.max(d.span.start + 1)
            && let Some(summary) = docs::code_summary(d.code)
        {
            parts.push(format!("{}: {}\n\n{summary}", d.severity, d.message));
        }
    }
    if parts.is_empty() {
        return None;
    }
    Some(lsp::Hover {
        contents: lsp::HoverContents::Markup(lsp::MarkupContent {
            kind: lsp::MarkupKind::Markdown,
            value: parts.join("\n\n---\n\n"),
        }),
        range: range.map(|s| analysis.range(s)),
    })
}

fn is_code(word: &str) -> bool {
    let b = word.as_bytes();
    b.len() == 4
        && matches!(b[0].to_ascii_uppercase(), b'S' | b'I' | b'E' | b'W' | b'R')
        && b[1..].iter().all(u8::is_ascii_digit)
}

/// The word (a name, a keyword, an infix operator) at `offset`.
fn word_at(text: &str, offset: u32, notation: Notation) -> Option<Span> {
    let bytes = text.as_bytes();
    let offset = (offset as usize).min(bytes.len());
    let is_word = |b: u8| match notation {
        Notation::Prefix => !matches!(b, b'(' | b')' | b';' | b' ' | b'\t' | b'\n' | b'\r'),
        Notation::Infix => {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-' | b':' | b'~' | b'|' | b'&')
        }
    };
    let mut start = offset;
    while start > 0 && is_word(bytes[start - 1]) {
        start -= 1;
    }
    let mut end = offset;
    while end < bytes.len() && is_word(bytes[end]) {
        end += 1;
    }
    while !text.is_char_boundary(start) {
        start += 1;
    }
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (start < end).then(|| Span::new(start as u32, end as u32))
}

// ---------------------------------------------------------------------------------------------
// Symbols

fn rule_symbol(analysis: &Analysis, span: Span, head: Span) -> lsp::DocumentSymbol {
    #[allow(deprecated)]
    lsp::DocumentSymbol {
        name: snippet(&analysis.text, span),
        detail: None,
        kind: lsp::SymbolKind::METHOD,
        tags: None,
        deprecated: None,
        range: analysis.range(span),
        selection_range: analysis.range(head),
        children: None,
    }
}

/// Roles, then the GDL relations, then the game's own relations, each relation with the rules
/// and facts that define it.
pub fn document_symbols(analysis: &Analysis) -> Vec<lsp::DocumentSymbol> {
    let index = analysis.index();
    let mut groups: [(&str, Vec<lsp::DocumentSymbol>, Option<Span>); 3] = [
        ("roles", Vec::new(), None),
        ("GDL relations", Vec::new(), None),
        ("relations", Vec::new(), None),
    ];
    for (id, symbol) in index.symbols_of(SymbolKind::Relation) {
        let heads: Vec<_> = index.occurrences_of(id).filter(|o| o.defining).collect();
        let Some(first) = heads.first() else {
            continue;
        };
        let group = match symbol.distinguished() {
            Some(gdl_check::Reserved::Role) => 0,
            Some(_) => 1,
            None => 2,
        };
        let mut cover = index.items[first.item as usize].span;
        let mut children = Vec::new();
        for head in &heads {
            let Some(item) = item_of(index, head.item) else {
                continue;
            };
            cover = cover.cover(item.span);
            if group == 0 {
                // A role is named by its argument.
                let role = index
                    .occurrences
                    .iter()
                    .find(|o| o.item == head.item && o.span.start > head.span.end);
                if let Some(role) = role {
                    #[allow(deprecated)]
                    groups[0].1.push(lsp::DocumentSymbol {
                        name: role.span.text(&analysis.text).to_string(),
                        detail: Some("role".into()),
                        kind: lsp::SymbolKind::ENUM_MEMBER,
                        tags: None,
                        deprecated: None,
                        range: analysis.range(item.span),
                        selection_range: analysis.range(role.span),
                        children: None,
                    });
                    let g = &mut groups[0].2;
                    *g = Some(g.map_or(item.span, |s| s.cover(item.span)));
                }
                continue;
            }
            children.push(rule_symbol(analysis, item.span, head.span));
        }
        if group == 0 {
            continue;
        }
        #[allow(deprecated)]
        let relation = lsp::DocumentSymbol {
            name: symbol.describe(),
            detail: Some(count(children.len(), "definition")),
            kind: if group == 1 {
                lsp::SymbolKind::EVENT
            } else {
                lsp::SymbolKind::FUNCTION
            },
            tags: None,
            deprecated: None,
            range: analysis.range(cover),
            selection_range: analysis.range(first.span),
            children: Some(children),
        };
        groups[group].1.push(relation);
        let g = &mut groups[group].2;
        *g = Some(g.map_or(cover, |s| s.cover(cover)));
    }
    groups
        .into_iter()
        .filter_map(|(name, children, cover)| {
            let cover = cover?;
            #[allow(deprecated)]
            Some(lsp::DocumentSymbol {
                name: name.into(),
                detail: None,
                kind: lsp::SymbolKind::NAMESPACE,
                tags: None,
                deprecated: None,
                range: analysis.range(cover),
                selection_range: analysis.range(Span::new(cover.start, cover.start)),
                children: Some(children),
            })
        })
        .collect()
}

fn item_of(index: &Index, item: u32) -> Option<&crate::index::ItemInfo> {
    index.items.get(item as usize)
}

/// Whether the characters of `query` occur in `name` in order (any letter case).
fn matches_query(name: &str, query: &str) -> bool {
    let mut chars = name.chars().map(|c| c.to_ascii_lowercase());
    query
        .chars()
        .map(|c| c.to_ascii_lowercase())
        .all(|q| chars.any(|c| c == q))
}

/// The relations and roles of one document that match `query`.
pub fn workspace_symbols(
    analysis: &Analysis,
    uri: &Url,
    query: &str,
    out: &mut Vec<lsp::WorkspaceSymbol>,
) {
    let index = analysis.index();
    let file = uri
        .path_segments()
        .and_then(|mut s| s.next_back().map(str::to_string))
        .unwrap_or_default();
    for (id, symbol) in index.symbols_of(SymbolKind::Relation) {
        let Some(first) = index.occurrences_of(id).find(|o| o.defining) else {
            continue;
        };
        if symbol.distinguished().is_some() {
            continue;
        }
        let name = symbol.describe();
        if matches_query(&name, query) {
            out.push(lsp::WorkspaceSymbol {
                name,
                kind: lsp::SymbolKind::FUNCTION,
                tags: None,
                container_name: Some(file.clone()),
                location: lsp::OneOf::Left(location(uri, analysis, first.span)),
                data: None,
            });
        }
    }
    for (id, symbol) in index.symbols_of(SymbolKind::Constant) {
        if is_role(index, id) && matches_query(&symbol.spelling, query) {
            let first = index
                .occurrences_of(id)
                .next()
                .expect("symbols_of skips unused");
            out.push(lsp::WorkspaceSymbol {
                name: symbol.spelling.to_string(),
                kind: lsp::SymbolKind::ENUM_MEMBER,
                tags: None,
                container_name: Some(format!("{file} (role)")),
                location: lsp::OneOf::Left(location(uri, analysis, first.span)),
                data: None,
            });
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Semantic tokens

pub fn semantic_tokens(analysis: &Analysis) -> Vec<lsp::SemanticToken> {
    let index = analysis.index();
    let text = &*analysis.text;
    let mut out = Vec::with_capacity(index.tokens.len());
    let (mut line, mut column) = (0u32, 0u32);
    for token in &index.tokens {
        let start = analysis.lines.position(text, token.span.start);
        let end = analysis.lines.position(text, token.span.end);
        if end.line != start.line || end.character <= start.character {
            continue;
        }
        let delta_line = start.line - line;
        let delta_start = if delta_line == 0 {
            start.character - column
        } else {
            start.character
        };
        let mut modifiers = 0;
        if token.modifiers & MOD_DECLARATION != 0 {
            modifiers |= 1;
        }
        if token.modifiers & MOD_DISTINGUISHED != 0 {
            modifiers |= 2;
        }
        out.push(lsp::SemanticToken {
            delta_line,
            delta_start,
            length: end.character - start.character,
            token_type: token.class as u32,
            token_modifiers_bitset: modifiers,
        });
        (line, column) = (start.line, start.character);
    }
    out
}

// ---------------------------------------------------------------------------------------------
// Completion

const PREFIX_KEYWORDS: &[&str] = &["<=", "not", "or", "and", "distinct"];

pub fn completion(analysis: &Analysis, offset: u32) -> Vec<lsp::CompletionItem> {
    let text = &*analysis.text;
    let infix = analysis.notation == Notation::Infix;
    let bytes = text.as_bytes();
    let offset = (offset as usize).min(bytes.len());
    let mut start = offset;
    let name_byte = |b: u8| {
        if infix {
            b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-')
        } else {
            !matches!(
                b,
                b'(' | b')' | b';' | b' ' | b'\t' | b'\n' | b'\r' | b'\x0b' | b'\x0c'
            )
        }
    };
    while start > 0 && name_byte(bytes[start - 1]) {
        start -= 1;
    }
    while !text.is_char_boundary(start) {
        start += 1;
    }
    let typed = &text[start..offset.max(start)];
    let replace = analysis.range(Span::new(start as u32, offset.max(start) as u32));
    let item = |label: String, kind: lsp::CompletionItemKind, detail: String| lsp::CompletionItem {
        label: label.clone(),
        kind: Some(kind),
        detail: Some(detail),
        text_edit: Some(lsp::CompletionTextEdit::Edit(lsp::TextEdit {
            range: replace,
            new_text: label,
        })),
        ..Default::default()
    };
    let variable_wanted = if infix {
        typed.starts_with(|c: char| c.is_ascii_uppercase() || c == '_')
    } else {
        typed.starts_with('?')
    };
    let mut out = Vec::new();
    if variable_wanted || typed.is_empty() {
        for name in variables_in_scope(analysis, offset as u32) {
            if infix {
                if let Some(spelled) = variable_to_infix(&name) {
                    out.push(item(
                        spelled,
                        lsp::CompletionItemKind::VARIABLE,
                        "variable".into(),
                    ));
                }
            } else {
                out.push(item(
                    format!("?{name}"),
                    lsp::CompletionItemKind::VARIABLE,
                    "variable".into(),
                ));
            }
        }
        if variable_wanted {
            return out;
        }
    }
    if !infix {
        for keyword in PREFIX_KEYWORDS {
            out.push(item(
                (*keyword).into(),
                lsp::CompletionItemKind::KEYWORD,
                "keyword".into(),
            ));
        }
    } else {
        out.push(item(
            "distinct".into(),
            lsp::CompletionItemKind::KEYWORD,
            "keyword".into(),
        ));
    }
    let index = analysis.index();
    let mut seen = std::collections::HashSet::new();
    for reserved in gdl_check::Reserved::ALL {
        seen.insert((reserved.name().to_string(), reserved.arity()));
        out.push(item(
            reserved.name().into(),
            lsp::CompletionItemKind::KEYWORD,
            format!("GDL relation, arity {}", reserved.arity()),
        ));
    }
    out.push(item(
        gdl_syntax::gdl3::KNOWS.into(),
        lsp::CompletionItemKind::KEYWORD,
        "GDL-III keyword: (knows R P), (knows P)".into(),
    ));
    for (id, symbol) in index.symbols_of(SymbolKind::Relation) {
        let defined = index.occurrences_of(id).filter(|o| o.defining).count();
        if defined == 0 || !seen.insert((symbol.key.name.to_string(), symbol.key.arity)) {
            continue;
        }
        let label = if infix {
            constant_to_infix(&symbol.spelling)
        } else {
            symbol.spelling.to_string()
        };
        let mut completion = item(
            label,
            lsp::CompletionItemKind::FUNCTION,
            format!(
                "relation {}, {}",
                symbol.describe(),
                count(defined, "definition")
            ),
        );
        completion.sort_text = Some(format!("0{}", symbol.spelling));
        out.push(completion);
    }
    out
}

/// The variables of the form around `offset`, as written (without `?`), first spelling of each.
fn variables_in_scope(analysis: &Analysis, offset: u32) -> Vec<String> {
    let text = &*analysis.text;
    let mut names: Vec<String> = Vec::new();
    let mut push = |name: &str| {
        if !name.is_empty() && !names.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            names.push(name.to_string());
        }
    };
    match analysis.notation {
        Notation::Prefix => {
            // The tree, not the GDL reading: the form being typed usually has errors.
            let (tree, _) = gdl_syntax::cst::parse_tree(text);
            let top = tree.top_level();
            let k = top.partition_point(|&id| tree.span(id).start < offset);
            let Some(&form) = k.checked_sub(1).map(|k| &top[k]) else {
                return names;
            };
            let span = tree.span(form);
            if offset > span.end && tree.node(form).closed {
                return names;
            }
            let mut stack = vec![form];
            let mut found = Vec::new();
            while let Some(id) = stack.pop() {
                match tree.kind(id) {
                    gdl_syntax::cst::NodeKind::Variable => {
                        let s = tree.span(id);
                        // Not the word being typed.
                        if !(s.start < offset && offset <= s.end) {
                            found.push(s);
                        }
                    }
                    gdl_syntax::cst::NodeKind::List => stack.extend(tree.children(id)),
                    _ => {}
                }
            }
            found.sort_by_key(|s| s.start);
            for s in found {
                push(&s.text(text)[1..]);
            }
        }
        Notation::Infix => {
            let index = analysis.index();
            if let Some(item) = index.item_at(offset) {
                for o in &index.occurrences {
                    let s = index.symbol(o.symbol);
                    if o.item == item && s.key.kind == SymbolKind::Variable {
                        push(&s.spelling);
                    }
                }
            }
        }
    }
    names
}

// ---------------------------------------------------------------------------------------------
// Rename

/// The occurrence a rename at `offset` would change, or why it cannot.
pub fn prepare_rename(analysis: &Analysis, offset: u32) -> Result<(Span, String), RenameError> {
    let index = analysis.index();
    let Some(at) = index.occurrence_at(offset) else {
        return Err(RenameError::NothingHere);
    };
    let symbol = index.symbol(at.symbol);
    if let Some(reserved) = symbol.distinguished() {
        return Err(RenameError::Reserved(reserved.name()));
    }
    Ok((at.span, at.span.text(&analysis.text).to_string()))
}

fn valid_prefix_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with('?')
        && !name
            .chars()
            .any(|c| c.is_whitespace() || matches!(c, '(' | ')' | ';' | '\u{feff}'))
}

/// The spelling of `new` for a symbol of `kind` in the document's notation, or why not.
fn new_spelling(notation: Notation, symbol: &Symbol, new: &str) -> Result<String, RenameError> {
    let new = new.trim();
    match symbol.key.kind {
        SymbolKind::Variable => {
            let bare = match notation {
                Notation::Prefix => new.strip_prefix('?').unwrap_or(new).to_string(),
                Notation::Infix if new.starts_with('?') => new[1..].to_string(),
                // An infix variable name: `Xy` is `?xy`, `_3x` is `?3x`.
                Notation::Infix => {
                    let bytes = new.as_bytes();
                    let ok = !bytes.is_empty()
                        && (bytes[0].is_ascii_uppercase() || bytes[0] == b'_')
                        && bytes
                            .iter()
                            .all(|&b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'+' | b'-'));
                    if !ok {
                        return Err(RenameError::NotInfixVariable(new.to_string()));
                    }
                    return Ok(new.to_string());
                }
            };
            if !valid_prefix_name(&bare) {
                return Err(RenameError::NotVariable(new.to_string()));
            }
            match notation {
                Notation::Prefix => Ok(format!("?{bare}")),
                Notation::Infix => variable_to_infix(&bare)
                    .ok_or_else(|| RenameError::NoInfixSpelling(new.to_string())),
            }
        }
        kind => {
            if !valid_prefix_name(new) || Keyword::of(new).is_some() {
                return Err(RenameError::NotAName(new.to_string()));
            }
            if kind == SymbolKind::Relation {
                if gdl_syntax::ast::is_number(new) {
                    return Err(RenameError::NumberForRelation(new.to_string()));
                }
                if gdl_check::Reserved::of_name(new).is_some_and(|r| r.arity() == symbol.key.arity)
                {
                    return Err(RenameError::IntoReserved(new.to_string()));
                }
            }
            Ok(match notation {
                Notation::Prefix => new.to_string(),
                Notation::Infix => constant_to_infix(new),
            })
        }
    }
}

/// The case-folded prefix name a new name stands for (without `?`).
fn prefix_name(notation: Notation, kind: SymbolKind, new: &str) -> String {
    let bare = match (notation, kind) {
        (_, SymbolKind::Variable) if new.starts_with('?') => &new[1..],
        (Notation::Infix, SymbolKind::Variable) => new.strip_prefix('_').unwrap_or(new),
        _ => new,
    };
    bare.to_ascii_lowercase()
}

pub fn rename(
    analysis: &Analysis,
    uri: &Url,
    offset: u32,
    new: &str,
) -> Result<lsp::WorkspaceEdit, RenameError> {
    prepare_rename(analysis, offset)?;
    let index = analysis.index();
    let at = index
        .occurrence_at(offset)
        .expect("prepare_rename found it");
    let symbol = index.symbol(at.symbol);
    let spelled = new_spelling(analysis.notation, symbol, new)?;
    // Renaming into a name already in use would merge two symbols.
    let mut key = symbol.key.clone();
    key.name = prefix_name(analysis.notation, symbol.key.kind, new.trim()).into();
    if key != symbol.key
        && index
            .lookup(&key)
            .is_some_and(|id| !index.symbol(id).occurrences.is_empty())
    {
        return Err(RenameError::Taken(new.trim().to_string()));
    }
    let edits: Vec<lsp::TextEdit> = index
        .occurrences_of(at.symbol)
        .map(|o| lsp::TextEdit {
            range: analysis.range(o.span),
            new_text: spelled.clone(),
        })
        .collect();
    Ok(lsp::WorkspaceEdit {
        changes: Some(HashMap::from([(uri.clone(), edits)])),
        ..Default::default()
    })
}

// ---------------------------------------------------------------------------------------------
// Code actions

/// The fixes of the diagnostics that touch `range`.
pub fn quick_fixes(
    analysis: &Analysis,
    uri: &Url,
    range: Span,
    settings: &Settings,
) -> Vec<lsp::CodeAction> {
    analysis
        .diagnostics
        .iter()
        .filter(|d| d.span.start <= range.end && range.start <= d.span.end)
        .filter_map(|d| {
            let fix = d.fix.as_ref()?;
            let edits = fix
                .edits
                .iter()
                .map(|e| lsp::TextEdit {
                    range: analysis.range(e.span),
                    new_text: e.replacement.clone(),
                })
                .collect();
            Some(lsp::CodeAction {
                title: format!("{} ({})", fix.message, d.code),
                kind: Some(lsp::CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![diagnostic(analysis, uri, d, settings)]),
                edit: Some(lsp::WorkspaceEdit {
                    changes: Some(HashMap::from([(uri.clone(), edits)])),
                    ..Default::default()
                }),
                is_preferred: Some(fix.applicability == Applicability::Safe),
                ..Default::default()
            })
        })
        .collect()
}

/// The document converted to the other notation, or why not.
pub fn converted(analysis: &Analysis) -> Result<String, EditError> {
    if analysis.has_syntax_errors() {
        return Err(refusal(analysis, Edit::Convert));
    }
    match analysis.notation {
        Notation::Prefix => gdl_syntax::prefix_to_infix(&analysis.text),
        Notation::Infix => gdl_syntax::infix::infix_to_prefix(&analysis.text),
    }
    .map_err(|errors| EditError::Refused {
        edit: Edit::Convert,
        message: errors[0].message.clone(),
    })
}

/// Where a converted document goes: beside it, with the other notation's extension.
pub fn converted_uri(uri: &Url, notation: Notation) -> Option<Url> {
    let path = uri.path();
    let (stem, _) = path
        .rsplit_once('.')
        .filter(|(s, _)| !s.ends_with('/'))
        .unwrap_or((path, ""));
    let extension = match notation {
        Notation::Prefix => "infix",
        Notation::Infix => "kif",
    };
    let mut target = uri.clone();
    target.set_path(&format!("{stem}.{extension}"));
    // Never over an existing file.
    if let Ok(file) = target.to_file_path()
        && file.exists()
    {
        for k in 2..100 {
            let mut candidate = uri.clone();
            candidate.set_path(&format!("{stem}-{k}.{extension}"));
            if candidate.to_file_path().is_ok_and(|f| !f.exists()) {
                return Some(candidate);
            }
        }
        return None;
    }
    Some(target)
}
