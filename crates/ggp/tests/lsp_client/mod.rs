//! A minimal language client for the tests: it starts `ggp lsp`, speaks JSON-RPC with
//! `Content-Length` framing over its standard input and output, as an editor does, and keeps
//! the diagnostics the server publishes.

#![allow(dead_code)]

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// How long any answer may take before the test calls it a hang (generous: the machine is
/// shared and the tests run unoptimised code).
pub const PATIENCE: Duration = Duration::from_secs(120);

pub struct Client {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    next_id: i64,
    /// The latest diagnostics published for each URI, with their version.
    pub diagnostics: HashMap<String, (Option<i64>, Vec<Value>)>,
    /// Server-to-client notifications other than diagnostics, in order.
    pub notifications: Vec<Value>,
}

pub fn uri(name: &str) -> String {
    format!("file:///nowhere/{name}")
}

pub fn pos(line: u64, character: u64) -> Value {
    json!({"line": line, "character": character})
}

pub fn range(l1: u64, c1: u64, l2: u64, c2: u64) -> Value {
    json!({"start": pos(l1, c1), "end": pos(l2, c2)})
}

impl Client {
    pub fn start() -> Client {
        Client::start_with(json!({}))
    }

    /// Starts the server and goes through `initialize` (with these client capabilities) and
    /// `initialized`.
    pub fn start_with(capabilities: Value) -> Client {
        Client::start_with_options(capabilities, Value::Null)
    }

    pub fn start_with_options(capabilities: Value, options: Value) -> Client {
        let mut client = Client::spawn();
        let init = client.request(
            "initialize",
            json!({"processId": null, "rootUri": null, "capabilities": capabilities,
                   "initializationOptions": options}),
        );
        assert!(init.get("result").is_some(), "initialize failed: {init}");
        client.notify("initialized", json!({}));
        client
    }

    /// Starts the server without initializing it.
    pub fn spawn() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ggp"))
            .arg("lsp")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("ggp lsp starts");
        let stdout = child.stdout.take().expect("piped");
        let (sender, messages) = channel();
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stdout);
            loop {
                let mut length = None;
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(n) = line.strip_prefix("Content-Length: ") {
                        length = n.parse::<usize>().ok();
                    }
                }
                let mut body = vec![0; length.expect("every message has a Content-Length")];
                if reader.read_exact(&mut body).is_err() {
                    return;
                }
                let message: Value = serde_json::from_slice(&body).expect("the server sends JSON");
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        let stdin = child.stdin.take();
        Client {
            child,
            stdin,
            messages,
            next_id: 0,
            diagnostics: HashMap::new(),
            notifications: Vec::new(),
        }
    }

    pub fn send(&mut self, message: Value) {
        let body = message.to_string();
        let stdin = self.stdin.as_mut().expect("stdin open");
        write!(stdin, "Content-Length: {}\r\n\r\n{body}", body.len()).expect("server reads");
        stdin.flush().expect("server reads");
    }

    /// Writes bytes as they are, framed or not, as a broken or hostile client would.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(bytes).expect("server reads");
        stdin.flush().expect("server reads");
    }

    /// Sends several messages in one write, as a burst.
    pub fn send_all(&mut self, messages: &[Value]) {
        let mut bytes = Vec::new();
        for message in messages {
            let body = message.to_string();
            write!(bytes, "Content-Length: {}\r\n\r\n{body}", body.len()).unwrap();
        }
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(&bytes).expect("server reads");
        stdin.flush().expect("server reads");
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request and waits for its response (the whole response object).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        self.wait_for(|m| m.get("id") == Some(&json!(id)) && m.get("method").is_none())
    }

    /// The `result` of a request that must succeed.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        let response = self.request(method, params.clone());
        match response.get("result") {
            Some(result) => result.clone(),
            None => panic!("{method} {params} failed: {response}"),
        }
    }

    fn record(&mut self, message: &Value) {
        if message.get("method") == Some(&json!("textDocument/publishDiagnostics")) {
            let params = &message["params"];
            self.diagnostics.insert(
                params["uri"].as_str().unwrap().to_string(),
                (
                    params["version"].as_i64(),
                    params["diagnostics"].as_array().unwrap().clone(),
                ),
            );
        } else if message.get("method").is_some() {
            self.notifications.push(message.clone());
        }
    }

    /// Reads messages until one satisfies `wanted`; panics after [`PATIENCE`].
    pub fn wait_for(&mut self, wanted: impl Fn(&Value) -> bool) -> Value {
        let deadline = Instant::now() + PATIENCE;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(message) => {
                    self.record(&message);
                    if wanted(&message) {
                        return message;
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!("the server did not answer in time"),
                Err(RecvTimeoutError::Disconnected) => panic!("the server stopped"),
            }
        }
    }

    /// The diagnostics published for `uri` at `version` (waiting for them).
    pub fn diagnostics_at(&mut self, uri: &str, version: i64) -> Vec<Value> {
        if let Some((Some(v), d)) = self.diagnostics.get(uri)
            && *v == version
        {
            return d.clone();
        }
        let message = self.wait_for(|m| {
            m.get("method") == Some(&json!("textDocument/publishDiagnostics"))
                && m["params"]["uri"] == json!(uri)
                && m["params"]["version"] == json!(version)
        });
        message["params"]["diagnostics"].as_array().unwrap().clone()
    }

    pub fn open(&mut self, uri: &str, language: &str, text: &str) {
        self.notify(
            "textDocument/didOpen",
            json!({"textDocument": {"uri": uri, "languageId": language, "version": 1, "text": text}}),
        );
    }

    /// `shutdown`, then `exit`; the server's exit status.
    pub fn shutdown(mut self) -> i32 {
        let response = self.request("shutdown", Value::Null);
        assert_eq!(response["result"], Value::Null, "{response}");
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    pub fn wait_exit(mut self) -> i32 {
        drop(self.stdin.take());
        let deadline = Instant::now() + PATIENCE;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status.code().unwrap_or(-1);
            }
            assert!(Instant::now() < deadline, "the server did not exit");
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    pub fn close_stdin(&mut self) {
        drop(self.stdin.take());
    }
}

impl Drop for Client {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Byte offset of a (line, UTF-16 character) position, computed independently of the server.
pub fn offset_of(text: &str, line: u64, character: u64) -> usize {
    let mut current = 0;
    let mut start = 0;
    let bytes = text.as_bytes();
    let mut i = 0;
    while current < line && i < bytes.len() {
        if bytes[i] == b'\n' || (bytes[i] == b'\r' && bytes.get(i + 1) != Some(&b'\n')) {
            current += 1;
            start = i + 1;
        }
        i += 1;
    }
    if current < line {
        return text.len();
    }
    let mut units = 0;
    for (k, c) in text[start..].char_indices() {
        if c == '\n' || c == '\r' || units >= character {
            return start + k;
        }
        units += c.len_utf16() as u64;
    }
    text.len()
}

/// (line, UTF-16 character) of a byte offset, computed independently of the server.
pub fn position_of(text: &str, offset: usize) -> (u64, u64) {
    let before = &text[..offset];
    let mut line = 0;
    let mut start = 0;
    let bytes = before.as_bytes();
    for (i, &b) in bytes.iter().enumerate() {
        if b == b'\n' || (b == b'\r' && text.as_bytes().get(i + 1) != Some(&b'\n')) {
            line += 1;
            start = i + 1;
        }
    }
    let character: usize = before[start..]
        .chars()
        .filter(|&c| c != '\r')
        .map(char::len_utf16)
        .sum();
    (line, character as u64)
}

/// Applies text edits (non-overlapping, as the protocol requires) to a text.
pub fn apply_edits(text: &str, edits: &[Value]) -> String {
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            let r = &e["range"];
            let start = offset_of(
                text,
                r["start"]["line"].as_u64().unwrap(),
                r["start"]["character"].as_u64().unwrap(),
            );
            let end = offset_of(
                text,
                r["end"]["line"].as_u64().unwrap(),
                r["end"]["character"].as_u64().unwrap(),
            );
            (start, end, e["newText"].as_str().unwrap().to_string())
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (start, end, new) in spans {
        out.replace_range(start..end, &new);
    }
    out
}

/// Decodes semantic tokens into (line, start, length, type index, modifiers).
pub fn decode_tokens(data: &[Value]) -> Vec<(u64, u64, u64, u64, u64)> {
    let mut out = Vec::new();
    let (mut line, mut start) = (0, 0);
    for chunk in data.chunks(5) {
        let n: Vec<u64> = chunk.iter().map(|v| v.as_u64().unwrap()).collect();
        if n[0] > 0 {
            line += n[0];
            start = n[1];
        } else {
            start += n[1];
        }
        out.push((line, start, n[2], n[3], n[4]));
    }
    out
}
