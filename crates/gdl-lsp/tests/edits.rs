//! Random edit sequences, sent as an editor sends them (incremental `didChange`s, requests in
//! between), against the same text checked from scratch: the server must end with the
//! diagnostics and the formatting of the text the edits make, and no request may fail inside
//! it or go unanswered.

use std::time::Duration;

use crossbeam_channel::RecvTimeoutError;
use lsp_server::{Connection, Message, Notification, Request, RequestId, Response};
use proptest::prelude::*;
use serde_json::{Value, json};

const PATIENCE: Duration = Duration::from_secs(120);

struct Session {
    connection: Connection,
    thread: Option<std::thread::JoinHandle<Result<bool, gdl_lsp::ServerError>>>,
    next_id: i32,
    /// The diagnostics last published for each URI, with their version.
    published: std::collections::HashMap<String, (Value, Value)>,
}

impl Session {
    fn start() -> Session {
        let (server, client) = Connection::memory();
        let thread = std::thread::spawn(move || gdl_lsp::run(server));
        let mut session = Session {
            connection: client,
            thread: Some(thread),
            next_id: 0,
            published: Default::default(),
        };
        session.request("initialize", json!({"capabilities": {}}));
        session.notify("initialized", json!({}));
        session
    }

    fn notify(&self, method: &str, params: Value) {
        self.connection
            .sender
            .send(Notification::new(method.into(), params).into())
            .unwrap();
    }

    fn next(&mut self) -> Message {
        match self.connection.receiver.recv_timeout(PATIENCE) {
            Ok(message) => {
                if let Message::Notification(n) = &message
                    && n.method == "textDocument/publishDiagnostics"
                {
                    self.published.insert(
                        n.params["uri"].as_str().unwrap().to_string(),
                        (n.params["version"].clone(), n.params["diagnostics"].clone()),
                    );
                }
                message
            }
            Err(RecvTimeoutError::Timeout) => panic!("the server hangs"),
            Err(RecvTimeoutError::Disconnected) => panic!("the server stopped"),
        }
    }

    fn request(&mut self, method: &str, params: Value) -> Response {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.connection
            .sender
            .send(Request::new(id.clone(), method.into(), params).into())
            .unwrap();
        loop {
            if let Message::Response(response) = self.next()
                && response.id == id
            {
                return response;
            }
        }
    }

    fn diagnostics(&mut self, uri: &str, version: i32) -> Value {
        loop {
            if let Some((v, diagnostics)) = self.published.get(uri)
                && *v == version
            {
                return diagnostics.clone();
            }
            self.next();
        }
    }

    fn finish(mut self) {
        let response = self.request("shutdown", Value::Null);
        assert!(response.response_result.is_ok());
        self.notify("exit", Value::Null);
        let clean = self.thread.take().unwrap().join().expect("no panic");
        assert!(matches!(clean, Ok(true)), "{clean:?}");
    }
}

/// The byte offset of a (line, UTF-16 unit) position, as the server documents it: past the end
/// of a line is its end, past the last line the end of the text, inside a surrogate pair the
/// start of its character. Written independently of the server's code.
fn offset_of(text: &str, line: u32, character: u32) -> usize {
    let mut starts = vec![0];
    let bytes = text.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' || (b == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
            starts.push(i + 1);
        }
    }
    let Some(&start) = starts.get(line as usize) else {
        return text.len();
    };
    let mut units = 0;
    for (k, c) in text[start..].char_indices() {
        if c == '\n' || c == '\r' {
            return start + k;
        }
        units += c.len_utf16() as u32;
        if units > character {
            return start + k;
        }
    }
    text.len()
}

#[derive(Clone, Debug)]
enum Step {
    Edit {
        from: (u32, u32),
        to: (u32, u32),
        text: String,
    },
    Ask {
        method: &'static str,
        at: (u32, u32),
    },
}

fn step() -> impl Strategy<Value = Step> {
    let place = (0u32..30, 0u32..60);
    let text = proptest::string::string_regex(
        "(\\(|\\)|\\?x|\\?Y|legal|role|not|<=|true|; é𝄞|𝄞|é| |\\n|\\r\\n|1|p|:-|&|~|X|\\.|,|')*",
    )
    .unwrap();
    let methods = prop_oneof![
        Just("textDocument/hover"),
        Just("textDocument/definition"),
        Just("textDocument/references"),
        Just("textDocument/completion"),
        Just("textDocument/prepareRename"),
        Just("textDocument/rename"),
        Just("textDocument/semanticTokens/full"),
        Just("textDocument/documentSymbol"),
        Just("textDocument/formatting"),
        Just("textDocument/rangeFormatting"),
        Just("textDocument/codeAction"),
    ];
    prop_oneof![
        3 => (place.clone(), place.clone(), text).prop_map(|(from, to, text)| Step::Edit { from, to, text }),
        1 => (methods, place).prop_map(|(method, at)| Step::Ask { method, at }),
    ]
}

const TICTACTOE: &str = include_str!("../../../games/tictactoe.kif");
const INFIX: &str = "% ♞ 𝄞\nrole(x).\nlegal(x, M) :- true(cell(M)) & ~blocked(M).\nblocked(1).\n";

fn run_steps(base: &str, language: &str, steps: &[Step]) {
    let mut session = Session::start();
    let uri = format!("file:///fuzz/doc.{language}");
    session.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": base}}),
    );
    let mut model = base.to_string();
    let mut version = 1;
    for step in steps {
        match step {
            Step::Edit { from, to, text } => {
                let a = offset_of(&model, from.0, from.1);
                let b = offset_of(&model, to.0, to.1);
                model.replace_range(a.min(b)..a.max(b), text);
                version += 1;
                session.notify(
                    "textDocument/didChange",
                    json!({"textDocument": {"uri": uri, "version": version},
                           "contentChanges": [{"range": {
                               "start": {"line": from.0, "character": from.1},
                               "end": {"line": to.0, "character": to.1}}, "text": text}]}),
                );
            }
            Step::Ask { method, at } => {
                let position = json!({"line": at.0, "character": at.1});
                let context = match *method {
                    "textDocument/references" => json!({"includeDeclaration": true}),
                    "textDocument/codeAction" => json!({"diagnostics": []}),
                    _ => json!({"triggerKind": 1}),
                };
                let params = json!({
                    "textDocument": {"uri": uri},
                    "position": position,
                    "newName": "fresh",
                    "context": context,
                    "range": {"start": position, "end": {"line": at.0 + 3, "character": 0}},
                    "options": {"tabSize": 4, "insertSpaces": true},
                });
                let response = session.request(method, params);
                if let Err(error) = &response.response_result {
                    // Refusals (a text with syntax errors, nothing to rename) are answers.
                    assert_eq!(error.code, -32803, "{method}: {error:?}");
                }
            }
        }
    }
    let format = |session: &mut Session, uri: &str| {
        let response = session.request(
            "textDocument/formatting",
            json!({"textDocument": {"uri": uri}, "options": {"tabSize": 4, "insertSpaces": true}}),
        );
        response.response_result.map_err(|e| e.message)
    };
    let edited = session.diagnostics(&uri, version);
    let edited_format = format(&mut session, &uri);
    let fresh_uri = format!("file:///fuzz/fresh.{language}");
    session.notify(
        "textDocument/didOpen",
        json!({"textDocument": {"uri": fresh_uri, "languageId": language, "version": 1, "text": model}}),
    );
    let fresh = session.diagnostics(&fresh_uri, 1);
    let fresh_format = format(&mut session, &fresh_uri);
    let edited = edited.to_string().replace(&uri, "URI");
    let fresh = fresh.to_string().replace(&fresh_uri, "URI");
    assert_eq!(edited, fresh, "text: {model:?}");
    assert_eq!(edited_format, fresh_format, "text: {model:?}");
    session.finish();
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn edits_end_where_a_fresh_check_does(steps in proptest::collection::vec(step(), 1..25)) {
        run_steps(TICTACTOE, "kif", &steps);
    }

    #[test]
    fn infix_edits_end_where_a_fresh_check_does(steps in proptest::collection::vec(step(), 1..25)) {
        run_steps(INFIX, "infix", &steps);
    }
}
