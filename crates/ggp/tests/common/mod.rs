//! What the tests of the `ggp` binary share: running it, temporary files, and players that
//! record what they are sent.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::mpsc::Receiver;
use std::time::Duration;

/// The `ggp` binary, run in the workspace, with its data directory (where the match database
/// lives by default) under the target directory.
pub fn ggp_command(args: &[&str]) -> Command {
    let mut command = Command::new(env!("CARGO_BIN_EXE_ggp"));
    command
        .args(args)
        .current_dir(workspace())
        .env("XDG_DATA_HOME", data_home());
    command
}

pub fn ggp(args: &[&str]) -> Output {
    ggp_command(args).output().expect("run ggp")
}

pub fn data_home() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli/data")
}

pub fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

pub fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).into_owned()
}

/// A file under the target directory for one test.
pub fn temp_file(name: &str, contents: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, contents).unwrap();
    path
}

/// A database path for one test, with no file left from an earlier run.
pub fn temp_db(name: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli/db");
    ggp_testdata::fresh_sqlite_file(&dir, name)
}

/// A process a test started: killed when the test ends, passed or panicked (a player left
/// running would keep `cargo test` waiting on its output).
pub struct Spawned(pub std::process::Child);

impl std::ops::Deref for Spawned {
    type Target = std::process::Child;
    fn deref(&self) -> &std::process::Child {
        &self.0
    }
}

impl std::ops::DerefMut for Spawned {
    fn deref_mut(&mut self) -> &mut std::process::Child {
        &mut self.0
    }
}

impl Drop for Spawned {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `ggp player` on a free port; returns the process and its URL.
pub fn spawn_player(strategy: &str) -> (Spawned, String) {
    let (child, url, _log) = spawn_player_with_log(strategy);
    (child, url)
}

/// Starts `ggp player` on a free port; returns the process, its URL, and what it writes on
/// standard error after its first line (its request log), as it comes.
pub fn spawn_player_with_log(
    strategy: &str,
) -> (Spawned, String, std::sync::Arc<std::sync::Mutex<String>>) {
    let mut child = ggp_command(&[
        "player",
        "--port",
        "0",
        "--host",
        "127.0.0.1",
        "--strategy",
        strategy,
    ])
    .stderr(std::process::Stdio::piped())
    .spawn()
    .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let address = listening_address(&mut stderr);
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    drain_into(stderr, log.clone());
    (Spawned(child), format!("http://{address}"), log)
}

/// The address in the first line a `ggp player` writes to standard error (`… listening on
/// ADDRESS …`).
pub fn listening_address(stderr: &mut impl std::io::BufRead) -> String {
    let mut line = String::new();
    stderr.read_line(&mut line).unwrap();
    line.split("listening on ")
        .nth(1)
        .and_then(|rest| rest.split_whitespace().next())
        .unwrap_or_else(|| panic!("no address in {line:?}"))
        .to_owned()
}

/// `ggp matches export ID --db FILE`, parsed.
pub fn export(db: &Path, id: &str) -> serde_json::Value {
    let out = ggp(&["matches", "export", id, "--db", db.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out.stderr));
    serde_json::from_slice(&out.stdout).unwrap()
}

pub fn array_len(value: &serde_json::Value) -> usize {
    value.as_array().unwrap().len()
}

/// A scripted player: every request's body is sent down the returned channel as it arrives,
/// and answered with what `reply` says (`None`: the connection is held open, unanswered,
/// until the test process ends). Returns its URL.
pub fn scripted_player(
    reply: impl Fn(&str) -> Option<String> + Send + Sync + 'static,
) -> (String, Receiver<String>) {
    use std::io::{Read, Write};
    use std::sync::{Arc, Mutex};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let (tx, rx) = std::sync::mpsc::channel();
    let tx = Arc::new(Mutex::new(tx));
    let reply = Arc::new(reply);
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let (tx, reply) = (tx.clone(), reply.clone());
            std::thread::spawn(move || {
                let mut data = Vec::new();
                let mut buf = [0u8; 8192];
                let body = loop {
                    let Ok(n) = stream.read(&mut buf) else { return };
                    if n == 0 {
                        return;
                    }
                    data.extend_from_slice(&buf[..n]);
                    let Some(end) = data.windows(4).position(|w| w == b"\r\n\r\n") else {
                        continue;
                    };
                    let head = String::from_utf8_lossy(&data[..end]).to_ascii_lowercase();
                    let length: usize = head
                        .lines()
                        .find_map(|l| {
                            l.strip_prefix("content-length:")
                                .map(|v| v.trim().parse().unwrap())
                        })
                        .unwrap_or(0);
                    // Content-Length counts bytes.
                    if data.len() - end - 4 >= length {
                        break String::from_utf8_lossy(&data[end + 4..end + 4 + length])
                            .into_owned();
                    }
                };
                let answer = reply(&body);
                let _ = tx.lock().unwrap().send(body);
                match answer {
                    Some(answer) => {
                        let _ = write!(
                            stream,
                            "HTTP/1.0 200 OK\r\nContent-Type: text/acl\r\nContent-Length: {}\r\n\r\n{answer}",
                            answer.len()
                        );
                    }
                    None => std::thread::sleep(Duration::from_secs(600)),
                }
            });
        }
    });
    (url, rx)
}

/// A player for the tests that interrupt `ggp match`: READY to START, `wait` to the first
/// `quick` PLAYs, no answer to any later PLAY, ABORTED to ABORT. Every request's body is sent
/// down the channel as it arrives.
pub fn stalling_player(quick: usize) -> (String, Receiver<String>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    let plays = AtomicUsize::new(0);
    scripted_player(move |body| {
        if body.starts_with("(START") {
            Some("READY".into())
        } else if body.starts_with("(PLAY") {
            (plays.fetch_add(1, Ordering::SeqCst) < quick).then(|| "wait".into())
        } else if body.starts_with("(ABORT") {
            Some("ABORTED".into())
        } else {
            Some("DONE".into())
        }
    })
}

/// POSTs `body` to a player at `url` (`http://host:port`) and returns the status code and the
/// reply body.
pub fn post(url: &str, body: &[u8]) -> (u16, String) {
    use std::io::{Read, Write};
    let address = url.trim_start_matches("http://").trim_end_matches('/');
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .unwrap();
    write!(
        stream,
        "POST / HTTP/1.0\r\nHost: {address}\r\nContent-Type: text/acl\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .unwrap();
    stream.write_all(body).unwrap();
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).unwrap();
    let reply = String::from_utf8_lossy(&reply).into_owned();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    (status, body.to_string())
}

/// A URL where nothing listens (a port that was just free).
pub fn closed_url() -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    drop(listener);
    url
}

/// A game that never ends: one role, one move, the same state for ever.
pub const FOREVER: &str = "(role a)
(init (at 0))
(<= (legal a go) (true (at 0)))
(<= (next (at 0)) (true (at 0)))
(<= terminal (true (at 1)))
(<= (goal a 0) (true (at 0)))
(<= (goal a 100) (true (at 1)))
";

/// A `ggp serve` process, killed when dropped.
pub struct Served {
    pub child: std::process::Child,
    /// `http://127.0.0.1:port`
    pub url: String,
    pub token: String,
    /// What it wrote on standard error.
    pub log: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Drop for Served {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The admin token the tests give `ggp serve`.
pub const ADMIN_TOKEN: &str = "an-admin-token-for-tests";

/// Starts `ggp serve` on a free port with this database (and `extra` arguments), and waits
/// until it listens.
pub fn spawn_server(db: &Path, extra: &[&str]) -> Served {
    use std::io::BufRead;
    let mut args = vec![
        "serve",
        "--addr",
        "127.0.0.1:0",
        "--db",
        db.to_str().unwrap(),
        "--admin-token",
        ADMIN_TOKEN,
    ];
    args.extend_from_slice(extra);
    let mut child = ggp_command(&args)
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stderr = std::io::BufReader::new(child.stderr.take().unwrap());
    let log = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
    let url = loop {
        let mut line = String::new();
        if stderr.read_line(&mut line).unwrap() == 0 {
            panic!("ggp serve ended: {}", log.lock().unwrap());
        }
        log.lock().unwrap().push_str(&line);
        if let Some(rest) = line.split("listening on ").nth(1) {
            break rest
                .split_whitespace()
                .next()
                .unwrap()
                .trim_end_matches('/')
                .to_string();
        }
    };
    drain_into(stderr, log.clone());
    Served {
        child,
        url,
        token: ADMIN_TOKEN.into(),
        log,
    }
}

/// An HTTP/1.0 request: the status, the headers (lower-case names) and the body.
pub fn http(
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<&str>,
) -> (u16, Vec<(String, String)>, String) {
    use std::io::{Read, Write};
    let rest = url.trim_start_matches("http://");
    let (address, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    let mut head = format!("{method} {path} HTTP/1.0\r\nHost: {address}\r\n");
    if let Some(t) = token {
        head.push_str(&format!("Authorization: Bearer {t}\r\n"));
    }
    if let Some(b) = body {
        head.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            b.len()
        ));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes()).unwrap();
    if let Some(b) = body {
        stream.write_all(b.as_bytes()).unwrap();
    }
    let mut reply = Vec::new();
    stream.read_to_end(&mut reply).unwrap();
    let reply = String::from_utf8_lossy(&reply).into_owned();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap_or((&reply, ""));
    let mut lines = head.lines();
    let status = lines
        .next()
        .and_then(|l| l.split_whitespace().nth(1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let headers = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_string()))
        .collect();
    (status, headers, body.to_string())
}

/// A JSON request; the status and the body as JSON (`null` if it is not JSON).
pub fn api(
    method: &str,
    url: &str,
    token: Option<&str>,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let body = body.map(|b| b.to_string());
    let (status, _, text) = http(method, url, token, body.as_deref());
    (
        status,
        serde_json::from_str(&text).unwrap_or(serde_json::Value::Null),
    )
}

/// The events of a match's stream, from its beginning to its `end` event: (name, data).
pub fn events(url: &str) -> Vec<(String, serde_json::Value)> {
    use std::io::{BufRead, Write};
    let rest = url.trim_start_matches("http://");
    let (address, path) = rest.split_at(rest.find('/').unwrap());
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(120)))
        .unwrap();
    write!(stream, "GET {path} HTTP/1.0\r\nHost: {address}\r\n\r\n").unwrap();
    let mut reader = std::io::BufReader::new(stream);
    let mut out = Vec::new();
    let (mut name, mut data) = (String::new(), String::new());
    let mut in_body = false;
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap() == 0 {
            return out;
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if !in_body {
            in_body = line.is_empty();
            continue;
        }
        if let Some(v) = line.strip_prefix("event:") {
            name = v.trim().to_string();
        } else if let Some(v) = line.strip_prefix("data:") {
            data.push_str(v.trim_start());
        } else if line.is_empty() && !data.is_empty() {
            let value = serde_json::from_str(&data).unwrap();
            let done = name == "end";
            out.push((std::mem::take(&mut name), value));
            data.clear();
            if done {
                return out;
            }
        }
    }
}

/// Polls `what` every 50 ms until it gives something (at most `seconds`).
pub fn wait_for<T>(seconds: u64, mut what: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(seconds);
    loop {
        if let Some(v) = what() {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "not within {seconds} s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A fresh PostgreSQL database for a test, as the URL `--db` takes; `None` (skipped, said on
/// stderr) without `GGP_TEST_POSTGRES` (see [`ggp_testdata::fresh_postgres`]).
#[allow(dead_code)]
pub fn temp_postgres(name: &str) -> Option<String> {
    ggp_testdata::fresh_postgres(name)
}

/// Appends what a child process still writes to `log`, on a thread of its own (so that the
/// child never blocks on a full pipe).
#[allow(dead_code)]
pub fn drain_into(
    mut from: impl std::io::Read + Send + 'static,
    log: std::sync::Arc<std::sync::Mutex<String>>,
) {
    std::thread::spawn(move || {
        let mut buf = [0u8; 4096];
        while let Ok(n) = from.read(&mut buf) {
            if n == 0 {
                break;
            }
            log.lock()
                .unwrap()
                .push_str(&String::from_utf8_lossy(&buf[..n]));
        }
    });
}
