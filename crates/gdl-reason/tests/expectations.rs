//! The reasoning expectations of other GGP projects, collected in
//! `../shared/expectations/` (see its README.md), replayed against the reference engine.
//!
//! One test per source: ggp-base's prover tests, the Dresden GameController match traces,
//! BenderNG's reasoner cases and reference outputs, libgdl's reasoner cases and ggplib's
//! play-out. Parse, validate, transform, unify, format and player cases belong to other tests
//! and are not read here.
//!
//! Expected terms are normalised by interning them and printing them back (canonical lower
//! case), and compared with the engine's as sets. States given as sets of fluents are reached
//! by play from the initial state (a breadth-first search over legal joint moves), since the
//! API has no constructor for arbitrary states; cases whose state cannot be reached, whose
//! query names an arbitrary relation, or whose description the engine refuses are skipped
//! with the reason, and each test asserts how many cases it ran and skipped, so that a change
//! of the data cannot skip cases silently.

use std::collections::{BTreeSet, HashSet, VecDeque};
use std::path::{Path, PathBuf};

use gdl_reason::{ReferenceMachine, ReferenceState, StateMachine, TermId};
use rand::SeedableRng;
use rand::rngs::StdRng;
use serde_json::Value;

// ---- helpers ------------------------------------------------------------------------------

fn expectations() -> Option<PathBuf> {
    ggp_testdata::shared_or_skip("expectations").map(|shared| shared.join("expectations"))
}

fn read_json(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn read_text(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    gdl_syntax::cst::decode(&bytes).0
}

/// The machine for a description, or the codes and messages of its blocking diagnostics.
fn try_machine(text: &str) -> Result<ReferenceMachine, Vec<(String, String)>> {
    ReferenceMachine::from_text(text).map_err(|ds| {
        ds.iter()
            .map(|d| (d.code.to_string(), d.message.clone()))
            .collect()
    })
}

fn machine(text: &str, ctx: &str) -> ReferenceMachine {
    try_machine(text).unwrap_or_else(|e| panic!("{ctx}: the engine refuses the description: {e:?}"))
}

fn machine_from_file(path: &Path, ctx: &str) -> ReferenceMachine {
    machine(&read_text(path), &format!("{ctx} ({})", path.display()))
}

/// The canonical text of a ground KIF term (any case, any spacing).
fn canon(m: &mut ReferenceMachine, text: &str, ctx: &str) -> String {
    let id = m
        .intern(text)
        .unwrap_or_else(|e| panic!("{ctx}: cannot read the term `{text}`: {e}"));
    m.terms().text(m.symbols(), id)
}

fn canon_set(m: &mut ReferenceMachine, items: &Value, ctx: &str) -> BTreeSet<String> {
    strings(items, ctx)
        .iter()
        .map(|t| canon(m, t, ctx))
        .collect()
}

fn strings(v: &Value, ctx: &str) -> Vec<String> {
    v.as_array()
        .unwrap_or_else(|| panic!("{ctx}: expected a list, found {v}"))
        .iter()
        .map(|s| {
            s.as_str()
                .unwrap_or_else(|| panic!("{ctx}: expected a string, found {s}"))
                .to_string()
        })
        .collect()
}

fn text_set(m: &ReferenceMachine, ids: &[TermId]) -> BTreeSet<String> {
    ids.iter()
        .map(|&t| m.terms().text(m.symbols(), t))
        .collect()
}

fn fluents(m: &ReferenceMachine, s: &ReferenceState) -> BTreeSet<String> {
    text_set(m, &m.fluents(s))
}

fn legal(m: &mut ReferenceMachine, s: &ReferenceState, role: usize, ctx: &str) -> Vec<String> {
    let moves = m
        .legal_moves(s, role)
        .unwrap_or_else(|e| panic!("{ctx}: legal moves of role {role}: {e}"));
    moves
        .iter()
        .map(|&t| m.terms().text(m.symbols(), t))
        .collect()
}

fn terminal(m: &mut ReferenceMachine, s: &ReferenceState, ctx: &str) -> bool {
    m.is_terminal(s)
        .unwrap_or_else(|e| panic!("{ctx}: terminal: {e}"))
}

fn role_names(m: &ReferenceMachine) -> Vec<String> {
    m.roles()
        .iter()
        .map(|&r| m.terms().text(m.symbols(), r))
        .collect()
}

/// The index of a role named in the data: its name in any case, or its index (ggplib).
fn role_index(m: &mut ReferenceMachine, key: &str, ctx: &str) -> usize {
    let name = canon(m, key, ctx);
    if let Some(i) = role_names(m).iter().position(|r| *r == name) {
        return i;
    }
    match key.parse::<usize>() {
        Ok(i) if i < m.roles().len() => i,
        _ => panic!(
            "{ctx}: `{key}` is not a role of the game (roles {:?})",
            role_names(m)
        ),
    }
}

/// A joint move in role order from a `{role: move}` map or a list in role order.
fn joint_move(m: &mut ReferenceMachine, v: &Value, ctx: &str) -> Vec<TermId> {
    let n = m.roles().len();
    let mut joint: Vec<Option<TermId>> = vec![None; n];
    match v {
        Value::Array(list) => {
            assert_eq!(list.len(), n, "{ctx}: joint move {v} for {n} roles");
            for (i, mv) in list.iter().enumerate() {
                joint[i] = Some(intern(m, mv.as_str().unwrap(), ctx));
            }
        }
        Value::Object(map) => {
            for (role, mv) in map {
                let r = role_index(m, role, ctx);
                joint[r] = Some(intern(m, mv.as_str().unwrap(), ctx));
            }
        }
        other => panic!("{ctx}: a joint move must be a list or a map, found {other}"),
    }
    joint
        .into_iter()
        .enumerate()
        .map(|(i, j)| j.unwrap_or_else(|| panic!("{ctx}: joint move {v} has no move for role {i}")))
        .collect()
}

fn intern(m: &mut ReferenceMachine, text: &str, ctx: &str) -> TermId {
    m.intern(text)
        .unwrap_or_else(|e| panic!("{ctx}: cannot read the move `{text}`: {e}"))
}

fn next(
    m: &mut ReferenceMachine,
    s: &ReferenceState,
    joint: &[TermId],
    ctx: &str,
) -> ReferenceState {
    m.next_state(s, joint)
        .unwrap_or_else(|e| panic!("{ctx}: next state: {e}"))
}

fn initial(m: &mut ReferenceMachine, ctx: &str) -> ReferenceState {
    m.initial_state()
        .unwrap_or_else(|e| panic!("{ctx}: initial state: {e}"))
}

/// What a search for a state given as a set of fluents found.
enum Reach {
    Found(ReferenceState),
    /// Every state reachable by play (not going on from terminal states) was visited.
    Unreachable,
    GaveUp,
}

/// Breadth-first search from the initial state for the state whose fluents are `target`.
fn reach(m: &mut ReferenceMachine, target: &BTreeSet<String>, limit: usize, ctx: &str) -> Reach {
    let start = initial(m, ctx);
    let mut seen: HashSet<ReferenceState> = HashSet::from([start.clone()]);
    let mut queue = VecDeque::from([start]);
    while let Some(s) = queue.pop_front() {
        if fluents(m, &s) == *target {
            return Reach::Found(s);
        }
        if terminal(m, &s, ctx) {
            continue;
        }
        let joints = m
            .joint_moves(&s)
            .unwrap_or_else(|e| panic!("{ctx}: joint moves: {e}"));
        for joint in joints {
            let n = next(m, &s, &joint, ctx);
            if seen.insert(n.clone()) {
                if seen.len() > limit {
                    return Reach::GaveUp;
                }
                queue.push_back(n);
            }
        }
    }
    Reach::Unreachable
}

/// The state a case names: `"initial"` or a set of fluents to reach by play. `Err` says why
/// it cannot be had.
fn case_state(
    m: &mut ReferenceMachine,
    state: &Value,
    ctx: &str,
) -> Result<ReferenceState, String> {
    if state.as_str() == Some("initial") {
        return Ok(initial(m, ctx));
    }
    let target = canon_set(m, state, ctx);
    match reach(m, &target, 200_000, ctx) {
        Reach::Found(s) => Ok(s),
        Reach::Unreachable => Err(format!(
            "the state {target:?} cannot be reached by play (every reachable state was visited)"
        )),
        Reach::GaveUp => Err(format!(
            "the state {target:?} was not found among 200000 reachable states"
        )),
    }
}

fn object<'a>(v: &'a Value, ctx: &str) -> &'a serde_json::Map<String, Value> {
    v.as_object()
        .unwrap_or_else(|| panic!("{ctx}: expected an object, found {v}"))
}

/// Checks every expectation about one state. Unknown keys fail, so that no expectation of the
/// data is ignored.
fn check_state(m: &mut ReferenceMachine, s: &ReferenceState, expected: &Value, ctx: &str) {
    for (key, want) in object(expected, ctx) {
        let ctx = format!("{ctx}: `{key}`");
        let ctx = ctx.as_str();
        match key.as_str() {
            "terminal" => {
                assert_eq!(
                    terminal(m, s, ctx),
                    want.as_bool().unwrap(),
                    "{ctx}: terminal"
                );
            }
            // The role's unique goal value.
            "goals" | "goal" => {
                for (role, value) in object(want, ctx) {
                    let r = role_index(m, role, ctx);
                    let got = m
                        .goal_values(s, r)
                        .unwrap_or_else(|e| panic!("{ctx}: goal: {e}"));
                    let got: Vec<String> = text_set(m, &got).into_iter().collect();
                    assert_eq!(got, vec![value.to_string()], "{ctx}: goal values of {role}");
                }
            }
            // The complete list: the same size and members.
            "legal" | "legal_set" => {
                for (role, moves) in object(want, ctx) {
                    let r = role_index(m, role, ctx);
                    let got = legal(m, s, r, ctx);
                    let want_list = strings(moves, ctx);
                    let want_set = canon_set(m, moves, ctx);
                    let got_set: BTreeSet<String> = got.iter().cloned().collect();
                    assert_eq!(got_set, want_set, "{ctx}: legal moves of {role}");
                    assert_eq!(
                        got.len(),
                        want_list.len(),
                        "{ctx}: number of legal moves of {role}"
                    );
                }
            }
            "legal_count" => {
                for (role, n) in object(want, ctx) {
                    let r = role_index(m, role, ctx);
                    let got = legal(m, s, r, ctx);
                    assert_eq!(
                        got.len() as u64,
                        n.as_u64().unwrap(),
                        "{ctx}: legal moves of {role}: {got:?}"
                    );
                }
            }
            "legal_contains" => {
                for (role, moves) in object(want, ctx) {
                    let r = role_index(m, role, ctx);
                    let got: BTreeSet<String> = legal(m, s, r, ctx).into_iter().collect();
                    for mv in canon_set(m, moves, ctx) {
                        assert!(
                            got.contains(&mv),
                            "{ctx}: `{mv}` is not legal for {role}; legal: {got:?}"
                        );
                    }
                }
            }
            "legal_each_in" => {
                for (role, moves) in object(want, ctx) {
                    let r = role_index(m, role, ctx);
                    let allowed = canon_set(m, moves, ctx);
                    for mv in legal(m, s, r, ctx) {
                        assert!(
                            allowed.contains(&mv),
                            "{ctx}: `{mv}` is legal for {role}, expected only {allowed:?}"
                        );
                    }
                }
            }
            "legal_joint_moves_count" | "joint_move_count" => {
                let joints = m
                    .joint_moves(s)
                    .unwrap_or_else(|e| panic!("{ctx}: joint moves: {e}"));
                assert_eq!(
                    joints.len() as u64,
                    want.as_u64().unwrap(),
                    "{ctx}: number of joint moves"
                );
            }
            "joint_moves_equal_product_of_role_legal_lists" => {
                assert!(want.as_bool().unwrap());
                let joints = m
                    .joint_moves(s)
                    .unwrap_or_else(|e| panic!("{ctx}: joint moves: {e}"));
                let mut product: Vec<Vec<TermId>> = vec![Vec::new()];
                for r in 0..m.roles().len() {
                    let moves = m
                        .legal_moves(s, r)
                        .unwrap_or_else(|e| panic!("{ctx}: legal: {e}"));
                    product = product
                        .into_iter()
                        .flat_map(|j| {
                            moves.iter().map(move |&mv| {
                                let mut j = j.clone();
                                j.push(mv);
                                j
                            })
                        })
                        .collect();
                }
                assert_eq!(joints, product, "{ctx}: joint moves (in order)");
            }
            "role_count_at_least" => {
                assert!(
                    m.roles().len() as u64 >= want.as_u64().unwrap(),
                    "{ctx}: roles {:?}",
                    role_names(m)
                );
            }
            "role_count" => {
                assert_eq!(
                    m.roles().len() as u64,
                    want.as_u64().unwrap(),
                    "{ctx}: roles {:?}",
                    role_names(m)
                );
            }
            "role_exists" => {
                assert_eq!(!m.roles().is_empty(), want.as_bool().unwrap(), "{ctx}");
            }
            "initial_state_nonempty" | "state_nonempty" => {
                assert_eq!(!m.fluents(s).is_empty(), want.as_bool().unwrap(), "{ctx}");
            }
            "legal_count_of_first_role_at_least" => {
                let got = legal(m, s, 0, ctx);
                assert!(
                    got.len() as u64 >= want.as_u64().unwrap(),
                    "{ctx}: legal moves of the first role: {got:?}"
                );
            }
            "legal_count_of_robot_at_least" => {
                let r = role_index(m, "robot", ctx);
                let got = legal(m, s, r, ctx);
                assert!(
                    got.len() as u64 >= want.as_u64().unwrap(),
                    "{ctx}: legal moves of robot: {got:?}"
                );
            }
            // BenderNG answers `legal` queries with `(does <role> <move>)` terms; the API gives
            // each role's moves, which is that form by construction (the count is checked by
            // `legal_count_of_first_role_at_least`).
            "legal_answers_have_form" => {
                assert_eq!(want.as_str(), Some("(does <first role> <move>)"), "{ctx}");
            }
            "state_equals" => {
                let want = canon_set(m, want, ctx);
                assert_eq!(fluents(m, s), want, "{ctx}: state");
            }
            "fluent_count_named_CELL" => {
                let cells = fluents(m, s)
                    .iter()
                    .filter(|f| f.starts_with("(cell "))
                    .count();
                assert_eq!(
                    cells as u64,
                    want.as_u64().unwrap(),
                    "{ctx}: number of cell fluents"
                );
            }
            "legal_moves_computable_for" => {
                for role in strings(want, ctx) {
                    let r = role_index(m, &role, ctx);
                    m.legal_moves(s, r)
                        .unwrap_or_else(|e| panic!("{ctx}: legal moves of {role}: {e}"));
                }
            }
            other => panic!("{ctx}: unknown expectation `{other}`"),
        }
    }
}

/// Counts of a source's cases, checked at the end.
#[derive(Default)]
struct Tally {
    run: Vec<String>,
    skipped: Vec<(String, String)>,
}

impl Tally {
    fn skip(&mut self, case: &str, why: impl Into<String>) {
        let why = why.into();
        eprintln!("SKIP {case}: {why}");
        self.skipped.push((case.to_string(), why));
    }

    fn check(&self, source: &str, run: usize, skipped: &[&str]) {
        let names: Vec<&str> = self.skipped.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(names, skipped, "{source}: the skipped cases");
        assert_eq!(
            self.run.len(),
            run,
            "{source}: the cases run: {:?}",
            self.run
        );
        eprintln!(
            "{source}: {} cases run, {} skipped",
            self.run.len(),
            self.skipped.len()
        );
    }
}

// ---- ggp-base -----------------------------------------------------------------------------

/// `ggp-base/prover_expectations.json`: ggp-base's `ProverStateMachineTest` (9 tests) and
/// `GdlCleanerTest.testCleanNotDistinct`.
///
/// ggp-base runs its `GdlCleaner` before playing `test_clean_not_distinct.kif` (the raw file
/// fails its validator); the reference engine reads `(not (distinct a b))` directly, so the
/// raw file is played.
#[test]
fn ggp_base_prover() {
    let Some(dir) = expectations() else { return };
    let dir = dir.join("ggp-base");
    let data = read_json(&dir.join("prover_expectations.json"));
    let mut tally = Tally::default();
    for test in data["tests"].as_array().unwrap() {
        let name = test["name"].as_str().unwrap();
        let game = test["game"].as_str().unwrap();
        let ctx = format!("ggp-base {name} ({game})");
        let mut m = machine_from_file(&dir.join("games-test").join(game), &ctx);
        if let Some(roles) = test.get("roles") {
            let want: Vec<String> = strings(roles, &ctx)
                .iter()
                .map(|r| canon(&mut m, r, &ctx))
                .collect();
            assert_eq!(role_names(&m), want, "{ctx}: roles");
        }
        if let Some(n) = test.get("roles_count") {
            assert_eq!(
                m.roles().len() as u64,
                n.as_u64().unwrap(),
                "{ctx}: number of roles"
            );
        }
        let mut state = initial(&mut m, &ctx);
        check_state(
            &mut m,
            &state,
            &test["initial"],
            &format!("{ctx}, initial state"),
        );
        for (k, step) in test["steps"].as_array().unwrap().iter().enumerate() {
            let ctx = format!("{ctx}, step {}", k + 1);
            let mut joint = Vec::new();
            for (r, mv) in strings(&step["joint_moves"], &ctx).iter().enumerate() {
                if mv == "<the single legal move>" {
                    let moves = m.legal_moves(&state, r).unwrap();
                    assert_eq!(
                        moves.len(),
                        1,
                        "{ctx}: role {r} must have a single legal move"
                    );
                    joint.push(moves[0]);
                } else {
                    joint.push(intern(&mut m, mv, &ctx));
                }
            }
            assert_eq!(joint.len(), m.roles().len(), "{ctx}: joint move");
            state = next(&mut m, &state, &joint, &ctx);
            check_state(&mut m, &state, &step["after"], &ctx);
        }
        tally.run.push(name.to_string());
    }
    tally.check("ggp-base prover_expectations.json", 10, &[]);
}

// ---- GameController traces ----------------------------------------------------------------

/// One `<step>` of a GameController trace.
#[derive(Debug, Default)]
struct TraceStep {
    number: usize,
    state: Vec<String>,
    legal: Vec<(String, String)>,
    moves: Vec<(String, String)>,
    terminal: bool,
    goals: Vec<(String, String)>,
}

/// The text between `open` and `close` in each of their occurrences.
fn between<'a>(text: &'a str, open: &str, close: &str) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(i) = rest.find(open) {
        rest = &rest[i + open.len()..];
        let j = rest
            .find(close)
            .unwrap_or_else(|| panic!("no `{close}` after `{open}`"));
        out.push(&rest[..j]);
        rest = &rest[j + close.len()..];
    }
    out
}

/// `role="R">value` pairs of the elements in `text`.
fn labelled(text: &str, element: &str) -> Vec<(String, String)> {
    between(
        text,
        &format!("<{element} role=\""),
        &format!("</{element}>"),
    )
    .into_iter()
    .map(|item| {
        let (role, value) = item.split_once("\">").expect("role=\"…\">value");
        (role.to_string(), value.trim().to_string())
    })
    .collect()
}

fn parse_trace(xml: &str) -> Vec<TraceStep> {
    assert!(!xml.contains('&'), "the traces have no XML entities");
    between(xml, "<step nb=\"", "</step>")
        .into_iter()
        .map(|step| {
            let (number, body) = step.split_once("\">").unwrap();
            let one =
                |open: &str, close: &str| between(body, open, close).first().copied().unwrap_or("");
            TraceStep {
                number: number.parse().unwrap(),
                state: between(one("<state>", "</state>"), "<fluent>", "</fluent>")
                    .into_iter()
                    .map(|f| f.trim().to_string())
                    .collect(),
                legal: labelled(one("<legal_moves>", "</legal_moves>"), "move"),
                moves: labelled(one("<moves>", "</moves>"), "move"),
                terminal: body.contains("<terminal/>"),
                goals: labelled(one("<goal_values>", "</goal_values>"), "goal_value"),
            }
        })
        .collect()
}

/// Checks one recorded state (fluents, terminality, every role's legal moves, and at the end
/// the goals) and returns the joint move played from it.
fn check_trace_step(
    m: &mut ReferenceMachine,
    s: &ReferenceState,
    step: &TraceStep,
    last: bool,
    ctx: &str,
) -> Option<Vec<TermId>> {
    let want: BTreeSet<String> = step.state.iter().map(|f| canon(m, f, ctx)).collect();
    assert_eq!(fluents(m, s), want, "{ctx}: state");
    assert_eq!(
        step.terminal, last,
        "{ctx}: only the last step is marked terminal"
    );
    assert_eq!(terminal(m, s, ctx), step.terminal, "{ctx}: terminal");
    let n = m.roles().len();
    if last {
        assert_eq!(step.goals.len(), n, "{ctx}: a goal value per role");
        for (role, value) in &step.goals {
            let r = role_index(m, role, ctx);
            let got = m
                .goal_values(s, r)
                .unwrap_or_else(|e| panic!("{ctx}: goal: {e}"));
            let got: Vec<String> = text_set(m, &got).into_iter().collect();
            assert_eq!(got, vec![value.clone()], "{ctx}: goal values of {role}");
        }
        return None;
    }
    let mut want_legal = vec![BTreeSet::new(); n];
    for (role, mv) in &step.legal {
        let r = role_index(m, role, ctx);
        want_legal[r].insert(canon(m, mv, ctx));
    }
    for (r, want) in want_legal.iter().enumerate() {
        let got: BTreeSet<String> = legal(m, s, r, ctx).into_iter().collect();
        assert_eq!(&got, want, "{ctx}: legal moves of {}", role_names(m)[r]);
    }
    assert_eq!(step.moves.len(), n, "{ctx}: a move per role");
    let map: serde_json::Map<String, Value> = step
        .moves
        .iter()
        .map(|(r, mv)| (r.clone(), Value::String(mv.clone())))
        .collect();
    Some(joint_move(m, &Value::Object(map), ctx))
}

/// `gamecontroller-traces/`: four complete matches recorded by the Dresden GameController.
#[test]
fn gamecontroller_traces() {
    let Some(dir) = expectations() else { return };
    let dir = dir.join("gamecontroller-traces");
    // (game, number of steps in the trace).
    let games = [
        ("maze", 10),
        ("8puzzle", 61),
        ("checkers", 102),
        ("othello-fourway-teamswitch", 121),
    ];
    let mut tally = Tally::default();
    for (game, count) in games {
        let ctx = format!("gamecontroller trace {game}");
        let mut m = machine_from_file(&dir.join("games").join(format!("{game}.lisp")), &ctx);
        let steps = parse_trace(&read_text(
            &dir.join("traces").join(format!("{game}.trace.xml")),
        ));
        assert_eq!(steps.len(), count, "{ctx}: number of steps");
        for (k, step) in steps.iter().enumerate() {
            assert_eq!(step.number, k + 1, "{ctx}: steps are numbered without gaps");
        }
        // README.md, "Known disagreement with the GDL specification": "othello-fourway-teamswitch
        // agrees only on its first 2 states. Its `clear` rule writes `(not (onaline ?i ?j black
        // ?x ?y white ?odir))` *before* the literals `(coordinate ?x) (coordinate ?y)` that bind
        // `?x` and `?y`. The GameController evaluated the body left to right [...] A conforming
        // reasoner should therefore match this trace on its first 2 states and then differ".
        // So its states 1 and 2 are checked in full (fluents, terminality, legal moves, and the
        // recorded joint move from state 1 giving state 2); states 3 to 121 and the final goals
        // are skipped, and state 3 must differ from the recording.
        let checked = if game == "othello-fourway-teamswitch" {
            2
        } else {
            steps.len()
        };
        let mut state = initial(&mut m, &ctx);
        for (k, step) in steps.iter().take(checked).enumerate() {
            let ctx = format!("{ctx}, step {}", step.number);
            let last = k + 1 == steps.len();
            if let Some(joint) = check_trace_step(&mut m, &state, step, last, &ctx) {
                state = next(&mut m, &state, &joint, &ctx);
            }
        }
        if checked < steps.len() {
            let step = &steps[checked];
            let want: BTreeSet<String> =
                step.state.iter().map(|f| canon(&mut m, f, &ctx)).collect();
            let legal_differs = {
                let n = m.roles().len();
                let mut want_legal = vec![BTreeSet::new(); n];
                for (role, mv) in &step.legal {
                    let r = role_index(&mut m, role, &ctx);
                    want_legal[r].insert(canon(&mut m, mv, &ctx));
                }
                (0..n).any(|r| {
                    legal(&mut m, &state, r, &ctx)
                        .into_iter()
                        .collect::<BTreeSet<_>>()
                        != want_legal[r]
                })
            };
            let state_differs = fluents(&m, &state) != want;
            eprintln!(
                "{ctx}, step {}: state differs: {state_differs}, legal moves differ: {legal_differs}",
                step.number
            );
            assert!(
                state_differs || legal_differs,
                "{ctx}, step {}: README.md says a conforming reasoner differs from the recording after state 2",
                step.number
            );
            tally.skip(
                game,
                format!("states {}–{} and the final goals (the trace follows left-to-right evaluation, see README.md)", checked + 1, steps.len()),
            );
        }
        tally.run.push(game.to_string());
    }
    tally.check("gamecontroller-traces", 4, &["othello-fourway-teamswitch"]);
}

// ---- BenderNG -----------------------------------------------------------------------------

/// The canonical name of a query's relation and its arguments, split at the top level.
fn query_parts(query: &str) -> (String, Vec<String>) {
    let inner = query.trim().trim_start_matches('(').trim_end_matches(')');
    let mut parts = Vec::new();
    let (mut depth, mut start) = (0, None);
    for (i, c) in inner.char_indices() {
        match c {
            '(' => {
                depth += 1;
                start.get_or_insert(i);
            }
            ')' => depth -= 1,
            c if c.is_whitespace() && depth == 0 => {
                if let Some(s) = start.take() {
                    parts.push(inner[s..i].to_string());
                }
            }
            _ => {
                start.get_or_insert(i);
            }
        }
    }
    if let Some(s) = start {
        parts.push(inner[s..].to_string());
    }
    let name = parts.remove(0).to_lowercase();
    (name, parts)
}

/// `benderng/benderng_cases.json`: the reasoner cases (`legal`, `next`, `goal`, `query`,
/// `roles`, `joint_moves`). The parse, transform, unify, message-parse, player-protocol and
/// select-move cases, and the fuzzy cases, are not about reasoning and are not read here.
#[test]
fn benderng_cases() {
    let Some(dir) = expectations() else { return };
    let dir = dir.join("benderng");
    let data = read_json(&dir.join("benderng_cases.json"));
    let mut tally = Tally::default();
    let mut others = 0;
    for case in data["cases"].as_array().unwrap() {
        let id = case["id"].as_str().unwrap();
        let op = case["operation"].as_str().unwrap();
        let ctx = format!("benderng {id} [{}]", case["source_test"].as_str().unwrap());
        let ctx = ctx.as_str();
        if !["legal", "next", "goal", "query", "roles", "joint_moves"].contains(&op) {
            others += 1;
            continue;
        }
        let text = match (case.get("game"), case.get("game_text")) {
            (Some(game), _) => Some(read_text(&dir.join(game.as_str().unwrap()))),
            (None, Some(text)) => Some(text.as_str().unwrap().to_string()),
            (None, None) => None,
        };
        match op {
            // ChainingTest.atomChaining asks for the bare proposition `role`, and
            // TheoryTest.noteOnFindS for `(colour ?x)`: instances of arbitrary relations, which
            // the StateMachine API cannot express (it answers only roles, init, legal, next,
            // terminal and goal). `(true (cell ?x))` (TheoryTest.noteOnChangingState) is
            // answered from the state's fluents.
            "query" if case.get("queries").is_none() => {
                let query = case["query"].as_str().unwrap();
                tally.skip(
                    id,
                    format!("the API cannot ask the arbitrary relation query `{query}`"),
                );
            }
            "query" => {
                let mut m = machine(text.as_deref().unwrap(), ctx);
                for (k, q) in case["queries"].as_array().unwrap().iter().enumerate() {
                    let ctx = format!("{ctx}, query {}", k + 1);
                    let query = q["query"].as_str().unwrap();
                    let (name, args) = query_parts(query);
                    assert_eq!(
                        (name.as_str(), args.len()),
                        ("true", 1),
                        "{ctx}: only `true` queries are expected here"
                    );
                    let (fluent_name, _) = query_parts(&args[0]);
                    let s = case_state(&mut m, &q["state"], &ctx)
                        .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                    let answers: BTreeSet<String> = fluents(&m, &s)
                        .into_iter()
                        .filter(|f| query_parts(f).0 == fluent_name)
                        .collect();
                    let want = canon_set(&mut m, &q["expected"]["answers"], &ctx);
                    assert_eq!(answers, want, "{ctx}: answers to `{query}`");
                }
                tally.run.push(id.to_string());
            }
            // TheoryTest.flattenedReport compares the legal moves before and after BenderNG's
            // flattening of disjunctions; the workspace has no such public transform.
            "legal" if case.get("transform").is_some() => {
                tally.skip(id, "needs BenderNG's flattening transform (Theory.flattenTheory), which the API does not offer");
            }
            "legal" | "goal" => {
                let m = try_machine(text.as_deref().unwrap());
                let mut m = match m {
                    Ok(m) => m,
                    // RecursionTest's theory (transcribed in game_text) recurses through
                    // `(connected ?z ?y)` with `?z` bound only inside `(true (link ?x ?z))`, which
                    // breaks the recursion restriction (Definition 15) as the checker reads it.
                    Err(e) if op == "goal" && e.iter().all(|(code, _)| code == "E003") => {
                        tally.skip(
                            id,
                            format!(
                                "the engine refuses the description (recursion restriction): {}",
                                e[0].1
                            ),
                        );
                        continue;
                    }
                    Err(e) => panic!("{ctx}: the engine refuses the description: {e:?}"),
                };
                if let Some(roles) = case.get("roles_in_order") {
                    let want: Vec<String> = strings(roles, ctx)
                        .iter()
                        .map(|r| canon(&mut m, r, ctx))
                        .collect();
                    assert_eq!(role_names(&m), want, "{ctx}: roles");
                }
                let s = match case_state(&mut m, &case["state"], ctx) {
                    Ok(s) => s,
                    Err(e) => {
                        tally.skip(id, e);
                        continue;
                    }
                };
                if op == "goal" {
                    let (name, args) = query_parts(case["query"].as_str().unwrap());
                    assert_eq!(
                        (name.as_str(), args.len()),
                        ("goal", 2),
                        "{ctx}: a goal query"
                    );
                    let r = role_index(&mut m, &args[0], ctx);
                    let got = m
                        .goal_values(&s, r)
                        .unwrap_or_else(|e| panic!("{ctx}: goal: {e}"));
                    let got = text_set(&m, &got);
                    let want = canon_set(&mut m, &case["expected"]["goal_values"], ctx);
                    assert_eq!(got, want, "{ctx}: goal values");
                } else {
                    check_state(&mut m, &s, &case["expected"], ctx);
                }
                tally.run.push(id.to_string());
            }
            "next" => {
                let mut m = machine(text.as_deref().unwrap(), ctx);
                let mut s = case_state(&mut m, &case["state"], ctx)
                    .unwrap_or_else(|e| panic!("{ctx}: {e}"));
                if let Some(checks) = case.get("checks") {
                    for (k, check) in checks.as_array().unwrap().iter().enumerate() {
                        let ctx = format!("{ctx}, check {}", k + 1);
                        if let Some(joint) = check.get("joint_move") {
                            let joint = joint_move(&mut m, joint, &ctx);
                            s = next(&mut m, &s, &joint, &ctx);
                            check_state(&mut m, &s, &check["expected_after"], &ctx);
                        } else {
                            assert_eq!(check["at"], "initial", "{ctx}");
                            check_state(&mut m, &s, &check["expected"], &ctx);
                        }
                    }
                } else {
                    if let Some(e) = case.get("expected_initial") {
                        check_state(&mut m, &s, e, &format!("{ctx}, initial state"));
                    }
                    let joint = joint_move(&mut m, &case["joint_move"], ctx);
                    s = next(&mut m, &s, &joint, ctx);
                    let after = case.get("expected_after").or(case.get("expected")).unwrap();
                    check_state(&mut m, &s, after, &format!("{ctx}, after the joint move"));
                }
                tally.run.push(id.to_string());
            }
            "roles" => {
                let mut m = machine(text.as_deref().unwrap(), ctx);
                let me = canon(&mut m, case["role"].as_str().unwrap(), ctx);
                let others: Vec<String> = role_names(&m).into_iter().filter(|r| *r != me).collect();
                assert!(role_names(&m).contains(&me), "{ctx}: `{me}` is a role");
                let want: Vec<String> = strings(&case["expected"]["other_roles"], ctx)
                    .iter()
                    .map(|r| canon(&mut m, r, ctx))
                    .collect();
                assert_eq!(others, want, "{ctx}: the other roles");
                tally.run.push(id.to_string());
            }
            // MovesCombinationTest combines per-role move lists; here a game whose roles have
            // exactly those legal moves gives its joint moves.
            "joint_moves" => {
                let per_role: Vec<Vec<String>> = case["per_role_moves"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|l| strings(l, ctx))
                    .collect();
                let mut game = String::from("(init s) (<= terminal (true t)) ");
                for (r, moves) in per_role.iter().enumerate() {
                    game.push_str(&format!("(role r{r}) (goal r{r} 0) "));
                    for mv in moves {
                        game.push_str(&format!("(legal r{r} {mv}) "));
                    }
                }
                game.push_str("(<= (next t) (does r0 ?m))");
                let mut m = machine(&game, ctx);
                let s = initial(&mut m, ctx);
                let joints = m
                    .joint_moves(&s)
                    .unwrap_or_else(|e| panic!("{ctx}: joint moves: {e}"));
                let joints: Vec<Vec<String>> = joints
                    .iter()
                    .map(|j| j.iter().map(|&t| m.terms().text(m.symbols(), t)).collect())
                    .collect();
                let want = &case["expected"];
                assert_eq!(
                    joints.len() as u64,
                    want["joint_move_count"].as_u64().unwrap(),
                    "{ctx}: {joints:?}"
                );
                let length = want["each_joint_move_length"].as_u64().unwrap() as usize;
                assert!(
                    joints.iter().all(|j| j.len() == length),
                    "{ctx}: {joints:?}"
                );
                let want_set: BTreeSet<Vec<String>> = want["joint_moves_set"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|j| {
                        strings(j, ctx)
                            .iter()
                            .map(|t| canon(&mut m, t, ctx))
                            .collect()
                    })
                    .collect();
                assert_eq!(
                    joints.iter().cloned().collect::<BTreeSet<_>>(),
                    want_set,
                    "{ctx}"
                );
                tally.run.push(id.to_string());
            }
            _ => unreachable!(),
        }
    }
    assert_eq!(others, 38 - 20, "benderng: cases of other operations");
    tally.check(
        "benderng benderng_cases.json",
        14,
        &[
            "chess-flatten-invariance",
            "simple-query-colour",
            "recursion-goal-zeroGoal",
            "recursion-goal-oneStep",
            "recursion-goal-finalGoal",
            "query-zero-arity-role",
        ],
    );
}

/// `benderng/reference_outputs.json`: legal moves, goals, terminality and the successor in a
/// given state, for four rules/state/moves triples. Each needs a state given as a set of
/// fluents, which must be reached by play.
///
/// - `output1`–`output3` (`axioms1.kif`–`axioms3.kif`) are in BenderNG's 2006 dialect (`AND`
///   in bodies, `NOT` as a rule head or fact in `axioms3.kif`) and their states lie deep in a
///   game; the engine refuses the rules (the refusal is printed), so they are skipped.
/// - `maze`: the state `(step 3) (gold c) (cell c)` of `maze.kif` (gold starts at `b`) cannot be
///   reached by play: moving the gold from `b` to `c` takes four moves. The exhaustive search
///   that shows it is part of the test.
#[test]
fn benderng_reference_outputs() {
    let Some(dir) = expectations() else { return };
    let dir = dir.join("benderng");
    let data = read_json(&dir.join("reference_outputs.json"));
    let mut tally = Tally::default();
    for case in data["cases"].as_array().unwrap() {
        let id = case["id"].as_str().unwrap();
        let ctx = format!(
            "benderng reference output {id} ({})",
            case["reference_file"].as_str().unwrap()
        );
        let ctx = ctx.as_str();
        let mut m = match try_machine(&read_text(&dir.join(case["rules"].as_str().unwrap()))) {
            Ok(m) => m,
            Err(e) if id.starts_with("output") => {
                tally.skip(
                    id,
                    format!(
                        "the engine refuses BenderNG's dialect: {} {}",
                        e[0].0, e[0].1
                    ),
                );
                continue;
            }
            Err(e) => panic!("{ctx}: the engine refuses the description: {e:?}"),
        };
        let want_roles: Vec<String> = strings(&case["roles"], ctx)
            .iter()
            .map(|r| canon(&mut m, r, ctx))
            .collect();
        assert_eq!(role_names(&m), want_roles, "{ctx}: roles");
        let s = match case_state(&mut m, &case["state"], ctx) {
            Ok(s) => s,
            Err(e) => {
                tally.skip(id, e);
                continue;
            }
        };
        let want = &case["expected"];
        let mut expected = serde_json::Map::new();
        expected.insert("legal_set".into(), want["legal"].clone());
        expected.insert("terminal".into(), want["terminal"].clone());
        check_state(&mut m, &s, &Value::Object(expected), ctx);
        for (role, value) in object(&want["goals"], ctx) {
            let r = role_index(&mut m, role, ctx);
            let got = m
                .goal_values(&s, r)
                .unwrap_or_else(|e| panic!("{ctx}: goal: {e}"));
            let want: BTreeSet<String> =
                value.as_u64().map(|v| v.to_string()).into_iter().collect();
            assert_eq!(text_set(&m, &got), want, "{ctx}: goal values of {role}");
        }
        let joint = joint_move(&mut m, &case["joint_move"], ctx);
        let after = next(&mut m, &s, &joint, ctx);
        let want_next = canon_set(&mut m, &want["next_state"], ctx);
        assert_eq!(fluents(&m, &after), want_next, "{ctx}: next state");
        tally.run.push(id.to_string());
    }
    tally.check(
        "benderng reference_outputs.json",
        0,
        &["output1", "output2", "output3", "maze"],
    );
}

// ---- libgdl -------------------------------------------------------------------------------

/// `libgdl/libgdl_cases.json`: the `next`, `terminal`, `legal`, `goal`, `query` and `playout`
/// cases (the validate, parse, unify and format cases belong to other tests).
///
/// - `query` cases about `init` are answered by the initial state (its fluents are the `x`
///   with `(init x)`); the others ask for instances of arbitrary relations of rule fragments
///   (`test`, `ancestor`, `engineer`, `married`, `base`, `test2`), which the StateMachine API
///   cannot express, and are skipped.
/// - `next-8puzzle-9-moves` and the play-outs were written for libgdl's flattened games; the
///   flattened game must behave like the original, so the original is played. The six games
///   of `also_flatten_only` are only flattened by the test (no reasoning is asserted).
#[test]
fn libgdl_cases() {
    let Some(dir) = expectations() else { return };
    let corpus = dir.join("../corpus");
    let dir = dir.join("libgdl");
    let data = read_json(&dir.join("libgdl_cases.json"));
    let mut tally = Tally::default();
    let mut others = 0;
    let game = |v: &Value| corpus.join(v["corpus_path"].as_str().unwrap());
    for case in data["cases"].as_array().unwrap() {
        let id = case["id"].as_str().unwrap();
        let op = case["operation"].as_str().unwrap();
        let ctx = format!("libgdl {id} [{}]", case["source_test"].as_str().unwrap());
        let ctx = ctx.as_str();
        match op {
            "query" => {
                let query = case.get("query").and_then(Value::as_str);
                if query != Some("(init ?x)") {
                    let queries = match case.get("queries") {
                        Some(qs) => qs
                            .as_array()
                            .unwrap()
                            .iter()
                            .map(|q| q["query"].as_str().unwrap())
                            .collect(),
                        None => vec![query.unwrap()],
                    };
                    tally.skip(
                        id,
                        format!("the API cannot ask the arbitrary relation query {queries:?}"),
                    );
                    continue;
                }
                let mut m = machine_from_file(&game(&case["game"]), ctx);
                let s = initial(&mut m, ctx);
                let answers: BTreeSet<String> = fluents(&m, &s)
                    .iter()
                    .map(|f| format!("(init {f})"))
                    .collect();
                for (key, want) in object(&case["expected"], ctx) {
                    match key.as_str() {
                        "satisfiable" => {
                            assert_eq!(!answers.is_empty(), want.as_bool().unwrap(), "{ctx}")
                        }
                        "answer_set" => {
                            let want = canon_set(&mut m, want, ctx);
                            assert_eq!(answers, want, "{ctx}: answers to (init ?x)");
                        }
                        other => panic!("{ctx}: unknown expectation `{other}`"),
                    }
                }
                tally.run.push(id.to_string());
            }
            "next" | "terminal" | "legal" | "goal" => {
                let mut m = machine_from_file(&game(&case["game"]), ctx);
                let mut s = initial(&mut m, ctx);
                if let Some(state) = case.get("state") {
                    assert_eq!(state, "initial", "{ctx}");
                }
                if let Some(e) = case.get("initial") {
                    check_state(&mut m, &s, e, &format!("{ctx}, initial state"));
                }
                if let Some(joint) = case.get("joint_move") {
                    let joint = joint_move(&mut m, joint, ctx);
                    s = next(&mut m, &s, &joint, ctx);
                }
                for (k, joint) in case
                    .get("moves")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .enumerate()
                {
                    let ctx = format!("{ctx}, move {}", k + 1);
                    let joint = joint_move(&mut m, joint, &ctx);
                    s = next(&mut m, &s, &joint, &ctx);
                }
                let after = case
                    .get("expected")
                    .or(case.get("expected_after_moves"))
                    .unwrap();
                check_state(&mut m, &s, after, &format!("{ctx}, final state"));
                tally.run.push(id.to_string());
            }
            "playout" => {
                let expected = &case["expected"];
                assert_eq!(expected["each_parses_without_error"], true, "{ctx}");
                assert_eq!(expected["random_playout_reaches_terminal"], true, "{ctx}");
                let inputs = case["inputs"].as_array().unwrap();
                assert_eq!(inputs.len(), 20, "{ctx}: games");
                for input in inputs {
                    let path = game(input);
                    let ctx = format!("{ctx}, {}", input["corpus_path"].as_str().unwrap());
                    let mut m = machine_from_file(&path, &ctx);
                    let start = initial(&mut m, &ctx);
                    for seed in 0..3 {
                        let mut rng = StdRng::seed_from_u64(seed);
                        let (end, steps) = m
                            .playout(&start, 100_000, &mut rng)
                            .unwrap_or_else(|e| panic!("{ctx}, seed {seed}: {e}"));
                        assert!(
                            terminal(&mut m, &end, &ctx),
                            "{ctx}, seed {seed}: no terminal state after {steps} steps"
                        );
                    }
                }
                let flatten_only = case["also_flatten_only"].as_array().unwrap().len();
                tally.skip(id, format!("the {flatten_only} games of also_flatten_only are only flattened, nothing about reasoning is asserted"));
                tally.run.push(id.to_string());
            }
            _ => others += 1,
        }
    }
    assert_eq!(others, 46 - 20, "libgdl: cases of other operations");
    tally.check(
        "libgdl libgdl_cases.json",
        8,
        &[
            "query-opt1-reordered",
            "query-simple-rule",
            "query-distinct",
            "query-or",
            "query-not",
            "query-function-term",
            "query-recursive-ancestor",
            "query-after-retract",
            "query-question1",
            "query-question2",
            "query-base-302",
            "flatten-recursive-base",
            "flatten-and-random-playout",
        ],
    );
}

// ---- ggplib -------------------------------------------------------------------------------

/// `ggplib/ggplib_cases.json`: the tic-tac-toe play-out of `test_sm.py :: create_and_play`, on
/// the corpus copy `games/base/ticTacToe.kif` (byte-identical to ggplib's).
#[test]
fn ggplib_playout() {
    let Some(dir) = expectations() else { return };
    let corpus = dir.join("../corpus");
    let data = read_json(&dir.join("ggplib/ggplib_cases.json"));
    let mut tally = Tally::default();
    for case in data["cases"].as_array().unwrap() {
        let id = case["id"].as_str().unwrap();
        let ctx = format!("ggplib {id} [{}]", case["source_test"].as_str().unwrap());
        let ctx = ctx.as_str();
        assert_eq!(case["operation"], "playout", "{ctx}");
        let mut m = machine_from_file(
            &corpus.join(case["game_file"]["in_corpus"].as_str().unwrap()),
            ctx,
        );
        let want: Vec<String> = strings(&case["roles_by_index"], ctx)
            .iter()
            .map(|r| canon(&mut m, r, ctx))
            .collect();
        assert_eq!(role_names(&m), want, "{ctx}: roles");
        let mut s = initial(&mut m, ctx);
        check_state(
            &mut m,
            &s,
            &case["initial"],
            &format!("{ctx}, initial state"),
        );
        for (k, step) in case["steps"].as_array().unwrap().iter().enumerate() {
            let ctx = format!("{ctx}, step {}", k + 1);
            assert!(
                !terminal(&mut m, &s, &ctx),
                "{ctx}: terminal before the move"
            );
            let joint = joint_move(&mut m, &step["joint_move"], &ctx);
            for (r, &mv) in joint.iter().enumerate() {
                let moves = m
                    .legal_moves(&s, r)
                    .unwrap_or_else(|e| panic!("{ctx}: legal: {e}"));
                assert!(
                    moves.contains(&mv),
                    "{ctx}: `{}` is not legal for role {r}",
                    m.terms().text(m.symbols(), mv)
                );
            }
            s = next(&mut m, &s, &joint, &ctx);
        }
        check_state(&mut m, &s, &case["final"], &format!("{ctx}, final state"));
        tally.run.push(id.to_string());
    }
    tally.check("ggplib ggplib_cases.json", 1, &[]);
}
