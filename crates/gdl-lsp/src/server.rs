//! The server's loop: documents kept as text, checked on a worker thread, answers computed on
//! the loop's thread from the latest analysis.
//!
//! Diagnostics are coalesced: a change marks its document due (after the quiet period,
//! `debounceMs`, 0 by default); one worker checks one due document at a time, always its
//! latest text, so edits that arrive while a check runs cost one more check, not one each.
//! Results for a version the editor has already changed are not published. A request needs the
//! current text's analysis: when the worker has not produced it yet, the loop computes it
//! itself.

use std::collections::HashMap;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, select};
use lsp_server::{Connection, ErrorCode, Message, Notification, Request, RequestId, Response};
use lsp_types as lsp;
use lsp_types::Url;
use lsp_types::notification::Notification as _;
use lsp_types::request::Request as _;
use serde::de::DeserializeOwned;
use serde_json::Value;

use crate::analysis::Analysis;
use crate::document::{Document, MAX_DOCUMENT_LEN, Notation, TooLarge};
use crate::features::{self, Settings};

/// What the client told us at `initialize`.
#[derive(Clone, Debug, Default)]
struct Client {
    /// Whether a workspace edit may create files.
    create_files: bool,
    /// Whether code actions can be resolved lazily (their `edit`).
    resolve_edit: bool,
}

struct Job {
    uri: Url,
    document: Document,
}

struct Done {
    uri: Url,
    analysis: Option<Arc<Analysis>>,
}

pub struct Server {
    sender: Sender<Message>,
    settings: Settings,
    client: Client,
    debounce: Duration,
    documents: HashMap<Url, Document>,
    /// Documents that grew larger than [`MAX_DOCUMENT_LEN`], and their notation: their text is
    /// dropped, and they are not checked until they are opened again (or replaced whole)
    /// smaller.
    too_large: HashMap<Url, Notation>,
    analyses: HashMap<Url, Arc<Analysis>>,
    /// The version whose diagnostics were last published.
    published: HashMap<Url, i32>,
    /// Documents whose diagnostics are due, and from when.
    due: HashMap<Url, Instant>,
    jobs: Sender<Job>,
    busy: bool,
    shutting_down: bool,
}

/// Why the server could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServerError {
    /// The `initialize` handshake failed (the client went away, or sent something else).
    #[error("initialize: {0}")]
    Initialize(#[source] lsp_server::ProtocolError),
    /// The `initialize` request's parameters are not the protocol's.
    #[error("bad initialize request: {0}")]
    InitializeParams(#[source] serde_json::Error),
    /// The thread that checks documents could not be started.
    #[error("cannot start the checking thread: {0}")]
    Spawn(#[source] std::io::Error),
}

/// Runs a server on a connection until the client says `exit` (or goes away). Returns whether
/// it ended properly (a `shutdown` request before `exit`).
pub fn run(connection: Connection) -> Result<bool, ServerError> {
    let (id, params) = connection
        .initialize_start()
        .map_err(ServerError::Initialize)?;
    let params: lsp::InitializeParams =
        serde_json::from_value(params).map_err(ServerError::InitializeParams)?;
    let options = params.initialization_options.unwrap_or(Value::Null);
    let mut settings = Settings::default();
    if let Some(url) = options.get("codeDocsUrl").and_then(Value::as_str) {
        settings.code_docs = if url.ends_with('/') {
            url.into()
        } else {
            format!("{url}/")
        };
    }
    let debounce = Duration::from_millis(
        options
            .get("debounceMs")
            .and_then(Value::as_u64)
            .unwrap_or(0)
            .min(10_000),
    );
    let workspace_edit = params
        .capabilities
        .workspace
        .as_ref()
        .and_then(|w| w.workspace_edit.as_ref());
    let client = Client {
        create_files: workspace_edit.is_some_and(|w| {
            w.document_changes == Some(true)
                && w.resource_operations
                    .as_ref()
                    .is_some_and(|ops| ops.contains(&lsp::ResourceOperationKind::Create))
        }),
        resolve_edit: params
            .capabilities
            .text_document
            .as_ref()
            .and_then(|t| t.code_action.as_ref())
            .and_then(|c| c.resolve_support.as_ref())
            .is_some_and(|r| r.properties.iter().any(|p| p == "edit")),
    };
    let result = lsp::InitializeResult {
        capabilities: capabilities(),
        server_info: Some(lsp::ServerInfo {
            name: "ggp lsp".into(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
        }),
    };
    connection
        .initialize_finish(id, serde_json::to_value(result).expect("serializable"))
        .map_err(ServerError::Initialize)?;

    let (jobs, job_receiver) = crossbeam_channel::unbounded::<Job>();
    let (done_sender, done) = crossbeam_channel::unbounded::<Done>();
    let worker = std::thread::Builder::new()
        .name("ggp-lsp-check".into())
        .spawn(move || worker(job_receiver, done_sender))
        .map_err(ServerError::Spawn)?;
    let mut server = Server {
        sender: connection.sender.clone(),
        settings,
        client,
        debounce,
        documents: HashMap::new(),
        too_large: HashMap::new(),
        analyses: HashMap::new(),
        published: HashMap::new(),
        due: HashMap::new(),
        jobs,
        busy: false,
        shutting_down: false,
    };
    let clean = server.main_loop(&connection.receiver, &done);
    drop(server);
    let _ = worker.join();
    Ok(clean)
}

/// A line on standard error, the protocol's log; lost, never a panic, if nobody reads it.
pub(crate) fn log(message: &str) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr().lock(), "ggp lsp: {message}");
}

fn worker(jobs: Receiver<Job>, done: Sender<Done>) {
    for Job { uri, document } in jobs {
        let analysis = catch_unwind(AssertUnwindSafe(|| Arc::new(Analysis::new(&document)))).ok();
        if analysis.is_none() {
            log(&format!(
                "internal error while checking {uri} (version {})",
                document.version
            ));
        }
        if done.send(Done { uri, analysis }).is_err() {
            return;
        }
    }
}

pub fn capabilities() -> lsp::ServerCapabilities {
    lsp::ServerCapabilities {
        position_encoding: Some(lsp::PositionEncodingKind::UTF16),
        text_document_sync: Some(lsp::TextDocumentSyncCapability::Options(
            lsp::TextDocumentSyncOptions {
                open_close: Some(true),
                change: Some(lsp::TextDocumentSyncKind::INCREMENTAL),
                ..Default::default()
            },
        )),
        hover_provider: Some(lsp::HoverProviderCapability::Simple(true)),
        definition_provider: Some(lsp::OneOf::Left(true)),
        references_provider: Some(lsp::OneOf::Left(true)),
        document_highlight_provider: Some(lsp::OneOf::Left(true)),
        document_symbol_provider: Some(lsp::OneOf::Left(true)),
        workspace_symbol_provider: Some(lsp::OneOf::Left(true)),
        rename_provider: Some(lsp::OneOf::Right(lsp::RenameOptions {
            prepare_provider: Some(true),
            work_done_progress_options: Default::default(),
        })),
        document_formatting_provider: Some(lsp::OneOf::Left(true)),
        document_range_formatting_provider: Some(lsp::OneOf::Left(true)),
        completion_provider: Some(lsp::CompletionOptions {
            trigger_characters: Some(vec!["?".into(), "(".into()]),
            ..Default::default()
        }),
        code_action_provider: Some(lsp::CodeActionProviderCapability::Options(
            lsp::CodeActionOptions {
                code_action_kinds: Some(vec![
                    lsp::CodeActionKind::QUICKFIX,
                    lsp::CodeActionKind::REFACTOR_REWRITE,
                ]),
                resolve_provider: Some(true),
                ..Default::default()
            },
        )),
        semantic_tokens_provider: Some(
            lsp::SemanticTokensServerCapabilities::SemanticTokensOptions(
                lsp::SemanticTokensOptions {
                    legend: features::token_legend(),
                    full: Some(lsp::SemanticTokensFullOptions::Bool(true)),
                    range: Some(false),
                    ..Default::default()
                },
            ),
        ),
        ..Default::default()
    }
}

/// A failed request: the protocol's error code and a message for the user.
struct Failure(i32, String);

impl Failure {
    fn invalid(message: impl Into<String>) -> Failure {
        Failure(ErrorCode::InvalidParams as i32, message.into())
    }

    fn failed(message: impl std::fmt::Display) -> Failure {
        Failure(ErrorCode::RequestFailed as i32, message.to_string())
    }
}

type Answer = Result<Value, Failure>;

fn params<P: DeserializeOwned>(value: Value) -> Result<P, Failure> {
    serde_json::from_value(value).map_err(|e| Failure::invalid(format!("bad parameters: {e}")))
}

fn json(value: impl serde::Serialize) -> Answer {
    Ok(serde_json::to_value(value).expect("protocol types serialize"))
}

impl Server {
    /// Returns whether the client shut the server down properly.
    fn main_loop(&mut self, receiver: &Receiver<Message>, done: &Receiver<Done>) -> bool {
        loop {
            let timeout = self.next_due().map_or(Duration::from_secs(3600), |at| {
                at.saturating_duration_since(Instant::now())
            });
            let message = select! {
                recv(receiver) -> message => match message {
                    Ok(message) => Some(message),
                    // The client went away without `exit`.
                    Err(_) => return false,
                },
                recv(done) -> result => {
                    if let Ok(result) = result {
                        self.finished(result);
                    }
                    None
                },
                default(timeout) => None,
            };
            if let Some(message) = message {
                if let Some(exit) = self.handle(message) {
                    return exit;
                }
                // Everything already sent is handled before checking: a burst is one check.
                while let Ok(message) = receiver.try_recv() {
                    if let Some(exit) = self.handle(message) {
                        return exit;
                    }
                }
            }
            self.start_check();
        }
    }

    /// When the next due document is due, if the worker is free.
    fn next_due(&self) -> Option<Instant> {
        if self.busy {
            return None;
        }
        self.due.values().min().map(|&at| at + self.debounce)
    }

    fn start_check(&mut self) {
        if self.busy {
            return;
        }
        let now = Instant::now();
        let Some(uri) = self
            .due
            .iter()
            .filter(|(_, at)| **at + self.debounce <= now)
            .min_by_key(|(_, at)| **at)
            .map(|(uri, _)| uri.clone())
        else {
            return;
        };
        self.due.remove(&uri);
        let Some(document) = self.documents.get(&uri) else {
            return;
        };
        // A request may already have checked this version.
        if let Some(analysis) = self.analyses.get(&uri).cloned()
            && analysis.version == document.version
        {
            self.publish(&uri, &analysis);
            return;
        }
        let job = Job {
            uri,
            document: document.clone(),
        };
        self.busy = self.jobs.send(job).is_ok();
    }

    fn finished(&mut self, done: Done) {
        self.busy = false;
        let Some(analysis) = done.analysis else {
            return;
        };
        let Some(document) = self.documents.get(&done.uri) else {
            return;
        };
        if analysis.version != document.version {
            return;
        }
        self.analyses.insert(done.uri.clone(), analysis.clone());
        self.publish(&done.uri, &analysis);
    }

    fn publish(&mut self, uri: &Url, analysis: &Analysis) {
        if self.published.get(uri) == Some(&analysis.version) {
            return;
        }
        self.published.insert(uri.clone(), analysis.version);
        let params = lsp::PublishDiagnosticsParams {
            uri: uri.clone(),
            diagnostics: features::diagnostics(analysis, uri, &self.settings),
            version: Some(analysis.version),
        };
        self.notify::<lsp::notification::PublishDiagnostics>(params);
    }

    fn notify<N: lsp::notification::Notification>(&self, params: N::Params) {
        let _ = self
            .sender
            .send(Notification::new(N::METHOD.into(), params).into());
    }

    /// Handles one message; `Some(clean)` when the server must stop.
    fn handle(&mut self, message: Message) -> Option<bool> {
        match message {
            Message::Request(request) => {
                let id = request.id.clone();
                let response = if self.shutting_down {
                    Err(Failure(
                        ErrorCode::InvalidRequest as i32,
                        "the server is shutting down".into(),
                    ))
                } else if request.method == lsp::request::Shutdown::METHOD {
                    self.shutting_down = true;
                    Ok(Value::Null)
                } else {
                    let method = request.method.clone();
                    catch_unwind(AssertUnwindSafe(|| self.request(request))).unwrap_or_else(|_| {
                        Err(Failure(
                            ErrorCode::InternalError as i32,
                            format!("internal error while answering {method}"),
                        ))
                    })
                };
                self.respond(id, response);
                None
            }
            Message::Notification(notification) => {
                if notification.method == lsp::notification::Exit::METHOD {
                    return Some(self.shutting_down);
                }
                let method = notification.method.clone();
                if catch_unwind(AssertUnwindSafe(|| self.notification(notification))).is_err() {
                    log(&format!("internal error while handling {method}"));
                }
                None
            }
            Message::Response(_) => None,
        }
    }

    fn respond(&self, id: RequestId, answer: Answer) {
        let response = match answer {
            Ok(result) => Response::new_ok(id, result),
            Err(Failure(code, message)) => Response::new_err(id, code, message),
        };
        let _ = self.sender.send(response.into());
    }

    fn notification(&mut self, notification: Notification) {
        use lsp::notification::*;
        match notification.method.as_str() {
            DidOpenTextDocument::METHOD => {
                let Ok(params) = params::<lsp::DidOpenTextDocumentParams>(notification.params)
                else {
                    return;
                };
                let item = params.text_document;
                let notation = Notation::of(&item.language_id, &item.uri);
                if item.text.len() > MAX_DOCUMENT_LEN {
                    let size = TooLarge(item.text.len());
                    self.drop_too_large(item.uri, item.version, notation, size);
                    return;
                }
                self.open(item.uri, Document::new(item.text, item.version, notation));
            }
            DidChangeTextDocument::METHOD => {
                let Ok(params) = params::<lsp::DidChangeTextDocumentParams>(notification.params)
                else {
                    return;
                };
                let uri = params.text_document.uri;
                let version = params.text_document.version;
                if let Some(&notation) = self.too_large.get(&uri) {
                    self.replace_too_large(uri, version, notation, params.content_changes);
                    return;
                }
                let Some(document) = self.documents.get_mut(&uri) else {
                    return;
                };
                match document.apply(version, params.content_changes) {
                    Ok(()) => {
                        self.due.insert(uri, Instant::now());
                    }
                    Err(size) => {
                        let notation = document.notation;
                        self.drop_too_large(uri, version, notation, size);
                    }
                }
            }
            DidCloseTextDocument::METHOD => {
                let Ok(params) = params::<lsp::DidCloseTextDocumentParams>(notification.params)
                else {
                    return;
                };
                let uri = params.text_document.uri;
                self.documents.remove(&uri);
                self.too_large.remove(&uri);
                self.analyses.remove(&uri);
                self.due.remove(&uri);
                self.published.remove(&uri);
                self.notify::<PublishDiagnostics>(lsp::PublishDiagnosticsParams {
                    uri,
                    diagnostics: Vec::new(),
                    version: None,
                });
            }
            _ => {}
        }
    }

    /// Keeps a document (newly opened, or back within its size) and makes it due.
    fn open(&mut self, uri: Url, document: Document) {
        self.too_large.remove(&uri);
        self.analyses.remove(&uri);
        self.published.remove(&uri);
        self.documents.insert(uri.clone(), document);
        self.due.insert(uri, Instant::now());
    }

    /// Drops a document that would be larger than [`MAX_DOCUMENT_LEN`] (its text, its
    /// analysis) and publishes one diagnostic that says so, for `version`.
    fn drop_too_large(&mut self, uri: Url, version: i32, notation: Notation, size: TooLarge) {
        log(&format!(
            "{uri} (version {version}): {size}; it is not checked"
        ));
        self.documents.remove(&uri);
        self.analyses.remove(&uri);
        self.due.remove(&uri);
        self.published.remove(&uri);
        self.too_large.insert(uri.clone(), notation);
        let message = format!(
            "This document is not checked: it would be {} bytes, larger than {MAX_DOCUMENT_LEN} \
             ({} MiB), the largest the GDL language server keeps. Close it and open it again \
             when it is smaller.",
            size.0,
            MAX_DOCUMENT_LEN >> 20
        );
        self.notify::<lsp::notification::PublishDiagnostics>(lsp::PublishDiagnosticsParams {
            uri,
            diagnostics: vec![lsp::Diagnostic {
                range: lsp::Range::default(),
                severity: Some(lsp::DiagnosticSeverity::ERROR),
                source: Some("ggp".into()),
                message,
                ..Default::default()
            }],
            version: Some(version),
        });
    }

    /// The changes of a `didChange` to a document dropped as too large: its text is gone, so
    /// only a change that replaces the whole text (and those after it) can bring it back.
    fn replace_too_large(
        &mut self,
        uri: Url,
        version: i32,
        notation: Notation,
        mut changes: Vec<lsp::TextDocumentContentChangeEvent>,
    ) {
        let Some(whole) = changes.iter().rposition(|c| c.range.is_none()) else {
            return;
        };
        let rest = changes.split_off(whole + 1);
        let Some(text) = changes.pop().map(|c| c.text) else {
            return;
        };
        if text.len() > MAX_DOCUMENT_LEN {
            self.drop_too_large(uri, version, notation, TooLarge(text.len()));
            return;
        }
        let mut document = Document::new(text, version, notation);
        match document.apply(version, rest) {
            Ok(()) => self.open(uri, document),
            Err(size) => self.drop_too_large(uri, version, notation, size),
        }
    }

    /// The analysis of a document's current text.
    fn analysis(&mut self, uri: &Url) -> Result<Arc<Analysis>, Failure> {
        if self.too_large.contains_key(uri) {
            return Err(Failure::failed(format!(
                "{uri} is larger than {MAX_DOCUMENT_LEN} bytes, the largest document this server keeps"
            )));
        }
        let Some(document) = self.documents.get(uri) else {
            return Err(Failure::invalid(format!("{uri} is not open")));
        };
        if let Some(analysis) = self.analyses.get(uri)
            && analysis.version == document.version
        {
            return Ok(analysis.clone());
        }
        let analysis = Arc::new(Analysis::new(document));
        self.analyses.insert(uri.clone(), analysis.clone());
        if self.due.remove(uri).is_some() {
            self.publish(uri, &analysis);
        }
        Ok(analysis)
    }

    fn at(
        &mut self,
        position: &lsp::TextDocumentPositionParams,
    ) -> Result<(Arc<Analysis>, u32), Failure> {
        let analysis = self.analysis(&position.text_document.uri)?;
        let offset = analysis.offset(position.position);
        Ok((analysis, offset))
    }

    fn request(&mut self, request: Request) -> Answer {
        use lsp::request::*;
        let lsp_server::Request {
            method, params: p, ..
        } = request;
        match method.as_str() {
            HoverRequest::METHOD => {
                let p: lsp::HoverParams = params(p)?;
                let (analysis, offset) = self.at(&p.text_document_position_params)?;
                json(features::hover(&analysis, offset))
            }
            GotoDefinition::METHOD => {
                let p: lsp::GotoDefinitionParams = params(p)?;
                let uri = p.text_document_position_params.text_document.uri.clone();
                let (analysis, offset) = self.at(&p.text_document_position_params)?;
                json(lsp::GotoDefinitionResponse::Array(features::definition(
                    &analysis, &uri, offset,
                )))
            }
            References::METHOD => {
                let p: lsp::ReferenceParams = params(p)?;
                let uri = p.text_document_position.text_document.uri.clone();
                let (analysis, offset) = self.at(&p.text_document_position)?;
                json(features::references(
                    &analysis,
                    &uri,
                    offset,
                    p.context.include_declaration,
                ))
            }
            DocumentHighlightRequest::METHOD => {
                let p: lsp::DocumentHighlightParams = params(p)?;
                let (analysis, offset) = self.at(&p.text_document_position_params)?;
                json(features::highlights(&analysis, offset))
            }
            DocumentSymbolRequest::METHOD => {
                let p: lsp::DocumentSymbolParams = params(p)?;
                let analysis = self.analysis(&p.text_document.uri)?;
                json(lsp::DocumentSymbolResponse::Nested(
                    features::document_symbols(&analysis),
                ))
            }
            WorkspaceSymbolRequest::METHOD => {
                let p: lsp::WorkspaceSymbolParams = params(p)?;
                let mut uris: Vec<Url> = self.documents.keys().cloned().collect();
                uris.sort();
                let mut out = Vec::new();
                for uri in uris {
                    let analysis = self.analysis(&uri)?;
                    features::workspace_symbols(&analysis, &uri, &p.query, &mut out);
                }
                json(lsp::WorkspaceSymbolResponse::Nested(out))
            }
            PrepareRenameRequest::METHOD => {
                let p: lsp::TextDocumentPositionParams = params(p)?;
                let (analysis, offset) = self.at(&p)?;
                let (span, placeholder) =
                    features::prepare_rename(&analysis, offset).map_err(Failure::failed)?;
                json(lsp::PrepareRenameResponse::RangeWithPlaceholder {
                    range: analysis.range(span),
                    placeholder,
                })
            }
            Rename::METHOD => {
                let p: lsp::RenameParams = params(p)?;
                let uri = p.text_document_position.text_document.uri.clone();
                let (analysis, offset) = self.at(&p.text_document_position)?;
                json(
                    features::rename(&analysis, &uri, offset, &p.new_name)
                        .map_err(Failure::failed)?,
                )
            }
            Formatting::METHOD => {
                let p: lsp::DocumentFormattingParams = params(p)?;
                let analysis = self.analysis(&p.text_document.uri)?;
                json(features::format_document(&analysis).map_err(Failure::failed)?)
            }
            RangeFormatting::METHOD => {
                let p: lsp::DocumentRangeFormattingParams = params(p)?;
                let analysis = self.analysis(&p.text_document.uri)?;
                json(features::format_range(&analysis, p.range).map_err(Failure::failed)?)
            }
            SemanticTokensFullRequest::METHOD => {
                let p: lsp::SemanticTokensParams = params(p)?;
                let analysis = self.analysis(&p.text_document.uri)?;
                json(lsp::SemanticTokens {
                    result_id: None,
                    data: features::semantic_tokens(&analysis),
                })
            }
            Completion::METHOD => {
                let p: lsp::CompletionParams = params(p)?;
                let (analysis, offset) = self.at(&p.text_document_position)?;
                json(lsp::CompletionResponse::Array(features::completion(
                    &analysis, offset,
                )))
            }
            CodeActionRequest::METHOD => {
                let p: lsp::CodeActionParams = params(p)?;
                self.code_actions(p)
            }
            CodeActionResolveRequest::METHOD => {
                let mut action: lsp::CodeAction = params(p)?;
                let uri: Url = action
                    .data
                    .as_ref()
                    .and_then(|d| d.get("uri"))
                    .and_then(|u| serde_json::from_value(u.clone()).ok())
                    .ok_or_else(|| Failure::invalid("this code action cannot be resolved"))?;
                let analysis = self.analysis(&uri)?;
                action.edit = Some(self.conversion_edit(&analysis, &uri)?);
                json(action)
            }
            _ => Err(Failure(
                ErrorCode::MethodNotFound as i32,
                format!("{method} is not supported"),
            )),
        }
    }

    fn code_actions(&mut self, p: lsp::CodeActionParams) -> Answer {
        let uri = p.text_document.uri;
        let analysis = self.analysis(&uri)?;
        let range = analysis.lines.span(&analysis.text, p.range);
        let wants = |kind: &lsp::CodeActionKind| {
            p.context.only.as_ref().is_none_or(|only| {
                only.iter().any(|o| {
                    kind.as_str() == o.as_str()
                        || kind.as_str().starts_with(&format!("{}.", o.as_str()))
                })
            })
        };
        let mut actions: Vec<lsp::CodeActionOrCommand> = Vec::new();
        if wants(&lsp::CodeActionKind::QUICKFIX) {
            actions.extend(
                features::quick_fixes(&analysis, &uri, range, &self.settings)
                    .into_iter()
                    .map(lsp::CodeActionOrCommand::CodeAction),
            );
        }
        if wants(&lsp::CodeActionKind::REFACTOR_REWRITE) && !analysis.has_syntax_errors() {
            let title = match analysis.notation {
                Notation::Prefix => "Convert the file to infix notation",
                Notation::Infix => "Convert the file to prefix notation (KIF)",
            };
            let mut action = lsp::CodeAction {
                title: title.into(),
                kind: Some(lsp::CodeActionKind::REFACTOR_REWRITE),
                data: Some(serde_json::json!({ "uri": uri })),
                ..Default::default()
            };
            if !self.client.resolve_edit {
                match self.conversion_edit(&analysis, &uri) {
                    Ok(edit) => action.edit = Some(edit),
                    Err(Failure(_, reason)) => {
                        action.disabled = Some(lsp::CodeActionDisabled { reason })
                    }
                }
            }
            actions.push(lsp::CodeActionOrCommand::CodeAction(action));
        }
        json(actions)
    }

    /// The edit that converts a document: a new file beside it where the client can create
    /// files, the document itself otherwise.
    fn conversion_edit(
        &self,
        analysis: &Analysis,
        uri: &Url,
    ) -> Result<lsp::WorkspaceEdit, Failure> {
        let text = features::converted(analysis).map_err(Failure::failed)?;
        let target = self
            .client
            .create_files
            .then(|| features::converted_uri(uri, analysis.notation))
            .flatten();
        Ok(match target {
            Some(target) => lsp::WorkspaceEdit {
                document_changes: Some(lsp::DocumentChanges::Operations(vec![
                    lsp::DocumentChangeOperation::Op(lsp::ResourceOp::Create(lsp::CreateFile {
                        uri: target.clone(),
                        options: Some(lsp::CreateFileOptions {
                            overwrite: Some(false),
                            ignore_if_exists: Some(false),
                        }),
                        annotation_id: None,
                    })),
                    lsp::DocumentChangeOperation::Edit(lsp::TextDocumentEdit {
                        text_document: lsp::OptionalVersionedTextDocumentIdentifier {
                            uri: target,
                            version: None,
                        },
                        edits: vec![lsp::OneOf::Left(lsp::TextEdit {
                            range: lsp::Range::default(),
                            new_text: text,
                        })],
                    }),
                ])),
                ..Default::default()
            },
            None => {
                let end = analysis.range(gdl_syntax::Span::new(0, analysis.text.len() as u32));
                lsp::WorkspaceEdit {
                    changes: Some(HashMap::from([(
                        uri.clone(),
                        vec![lsp::TextEdit {
                            range: end,
                            new_text: text,
                        }],
                    )])),
                    ..Default::default()
                }
            }
        })
    }
}
