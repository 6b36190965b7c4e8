//! The validation itself: breadth-first exploration of the reachable states, then (when it
//! does not finish) random playouts, then the verdicts.

use std::collections::{BTreeMap, BTreeSet};
use std::hash::BuildHasher;
use std::time::{Duration, Instant};

use gdl_reason::{ReasonError, RoleIndex, TermId};
use hashbrown::HashTable;
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};
use rustc_hash::{FxBuildHasher, FxHashMap};

use crate::codes;
use crate::graph::Graph;
use crate::{Finding, Options, Property, Report, Subject, Verdict};

/// What a finding is about: its kind and role.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Kind {
    Cycle,
    NoLegalMove,
    NoGoal,
    SeveralGoals,
    GoalNotANumber,
    FluentNotInBase,
    MoveNotInInput,
    CannotEvaluate,
    Disagree,
    Budget,
    GoalsBeforeTheEnd,
}

type Key = (Kind, Option<RoleIndex>);
type Path = Vec<Vec<TermId>>;

/// The shortest example found of one kind of finding.
struct Found {
    path: Path,
    cycle_from: Option<usize>,
    /// Terms it is about (goal values; fluents; moves with their role).
    items: BTreeSet<(RoleIndex, TermId)>,
    /// The error, for errors.
    text: Option<String>,
    states: u64,
}

/// What one state is like.
struct Seen {
    terminal: bool,
    /// Each role's legal moves, sorted (none in a terminal state).
    legal: Vec<Vec<TermId>>,
    /// Each role's goal in a terminal state, when it is one integer from 0 to 100.
    goals: Vec<Option<u8>>,
    issues: Vec<(Key, Vec<(RoleIndex, TermId)>)>,
}

const NO_PARENT: u32 = u32::MAX;

struct Run<'m, M: Subject> {
    m: &'m mut M,
    options: &'m Options,
    roles: usize,
    base: Option<Vec<TermId>>,
    input: Option<Vec<Vec<TermId>>>,
    /// Why `base` or `input` could not be read.
    base_input_error: Option<String>,
    numbers: FxHashMap<TermId, Option<u8>>,
    found: BTreeMap<Key, Found>,
    /// Each role's best goal in a terminal state and the shortest path found to it.
    best: Vec<Option<(u8, Path)>>,
    nonterminal_states: u64,
    /// States whose inspection failed (they count as found, not as explored).
    failed_states: u64,
    // The explored graph: node `i` is `states[i]`, reached from `parent[i]` by the joint move
    // `via[i * roles..]`, `level[i]` moves from the start. Nodes are numbered in breadth-first
    // order, so a node's row in `graph` is written when it is expanded.
    states: Vec<M::State>,
    /// Each state's hash: growing the table and telling states apart without reading them.
    hashes: Vec<u64>,
    table: HashTable<u32>,
    hasher: FxBuildHasher,
    parent: Vec<u32>,
    via: Vec<TermId>,
    level: Vec<u32>,
    graph: Graph,
    terminal_states: u64,
    /// The smallest level of a state that was not kept (the table was full, or the time ran
    /// out while expanding its parent), or whose parent's successors are unknown.
    incomplete_level: Option<u32>,
    playouts: u64,
    longest_playout: u64,
    cut_playouts: u64,
    /// Next states computed so far.
    transitions: u64,
}

/// Validates the game `machine` plays within the budget of `options`.
pub fn validate<M: Subject>(machine: &mut M, options: &Options) -> Report {
    let started = Instant::now();
    let deadline = started + options.time;
    let explore_until = started + options.time / 2;
    let roles = machine.roles().len();
    let mut run = Run {
        roles,
        base: None,
        input: None,
        base_input_error: None,
        numbers: FxHashMap::default(),
        found: BTreeMap::new(),
        best: vec![None; roles],
        nonterminal_states: 0,
        failed_states: 0,
        states: Vec::new(),
        hashes: Vec::new(),
        table: HashTable::new(),
        hasher: FxBuildHasher,
        parent: Vec::new(),
        via: Vec::new(),
        level: Vec::new(),
        graph: Graph::new(),
        terminal_states: 0,
        incomplete_level: None,
        playouts: 0,
        longest_playout: 0,
        cut_playouts: 0,
        transitions: 0,
        m: machine,
        options,
    };
    run.read_base_input();
    let expanded = run.explore(explore_until, deadline);
    let exhaustive = run.incomplete_level.is_none() && expanded == run.states.len();
    run.find_cycle();
    let longest_game = (exhaustive && !run.found.contains_key(&(Kind::Cycle, None)))
        .then(|| run.graph.longest_path(run.states.len(), 0));
    if !exhaustive && !run.states.is_empty() {
        // The playouts may use all the time left, whatever the exploration used.
        run.play(deadline);
    }
    run.report(started.elapsed(), expanded, exhaustive, longest_game)
}

impl<M: Subject> Run<'_, M> {
    fn text(&self, t: TermId) -> String {
        self.m.terms().text(self.m.symbols(), t)
    }

    /// Whether the budget of transitions is spent; the exploration may use half of it.
    fn spent(&self, exploring: bool) -> bool {
        self.options.max_transitions.is_some_and(|max| {
            let max = if exploring { max / 2 } else { max };
            self.transitions >= max
        })
    }

    /// The next state, counted.
    fn next(&mut self, state: &M::State, joint: &[TermId]) -> Result<M::State, ReasonError> {
        self.transitions += 1;
        self.m.next_state(state, joint)
    }

    fn read_base_input(&mut self) {
        match self.m.base_fluents() {
            Ok(base) => {
                self.base = base.map(|mut b| {
                    b.sort_unstable();
                    b
                })
            }
            Err(e) => self.base_input_error = Some(e.to_string()),
        }
        let mut input = Vec::new();
        for role in 0..self.roles {
            match self.m.input_moves(role) {
                Ok(Some(mut moves)) => {
                    moves.sort_unstable();
                    input.push(moves);
                }
                Ok(None) => break,
                Err(e) => {
                    self.base_input_error = Some(e.to_string());
                    break;
                }
            }
        }
        if input.len() == self.roles && self.roles > 0 {
            self.input = Some(input);
        }
        if let Some(d) = self.m.take_disagreement() {
            self.note_error(Kind::Disagree, d, Vec::new());
        }
    }

    /// The goal value as a number, if it is an integer from 0 to 100.
    fn number(&mut self, value: TermId) -> Option<u8> {
        if let Some(&n) = self.numbers.get(&value) {
            return n;
        }
        let n = self.text(value).parse::<u8>().ok().filter(|&v| v <= 100);
        self.numbers.insert(value, n);
        n
    }

    /// Looks at a state: terminal, legal moves, goals, `base` and `input`.
    fn inspect(
        &mut self,
        state: &M::State,
        goals_before_the_end: bool,
    ) -> Result<Seen, ReasonError> {
        let terminal = self.m.is_terminal(state)?;
        let mut seen = Seen {
            terminal,
            legal: Vec::new(),
            goals: Vec::new(),
            issues: Vec::new(),
        };
        if let Some(base) = &self.base {
            let missing: Vec<(RoleIndex, TermId)> = self
                .m
                .fluents(state)
                .into_iter()
                .filter(|f| base.binary_search(f).is_err())
                .map(|f| (0, f))
                .collect();
            if !missing.is_empty() {
                seen.issues.push(((Kind::FluentNotInBase, None), missing));
            }
        }
        if terminal {
            for role in 0..self.roles {
                let values = self.m.goal_values(state, role)?;
                let goal = match values.as_slice() {
                    [] => {
                        seen.issues.push(((Kind::NoGoal, Some(role)), Vec::new()));
                        None
                    }
                    [one] => {
                        let n = self.number(*one);
                        if n.is_none() {
                            seen.issues
                                .push(((Kind::GoalNotANumber, Some(role)), vec![(role, *one)]));
                        }
                        n
                    }
                    many => {
                        let items = many.iter().map(|&v| (role, v)).collect();
                        seen.issues.push(((Kind::SeveralGoals, Some(role)), items));
                        None
                    }
                };
                seen.goals.push(goal);
            }
            return Ok(seen);
        }
        let mut missing_moves = Vec::new();
        for role in 0..self.roles {
            let mut moves = self.m.legal_moves(state, role)?;
            moves.sort_unstable();
            if moves.is_empty() {
                seen.issues
                    .push(((Kind::NoLegalMove, Some(role)), Vec::new()));
            }
            if let Some(input) = &self.input {
                missing_moves.extend(
                    moves
                        .iter()
                        .filter(|m| input[role].binary_search(m).is_err())
                        .map(|&m| (role, m)),
                );
            }
            seen.legal.push(moves);
        }
        if !missing_moves.is_empty() {
            seen.issues
                .push(((Kind::MoveNotInInput, None), missing_moves));
        }
        if goals_before_the_end {
            for role in 0..self.roles {
                if !self.m.goal_values(state, role)?.is_empty() {
                    seen.issues
                        .push(((Kind::GoalsBeforeTheEnd, None), Vec::new()));
                    break;
                }
            }
        }
        Ok(seen)
    }

    /// Whether a finding of `key` reached in `len` moves would be new or shorter.
    fn wants(&self, key: Key, len: usize) -> bool {
        self.found.get(&key).is_none_or(|f| len < f.path.len())
    }

    /// Records a finding seen in one more state, reached in `len` moves; `path` gives the
    /// moves (and where a cycle starts), asked only when they are the shortest yet.
    fn note(
        &mut self,
        key: Key,
        len: usize,
        items: Vec<(RoleIndex, TermId)>,
        text: Option<String>,
        path: impl FnOnce(&Self) -> (Path, Option<usize>),
    ) {
        let shorter = self.wants(key, len);
        let path = shorter.then(|| path(self));
        match (self.found.get_mut(&key), path) {
            (Some(f), path) => {
                f.states += 1;
                f.items.extend(items);
                if let Some((path, cycle_from)) = path {
                    f.path = path;
                    f.cycle_from = cycle_from;
                    if text.is_some() {
                        f.text = text;
                    }
                }
            }
            (None, Some((path, cycle_from))) => {
                self.found.insert(
                    key,
                    Found {
                        path,
                        cycle_from,
                        items: items.into_iter().collect(),
                        text,
                        states: 1,
                    },
                );
            }
            (None, None) => unreachable!("a new finding is always wanted"),
        }
    }

    fn note_error(&mut self, kind: Kind, text: String, path: Path) {
        self.note((kind, None), path.len(), Vec::new(), Some(text), |_| {
            (path, None)
        });
    }

    /// An error in words: a budget says so, the rest is the reasoner's message.
    fn error_text(e: &ReasonError) -> String {
        match e {
            ReasonError::Budget(_) => e.to_string(),
            ReasonError::Invalid(m) | ReasonError::Evaluation(m) | ReasonError::BadRequest(m) => {
                m.clone()
            }
        }
    }

    fn error_kind(e: &ReasonError) -> Kind {
        match e {
            ReasonError::Budget(_) => Kind::Budget,
            _ => Kind::CannotEvaluate,
        }
    }

    /// The joint moves from the initial state to node `v`.
    fn path_to(&self, v: u32) -> Path {
        let mut path = Vec::new();
        let mut v = v;
        while self.parent[v as usize] != NO_PARENT {
            let at = v as usize * self.roles;
            path.push(self.via[at..at + self.roles].to_vec());
            v = self.parent[v as usize];
        }
        path.reverse();
        path
    }

    /// The node of a state, added (reached from `parent` by `joint`) if it is new and there
    /// is room.
    fn node(&mut self, state: M::State, parent: u32, joint: &[TermId], level: u32) -> Option<u32> {
        let hash = self.hasher.hash_one(&state);
        let (states, hashes) = (&self.states, &self.hashes);
        if let Some(&v) = self.table.find(hash, |&v| {
            hashes[v as usize] == hash && states[v as usize] == state
        }) {
            return Some(v);
        }
        if self.states.len() >= self.options.max_states.min(crate::MAX_STATES) {
            self.incomplete(level);
            return None;
        }
        let v = self.states.len() as u32;
        let hashes = &self.hashes;
        self.table.insert_unique(hash, v, |&w| hashes[w as usize]);
        self.states.push(state);
        self.hashes.push(hash);
        self.parent.push(parent);
        if joint.is_empty() {
            // The initial state is reached by no move: any terms fill its place.
            let filler = self.m.roles().to_vec();
            self.via.extend(filler);
        } else {
            self.via.extend_from_slice(joint);
        }
        self.level.push(level);
        Some(v)
    }

    fn incomplete(&mut self, level: u32) {
        self.incomplete_level = Some(self.incomplete_level.map_or(level, |l| l.min(level)));
    }

    /// Records what a look at a state found.
    fn record(&mut self, seen: &Seen, len: usize, path: &dyn Fn(&Self) -> (Path, Option<usize>)) {
        for (key, items) in &seen.issues {
            self.note(*key, len, items.clone(), None, path);
        }
        if seen.terminal {
            for role in 0..self.roles {
                if let Some(g) = seen.goals[role] {
                    let better = match &self.best[role] {
                        None => true,
                        Some((b, p)) => g > *b || (g == *b && len < p.len()),
                    };
                    if better {
                        self.best[role] = Some((g, path(self).0));
                    }
                }
            }
        }
    }

    /// Breadth-first exploration until every reachable state is expanded, or `until`. Returns
    /// the number of nodes expanded.
    fn explore(&mut self, until: Instant, deadline: Instant) -> usize {
        let root = match self.m.initial_state() {
            Ok(root) => root,
            Err(e) => {
                let kind = Self::error_kind(&e);
                let text = format!("the initial state: {}", Self::error_text(&e));
                self.note_error(kind, text, Vec::new());
                self.incomplete(0);
                return 0;
            }
        };
        if let Some(d) = self.m.take_disagreement() {
            self.note_error(Kind::Disagree, d, Vec::new());
        }
        self.node(root, NO_PARENT, &[], 0);
        let mut next = 0;
        while next < self.states.len() {
            if Instant::now() >= until.min(deadline) || self.spent(true) {
                break;
            }
            self.expand(next as u32, until.min(deadline));
            next += 1;
        }
        next
    }

    /// Looks at node `v`'s state and tries every joint move from it (until `deadline`).
    fn expand(&mut self, v: u32, deadline: Instant) {
        let state = self.states[v as usize].clone();
        let level = self.level[v as usize];
        let len = level as usize;
        let seen = self.inspect(&state, true);
        if let Some(d) = self.m.take_disagreement() {
            self.note_error(Kind::Disagree, d, self.path_to(v));
        }
        let seen = match seen {
            Ok(seen) => seen,
            Err(e) => {
                let text = Some(Self::error_text(&e));
                let key = (Self::error_kind(&e), None);
                self.note(key, len, Vec::new(), text, |run| (run.path_to(v), None));
                // Nothing is known of this state: it is not explored.
                self.failed_states += 1;
                self.incomplete(level);
                self.graph.end_row();
                return;
            }
        };
        self.record(&seen, len, &|run: &Self| (run.path_to(v), None));
        if seen.terminal {
            self.terminal_states += 1;
            self.graph.end_row();
            return;
        }
        self.nonterminal_states += 1;
        if seen.legal.iter().any(Vec::is_empty) {
            self.graph.end_row();
            return;
        }
        let legal = seen.legal;
        let mut at = vec![0usize; self.roles];
        let mut joint: Vec<TermId> = legal.iter().map(|l| l[0]).collect();
        let mut count = 0u64;
        'joints: loop {
            count += 1;
            if (count.is_multiple_of(64) && Instant::now() >= deadline) || self.spent(true) {
                self.incomplete(level + 1);
                break;
            }
            match self.next(&state, &joint) {
                Ok(next) => {
                    if let Some(d) = self.m.take_disagreement() {
                        let mut path = self.path_to(v);
                        path.push(joint.clone());
                        self.note_error(Kind::Disagree, d, path);
                    }
                    if let Some(w) = self.node(next, v, &joint, level + 1) {
                        self.graph.edges.push(w);
                    }
                }
                Err(e) => {
                    let kind = Self::error_kind(&e);
                    let mut path = self.path_to(v);
                    path.push(joint.clone());
                    let moves: Vec<String> = joint.iter().map(|&m| self.text(m)).collect();
                    self.note_error(
                        kind,
                        format!(
                            "the next state after ({}): {}",
                            moves.join(" "),
                            Self::error_text(&e)
                        ),
                        path,
                    );
                    self.incomplete(level + 1);
                }
            }
            // The next joint move, the last role's move varying fastest.
            let mut r = self.roles;
            loop {
                if r == 0 {
                    break 'joints;
                }
                r -= 1;
                at[r] += 1;
                if at[r] < legal[r].len() {
                    joint[r] = legal[r][at[r]];
                    break;
                }
                at[r] = 0;
                joint[r] = legal[r][0];
            }
        }
        self.graph.end_row();
    }

    /// A joint move from node `u` to node `w`.
    fn joint_between(&mut self, u: u32, w: u32) -> Option<Vec<TermId>> {
        let state = self.states[u as usize].clone();
        let target = &self.states[w as usize].clone();
        self.m
            .joint_moves(&state)
            .ok()?
            .into_iter()
            .find(|j| self.m.next_state(&state, j).is_ok_and(|s| s == *target))
    }

    /// Looks for a cycle among the expanded states; records the shortest path to the first
    /// state on one and around it.
    fn find_cycle(&mut self) {
        let nodes = self.states.len();
        let Some(v) = self.graph.first_on_cycle(nodes) else {
            return;
        };
        let Some(cycle) = self.graph.shortest_cycle_through(v) else {
            return;
        };
        let mut path = self.path_to(v);
        let from = path.len();
        let mut u = v;
        for &w in &cycle {
            match self.joint_between(u, w) {
                Some(joint) => path.push(joint),
                None => return,
            }
            u = w;
        }
        let _ = self.m.take_disagreement();
        let len = path.len();
        self.note((Kind::Cycle, None), len, Vec::new(), None, |_| {
            (path, Some(from))
        });
    }

    /// Random playouts from the initial state until `deadline` (or the number asked for).
    fn play(&mut self, deadline: Instant) {
        let mut rng = SmallRng::seed_from_u64(self.options.seed);
        let root = self.states[0].clone();
        let mut path: Path = Vec::new();
        let mut visited: FxHashMap<M::State, usize> = FxHashMap::default();
        'playouts: while self.options.playouts.is_none_or(|n| self.playouts < n) {
            path.clear();
            visited.clear();
            let mut state = root.clone();
            visited.insert(state.clone(), 0);
            loop {
                if Instant::now() >= deadline {
                    break 'playouts;
                }
                let len = path.len();
                let seen = self.inspect(&state, false);
                if let Some(d) = self.m.take_disagreement() {
                    self.note_error(Kind::Disagree, d, path.clone());
                }
                let seen = match seen {
                    Ok(seen) => seen,
                    Err(e) => {
                        let key = (Self::error_kind(&e), None);
                        self.note(key, len, Vec::new(), Some(Self::error_text(&e)), |_| {
                            (path.clone(), None)
                        });
                        if len == 0 {
                            // Every playout would fail the same way.
                            self.playouts += 1;
                            break 'playouts;
                        }
                        break;
                    }
                };
                self.record(&seen, len, &|_: &Self| (path.clone(), None));
                if seen.terminal || seen.legal.iter().any(Vec::is_empty) {
                    break;
                }
                if len >= self.options.max_playout_steps {
                    self.cut_playouts += 1;
                    break;
                }
                if self.spent(false) {
                    break 'playouts;
                }
                let joint: Vec<TermId> = seen
                    .legal
                    .iter()
                    .map(|moves| moves[rng.random_range(0..moves.len())])
                    .collect();
                let next = self.next(&state, &joint);
                path.push(joint);
                if let Some(d) = self.m.take_disagreement() {
                    self.note_error(Kind::Disagree, d, path.clone());
                }
                let next = match next {
                    Ok(next) => next,
                    Err(e) => {
                        let key = (Self::error_kind(&e), None);
                        let text = Some(format!("the next state: {}", Self::error_text(&e)));
                        self.note(key, path.len(), Vec::new(), text, |_| (path.clone(), None));
                        break;
                    }
                };
                if let Some(&k) = visited.get(&next) {
                    let len = path.len();
                    self.note((Kind::Cycle, None), len, Vec::new(), None, |_| {
                        (path.clone(), Some(k))
                    });
                    break;
                }
                visited.insert(next.clone(), path.len());
                state = next;
            }
            self.playouts += 1;
            self.longest_playout = self.longest_playout.max(path.len() as u64);
        }
    }

    /// What winnability found: for each role no explored terminal state gives 100 (when
    /// every state was explored: it can never win, or the puzzle has no solution), and a
    /// one-role game's winning sequence.
    fn winnability(
        &self,
        losers: &[usize],
        role_names: &[String],
        exhaustive: bool,
    ) -> Vec<Finding> {
        let mut findings = Vec::new();
        if exhaustive {
            for &r in losers {
                let (code, message) = if self.roles == 1 {
                    (
                        codes::NO_SOLUTION,
                        format!(
                            "the game has no solution: no reachable terminal state gives `{}` 100",
                            role_names[r]
                        ),
                    )
                } else {
                    (
                        codes::NEVER_WINS,
                        format!(
                            "`{}` can never win: no reachable terminal state gives it 100",
                            role_names[r]
                        ),
                    )
                };
                let best = self.best[r].clone();
                let message = match &best {
                    Some((b, _)) => format!("{message} (its best is {b})"),
                    None => format!("{message} (nor any goal value)"),
                };
                findings.push(Finding {
                    code,
                    property: Some(if self.roles == 1 {
                        Property::StronglyWinnable
                    } else {
                        Property::WeaklyWinnable
                    }),
                    role: Some((r, role_names[r].clone())),
                    message,
                    items: best.iter().map(|(b, _)| b.to_string()).collect(),
                    states: 0,
                    moves: best.map(|(_, p)| self.texts(&p)),
                    cycle_from: None,
                });
            }
        }
        if self.roles == 1
            && let Some((100, path)) = self.best[0].clone()
        {
            findings.push(Finding {
                code: codes::WINNING_SEQUENCE,
                property: Some(Property::StronglyWinnable),
                role: Some((0, role_names[0].clone())),
                message: format!(
                    "`{}` wins with 100 in {} move{}{}",
                    role_names[0],
                    path.len(),
                    if path.len() == 1 { "" } else { "s" },
                    if exhaustive {
                        ", the fewest possible"
                    } else {
                        ""
                    }
                ),
                items: Vec::new(),
                states: 0,
                moves: Some(self.texts(&path)),
                cycle_from: None,
            });
        }
        findings
    }

    fn report(
        mut self,
        elapsed: Duration,
        expanded: usize,
        exhaustive: bool,
        longest_game: Option<u64>,
    ) -> Report {
        let role_names: Vec<String> = (0..self.roles)
            .map(|r| self.text(self.m.roles()[r]))
            .collect();
        // Every state within `complete` moves was inspected.
        let mut limit: Option<u32> = self.incomplete_level;
        if expanded < self.states.len() {
            let l = self.level[expanded];
            limit = Some(limit.map_or(l, |x| x.min(l)));
        }
        let complete_depth = match limit {
            None => self.level.last().map(|&l| u64::from(l)),
            Some(0) => None,
            Some(l) => Some(u64::from(l - 1)),
        };
        let reached = self.level.last().map_or(0, |&l| u64::from(l));
        let depth = longest_game.unwrap_or(reached.max(self.longest_playout));
        let searched = self.searched(expanded, complete_depth);
        let mut findings = Vec::new();
        let refuted = |found: &BTreeMap<Key, Found>, kinds: &[Kind]| {
            found.keys().any(|(k, _)| kinds.contains(k))
        };
        let universal = |kinds: &[Kind], found: &BTreeMap<Key, Found>| {
            if refuted(found, kinds) {
                Verdict::Refuted
            } else if exhaustive {
                Verdict::Proved
            } else {
                Verdict::Undecided(format!("no violation {searched}"))
            }
        };
        let terminates = universal(&[Kind::Cycle], &self.found);
        let playable = universal(&[Kind::NoLegalMove], &self.found);
        let goals = universal(
            &[Kind::NoGoal, Kind::SeveralGoals, Kind::GoalNotANumber],
            &self.found,
        );
        let base_input = if self.base.is_none() && self.input.is_none() {
            match &self.base_input_error {
                Some(e) => Verdict::Undecided(format!("`base` or `input` cannot be read: {e}")),
                None => Verdict::NotApplicable,
            }
        } else if let Some(e) = &self.base_input_error {
            if refuted(&self.found, &[Kind::FluentNotInBase, Kind::MoveNotInInput]) {
                Verdict::Refuted
            } else {
                Verdict::Undecided(format!("`base` or `input` cannot be read: {e}"))
            }
        } else {
            universal(&[Kind::FluentNotInBase, Kind::MoveNotInInput], &self.found)
        };
        // Winnability: a terminal state giving 100 is a witness; its absence is a proof only
        // when every state was explored.
        let losers: Vec<usize> = (0..self.roles)
            .filter(|&r| !matches!(self.best[r], Some((100, _))))
            .collect();
        let weakly = if losers.is_empty() {
            Verdict::Proved
        } else if exhaustive {
            Verdict::Refuted
        } else {
            let names: Vec<String> = losers
                .iter()
                .map(|&r| format!("`{}`", role_names[r]))
                .collect();
            Verdict::Undecided(format!(
                "no terminal state giving 100 to {} {searched}",
                names.join(", ")
            ))
        };
        let strongly = if self.roles != 1 {
            Verdict::NotApplicable
        } else {
            weakly.clone()
        };
        findings.extend(self.winnability(&losers, &role_names, exhaustive));
        let found = std::mem::take(&mut self.found);
        for ((kind, role), f) in found {
            findings.push(self.finding(kind, role, f, &role_names, exhaustive));
        }
        findings.sort_by_key(|f| (f.code, f.role.as_ref().map(|r| r.0)));
        Report {
            roles: role_names,
            states: self.states.len() as u64,
            explored: expanded as u64 - self.failed_states,
            terminal_states: self.terminal_states,
            depth,
            exhaustive,
            complete_depth,
            playouts: self.playouts,
            longest_playout: self.longest_playout,
            cut_playouts: self.cut_playouts,
            histories: None,
            elapsed,
            verdicts: vec![
                (Property::Terminates, terminates),
                (Property::Playable, playable),
                (Property::Goals, goals),
                (Property::WeaklyWinnable, weakly),
                (Property::StronglyWinnable, strongly),
                (Property::BaseInput, base_input),
            ],
            findings,
        }
    }

    /// What was searched, for undecided verdicts: "in … nor in …".
    fn searched(&self, expanded: usize, complete_depth: Option<u64>) -> String {
        let explored = expanded as u64 - self.failed_states;
        let explored = match complete_depth {
            Some(0) => format!(
                "{} explored state{} (not every state one move from the start)",
                thousands(explored),
                if explored == 1 { "" } else { "s" },
            ),
            Some(d) => format!(
                "{} explored state{} (every state within {d} move{} of the start)",
                thousands(explored),
                if explored == 1 { "" } else { "s" },
                if d == 1 { "" } else { "s" }
            ),
            None => "no explored state".to_string(),
        };
        let mut played = format!(
            "{} random playout{} of up to {} move{}",
            thousands(self.playouts),
            if self.playouts == 1 { "" } else { "s" },
            thousands(self.longest_playout),
            if self.longest_playout == 1 { "" } else { "s" }
        );
        if self.cut_playouts > 0 {
            played.push_str(&format!(
                " ({} cut at {} moves)",
                thousands(self.cut_playouts),
                thousands(self.options.max_playout_steps as u64)
            ));
        }
        format!("in {explored} nor in {played}")
    }

    fn texts(&self, path: &Path) -> Vec<Vec<String>> {
        path.iter()
            .map(|joint| joint.iter().map(|&m| self.text(m)).collect())
            .collect()
    }

    fn finding(
        &self,
        kind: Kind,
        role: Option<RoleIndex>,
        f: Found,
        roles: &[String],
        exhaustive: bool,
    ) -> Finding {
        let name = role.map(|r| roles[r].clone()).unwrap_or_default();
        let in_states = |what: &str| -> String {
            if exhaustive {
                format!(
                    "{what} ({} of the {} reachable state{})",
                    thousands(f.states),
                    thousands(self.states.len() as u64),
                    if self.states.len() == 1 { "" } else { "s" }
                )
            } else {
                what.to_string()
            }
        };
        let values: Vec<String> = f.items.iter().map(|&(_, v)| self.text(v)).collect();
        let (code, property, message, items) = match kind {
            Kind::Cycle => (
                codes::CYCLE,
                Some(Property::Terminates),
                format!(
                    "the game need not end: a cycle of {} non-terminal state{} is reachable",
                    f.path.len() - f.cycle_from.unwrap_or(0),
                    if f.path.len() - f.cycle_from.unwrap_or(0) == 1 {
                        ""
                    } else {
                        "s"
                    }
                ),
                Vec::new(),
            ),
            Kind::NoLegalMove => (
                codes::NO_LEGAL_MOVE,
                Some(Property::Playable),
                in_states(&format!(
                    "`{name}` has no legal move in a reachable non-terminal state"
                )),
                Vec::new(),
            ),
            Kind::NoGoal => (
                codes::NO_GOAL,
                Some(Property::Goals),
                in_states(&format!(
                    "no goal value holds for `{name}` in a reachable terminal state"
                )),
                Vec::new(),
            ),
            Kind::SeveralGoals => (
                codes::SEVERAL_GOALS,
                Some(Property::Goals),
                in_states(&format!(
                    "several goal values hold for `{name}` in a reachable terminal state: {}",
                    quoted(&values, 8)
                )),
                values,
            ),
            Kind::GoalNotANumber => (
                codes::GOAL_NOT_A_NUMBER,
                Some(Property::Goals),
                in_states(&format!(
                    "the goal value of `{name}` in a reachable terminal state is not an integer from 0 to 100: {}",
                    quoted(&values, 8)
                )),
                values,
            ),
            Kind::FluentNotInBase => (
                codes::FLUENT_NOT_IN_BASE,
                Some(Property::BaseInput),
                format!(
                    "{} reachable fluent{} not listed by `base`: {}",
                    values.len(),
                    if values.len() == 1 { " is" } else { "s are" },
                    quoted(&values, 8)
                ),
                values,
            ),
            Kind::MoveNotInInput => {
                let moves: Vec<String> = f
                    .items
                    .iter()
                    .map(|&(r, m)| format!("{} {}", roles[r], self.text(m)))
                    .collect();
                (
                    codes::MOVE_NOT_IN_INPUT,
                    Some(Property::BaseInput),
                    format!(
                        "{} legal move{} not listed by `input`: {}",
                        moves.len(),
                        if moves.len() == 1 { " is" } else { "s are" },
                        quoted(&moves, 8)
                    ),
                    moves,
                )
            }
            Kind::CannotEvaluate => (
                codes::CANNOT_EVALUATE,
                None,
                format!(
                    "the rules cannot be evaluated in a reachable state: {}",
                    f.text.as_deref().unwrap_or("")
                ),
                Vec::new(),
            ),
            Kind::Disagree => (
                codes::ENGINES_DISAGREE,
                None,
                format!(
                    "the engines disagree on {}",
                    f.text.as_deref().unwrap_or("")
                ),
                Vec::new(),
            ),
            Kind::Budget => (
                codes::REASONER_BUDGET,
                None,
                format!(
                    "a reachable state could not be explored: {}",
                    f.text.as_deref().unwrap_or("")
                ),
                Vec::new(),
            ),
            Kind::GoalsBeforeTheEnd => (
                codes::GOALS_BEFORE_THE_END,
                None,
                format!(
                    "goal values are defined in {} of the {} {}",
                    thousands(f.states),
                    thousands(self.nonterminal_states),
                    if exhaustive {
                        "reachable non-terminal states"
                    } else {
                        "non-terminal states explored"
                    }
                ),
                Vec::new(),
            ),
        };
        Finding {
            code,
            property,
            role: role.map(|r| (r, roles[r].clone())),
            message,
            items,
            states: f.states,
            moves: Some(self.texts(&f.path)),
            cycle_from: f.cycle_from,
        }
    }
}

/// `1234567` as `1,234,567`.
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// The first `limit` items, quoted, and how many more there are.
fn quoted(items: &[String], limit: usize) -> String {
    let mut out: Vec<String> = items.iter().take(limit).map(|i| format!("`{i}`")).collect();
    if items.len() > limit {
        out.push(format!("and {} more", items.len() - limit));
    }
    out.join(", ")
}
