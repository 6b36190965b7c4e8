//! Monte Carlo tree search: UCT on the game's state machine, with rollouts in batches from
//! many leaves.
//!
//! - **Selection** is decoupled UCT: at every node each role chooses its own move by UCB1 on
//!   its own goal (scaled to 0–1), so one algorithm plays turn-taking games (the roles not on
//!   move have one move), simultaneous moves, and any number of roles, each maximising its own
//!   goal. A move never tried goes first.
//! - **Batches**: a batch selects up to [`gdl_reason::fast::LANES`] leaves (virtual loss — a
//!   simulation under way counts as a loss for every move on its path — keeps them apart),
//!   expands one new node each, and runs their rollouts together with
//!   [`StateMachine::playouts_from`]: on the fast engine, a bit-parallel lane each, every lane
//!   from its own leaf. Rollouts per leaf are tuned so that selecting and expanding a leaf
//!   costs about as much as its rollouts (more rollouts per leaf where the engine's lanes are
//!   much cheaper than its one-at-a-time questions). A young tree gets fewer leaves a batch
//!   (at most the square root of the root's visits, at least 16) and more rollouts from each,
//!   so that the search does not go breadth first. An engine that plays one rollout at a
//!   time (the reference engine, games whose `legal` depends on `does`) gets batches of one.
//! - **Solver** (MCTS-Solver): a terminal node's goals are known; where only one role has a
//!   choice, a node is proven when a child gives that role 100, or when every child is
//!   proven (it is then worth its best child's goals to that role). A proven move counts at
//!   its proven value in selection, so a mate in one is played and a move that lets the
//!   opponent mate is not. Nodes where several roles choose at once are not solved.
//! - **Puzzles** (one role): the best line ever found (the tree's path and the rollout's
//!   moves, which the engine keeps) is played; a line to 100 ends the search.
//! - **Tree reuse**: the node of the new state (a child or grandchild of the old root) becomes
//!   the root, and what is not below it is freed. The start clock searches from the first
//!   state.
//! - **Memory**: the tree holds at most `max_nodes` nodes; before a batch that could pass it,
//!   the least visited nodes are dropped (half the budget is kept). Nodes live in arrays (see
//!   `tree`), so nothing is allocated or freed node by node but a node's state.
//! - **Time**: a search stops at the deadline less a margin of 5 % of the time left (at least
//!   10 ms, at most 200 ms), starts no expansion that might end past that (it allows the
//!   slowest expansion seen so far), and stops rollouts that long before it too, whatever the
//!   game's size.
//! - **GDL-II** (a game the player cannot fully see): [`HyperPlayStrategy`] searches a tree in
//!   each of a sample of the states the player may be in and plays the move best on average;
//!   the `random` role moves uniformly at random in every tree (a chance node is never solved
//!   as a maximum).
//! - **GDL-III** (rules with `knows`): [`InfoSetStrategy`] searches one tree over what the player
//!   has seen (information sets), each iteration in one of the histories it may be in, so
//!   that a move is valued by what the player knows when making it, not by what a tree that
//!   sees everything would know.
//! - **Threads** (`threads` > 1) are root-parallel: each thread searches its own tree with its
//!   own copy of the fast engine, and the roots' statistics are summed to choose. With the
//!   reference engine, one thread. One thread with a simulation limit and fixed rollouts per
//!   leaf is deterministic for a seed.

mod config;
mod hyperplay;
mod infoset;
mod search;
mod tree;

use std::time::Instant;

use gdl_reason::{StateMachine, TermId};

pub use self::config::MctsConfig;
pub use self::hyperplay::{HYPERGAMES, HyperPlayStrategy};
pub use self::infoset::InfoSetStrategy;
pub use self::search::MOVES_PER_NODE;
use self::search::{Effort, Limits, RootMoves, Searcher};
use crate::error::PlayError;
use crate::game::{Game, Machine, State};
use crate::strategy::{MoveReport, PlayerStats, Strategy, stop_time};

struct Worker {
    searcher: Searcher,
    /// Its own copy of the machine (`None` for the first worker, which uses the game's).
    machine: Option<Machine>,
}

/// The MCTS player (see the module documentation).
pub struct MctsStrategy {
    config: MctsConfig,
    seed: u64,
    workers: Vec<Worker>,
    report: Option<MoveReport>,
    stats: PlayerStats,
}

impl MctsStrategy {
    pub fn new(config: MctsConfig, seed: u64) -> MctsStrategy {
        MctsStrategy {
            config,
            seed,
            workers: Vec::new(),
            report: None,
            stats: PlayerStats::default(),
        }
    }

    /// The nodes of the trees.
    pub fn nodes(&self) -> usize {
        self.workers.iter().map(|w| w.searcher.tree.len()).sum()
    }

    /// The moves (every role's, at every node) the trees hold: with the nodes, what their
    /// memory grows with.
    pub fn moves(&self) -> usize {
        self.workers
            .iter()
            .map(|w| w.searcher.tree.edges.len())
            .sum()
    }

    fn ensure_workers(&mut self, game: &Game) {
        if !self.workers.is_empty() {
            return;
        }
        let mut machines = vec![None];
        for _ in 1..self.config.threads.max(1) {
            match game.machine.try_clone() {
                Some(m) => machines.push(Some(m)),
                None => break,
            }
        }
        let limits = Limits {
            max_nodes: (self.config.max_nodes / machines.len()).max(8),
            simulations: self.config.simulations,
            rollouts_per_leaf: self.config.rollouts_per_leaf,
        };
        let roles = game.machine.roles().len();
        for (k, machine) in machines.into_iter().enumerate() {
            let seed = self
                .seed
                .wrapping_add((k as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15));
            self.workers.push(Worker {
                searcher: Searcher::new(roles, game.role, seed, limits),
                machine,
            });
        }
    }

    /// Every worker searches from `game.state` until `stop` (no search when `stop` has
    /// passed: the roots are only moved on). The first worker's error is the search's.
    fn run(&mut self, game: &mut Game, stop: Instant) -> Result<Effort, PlayError> {
        self.ensure_workers(game);
        let state: State = game.state.clone();
        let (first, rest) = self.workers.split_at_mut(1);
        let search = |w: &mut Searcher, m: &mut Machine| -> Result<Effort, PlayError> {
            w.set_root(m, &state)?;
            Ok(w.search(m, stop))
        };
        // The workers' trees are charged where the caller's memory is (a match's, a session's).
        let account = ggp_memory::current();
        let (mine, others) = std::thread::scope(|scope| {
            let handles: Vec<_> = rest
                .iter_mut()
                .map(|w| {
                    let searcher = &mut w.searcher;
                    let machine = w.machine.as_mut().expect("a worker's own machine");
                    let account = account.clone();
                    scope.spawn(move || {
                        ggp_memory::run_in(account.as_ref(), || search(searcher, machine))
                    })
                })
                .collect();
            let mine = search(&mut first[0].searcher, &mut game.machine);
            let others: Vec<Result<Effort, PlayError>> = handles
                .into_iter()
                .map(|h| h.join().unwrap_or(Err(PlayError::SearchThread)))
                .collect();
            (mine, others)
        });
        let mut effort = mine?;
        for e in others.into_iter().flatten() {
            effort.rollouts += e.rollouts;
            effort.simulations += e.simulations;
            effort.errors += e.errors;
        }
        Ok(effort)
    }

    /// The move to play, from every worker's root, and what is known of it: (move, visits,
    /// value, note).
    fn decide(&self, legal: &[TermId]) -> (TermId, Option<u64>, Option<f64>, Option<String>) {
        let roots: Vec<RootMoves> = self
            .workers
            .iter()
            .map(|w| w.searcher.root_moves())
            .collect();
        // A puzzle: the best line found.
        if let Some((goal, line)) = roots
            .iter()
            .filter_map(|r| r.best_line.as_ref())
            .filter(|(_, line)| line.first().is_some_and(|m| legal.contains(m)))
            .max_by_key(|(goal, _)| *goal)
        {
            let mv = line[0];
            let visits = roots[0].moves.iter().find(|m| m.0 == mv).map(|m| m.1);
            return (
                mv,
                visits,
                Some(f64::from(*goal)),
                Some(format!("best line: goal {goal} in {} moves", line.len())),
            );
        }
        // Sum the roots' statistics, move by move.
        let mut moves: Vec<(TermId, u64, u64, Option<u8>)> = Vec::new();
        for r in &roots {
            for &(mv, n, w, proven) in &r.moves {
                match moves.iter_mut().find(|m| m.0 == mv) {
                    Some(m) => {
                        m.1 += n;
                        m.2 += w;
                        m.3 = m.3.or(proven);
                    }
                    None => moves.push((mv, n, w, proven)),
                }
            }
        }
        moves.retain(|m| legal.contains(&m.0));
        let mean = |m: &(TermId, u64, u64, Option<u8>)| (m.1 > 0).then(|| m.2 as f64 / m.1 as f64);
        // Among moves proven equally good, the one whose simulations went best: against an
        // opponent who may err, some draws are better than others.
        let best_proven = moves.iter().filter(|m| m.3.is_some()).max_by(|a, b| {
            (a.3, mean(a).unwrap_or(0.0))
                .partial_cmp(&(b.3, mean(b).unwrap_or(0.0)))
                .unwrap_or(std::cmp::Ordering::Equal)
        });
        let best_open = moves
            .iter()
            .filter(|m| m.3.is_none() && m.1 > 0)
            .max_by(|a, b| {
                (a.1, mean(a).unwrap_or(0.0))
                    .partial_cmp(&(b.1, mean(b).unwrap_or(0.0)))
                    .unwrap_or(std::cmp::Ordering::Equal)
            });
        let solved = roots.iter().any(|r| r.proven.is_some());
        match (best_proven, best_open) {
            (Some(p), open)
                if p.3 == Some(100)
                    || solved
                    || open
                        .is_none_or(|o| mean(o).unwrap_or(0.0) < f64::from(p.3.unwrap_or(0))) =>
            {
                let goal = p.3.unwrap_or(0);
                (
                    p.0,
                    Some(p.1),
                    Some(f64::from(goal)),
                    Some(format!("proven: goal {goal}")),
                )
            }
            (_, Some(o)) => (o.0, Some(o.1), mean(o), None),
            _ => (
                legal.first().copied().unwrap_or(TermId(0)),
                None,
                None,
                Some("no simulation finished".into()),
            ),
        }
    }
}

impl Strategy for MctsStrategy {
    fn start(&mut self, game: &mut Game, deadline: Instant) {
        let stop = stop_time(Instant::now(), deadline);
        // A game that cannot be searched from its first state fails at the first move.
        let _ = self.run(game, stop);
    }

    fn select(&mut self, game: &mut Game, deadline: Instant) -> Result<TermId, PlayError> {
        let began = Instant::now();
        let legal = game.legal_moves()?;
        if legal.is_empty() {
            return Err(PlayError::NoLegalMove);
        }
        let stop = if legal.len() == 1 {
            // Nothing to choose: move the trees on and answer at once.
            began
        } else {
            stop_time(began, deadline)
        };
        let effort = self.run(game, stop)?;
        let (mv, visits, value, mut note) = if legal.len() == 1 {
            (legal[0], None, None, Some("one legal move".to_string()))
        } else {
            self.decide(&legal)
        };
        if effort.errors > 0 {
            let why = self.workers[0]
                .searcher
                .last_error
                .clone()
                .unwrap_or_default();
            let errors = format!("{} errors, the last: {why}", effort.errors);
            note = Some(match note {
                Some(n) => format!("{n}; {errors}"),
                None => errors,
            });
        }
        let report = MoveReport {
            simulations: effort.rollouts,
            iterations: Some(effort.simulations),
            time: began.elapsed(),
            nodes: Some(self.nodes() as u64),
            visits,
            value,
            note,
        };
        self.stats.add(&report);
        self.report = Some(report);
        Ok(mv)
    }

    fn stop(&mut self, _game: &mut Game) {
        self.workers.clear();
    }

    fn report(&self) -> Option<MoveReport> {
        self.report.clone()
    }

    fn stats(&self) -> Option<PlayerStats> {
        Some(self.stats)
    }
}
