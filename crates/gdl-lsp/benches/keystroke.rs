//! Keystroke to diagnostics: the time from a `didChange` that types (or deletes) one character
//! to the `publishDiagnostics` of the new version, through the server's loop (in process, over
//! the in-memory transport), on the largest corpus file and on connect four. And, beside it,
//! the check path alone (`Analysis::new`: parse, lower, every check) and the conversion of its
//! diagnostics to the protocol. Skips, saying so, without `../shared`.

use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use gdl_lsp::analysis::Analysis;
use gdl_lsp::document::{Document, Notation};
use lsp_server::{Connection, Message, Notification, Request, RequestId};
use serde_json::{Value, json};

struct Session {
    connection: Connection,
    thread: Option<std::thread::JoinHandle<Result<bool, gdl_lsp::ServerError>>>,
    version: i32,
}

impl Session {
    fn open(text: &str) -> Session {
        let (server, client) = Connection::memory();
        let thread = std::thread::spawn(move || gdl_lsp::run(server));
        let session = Session {
            connection: client,
            thread: Some(thread),
            version: 1,
        };
        session.send(
            Request::new(
                RequestId::from(1),
                "initialize".into(),
                json!({"capabilities": {}}),
            )
            .into(),
        );
        session.notify("initialized", json!({}));
        session.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": "file:///bench/game.kif", "languageId": "gdl",
                                    "version": 1, "text": text}}),
        );
        session.wait(1);
        session
    }

    fn send(&self, message: Message) {
        self.connection.sender.send(message).unwrap();
    }

    fn notify(&self, method: &str, params: Value) {
        self.send(Notification::new(method.into(), params).into());
    }

    fn wait(&self, version: i32) -> usize {
        loop {
            let message = self
                .connection
                .receiver
                .recv_timeout(Duration::from_secs(60))
                .expect("the server answers");
            if let Message::Notification(n) = message
                && n.method == "textDocument/publishDiagnostics"
                && n.params["version"] == version
            {
                return n.params["diagnostics"].as_array().map_or(0, Vec::len);
            }
        }
    }

    /// Types `x` at (line, character), or deletes it again: one keystroke; waits for its
    /// diagnostics.
    fn keystroke(&mut self, line: u32, character: u32) -> Duration {
        self.version += 1;
        let insert = self.version % 2 == 0;
        let end = if insert { character } else { character + 1 };
        let change = json!({
            "textDocument": {"uri": "file:///bench/game.kif", "version": self.version},
            "contentChanges": [{
                "range": {"start": {"line": line, "character": character},
                          "end": {"line": line, "character": end}},
                "text": if insert { "x" } else { "" },
            }],
        });
        let start = Instant::now();
        self.notify("textDocument/didChange", change);
        self.wait(self.version);
        start.elapsed()
    }
}

impl Drop for Session {
    fn drop(&mut self) {
        self.send(Request::new(RequestId::from(2), "shutdown".into(), Value::Null).into());
        self.notify("exit", Value::Null);
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

fn bench(c: &mut Criterion) {
    let Some(shared) = ggp_testdata::shared_or_skip("keystroke benchmark") else {
        return;
    };
    let games = [
        (
            "arithmetic-stupid (425 KB)",
            "corpus/games/ric2b-ggp-base/arithmetic-stupid.kif",
        ),
        ("connectFour", "corpus/games/base/connectFour.kif"),
    ];
    let mut group = c.benchmark_group("lsp");
    group.sample_size(30);
    for (name, path) in games {
        let text = std::fs::read_to_string(shared.join(path)).expect("corpus file");
        // A keystroke after the first letter of the name that opens the middle form.
        let lines: Vec<&str> = text.lines().collect();
        let middle = (lines.len() / 2..lines.len())
            .find(|&k| lines[k].trim_start().starts_with('(') && lines[k].trim().len() > 5)
            .expect("a form in the second half");
        let column = (lines[middle].len() - lines[middle].trim_start().len() + 2) as u32;
        let mut session = Session::open(&text);
        group.bench_function(format!("keystroke to diagnostics/{name}"), |b| {
            b.iter_custom(|iterations| {
                (0..iterations)
                    .map(|_| session.keystroke(middle as u32, column))
                    .sum()
            })
        });
        let document = Document::new(text.clone(), 1, Notation::Prefix);
        group.bench_function(format!("check path (Analysis::new)/{name}"), |b| {
            b.iter(|| {
                Analysis::new(std::hint::black_box(&document))
                    .diagnostics
                    .len()
            })
        });
        let analysis = Analysis::new(&document);
        let uri = lsp_types::Url::parse("file:///bench/game.kif").unwrap();
        let settings = gdl_lsp::features::Settings::default();
        group.bench_function(format!("diagnostics to protocol/{name}"), |b| {
            b.iter(|| gdl_lsp::features::diagnostics(&analysis, &uri, &settings).len())
        });
    }
    group.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
