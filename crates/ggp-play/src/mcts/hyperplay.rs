//! HyperPlay on the MCTS machinery: how `mcts` plays a game it cannot fully see (GDL-II).
//!
//! The player keeps the states it may be in ([`Game::possible`], with their weights). For a
//! move, it takes up to [`HYPERGAMES`] of them — all of them when there are that few, else a
//! sample drawn by weight — and searches each as if it were the true state, with one tree each
//! and an equal share of the clock (the tree of the previous move is not kept: the states it
//! was grown from may since have been ruled out). Each of the player's moves gets the average,
//! over the states, of its value there (the mean goal of the simulations through it, or its
//! proven goal), weighted by how likely each state is; the best is played. Only moves legal in
//! every possible state are candidates ([`Game::legal_moves`]), so the player never sends a
//! move that the true state, which it cannot see, would make illegal.
//!
//! Inside each tree the `random` role moves uniformly at random (it is chance, not a player
//! maximising a goal), and the other roles are searched as if they could see everything: the
//! classic weakness of HyperPlay ("strategy fusion"), accepted here as in the literature.
//!
//! In a GDL-III game ([`Game::is_epistemic`]) strategy fusion is no longer a detail: a tree
//! that sees the state finds that knowing is cheap. There the player searches over its
//! information sets instead ([`InfoSetStrategy`]).

use std::time::Instant;

use gdl_reason::{StateMachine, TermId};
use rand::rngs::SmallRng;
use rand::{Rng, SeedableRng};

use super::config::MctsConfig;
use super::infoset::InfoSetStrategy;
use super::search::{Effort, Limits, Searcher};
use crate::error::PlayError;
use crate::game::{Game, State};
use crate::strategy::{MoveReport, PlayerStats, Strategy, stop_time};

/// The most states searched for one move.
pub const HYPERGAMES: usize = 8;
/// Random playouts that value a move a search left unvisited in a state (it stops as soon as
/// it proves the state's value, perhaps before trying every move).
const FALLBACK_PLAYOUTS: u32 = 32;
/// Steps of such a playout at most.
const FALLBACK_STEPS: usize = 500;

/// The HyperPlay player (see the module documentation).
pub struct HyperPlayStrategy {
    config: MctsConfig,
    rng: SmallRng,
    seed: u64,
    report: Option<MoveReport>,
    stats: PlayerStats,
    /// Plays GDL-III games.
    epistemic: InfoSetStrategy,
    /// Whether the last move was the information-set search's.
    by_epistemic: bool,
}

impl HyperPlayStrategy {
    /// A player searching as `config` says (one thread; a simulation limit is shared among
    /// the states searched for a move; each tree holds at most `max_nodes` nodes).
    pub fn new(config: MctsConfig, seed: u64) -> HyperPlayStrategy {
        HyperPlayStrategy {
            config,
            rng: SmallRng::seed_from_u64(seed),
            seed,
            report: None,
            stats: PlayerStats::default(),
            epistemic: InfoSetStrategy::new(config, seed),
            by_epistemic: false,
        }
    }

    /// The states to search, each with its weight (summing to 1): every possible state when
    /// there are at most [`HYPERGAMES`], else that many drawn by weight (each then counting
    /// as often as it was drawn).
    fn hypergames(&mut self, game: &Game) -> Result<Vec<(State, f64)>, PlayError> {
        let (states, weights) = game.beliefs();
        let total: f64 = weights.iter().sum();
        if total.is_nan() || total <= 0.0 {
            return Err(PlayError::NoWeight);
        }
        if states.len() <= HYPERGAMES {
            return Ok(states
                .into_iter()
                .zip(weights)
                .filter(|(_, w)| *w > 0.0)
                .map(|(s, w)| (s, w / total))
                .collect());
        }
        let pick =
            rand::distr::weighted::WeightedIndex::new(&weights).map_err(PlayError::Weights)?;
        let mut drawn = vec![0u32; states.len()];
        for _ in 0..HYPERGAMES {
            drawn[rand::distr::Distribution::sample(&pick, &mut self.rng)] += 1;
        }
        Ok(states
            .into_iter()
            .zip(drawn)
            .filter(|(_, n)| *n > 0)
            .map(|(s, n)| (s, f64::from(n) / HYPERGAMES as f64))
            .collect())
    }
}

impl HyperPlayStrategy {
    /// The player's mean goal over random playouts from `state` after its move `mv` (the
    /// others' moves random), and how many were played; `None` if none could be (playouts
    /// after the first start only before `stop`).
    fn playouts_after(
        &mut self,
        game: &mut Game,
        state: &State,
        mv: TermId,
        stop: Instant,
    ) -> Option<(f64, u32)> {
        let (mut sum, mut count) = (0.0, 0u32);
        for k in 0..FALLBACK_PLAYOUTS {
            if k > 0 && Instant::now() >= stop {
                break;
            }
            let Ok(mut joint) = game.machine.random_joint_move(state, &mut self.rng) else {
                continue;
            };
            joint[game.role] = mv;
            let Ok(next) = game.machine.next_state(state, &joint) else {
                continue;
            };
            if let Ok(gdl_reason::machine::Playout {
                goals: Some(goals), ..
            }) = game
                .machine
                .random_playout(&next, FALLBACK_STEPS, &mut self.rng)
            {
                sum += f64::from(goals[game.role]);
                count += 1;
            }
        }
        (count > 0).then(|| (sum / f64::from(count), count))
    }
}

impl Strategy for HyperPlayStrategy {
    fn select(&mut self, game: &mut Game, deadline: Instant) -> Result<TermId, PlayError> {
        self.by_epistemic = game.is_epistemic();
        if self.by_epistemic {
            return self.epistemic.select(game, deadline);
        }
        let began = Instant::now();
        let moves = game.legal_moves()?;
        if moves.len() <= 1 {
            let mv = moves.first().copied().ok_or(PlayError::NoLegalMove)?;
            let report = MoveReport::forced(began.elapsed());
            self.stats.add(&report);
            self.report = Some(report);
            return Ok(mv);
        }
        let hypergames = self.hypergames(game)?;
        let stop = stop_time(began, deadline);
        let roles = game.machine.roles().len();
        let chance = game.machine.random_role();
        let limits = Limits {
            max_nodes: self.config.max_nodes.max(8),
            simulations: self
                .config
                .simulations
                .map(|n| (n / hypergames.len() as u64).max(1)),
            rollouts_per_leaf: self.config.rollouts_per_leaf,
        };
        // Each move's weighted sum of values, and the weight of the states that valued it.
        let mut sums = vec![0.0f64; moves.len()];
        let mut weights = vec![0.0f64; moves.len()];
        let mut visits = vec![0u64; moves.len()];
        let mut effort = Effort::default();
        let mut nodes = 0u64;
        let mut errors = Vec::new();
        for (k, (state, weight)) in hypergames.iter().enumerate() {
            let seed = self.seed ^ self.rng.random::<u64>();
            let mut searcher = Searcher::new(roles, game.role, seed, limits);
            searcher.set_chance(chance);
            searcher.set_root(&mut game.machine, state)?;
            // Each state's share of what is left, so that a quick search leaves its time to
            // the next ones.
            let left = hypergames.len() - k;
            let until = if k + 1 == hypergames.len() {
                stop
            } else {
                let now = Instant::now();
                (now + stop.saturating_duration_since(now) / left as u32).min(stop)
            };
            let e = searcher.search(&mut game.machine, until);
            effort.rollouts += e.rollouts;
            effort.simulations += e.simulations;
            effort.errors += e.errors;
            if let Some(why) = searcher.last_error.take() {
                errors.push(why);
            }
            nodes += searcher.tree.len() as u64;
            let mut valued = vec![false; moves.len()];
            for (mv, n, w, proven) in searcher.root_moves().moves {
                let Some(i) = moves.iter().position(|&m| m == mv) else {
                    continue;
                };
                let value = match proven {
                    Some(goal) => f64::from(goal),
                    None if n > 0 => w as f64 / n as f64,
                    None => continue,
                };
                sums[i] += weight * value;
                weights[i] += weight;
                visits[i] += n;
                valued[i] = true;
            }
            // A move the search did not try here (it proved the state first, or ran out of
            // time): random playouts after it, so that every state counts for every move.
            for i in (0..moves.len()).filter(|&i| !valued[i]) {
                if let Some((value, count)) = self.playouts_after(game, state, moves[i], until) {
                    sums[i] += weight * value;
                    weights[i] += weight;
                    effort.rollouts += u64::from(count);
                    effort.simulations += u64::from(count);
                }
            }
        }
        let value = |i: usize| (weights[i] > 0.0).then(|| sums[i] / weights[i]);
        let best = (0..moves.len())
            .max_by(|&a, &b| {
                (value(a).unwrap_or(-1.0), visits[a])
                    .partial_cmp(&(value(b).unwrap_or(-1.0), visits[b]))
                    .unwrap_or(std::cmp::Ordering::Equal)
            })
            .expect("moves");
        let possible = game.possible.as_ref().map_or(1, Vec::len);
        let mut note = format!(
            "hyperplay: {} of {possible} possible states searched",
            hypergames.len()
        );
        if effort.errors > 0 {
            note.push_str(&format!(
                "; {} errors, the last: {}",
                effort.errors,
                errors.last().cloned().unwrap_or_default()
            ));
        }
        let report = MoveReport {
            simulations: effort.rollouts,
            iterations: Some(effort.simulations),
            time: began.elapsed(),
            nodes: Some(nodes),
            visits: Some(visits[best]),
            value: value(best),
            note: Some(note),
        };
        self.stats.add(&report);
        self.report = Some(report);
        Ok(moves[best])
    }

    fn report(&self) -> Option<MoveReport> {
        if self.by_epistemic {
            return self.epistemic.report();
        }
        self.report.clone()
    }

    fn stats(&self) -> Option<PlayerStats> {
        if self.by_epistemic {
            return self.epistemic.stats();
        }
        Some(self.stats)
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;
    use crate::game::load;

    const MONTY: &str = include_str!("../../../../games/montyhall.kif");

    /// Monty Hall after the contestant chose door 1 and the host opened door 3: the car is
    /// behind door 2 with probability 2/3 (the host had to open 3) and behind door 1 with 1/3.
    /// Searching both states, weighted by their likelihood, HyperPlay switches.
    #[test]
    fn hyperplay_switches_doors_from_what_it_saw() {
        for seed in 0..4 {
            let mut game = Game::new(load(MONTY).unwrap(), 0).unwrap();
            let choose = game.machine.intern("(choose 1)").unwrap();
            game.last_move = Some(choose);
            game.perceive(None, &["(picked 1)".into()]).unwrap();
            game.last_move = Some(game.machine.intern("wait").unwrap());
            game.perceive(None, &["(opened 3)".into()]).unwrap();
            let config = MctsConfig {
                simulations: Some(2000),
                ..MctsConfig::default()
            };
            let mut player = HyperPlayStrategy::new(config, seed);
            let deadline = Instant::now() + Duration::from_secs(60);
            let mv = player.select(&mut game, deadline).unwrap();
            assert_eq!(game.text(mv), "switch");
            let report = player.report().unwrap();
            let value = report.value.unwrap();
            assert!((value - 200.0 / 3.0).abs() < 1.0, "{value}");
            assert_eq!(
                report.note.as_deref(),
                Some("hyperplay: 2 of 2 possible states searched")
            );
            // Both states were searched, or valued by playouts where the search had proved
            // its state before trying the move.
            assert!(report.iterations.unwrap() > 0);
        }
    }

    /// A gamble decided by a die of the `random` role (win on 1 or 2, lose on 3) against a
    /// sure 50. The random role's goal is the player's loss: searched as a maximiser (or
    /// solved as one), it would always throw a 3 and the gamble would look worth 0. As chance,
    /// the gamble is worth 2/3 of 100, and the player takes it.
    #[test]
    fn the_random_role_is_chance_not_an_opponent() {
        let rules = "
            (role player) (role random)
            (die 1) (die 2) (die 3)
            (init (phase choose))
            (<= (legal player safe) (true (phase choose)))
            (<= (legal player gamble) (true (phase choose)))
            (<= (legal random wait) (true (phase choose)))
            (<= (legal player wait) (true (phase roll)))
            (<= (legal random (roll ?n)) (true (phase roll)) (die ?n))
            (<= (next (phase roll)) (true (phase choose)))
            (<= (next (phase over)) (true (phase roll)))
            (<= (next (chose ?m)) (does player ?m) (true (phase choose)))
            (<= (next (chose ?m)) (true (chose ?m)))
            (<= (next (rolled ?n)) (does random (roll ?n)))
            (<= (sees player (rolled ?n)) (does random (roll ?n)))
            (<= terminal (true (phase over)))
            (<= (goal player 50) (true (chose safe)))
            (<= (goal player 100) (true (chose gamble)) (true (rolled ?n)) (distinct ?n 3))
            (<= (goal player 0) (true (chose gamble)) (true (rolled 3)))
            (<= (goal random 100) (true (chose gamble)) (true (rolled 3)))
            (<= (goal random 0) (true (chose safe)))
            (<= (goal random 0) (true (rolled ?n)) (distinct ?n 3))";
        for seed in 0..4 {
            let mut game = Game::new(load(rules).unwrap(), 0).unwrap();
            let config = MctsConfig {
                simulations: Some(3000),
                ..MctsConfig::default()
            };
            let mut player = HyperPlayStrategy::new(config, seed);
            let deadline = Instant::now() + Duration::from_secs(60);
            let mv = player.select(&mut game, deadline).unwrap();
            assert_eq!(game.text(mv), "gamble");
            let value = player.report().unwrap().value.unwrap();
            assert!((55.0..78.0).contains(&value), "{value}");
        }
    }
}
