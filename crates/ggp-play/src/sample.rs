//! Flat Monte Carlo over the states a player may be in.

use std::time::Instant;

use gdl_reason::{Playout, StateMachine, TermId};
use rand::SeedableRng;
use rand::rngs::SmallRng;

use crate::error::PlayError;
use crate::game::Game;
use crate::strategy::Strategy;

/// Flat Monte Carlo over the states the player may be in (the HyperPlay approach of GDL-II
/// players; in a GDL game, the one state): for each legal move, random playouts from states
/// drawn by their weight, the move made first, the others' moves random; the move with the best
/// weighted average goal, found by the deadline.
pub struct SampleStrategy {
    rng: SmallRng,
    /// Rounds of playouts (one per legal move each) for one move at most.
    rounds: usize,
}

/// Rounds of playouts (one per legal move each) for one move at most (the deadline usually
/// ends them first).
const SAMPLE_ROUNDS: usize = 2000;
/// Steps of a playout at most.
const PLAYOUT_STEPS: usize = 500;

impl SampleStrategy {
    pub fn new(seed: u64) -> SampleStrategy {
        SampleStrategy {
            rng: SmallRng::seed_from_u64(seed),
            rounds: SAMPLE_ROUNDS,
        }
    }

    /// The strategy with at most `rounds` rounds of playouts a move: a fixed amount of work,
    /// whatever the machine's speed (for tests and measurements).
    pub fn with_rounds(seed: u64, rounds: usize) -> SampleStrategy {
        SampleStrategy {
            rounds,
            ..SampleStrategy::new(seed)
        }
    }
}

impl Strategy for SampleStrategy {
    fn select(&mut self, game: &mut Game, deadline: Instant) -> Result<TermId, PlayError> {
        let moves = game.legal_moves()?;
        if moves.len() <= 1 {
            return moves.first().copied().ok_or(PlayError::NoLegalMove);
        }
        let (states, weights) = game.beliefs();
        let pick =
            rand::distr::weighted::WeightedIndex::new(&weights).map_err(PlayError::Weights)?;
        let mut sums = vec![0.0f64; moves.len()];
        let mut counts = vec![0u32; moves.len()];
        'rounds: for _ in 0..self.rounds {
            for (i, &m) in moves.iter().enumerate() {
                if Instant::now() >= deadline {
                    break 'rounds;
                }
                let state = &states[rand::distr::Distribution::sample(&pick, &mut self.rng)];
                // A playout the rules cannot finish (a terminal state without one goal value,
                // a role without legal moves) counts for nothing.
                let Ok(mut joint) = game.machine.random_joint_move(state, &mut self.rng) else {
                    continue;
                };
                joint[game.role] = m;
                let Ok(next) = game.machine.next_state(state, &joint) else {
                    continue;
                };
                let playout = game
                    .machine
                    .random_playout(&next, PLAYOUT_STEPS, &mut self.rng);
                if let Ok(Playout {
                    goals: Some(goals), ..
                }) = playout
                {
                    sums[i] += f64::from(goals[game.role]);
                    counts[i] += 1;
                }
            }
        }
        let value = |i: usize| sums[i] / f64::from(counts[i].max(1));
        let best = (0..moves.len())
            .max_by(|&a, &b| value(a).total_cmp(&value(b)))
            .expect("moves");
        Ok(moves[best])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::game::load;

    /// After picking door 1 and seeing door 3 opened, the car is behind door 2 two times in
    /// three: the weights say so, and the sampling strategy switches.
    #[test]
    fn the_sampling_player_switches_doors() {
        let mut game = Game::new(
            load(include_str!("../../../games/montyhall.kif")).unwrap(),
            0,
        )
        .unwrap();
        game.last_move = Some(game.machine.intern("(choose 1)").unwrap());
        game.perceive(None, &["(picked 1)".into()]).unwrap();
        game.last_move = Some(game.machine.intern("wait").unwrap());
        game.perceive(None, &["(opened 3)".into()]).unwrap();
        let possible = game.possible.clone().unwrap();
        let weight_of = |car: &str| -> f64 {
            possible
                .iter()
                .zip(&game.weights)
                .filter(|(s, _)| {
                    game.machine
                        .fluents(s)
                        .iter()
                        .any(|&f| game.machine.terms().text(game.machine.symbols(), f) == car)
                })
                .map(|(_, w)| *w)
                .sum()
        };
        let (one, two) = (weight_of("(car 1)"), weight_of("(car 2)"));
        assert!((two / one - 2.0).abs() < 1e-9, "{one} {two}");
        let mut strategy = SampleStrategy::new(5);
        let deadline = Instant::now() + std::time::Duration::from_secs(30);
        let chosen = strategy.select(&mut game, deadline).unwrap();
        assert_eq!(game.text(chosen), "switch");
    }
}
