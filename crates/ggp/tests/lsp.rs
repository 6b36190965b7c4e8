//! `ggp lsp` driven over standard input and output as an editor drives it: initialize, open,
//! change (incrementally), and every request the server offers, down to shutdown and exit.

mod lsp_client;

use lsp_client::{Client, apply_edits, decode_tokens, pos, range, uri};
use serde_json::{Value, json};

/// A game whose lines hold characters outside the Basic Multilingual Plane (`𝄞`: 4 bytes, 2
/// UTF-16 units, 1 character) and other non-ASCII ones (`à`, `—`, `♞`) before its problems.
const GAME: &str = "; Jeu à deux — ♞ 𝄞\n\
(role wh𝄞te)\n\
(<= (legal wh𝄞te (move ?x)) (true (cell ?y)))\n\
(<= (next (cell ?z)) (true (cell ?z)))\n\
(init (cell 1))\n\
(<= terminal (true (cell 2)))\n\
(goal wh𝄞te 100)\n";

fn codes_and_ranges(diagnostics: &[Value]) -> Vec<(String, Value)> {
    diagnostics
        .iter()
        .map(|d| (d["code"].as_str().unwrap().to_string(), d["range"].clone()))
        .collect()
}

fn open_game(client: &mut Client, name: &str, text: &str) -> String {
    let uri = uri(name);
    client.open(&uri, "gdl", text);
    uri
}

#[test]
fn initialize_announces_utf16_incremental_sync_and_every_feature() {
    let mut client = Client::spawn();
    let init = client.call("initialize", json!({"processId": null, "capabilities": {}}));
    let caps = &init["capabilities"];
    assert_eq!(caps["positionEncoding"], "utf-16");
    assert_eq!(caps["textDocumentSync"]["change"], 2, "incremental");
    for feature in [
        "hoverProvider",
        "definitionProvider",
        "referencesProvider",
        "documentSymbolProvider",
        "workspaceSymbolProvider",
        "documentFormattingProvider",
        "documentRangeFormattingProvider",
        "renameProvider",
        "completionProvider",
        "codeActionProvider",
        "semanticTokensProvider",
    ] {
        assert!(
            caps.get(feature).is_some_and(|v| v != &json!(false)),
            "{feature}"
        );
    }
    assert_eq!(
        caps["semanticTokensProvider"]["legend"]["tokenTypes"],
        json!([
            "keyword",
            "function",
            "struct",
            "enumMember",
            "variable",
            "number",
            "comment"
        ])
    );
    assert_eq!(init["serverInfo"]["name"], "ggp lsp");
    client.notify("initialized", json!({}));
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn diagnostics_have_exact_utf16_ranges_after_multibyte_characters() {
    let mut client = Client::start();
    let uri = open_game(&mut client, "game.kif", GAME);
    let diagnostics = client.diagnostics_at(&uri, 1);
    // `?x` on line 2 starts at UTF-16 unit 24 (character 23, byte 26): `wh𝄞te` is 6 units.
    assert_eq!(
        codes_and_ranges(&diagnostics),
        vec![
            ("E001".into(), range(2, 24, 2, 26)),
            ("W010".into(), range(2, 41, 2, 43)),
        ]
    );
    let e001 = &diagnostics[0];
    assert_eq!(e001["severity"], 1);
    assert_eq!(e001["source"], "ggp");
    assert!(
        e001["codeDescription"]["href"]
            .as_str()
            .unwrap()
            .ends_with("/docs/codes/E001.md")
    );
    assert!(
        e001["message"]
            .as_str()
            .unwrap()
            .starts_with("unsafe rule: `?x` in the head is not bound")
    );
    assert_eq!(
        e001["relatedInformation"][0]["location"],
        json!({"uri": uri, "range": range(2, 0, 2, 46)})
    );
    let w010 = &diagnostics[1];
    assert_eq!(w010["severity"], 2);
    assert_eq!(w010["tags"], json!([1]), "unnecessary");

    // A syntax error after non-ASCII text on its own line.
    let broken = "; ü 𝄞\n(role r) (p é 𝄞 (q\n";
    let uri2 = open_game(&mut client, "broken.kif", broken);
    let diagnostics = client.diagnostics_at(&uri2, 1);
    // The unclosed `(` of `(p`: character 9, UTF-16 unit 9; then `(q` at unit 16 (after `𝄞`).
    assert_eq!(
        codes_and_ranges(&diagnostics),
        vec![
            ("S001".into(), range(1, 9, 1, 10)),
            ("S001".into(), range(1, 17, 1, 18)),
        ]
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn related_locations_show_the_other_rules_of_a_negative_cycle() {
    let mut client = Client::start();
    let text = "(<= (p ?x) (q ?x))\n(<= (q ?x) (true (cell ?x)) (not (p ?x)))\n";
    let uri = open_game(&mut client, "cycle.kif", text);
    let diagnostics = client.diagnostics_at(&uri, 1);
    let e002 = diagnostics
        .iter()
        .find(|d| d["code"] == "E002")
        .expect("E002");
    assert_eq!(e002["range"], range(1, 33, 1, 39));
    assert_eq!(
        e002["relatedInformation"],
        json!([{"location": {"uri": uri, "range": range(0, 11, 0, 17)},
                "message": "`p/1` depends on `q/1` here"}])
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn incremental_changes_update_the_diagnostics() {
    let mut client = Client::start();
    let uri = open_game(&mut client, "game.kif", GAME);
    client.diagnostics_at(&uri, 1);
    // Bind `?x`: replace the `?y` of line 2 (units 41..43) by `?x`.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"range": range(2, 41, 2, 43), "text": "?x"}]}),
    );
    assert_eq!(client.diagnostics_at(&uri, 2), Vec::<Value>::new());
    // Two changes in one notification, the second relative to the first's result: a line of
    // non-ASCII text above, then `?x` in the head made `?w` again.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 3},
               "contentChanges": [
                   {"range": range(0, 0, 0, 0), "text": "; 𝄞𝄞 ajouté\r\n"},
                   {"range": range(3, 24, 3, 26), "text": "?w"}]}),
    );
    let diagnostics = client.diagnostics_at(&uri, 3);
    assert_eq!(
        codes_and_ranges(&diagnostics),
        vec![
            ("E001".into(), range(3, 24, 3, 26)),
            ("W010".into(), range(3, 41, 3, 43)),
        ]
    );
    // Typing inside a name right after a surrogate pair: `wh𝄞te` becomes `wh𝄞ete` on line 2.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 4},
               "contentChanges": [{"range": range(2, 10, 2, 10), "text": "e"}]}),
    );
    let diagnostics = client.diagnostics_at(&uri, 4);
    let codes: Vec<String> = codes_and_ranges(&diagnostics)
        .into_iter()
        .map(|(c, _)| c)
        .collect();
    // The role no longer matches the one `legal` and `goal` use.
    assert!(codes.contains(&"W013".to_string()), "{codes:?}");
    // The same text opened afresh gives the same diagnostics.
    let expected_text = "; 𝄞𝄞 ajouté\r\n; Jeu à deux — ♞ 𝄞\n(role wh𝄞ete)\n\
        (<= (legal wh𝄞te (move ?w)) (true (cell ?x)))\n(<= (next (cell ?z)) (true (cell ?z)))\n\
        (init (cell 1))\n(<= terminal (true (cell 2)))\n(goal wh𝄞te 100)\n";
    let fresh = open_game(&mut client, "fresh.kif", expected_text);
    let fresh_diagnostics = client.diagnostics_at(&fresh, 1);
    let strip = |ds: &[Value]| -> Vec<Value> {
        ds.iter()
            .map(|d| {
                let mut d = d.clone();
                d.as_object_mut().unwrap().remove("relatedInformation");
                d
            })
            .collect()
    };
    assert_eq!(strip(&diagnostics), strip(&fresh_diagnostics));
    // Closing clears them.
    client.notify(
        "textDocument/didClose",
        json!({"textDocument": {"uri": uri}}),
    );
    client.wait_for(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == json!(uri)
            && m["params"]["diagnostics"] == json!([])
    });
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn a_burst_of_edits_is_checked_once_after_the_quiet_period() {
    let mut client = Client::start_with_options(json!({}), json!({"debounceMs": 2000}));
    let uri = open_game(&mut client, "burst.kif", "(role r)\n");
    client.diagnostics_at(&uri, 1);
    // Five keystrokes in one write: `(p ?x` typed a character at a time.
    let burst: Vec<Value> = ["(", "p", " ", "?", "x"]
        .iter()
        .enumerate()
        .map(|(k, c)| {
            json!({"jsonrpc": "2.0", "method": "textDocument/didChange",
                   "params": {"textDocument": {"uri": uri, "version": k + 2},
                              "contentChanges": [{"range": range(1, k as u64, 1, k as u64), "text": c}]}})
        })
        .collect();
    let sent = std::time::Instant::now();
    client.send_all(&burst);
    let first = client.wait_for(|m| m["method"] == "textDocument/publishDiagnostics");
    assert!(sent.elapsed() >= std::time::Duration::from_millis(2000));
    // Only the last version was checked: `(p ?x` is unclosed.
    assert_eq!(first["params"]["version"], 6, "{first}");
    assert_eq!(first["params"]["diagnostics"][0]["code"], "S001");
    assert_eq!(
        first["params"]["diagnostics"][0]["range"],
        range(1, 0, 1, 1)
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn formatting_uses_the_layout_of_ggp_fmt_and_refuses_syntax_errors() {
    let mut client = Client::start();
    let text = "(role   robot)  ; the only player\n(<= (legal robot (go ?x))   (true (at ?x)) (distinct ?x 𝄞))\n(init (at a))";
    let uri = open_game(&mut client, "fmt.kif", text);
    let edits = client.call(
        "textDocument/formatting",
        json!({"textDocument": {"uri": uri}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    let formatted = apply_edits(text, edits.as_array().unwrap());
    assert_eq!(formatted, gdl_syntax::format_text(text).unwrap());
    assert_eq!(
        formatted,
        "(role robot) ; the only player\n(<= (legal robot (go ?x))\n    (true (at ?x))\n    (distinct ?x 𝄞))\n(init (at a))\n"
    );
    // Range formatting touches only the forms in the range.
    let edits = client.call(
        "textDocument/rangeFormatting",
        json!({"textDocument": {"uri": uri}, "range": range(0, 2, 0, 4),
               "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    assert_eq!(
        apply_edits(text, edits.as_array().unwrap()),
        text.replacen("(role   robot)  ;", "(role robot) ;", 1)
    );
    // A text with syntax errors is not formatted.
    let broken = open_game(&mut client, "broken.kif", "(role robot\n");
    let response = client.request(
        "textDocument/formatting",
        json!({"textDocument": {"uri": broken}, "options": {"tabSize": 4, "insertSpaces": true}}),
    );
    assert_eq!(response["error"]["code"], -32803, "{response}");
    assert_eq!(
        response["error"]["message"],
        "not formatted: the file has 1 syntax error"
    );
    assert_eq!(client.shutdown(), 0);
}

fn hover_text(client: &mut Client, uri: &str, line: u64, character: u64) -> String {
    let hover = client.call(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": pos(line, character)}),
    );
    hover["contents"]["value"]
        .as_str()
        .unwrap_or_default()
        .to_string()
}

#[test]
fn hover_explains_keywords_names_variables_and_codes() {
    let mut client = Client::start();
    let uri = open_game(&mut client, "game.kif", GAME);
    // `legal` (line 2, units 5..10): the specification's words.
    let legal = hover_text(&mut client, &uri, 2, 6);
    assert!(
        legal.starts_with("**relation** `legal` — arity 2 (a GDL relation)"),
        "{legal}"
    );
    assert!(legal.contains("legal move for role r"), "{legal}");
    // `<=`.
    let rule = hover_text(&mut client, &uri, 3, 1);
    assert!(rule.starts_with("**`<=`** — a rule"), "{rule}");
    // `cell`, a function: its arity and where it is in a head.
    let cell = hover_text(&mut client, &uri, 4, 8);
    assert!(
        cell.starts_with(
            "**function** `cell` — arity 1\n\nIn 2 heads (lines 4, 5); 3 uses elsewhere."
        ),
        "{cell}"
    );
    // `?z`: where it is bound.
    let z = hover_text(&mut client, &uri, 3, 33);
    assert!(
        z.starts_with("**variable** `?z` of the rule on line 4\n\nBound on:\n- line 4:"),
        "{z}"
    );
    // `?x`, unsafe: unbound, and the diagnostic's explanation from docs/codes/E001.md.
    let x = hover_text(&mut client, &uri, 2, 25);
    assert!(
        x.contains("Bound by no positive literal of its rule."),
        "{x}"
    );
    assert!(
        x.contains("**E001** `unsafe-variable` (error; blocks reasoning)"),
        "{x}"
    );
    assert!(x.contains("*Why is this bad:* Definition 6"), "{x}");
    // A code written in a comment.
    let commented = open_game(&mut client, "c.kif", "; see W010\n(role r)\n");
    let code = hover_text(&mut client, &commented, 0, 7);
    assert!(
        code.starts_with("**W010** `singleton-variable` (warning)"),
        "{code}"
    );
    // Nothing to say about blank space.
    let nothing = client.call(
        "textDocument/hover",
        json!({"textDocument": {"uri": commented}, "position": pos(2, 0)}),
    );
    assert_eq!(nothing, Value::Null);
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn definition_references_and_highlights() {
    let mut client = Client::start();
    let text = "(role r)\n(<= (adj ?a ?b) (succ ?a ?b))\n(<= (adj ?a ?b) (succ ?b ?a))\n(succ 1 2)\n(<= (legal r (go ?x)) (adj 1 ?x))\n";
    let uri = open_game(&mut client, "nav.kif", text);
    // `adj` in the body of line 4: its definitions are the two heads.
    let definitions = client.call(
        "textDocument/definition",
        json!({"textDocument": {"uri": uri}, "position": pos(4, 24)}),
    );
    assert_eq!(
        definitions,
        json!([{"uri": uri, "range": range(1, 5, 1, 8)}, {"uri": uri, "range": range(2, 5, 2, 8)}])
    );
    let references = client.call(
        "textDocument/references",
        json!({"textDocument": {"uri": uri}, "position": pos(1, 6),
               "context": {"includeDeclaration": false}}),
    );
    assert_eq!(
        references,
        json!([{"uri": uri, "range": range(4, 23, 4, 26)}])
    );
    let all = client.call(
        "textDocument/references",
        json!({"textDocument": {"uri": uri}, "position": pos(1, 6),
               "context": {"includeDeclaration": true}}),
    );
    assert_eq!(all.as_array().unwrap().len(), 3);
    // A variable's definition is where it is bound.
    let x = client.call(
        "textDocument/definition",
        json!({"textDocument": {"uri": uri}, "position": pos(4, 18)}),
    );
    assert_eq!(x, json!([{"uri": uri, "range": range(4, 29, 4, 31)}]));
    // Variables belong to their rule: `?a` of line 1 is not `?a` of line 2.
    let a = client.call(
        "textDocument/references",
        json!({"textDocument": {"uri": uri}, "position": pos(1, 10),
               "context": {"includeDeclaration": true}}),
    );
    assert_eq!(
        a,
        json!([{"uri": uri, "range": range(1, 9, 1, 11)}, {"uri": uri, "range": range(1, 22, 1, 24)}])
    );
    let highlights = client.call(
        "textDocument/documentHighlight",
        json!({"textDocument": {"uri": uri}, "position": pos(3, 2)}),
    );
    assert_eq!(highlights.as_array().unwrap().len(), 3);
    assert_eq!(
        highlights[2],
        json!({"range": range(3, 1, 3, 5), "kind": 3})
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn rename_relations_and_variables_and_refuse_gdl_relations() {
    let mut client = Client::start();
    let text =
        "(role r)\n(<= (adj ?a ?b) (Succ ?a ?b))\n(succ 1 2)\n(<= (legal r (go ?x)) (adj 1 ?x))\n";
    let uri = open_game(&mut client, "rename.kif", text);
    let prepared = client.call(
        "textDocument/prepareRename",
        json!({"textDocument": {"uri": uri}, "position": pos(2, 3)}),
    );
    assert_eq!(
        prepared,
        json!({"range": range(2, 1, 2, 5), "placeholder": "succ"})
    );
    let edit = client.call(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri}, "position": pos(2, 3), "newName": "next-to"}),
    );
    let renamed = apply_edits(text, edit["changes"][&uri].as_array().unwrap());
    assert_eq!(
        renamed,
        "(role r)\n(<= (adj ?a ?b) (next-to ?a ?b))\n(next-to 1 2)\n(<= (legal r (go ?x)) (adj 1 ?x))\n"
    );
    let edit = client.call(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri}, "position": pos(3, 30), "newName": "?col"}),
    );
    let renamed = apply_edits(text, edit["changes"][&uri].as_array().unwrap());
    assert!(
        renamed.ends_with("(<= (legal r (go ?col)) (adj 1 ?col))\n"),
        "{renamed}"
    );
    // `legal` means something: no rename.
    let refused = client.request(
        "textDocument/prepareRename",
        json!({"textDocument": {"uri": uri}, "position": pos(3, 6)}),
    );
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("is a GDL relation"),
        "{refused}"
    );
    // Nor into a name already used, nor into something that is not a name.
    for bad in ["adj", "(x", "not", "2"] {
        let response = client.request(
            "textDocument/rename",
            json!({"textDocument": {"uri": uri}, "position": pos(2, 3), "newName": bad}),
        );
        assert!(response.get("error").is_some(), "{bad}: {response}");
    }
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn semantic_tokens_classify_every_token_in_utf16_units() {
    let mut client = Client::start();
    let text = "; ♞ 𝄞\n(role x)\n(<= (legal ?r (mark 1)) (role ?r) (not (p ?r)))\n";
    let uri = open_game(&mut client, "tokens.kif", text);
    let tokens = client.call(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": uri}}),
    );
    let decoded = decode_tokens(tokens["data"].as_array().unwrap());
    // (line, start, length, type, modifiers); types: 0 keyword, 1 function (relation),
    // 2 struct (function), 3 enumMember (constant), 4 variable, 5 number, 6 comment;
    // modifiers: 1 declaration, 2 defaultLibrary (a GDL relation).
    assert_eq!(
        decoded,
        vec![
            (0, 0, 6, 6, 0),
            (1, 1, 4, 1, 3),
            (1, 6, 1, 3, 1),
            (2, 1, 2, 0, 0),
            (2, 5, 5, 1, 3),
            (2, 11, 2, 4, 0),
            (2, 15, 4, 2, 1),
            (2, 20, 1, 5, 0),
            (2, 25, 4, 1, 2),
            (2, 30, 2, 4, 0),
            (2, 35, 3, 0, 0),
            (2, 40, 1, 1, 0),
            (2, 42, 2, 4, 0),
        ]
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn completion_offers_keywords_relations_and_variables_in_scope() {
    let mut client = Client::start();
    let text =
        "(role r)\n(<= (adj ?a ?b) (succ ?a ?b))\n(succ 1 2)\n(<= (legal r (go ?Col)) (adj 1 ?c\n";
    let uri = open_game(&mut client, "complete.kif", text);
    let labels = |items: &Value| -> Vec<String> {
        items
            .as_array()
            .unwrap()
            .iter()
            .map(|i| i["label"].as_str().unwrap().to_string())
            .collect()
    };
    // After `?c` in an unfinished rule: the variables of that rule.
    let items = client.call(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": pos(3, 33)}),
    );
    assert_eq!(labels(&items), vec!["?Col"]);
    assert_eq!(items[0]["textEdit"]["range"], range(3, 31, 3, 33));
    // At the start of a body literal: keywords, GDL relations and the defined relations with
    // their arity.
    let items = client.call(
        "textDocument/completion",
        json!({"textDocument": {"uri": uri}, "position": pos(3, 25)}),
    );
    let labels = labels(&items);
    for wanted in ["not", "distinct", "or", "true", "does", "adj", "succ"] {
        assert!(labels.contains(&wanted.to_string()), "{wanted}: {labels:?}");
    }
    let adj = items
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["label"] == "adj")
        .unwrap();
    assert_eq!(adj["detail"], "relation adj/2, 1 definition");
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn code_actions_apply_fixes_and_convert_notations() {
    let mut client = Client::start();
    let text = "(role r)\n(<= (legal r (go 1)) (true (at ?x)) (true (at ?xx)) (true (at ?x)))\n";
    let uri = open_game(&mut client, "fix.kif", text);
    let diagnostics = client.diagnostics_at(&uri, 1);
    let w010: Vec<&Value> = diagnostics.iter().filter(|d| d["code"] == "W010").collect();
    assert_eq!(w010.len(), 1);
    let actions = client.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": w010[0]["range"],
               "context": {"diagnostics": [w010[0]]}}),
    );
    let fix = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "quickfix")
        .expect("a quick fix");
    assert_eq!(fix["title"], "rename it `?_xx` (W010)");
    assert_eq!(fix["isPreferred"], true);
    let fixed = apply_edits(text, fix["edit"]["changes"][&uri].as_array().unwrap());
    assert!(fixed.contains("(true (at ?_xx))"), "{fixed}");
    // Converting to infix, in place (this client cannot create files).
    let convert = actions
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["kind"] == "refactor.rewrite")
        .expect("a conversion");
    assert_eq!(convert["title"], "Convert the file to infix notation");
    let infix = apply_edits(text, convert["edit"]["changes"][&uri].as_array().unwrap());
    assert_eq!(infix, gdl_syntax::prefix_to_infix(text).unwrap());
    assert_eq!(client.shutdown(), 0);

    // A client that creates files and resolves edits lazily gets a new file beside the old.
    let mut client = Client::start_with(json!({
        "workspace": {"workspaceEdit": {"documentChanges": true, "resourceOperations": ["create"]}},
        "textDocument": {"codeAction": {"resolveSupport": {"properties": ["edit"]}}}
    }));
    client.open(&uri, "gdl", text);
    let actions = client.call(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": range(0, 0, 0, 0),
               "context": {"diagnostics": [], "only": ["refactor"]}}),
    );
    assert_eq!(actions.as_array().unwrap().len(), 1);
    assert!(actions[0].get("edit").is_none());
    let resolved = client.call("codeAction/resolve", actions[0].clone());
    let changes = &resolved["edit"]["documentChanges"];
    assert_eq!(changes[0]["kind"], "create");
    assert_eq!(changes[0]["uri"], uri.replace(".kif", ".infix"));
    assert_eq!(
        changes[1]["edits"][0]["newText"],
        gdl_syntax::prefix_to_infix(text).unwrap()
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn document_and_workspace_symbols() {
    let mut client = Client::start();
    let uri = open_game(&mut client, "game.kif", GAME);
    let other = open_game(
        &mut client,
        "other.kif",
        "(role black)\n(<= (adjacent ?a ?b) (succ ?a ?b))\n(succ 1 2)\n",
    );
    let symbols = client.call(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": other}}),
    );
    let names: Vec<(&str, Vec<&str>)> = symbols
        .as_array()
        .unwrap()
        .iter()
        .map(|group| {
            (
                group["name"].as_str().unwrap(),
                group["children"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|c| c["name"].as_str().unwrap())
                    .collect(),
            )
        })
        .collect();
    assert_eq!(
        names,
        vec![
            ("roles", vec!["black"]),
            ("relations", vec!["adjacent/2", "succ/2"])
        ]
    );
    let game = client.call(
        "textDocument/documentSymbol",
        json!({"textDocument": {"uri": uri}}),
    );
    let gdl = game
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["name"] == "GDL relations")
        .unwrap();
    let relations: Vec<&str> = gdl["children"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    assert_eq!(
        relations,
        vec!["legal/2", "next/1", "init/1", "terminal/0", "goal/2"]
    );
    // Across open files.
    let found = client.call("workspace/symbol", json!({"query": "adj"}));
    assert_eq!(
        found,
        json!([{"name": "adjacent/2", "kind": 12, "containerName": "other.kif",
                "location": {"uri": other, "range": range(1, 5, 1, 13)}}])
    );
    let roles = client.call("workspace/symbol", json!({"query": "wh"}));
    assert_eq!(roles[0]["name"], "wh𝄞te");
    assert_eq!(roles[0]["location"]["uri"], uri);
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn infix_documents_get_diagnostics_formatting_and_navigation() {
    let mut client = Client::start();
    let text = "% un jeu — 𝄞\nrole(robot).\nlegal(robot, Move) :- true(step(N)) & succ(N, M).\nsucc(1,2).\n";
    let uri = uri("game.infix");
    client.open(&uri, "gdl-infix", text);
    let diagnostics = client.diagnostics_at(&uri, 1);
    let e001 = diagnostics
        .iter()
        .find(|d| d["code"] == "E001")
        .expect("Move is unsafe");
    assert_eq!(e001["range"], range(2, 13, 2, 17));
    // Messages name variables as infix spells them.
    assert!(
        e001["message"]
            .as_str()
            .unwrap()
            .starts_with("unsafe rule: `Move` in the head"),
        "{e001}"
    );
    let formatted = apply_edits(
        text,
        client
            .call(
                "textDocument/formatting",
                json!({"textDocument": {"uri": uri}, "options": {"tabSize": 4, "insertSpaces": true}}),
            )
            .as_array()
            .unwrap(),
    );
    assert_eq!(
        formatted,
        gdl_syntax::prefix_to_infix(&gdl_syntax::infix::infix_to_prefix(text).unwrap()).unwrap()
    );
    let definition = client.call(
        "textDocument/definition",
        json!({"textDocument": {"uri": uri}, "position": pos(2, 40)}),
    );
    assert_eq!(
        definition,
        json!([{"uri": uri, "range": range(3, 0, 3, 4)}])
    );
    let edit = client.call(
        "textDocument/rename",
        json!({"textDocument": {"uri": uri}, "position": pos(2, 33), "newName": "Count"}),
    );
    let renamed = apply_edits(text, edit["changes"][&uri].as_array().unwrap());
    assert!(
        renamed.contains("true(step(Count)) & succ(Count, M)"),
        "{renamed}"
    );
    let tokens = client.call(
        "textDocument/semanticTokens/full",
        json!({"textDocument": {"uri": uri}}),
    );
    let decoded = decode_tokens(tokens["data"].as_array().unwrap());
    assert_eq!(decoded[0], (0, 0, 13, 6, 0), "the comment, in UTF-16 units");
    assert_eq!(
        decoded[1],
        (1, 0, 4, 1, 3),
        "`role`, a GDL relation defined"
    );
    // A syntax error in infix is the converter's, at its place.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"range": range(3, 8, 3, 9), "text": ""}]}),
    );
    let diagnostics = client.diagnostics_at(&uri, 2);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert!(diagnostics[0]["code"].as_str().unwrap().starts_with('I'));
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn bad_requests_get_errors_not_crashes() {
    let mut client = Client::start();
    let unknown = client.request("textDocument/frobnicate", json!({}));
    assert_eq!(unknown["error"]["code"], -32601);
    let bad = client.request("textDocument/hover", json!({"nonsense": true}));
    assert_eq!(bad["error"]["code"], -32602);
    let closed = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri("never-opened.kif")}, "position": pos(0, 0)}),
    );
    assert_eq!(closed["error"]["code"], -32602);
    // Positions far outside the text are clamped, as the protocol says.
    let uri = open_game(&mut client, "small.kif", "(role r)");
    for method in [
        "textDocument/hover",
        "textDocument/definition",
        "textDocument/completion",
    ] {
        let response = client.request(
            method,
            json!({"textDocument": {"uri": uri}, "position": pos(4_000_000_000, 4_000_000_000)}),
        );
        assert!(response.get("result").is_some(), "{method}: {response}");
    }
    // A change to a document that is not open, and a range past the end, are survived.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": "file:///nowhere/else.kif", "version": 2},
               "contentChanges": [{"text": "x"}]}),
    );
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 2},
               "contentChanges": [{"range": range(7, 0, 9, 9), "text": " (role s)"}]}),
    );
    let diagnostics = client.diagnostics_at(&uri, 2);
    assert!(diagnostics.iter().all(|d| d["code"] != "S001"));
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn shutdown_and_exit_follow_the_protocol() {
    // Requests after `shutdown` are refused; `exit` then ends with status 0.
    let mut client = Client::start();
    assert_eq!(client.call("shutdown", Value::Null), Value::Null);
    let late = client.request("textDocument/hover", json!({}));
    assert_eq!(late["error"]["code"], -32600);
    client.notify("exit", Value::Null);
    assert_eq!(client.wait_exit(), 0);
    // `exit` without `shutdown`: status 1.
    let mut client = Client::start();
    client.notify("exit", Value::Null);
    assert_eq!(client.wait_exit(), 1);
    // The editor going away (standard input closed) ends the server too.
    let mut client = Client::start();
    client.close_stdin();
    assert_eq!(client.wait_exit(), 1);
}

/// A frame around `body`, as a client writes it.
fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Sends `bytes` (a bad frame) to a server with a game open: it answers with an error
/// response with `id: null`, of this code, whose message contains `expected`; then it answers
/// the next requests (a hover, `shutdown`) as if nothing had happened, and exits cleanly.
fn refused_then_answered(bytes: &[u8], code: i64, expected: &str) {
    let mut client = Client::start();
    let uri = open_game(&mut client, "game.kif", GAME);
    client.diagnostics_at(&uri, 1);
    client.send_raw(bytes);
    let error = client.wait_for(|m| m.get("id") == Some(&Value::Null));
    assert_eq!(error["error"]["code"], code, "{error}");
    let message = error["error"]["message"].as_str().unwrap();
    assert!(message.contains(expected), "{message}");
    let legal = hover_text(&mut client, &uri, 2, 6);
    assert!(
        legal.starts_with("**relation** `legal` — arity 2 (a GDL relation)"),
        "{legal}"
    );
    assert_eq!(client.shutdown(), 0);
}

#[test]
fn a_length_beyond_the_limit_is_refused_and_the_server_goes_on() {
    refused_then_answered(
        b"Content-Length: 99999999999999999\r\n\r\n",
        -32600,
        "a message of 99999999999999999 bytes is larger than 67108864, the largest this server reads",
    );
}

#[test]
fn a_length_of_u64_max_is_refused_and_the_server_goes_on() {
    // The body the header announces starts; the server does not wait for the rest.
    let mut bytes = b"Content-Length: 18446744073709551615\r\n\r\n".to_vec();
    bytes.extend(br#"{"jsonrpc": "2.0", "method": "#);
    refused_then_answered(
        &bytes,
        -32600,
        "a message of 18446744073709551615 bytes is larger than 67108864",
    );
}

#[test]
fn a_length_that_is_not_a_number_is_refused_and_the_server_goes_on() {
    refused_then_answered(
        b"Content-Length: twelve\r\n\r\n{}",
        -32600,
        "the Content-Length `twelve` is not a number of bytes",
    );
}

#[test]
fn a_huge_header_line_is_refused_and_the_server_goes_on() {
    let mut bytes = b"X-Padding: ".to_vec();
    bytes.extend(vec![b'x'; 8 << 20]);
    bytes.extend(b"\r\nContent-Type: application/vscode-jsonrpc\r\n\r\n");
    refused_then_answered(
        &bytes,
        -32600,
        "a header line longer than 4096 bytes, the longest this server reads",
    );
}

#[test]
fn a_body_that_is_not_json_is_refused_and_the_server_goes_on() {
    refused_then_answered(
        &frame(r#"{"jsonrpc": "2.0", "id": 9, "method": "textDocument/hover", "params": {"#),
        -32700,
        "the message is not JSON",
    );
    refused_then_answered(
        &frame(r#"{"jsonrpc": "2.0", "params": [1, 2, 3]}"#),
        -32600,
        "the message is not a JSON-RPC request, response or notification",
    );
}

#[test]
fn a_document_grown_beyond_its_limit_is_dropped_with_one_diagnostic() {
    let mut client = Client::start();
    let uri = open_game(&mut client, "game.kif", GAME);
    client.diagnostics_at(&uri, 1);
    // Two changes of 40 and 30 MiB: each message is within the limit, the document is not.
    let comment = |mib: usize| format!(";{}\n", "x".repeat((mib << 20) - 2));
    for (version, mib) in [(2, 40), (3, 30)] {
        client.notify(
            "textDocument/didChange",
            json!({"textDocument": {"uri": uri, "version": version},
                   "contentChanges": [{"range": range(0, 0, 0, 0), "text": comment(mib)}]}),
        );
    }
    let diagnostics = client.diagnostics_at(&uri, 3);
    assert_eq!(diagnostics.len(), 1, "{diagnostics:?}");
    assert_eq!(diagnostics[0]["severity"], 1);
    assert_eq!(diagnostics[0]["range"], range(0, 0, 0, 0));
    let message = diagnostics[0]["message"].as_str().unwrap();
    assert!(
        message.starts_with("This document is not checked: it would be 73400")
            && message.contains("larger than 67108864 (64 MiB)"),
        "{message}"
    );
    // Requests about it fail with a reason; further edits are not applied to a text that is gone.
    let hover = client.request(
        "textDocument/hover",
        json!({"textDocument": {"uri": uri}, "position": pos(0, 0)}),
    );
    assert_eq!(hover["error"]["code"], -32803, "{hover}");
    assert!(
        hover["error"]["message"]
            .as_str()
            .unwrap()
            .contains("larger than 67108864 bytes"),
        "{hover}"
    );
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 4},
               "contentChanges": [{"range": range(0, 0, 0, 1), "text": ""}]}),
    );
    // The whole text replaced by a small one: checked again.
    client.notify(
        "textDocument/didChange",
        json!({"textDocument": {"uri": uri, "version": 5},
               "contentChanges": [{"text": GAME}]}),
    );
    let diagnostics = client.diagnostics_at(&uri, 5);
    assert_eq!(
        codes_and_ranges(&diagnostics),
        vec![
            ("E001".into(), range(2, 24, 2, 26)),
            ("W010".into(), range(2, 41, 2, 43)),
        ]
    );
    assert_eq!(client.shutdown(), 0);
}

mod random_frames {
    use super::*;
    use proptest::prelude::*;

    /// Bytes that cannot start a frame (no `Content-Length:` in any case).
    fn garbage(max: usize) -> impl Strategy<Value = Vec<u8>> {
        proptest::collection::vec(any::<u8>(), 0..max).prop_map(|mut bytes| {
            while let Some(at) = bytes
                .windows(15)
                .position(|w| w.eq_ignore_ascii_case(b"content-length:"))
            {
                bytes.remove(at);
            }
            bytes
        })
    }

    /// A bad frame of some kind, or a well-formed notification nobody answers.
    fn piece() -> impl Strategy<Value = Vec<u8>> {
        let length = prop_oneof![
            Just("99999999999999999".to_string()),
            Just("18446744073709551615".to_string()),
            "[1-9][0-9]{20,30}",
            "[a-z -]{0,8}",
        ];
        prop_oneof![
            "[a-z/$]{1,10}".prop_map(|m| frame(
                &json!({"jsonrpc": "2.0", "method": format!("$/{m}")}).to_string()
            )),
            (length, garbage(100)).prop_map(|(n, body)| {
                let mut bytes = format!("Content-Length: {n}\r\n\r\n").into_bytes();
                bytes.extend(body);
                bytes
            }),
            (5000..20_000usize).prop_map(|n| {
                let mut bytes = vec![b'x'; n];
                bytes.extend(b"\r\n\r\n");
                bytes
            }),
            garbage(200).prop_map(|body| {
                let mut bytes = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
                bytes.extend(body);
                bytes
            }),
            garbage(200).prop_map(|mut bytes| {
                bytes.extend(b"\r\n\r\n");
                bytes
            }),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

        /// Whatever bad frames come before and after `initialize`, the real server answers
        /// it, then `shutdown`, and exits cleanly.
        #[test]
        fn the_server_answers_after_any_bad_frames(
            before in proptest::collection::vec(piece(), 0..6),
            after in proptest::collection::vec(piece(), 1..10),
        ) {
            let mut client = Client::spawn();
            client.send_raw(&before.concat());
            let init = client.request("initialize", json!({"capabilities": {}}));
            prop_assert!(init.get("result").is_some(), "{}", init);
            client.notify("initialized", json!({}));
            client.send_raw(&after.concat());
            prop_assert_eq!(client.shutdown(), 0);
        }
    }
}
