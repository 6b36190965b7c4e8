//! Every corpus game through `ggp lsp`: the diagnostics it publishes are exactly those of
//! `ggp check --format json --max-per-code 0` (codes, severities, messages, ranges, related
//! places; the server publishes every diagnostic, as `--max-per-code 0` prints them), and every
//! request the server offers, at places spread over the file, gets an answer: none panics
//! (an internal error) and none hangs (the client's patience is bounded).

mod lsp_client;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use ggp_testdata::{corpus_files, parallel_map, relative, shared_or_skip, threads};
use lsp_client::{Client, pos, position_of, range};
use serde_json::{Value, json};

fn lsp_range(text: &str, start: usize, end: usize) -> Value {
    let (l1, c1) = position_of(text, start);
    let (l2, c2) = position_of(text, end);
    range(l1, c1, l2, c2)
}

/// What the server must publish for a diagnostic of `ggp check --format json`.
fn expected(text: &str, d: &Value, uri: &str) -> Value {
    let mut message = d["message"].as_str().unwrap().to_string();
    if let Some(help) = d["help"].as_str() {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    let offset = |v: &Value| v.as_u64().unwrap() as usize;
    let related: Vec<Value> = d["related"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            json!({"location": {"uri": uri, "range": lsp_range(text, offset(&r["start"]), offset(&r["end"]))},
                   "message": r["message"]})
        })
        .collect();
    json!({
        "code": d["code"],
        "severity": match d["severity"].as_str().unwrap() {
            "error" => 1, "warning" => 2, _ => 3,
        },
        "message": message,
        "range": lsp_range(text, offset(&d["start"]), offset(&d["end"])),
        "related": related,
    })
}

fn published(d: &Value) -> Value {
    json!({
        "code": d["code"],
        "severity": d["severity"],
        "message": d["message"],
        "range": d["range"],
        "related": d.get("relatedInformation").cloned().unwrap_or(json!([])),
    })
}

/// The answer must be a result, or a refusal the protocol allows (never an internal error).
fn answered(method: &str, response: &Value, file: &str) {
    if let Some(error) = response.get("error") {
        assert_ne!(
            error["code"], -32603,
            "{file}: {method} failed inside the server: {error}"
        );
        assert_eq!(
            error["code"], -32803,
            "{file}: {method} was refused unexpectedly: {error}"
        );
    } else {
        assert!(
            response.get("result").is_some(),
            "{file}: {method}: {response}"
        );
    }
}

/// `files` through a server of their own: their diagnostics compared with `ggp check`'s
/// (`by_file`) and every request answered; the number of diagnostics compared.
fn through_one_server(
    shared: &Path,
    files: &[&PathBuf],
    by_file: &HashMap<String, Vec<Value>>,
) -> usize {
    let mut client = Client::start();
    let mut compared = 0;
    for path in files {
        let name = relative(shared, path).to_string();
        let text = String::from_utf8(std::fs::read(path).unwrap()).expect("the corpus is UTF-8");
        let uri = format!("file://{}", path.display()).replace(' ', "%20");
        client.open(&uri, "gdl", &text);
        let got: Vec<Value> = client
            .diagnostics_at(&uri, 1)
            .iter()
            .map(published)
            .collect();
        let want: Vec<Value> = by_file
            .get(&path.display().to_string())
            .map(|ds| ds.iter().map(|d| expected(&text, d, &uri)).collect())
            .unwrap_or_default();
        assert_eq!(got, want, "{name}: the server and `ggp check` disagree");
        compared += got.len();

        let doc = json!({"uri": uri});
        let syntax_errors = want
            .iter()
            .any(|d| d["severity"] == 1 && d["code"].as_str().unwrap().starts_with('S'));
        for method in [
            "textDocument/semanticTokens/full",
            "textDocument/documentSymbol",
        ] {
            let response = client.request(method, json!({"textDocument": doc}));
            assert!(
                response.get("result").is_some(),
                "{name}: {method}: {response}"
            );
        }
        let formatting = client.request(
            "textDocument/formatting",
            json!({"textDocument": doc, "options": {"tabSize": 4, "insertSpaces": true}}),
        );
        assert_eq!(
            formatting.get("error").is_some(),
            syntax_errors,
            "{name}: formatting: {formatting}"
        );
        let (last_line, last_col) = position_of(&text, text.len());
        let actions = client.request(
            "textDocument/codeAction",
            json!({"textDocument": doc, "range": range(0, 0, last_line, last_col),
                   "context": {"diagnostics": []}}),
        );
        answered("codeAction", &actions, &name);
        // Places spread over the file, on character boundaries.
        let mut offsets: Vec<usize> = (0..12).map(|k| text.len() * k / 11).collect();
        for offset in &mut offsets {
            while !text.is_char_boundary(*offset) {
                *offset -= 1;
            }
        }
        for offset in offsets {
            let (line, character) = position_of(&text, offset);
            let at = json!({"textDocument": doc, "position": pos(line, character)});
            for method in [
                "textDocument/hover",
                "textDocument/definition",
                "textDocument/documentHighlight",
                "textDocument/completion",
                "textDocument/prepareRename",
            ] {
                answered(method, &client.request(method, at.clone()), &name);
            }
            let mut references = at.clone();
            references["context"] = json!({"includeDeclaration": true});
            answered(
                "references",
                &client.request("textDocument/references", references),
                &name,
            );
        }
        answered(
            "workspace/symbol",
            &client.request("workspace/symbol", json!({"query": "a"})),
            &name,
        );
        client.notify("textDocument/didClose", json!({"textDocument": doc}));
    }
    assert_eq!(client.shutdown(), 0);
    compared
}

#[test]
fn corpus_diagnostics_match_ggp_check_and_every_request_is_answered() {
    let Some(shared) = shared_or_skip("corpus_diagnostics_match_ggp_check") else {
        return;
    };
    let files = corpus_files(&shared);
    assert!(files.len() > 900, "the corpus has {} games", files.len());
    let output = Command::new(env!("CARGO_BIN_EXE_ggp"))
        .args(["check", "--format", "json", "--max-per-code", "0"])
        .args(&files)
        .output()
        .expect("ggp check runs");
    let mut by_file: HashMap<String, Vec<Value>> = HashMap::new();
    for line in String::from_utf8(output.stdout).unwrap().lines() {
        let d: Value = serde_json::from_str(line).unwrap();
        by_file
            .entry(d["file"].as_str().unwrap().to_string())
            .or_default()
            .push(d);
    }
    // A server per thread of `parallel_map`, each with its share of the games: a server answers
    // one request at a time, and one server for all would keep one core busy for half a minute.
    let servers = threads();
    let shares: Vec<Vec<&PathBuf>> = (0..servers)
        .map(|k| files.iter().skip(k).step_by(servers).collect())
        .collect();
    let compared: usize = parallel_map(&shares, |share| {
        through_one_server(&shared, share, &by_file)
    })
    .into_iter()
    .sum();
    eprintln!(
        "{} corpus files, {compared} diagnostics, identical through the server",
        files.len()
    );
}
