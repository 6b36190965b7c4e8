//! Information-set search: how `mcts` plays a GDL-III game, where the goal or the legal moves
//! depend on what the player knows.
//!
//! HyperPlay ([`super::HyperPlayStrategy`]) searches each possible state as if the player could
//! see it. In an epistemic game that is wrong in the way that matters most: in number guessing,
//! a tree that knows the secret is 1 finds that `(ask 2)` alone pins it down, a tree that knows
//! it is 8 that `(ask 8)` does, so every tree finds a two-question win for its number and a
//! wasted question looks free ("strategy fusion"). The player then asks badly and runs out of
//! questions.
//!
//! Here the player searches one tree over its *beliefs* instead (after single-observer
//! information-set MCTS, Cowling, Powley and Whitehouse, 2012): a node is the set of histories
//! the player may be in after what it did and saw since the root, and nodes whose histories
//! end in the same states are one (asking 2 then 6 leaves what asking 6 then 2 does). Each
//! iteration draws one possible history (by its weight, [`Game::weights`]) and walks the tree
//! with it: at a node the player chooses among its moves legal in that history by UCB1 (a
//! move's count of chances is how often it was legal), the other roles move uniformly at
//! random (the `random` role is chance; the others are modelled so too), and the percepts the
//! player gets in that history choose the next node. A new move is followed by a random
//! playout. A move is worth the mean, over the nodes after it (as often as each was reached),
//! of their values, a node's value being its best move's: one choice of move for every history
//! the player cannot tell apart. A guess while two numbers are possible is worth 0 in every
//! iteration through it, since the knowledge machine's goal says the player does not know.

use std::time::Instant;

use gdl_reason::{Playout, StateMachine, TermId};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;

use super::config::MctsConfig;
use crate::error::PlayError;
use crate::game::{Game, State};
use crate::strategy::{MoveReport, PlayerStats, Strategy, stop_time};

/// The most joint moves of the other roles tried from one history when following a belief.
const MAX_JOINTS: usize = 4096;
/// Steps of a random playout after the tree at most.
const PLAYOUT_STEPS: usize = 500;
/// The exploration constant of UCB1 on goals scaled to 0–1: high, since random playouts
/// rarely reach a goal that needs knowing, so values are small until the tree finds a way.
const EXPLORATION: f64 = 1.4;

/// A move of the player at a node.
struct Edge {
    mv: TermId,
    /// Iterations through it, and the sum of their goals (0–100).
    visits: u64,
    sum: f64,
    /// Iterations that reached the node with the move legal.
    available: u64,
    /// Its value: the mean, over the nodes after it (weighted by how often each was
    /// reached), of their values.
    q: f64,
    /// The nodes after it, one per set of percepts (sorted ids), and how often each was
    /// reached.
    children: Vec<(Vec<TermId>, usize, u64)>,
}

/// What the player has seen since the root: the histories it may be in (its belief), its
/// moves there.
struct Node {
    edges: Vec<Edge>,
    belief: Vec<State>,
    /// Iterations through it, and the sum of their goals.
    visits: u64,
    sum: f64,
}

impl Node {
    fn new(belief: Vec<State>) -> Node {
        Node {
            edges: Vec::new(),
            belief,
            visits: 0,
            sum: 0.0,
        }
    }

    /// Its value: its best move's, or the mean goal of the iterations through it while it
    /// has none (a terminal node, or one just reached).
    fn value(&self) -> f64 {
        let best = self
            .edges
            .iter()
            .filter(|e| e.visits > 0)
            .map(|e| e.q)
            .fold(None, |m: Option<f64>, q| Some(m.map_or(q, |m| m.max(q))));
        best.unwrap_or(if self.visits > 0 {
            self.sum / self.visits as f64
        } else {
            0.0
        })
    }
}

/// How an iteration ended.
enum Outcome {
    /// The player's goal, to add along the path.
    Goal(f64),
    /// A playout cut at its step limit: nothing to add.
    Cut,
}

/// The information-set searcher (see the module documentation).
pub struct InfoSetStrategy {
    config: MctsConfig,
    rng: SmallRng,
    nodes: Vec<Node>,
    /// The node of each belief, by the states of its histories (sorted fluents, sorted).
    beliefs: std::collections::HashMap<Vec<Vec<TermId>>, usize>,
    report: Option<MoveReport>,
    stats: PlayerStats,
    /// The root's moves after the last search: visits and value.
    root: Vec<(TermId, u64, f64)>,
}

impl InfoSetStrategy {
    /// A player searching as `config` says (its node budget and simulation limit; one
    /// thread).
    pub fn new(config: MctsConfig, seed: u64) -> InfoSetStrategy {
        InfoSetStrategy {
            config,
            rng: SmallRng::seed_from_u64(seed),
            nodes: Vec::new(),
            beliefs: std::collections::HashMap::new(),
            report: None,
            stats: PlayerStats::default(),
            root: Vec::new(),
        }
    }

    /// One iteration from `history`; the steps of the path (node, edge, node after) are in
    /// `path`.
    fn iterate(
        &mut self,
        game: &mut Game,
        mut history: State,
        root_moves: &[TermId],
        path: &mut Vec<(usize, usize, usize)>,
    ) -> Result<Outcome, PlayError> {
        let role = game.role;
        let mut node = 0;
        // A game that repeats a belief (a cycle in the graph of beliefs) ends in time anyway.
        for _ in 0..PLAYOUT_STEPS {
            if game.machine.is_terminal(&history)? {
                return Ok(Outcome::Goal(f64::from(game.machine.goal(&history, role)?)));
            }
            let mut legal = game.machine.all_legal_moves(&history)?;
            let mut legal_own = std::mem::take(&mut legal[role]);
            if node == 0 {
                legal_own.retain(|m| root_moves.contains(m));
            }
            let mut joint = Vec::with_capacity(legal.len());
            for (r, moves) in legal.iter().enumerate() {
                // The player's own move is chosen below; the others move at random.
                let others = if r == role { &legal_own } else { moves };
                joint.push(*others.choose(&mut self.rng).ok_or(PlayError::NoLegalMove)?);
            }
            let (edge, expanded) = self.choose(node, &legal_own)?;
            joint[role] = self.nodes[node].edges[edge].mv;
            let percepts = game.machine.percepts(&history, &joint, role)?;
            history = game.machine.next_state(&history, &joint)?;
            let child = self.child(game, node, edge, percepts)?;
            path.push((node, edge, child));
            if expanded {
                return Ok(
                    match game
                        .machine
                        .random_playout(&history, PLAYOUT_STEPS, &mut self.rng)?
                    {
                        Playout {
                            goals: Some(goals), ..
                        } => Outcome::Goal(f64::from(goals[role])),
                        Playout { goals: None, .. } => Outcome::Cut,
                    },
                );
            }
            node = child;
        }
        Ok(Outcome::Cut)
    }

    /// Adds an iteration's goal along its path, and values each move on it again from the
    /// last: the mean of the values of the nodes after it (a node's value is its best
    /// move's), so that a move is worth what the player can make of it, not the average of
    /// the exploring moves tried after it.
    fn back_up(&mut self, path: &[(usize, usize, usize)], goal: f64) {
        for &(n, e, c) in path.iter().rev() {
            self.nodes[c].visits += 1;
            self.nodes[c].sum += goal;
            let children = self.nodes[n].edges[e].children.clone();
            let (mut total, mut weighted) = (0u64, 0.0f64);
            for &(_, child, count) in &children {
                let count = count + u64::from(child == c);
                total += count;
                weighted += count as f64 * self.nodes[child].value();
            }
            let edge = &mut self.nodes[n].edges[e];
            for (_, child, count) in &mut edge.children {
                if *child == c {
                    *count += 1;
                }
            }
            edge.visits += 1;
            edge.sum += goal;
            edge.q = if total > 0 {
                weighted / total as f64
            } else {
                goal
            };
        }
    }

    /// The player's move at `node` among `legal` (its edge, and whether it was just added):
    /// a move not tried yet (while the tree has room), else the best by UCB1.
    fn choose(&mut self, node: usize, legal: &[TermId]) -> Result<(usize, bool), PlayError> {
        let room = self.nodes.len() < self.config.max_nodes.max(8);
        let edges = &mut self.nodes[node].edges;
        let untried: Vec<TermId> = legal
            .iter()
            .copied()
            .filter(|m| edges.iter().all(|e| e.mv != *m))
            .collect();
        if room && let Some(&mv) = untried.choose(&mut self.rng) {
            edges.push(Edge {
                mv,
                visits: 0,
                sum: 0.0,
                available: 1,
                q: 0.0,
                children: Vec::new(),
            });
            for e in edges
                .iter_mut()
                .filter(|e| e.mv != mv && legal.contains(&e.mv))
            {
                e.available += 1;
            }
            return Ok((edges.len() - 1, true));
        }
        let mut best: Option<(usize, f64)> = None;
        for (k, e) in edges.iter_mut().enumerate() {
            if !legal.contains(&e.mv) {
                continue;
            }
            e.available += 1;
            let score = if e.visits == 0 {
                f64::INFINITY
            } else {
                e.q / 100.0 + EXPLORATION * ((e.available as f64).ln() / e.visits as f64).sqrt()
            };
            if best.is_none_or(|(_, s)| score > s) {
                best = Some((k, score));
            }
        }
        // No move tried and no room for one: a random legal move, expanded after all.
        match best {
            Some((k, _)) => Ok((k, false)),
            None => {
                let mv = *legal.choose(&mut self.rng).ok_or(PlayError::NoLegalMove)?;
                edges.push(Edge {
                    mv,
                    visits: 0,
                    sum: 0.0,
                    available: 1,
                    q: 0.0,
                    children: Vec::new(),
                });
                Ok((edges.len() - 1, true))
            }
        }
    }

    /// The node after `edge` of `node` with these percepts: the one already reached so, or
    /// the node of the same belief (the same states possible, reached by another path: asking
    /// 2 then 6 leaves what asking 6 then 2 does), or a new one.
    fn child(
        &mut self,
        game: &mut Game,
        node: usize,
        edge: usize,
        percepts: Vec<TermId>,
    ) -> Result<usize, PlayError> {
        let found = self.nodes[node].edges[edge]
            .children
            .iter()
            .find(|(p, _, _)| *p == percepts)
            .map(|&(_, n, _)| n);
        if let Some(n) = found {
            return Ok(n);
        }
        let mv = self.nodes[node].edges[edge].mv;
        let belief = belief_after(game, &self.nodes[node].belief, mv, &percepts)?;
        let mut key: Vec<Vec<TermId>> = belief.iter().map(|h| game.machine.fluents(h)).collect();
        key.sort_unstable();
        key.dedup();
        let n = match self.beliefs.get(&key) {
            Some(&n) => n,
            None => {
                self.nodes.push(Node::new(belief));
                let n = self.nodes.len() - 1;
                self.beliefs.insert(key, n);
                n
            }
        };
        self.nodes[node].edges[edge].children.push((percepts, n, 0));
        Ok(n)
    }
}

/// The histories the player may be in after making `mv` and seeing `percepts` (sorted ids) in
/// one of `belief`: each extended by every joint move with that own move (the others' legal
/// moves, at most [`MAX_JOINTS`] of them) that gives the player those percepts.
fn belief_after(
    game: &mut Game,
    belief: &[State],
    mv: TermId,
    percepts: &[TermId],
) -> Result<Vec<State>, PlayError> {
    let role = game.role;
    let mut out = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for h in belief {
        let mut legal = game.machine.all_legal_moves(h)?;
        if !legal[role].contains(&mv) {
            continue;
        }
        legal[role] = vec![mv];
        let count = legal
            .iter()
            .map(Vec::len)
            .product::<usize>()
            .min(MAX_JOINTS);
        for k in 0..count {
            let mut rest = k;
            let joint: Vec<TermId> = legal
                .iter()
                .map(|moves| {
                    let m = moves[rest % moves.len()];
                    rest /= moves.len();
                    m
                })
                .collect();
            if game.machine.percepts(h, &joint, role)? == percepts {
                let next = game.machine.next_state(h, &joint)?;
                if seen.insert(next.clone()) {
                    out.push(next);
                }
            }
        }
    }
    Ok(out)
}

impl Strategy for InfoSetStrategy {
    fn select(&mut self, game: &mut Game, deadline: Instant) -> Result<TermId, PlayError> {
        let began = Instant::now();
        let moves = game.legal_moves()?;
        if moves.len() <= 1 {
            let mv = moves.first().copied().ok_or(PlayError::NoLegalMove)?;
            let report = MoveReport::forced(began.elapsed());
            self.stats.add(&report);
            self.report = Some(report);
            return Ok(mv);
        }
        let (histories, weights) = game.beliefs();
        let pick =
            rand::distr::weighted::WeightedIndex::new(&weights).map_err(PlayError::Weights)?;
        let stop = stop_time(began, deadline);
        self.nodes.clear();
        self.beliefs.clear();
        self.nodes.push(Node::new(histories.clone()));
        let (mut iterations, mut rollouts, mut errors) = (0u64, 0u64, 0u64);
        let mut last_error = None;
        let mut path = Vec::new();
        while Instant::now() < stop && self.config.simulations.is_none_or(|n| iterations < n) {
            iterations += 1;
            let history =
                histories[rand::distr::Distribution::sample(&pick, &mut self.rng)].clone();
            path.clear();
            match self.iterate(game, history, &moves, &mut path) {
                Ok(Outcome::Goal(goal)) => {
                    self.back_up(&path, goal);
                    rollouts += 1;
                }
                Ok(Outcome::Cut) => {}
                Err(e) => {
                    errors += 1;
                    last_error = Some(e.to_string());
                }
            }
        }
        let root = &self.nodes[0].edges;
        self.root = root.iter().map(|e| (e.mv, e.visits, e.q)).collect();
        let value = |e: &Edge| (e.visits > 0).then_some(e.q);
        // The best value, the more visited first on a tie; a move never tried only when
        // none was.
        let best = root
            .iter()
            .filter(|e| moves.contains(&e.mv))
            .max_by(|a, b| {
                (value(a).unwrap_or(-1.0), a.visits)
                    .partial_cmp(&(value(b).unwrap_or(-1.0), b.visits))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        let (mv, visits, val) = match best {
            Some(e) => (e.mv, Some(e.visits), value(e)),
            None => (moves[0], None, None),
        };
        let mut note = format!("information sets: {} possible histories", histories.len());
        if errors > 0 {
            note.push_str(&format!(
                "; {errors} errors, the last: {}",
                last_error.unwrap_or_default()
            ));
        }
        let report = MoveReport {
            simulations: rollouts,
            iterations: Some(iterations),
            time: began.elapsed(),
            nodes: Some(self.nodes.len() as u64),
            visits,
            value: val,
            note: Some(note),
        };
        self.stats.add(&report);
        self.report = Some(report);
        self.nodes = Vec::new();
        self.beliefs.clear();
        Ok(mv)
    }

    fn report(&self) -> Option<MoveReport> {
        self.report.clone()
    }

    fn stats(&self) -> Option<PlayerStats> {
        Some(self.stats)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::game::load;
    use crate::sample::SampleStrategy;

    const GUESSING: &str = include_str!("../../../../games/number_guessing.kif");

    /// The guesser after waiting, asking "less than 5?" (no), "less than 7?" (yes) and
    /// wasting a question on 1 (no): the number is 5 or 6, and two moves are left.
    fn five_or_six() -> Game {
        let mut game = Game::new(load(GUESSING).unwrap(), 1).unwrap();
        for (mv, seen) in [
            ("noop", None),
            ("(ask 5)", Some("no")),
            ("(ask 7)", Some("yes")),
            ("(ask 1)", Some("no")),
        ] {
            game.last_move = Some(game.machine.intern(mv).unwrap());
            let seen: Vec<String> = seen.into_iter().map(String::from).collect();
            game.perceive(None, &seen).unwrap();
        }
        assert_eq!(game.possible.as_ref().map(Vec::len), Some(2));
        game
    }

    #[test]
    fn a_lucky_guess_is_worth_nothing_and_the_player_asks_until_it_knows() {
        let mut game = five_or_six();
        assert!(game.is_epistemic());
        let config = MctsConfig {
            simulations: Some(1500),
            ..MctsConfig::default()
        };
        let mut player = InfoSetStrategy::new(config, 11);
        let far = Instant::now() + Duration::from_secs(120);
        let mv = player.select(&mut game, far).unwrap();
        // Guessing 5 or 6 is right half the time, and worth 0 every time: the guesser would
        // not know. Only "less than 6?" tells them apart in time.
        assert_eq!(game.text(mv), "(ask 6)");
        let mut guesses = 0;
        for &(m, visits, value) in &player.root {
            let text = game.text(m);
            if text.starts_with("(guess") && visits > 0 {
                guesses += 1;
                assert_eq!(value, 0.0, "{text}");
            }
            if text == "(ask 6)" {
                assert_eq!(value, 100.0);
            }
        }
        assert_eq!(guesses, 8, "every guess was tried");
        // The number is 5: "less than 6?" gets yes, and now the guesser knows.
        game.last_move = Some(mv);
        game.perceive(None, &["yes".into()]).unwrap();
        assert_eq!(game.possible.as_ref().map(Vec::len), Some(1));
        let mv = player.select(&mut game, far).unwrap();
        assert_eq!(game.text(mv), "(guess 5)");
        assert_eq!(player.report().unwrap().value, Some(100.0));
    }

    #[test]
    fn the_sampling_player_does_not_guess_between_two_numbers() {
        let mut game = five_or_six();
        // Only `(ask 6)` can win: then a random guess is right and known one time in 16.
        // 300 playouts of each move, whatever the machine's speed.
        let mut player = SampleStrategy::with_rounds(4, 300);
        let far = Instant::now() + Duration::from_secs(120);
        let mv = player.select(&mut game, far).unwrap();
        assert_eq!(game.text(mv), "(ask 6)");
    }
}
