//! Flat Monte Carlo, the classic baseline: for each legal move, random playouts after it until
//! the clock (the other roles' moves drawn at random), then the move with the best mean goal.
//! Rollouts run in batches from every move's next state at once
//! ([`StateMachine::playouts_from`]).

use std::time::Instant;

use gdl_reason::{Rollouts, StateMachine, TermId};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;

use crate::error::PlayError;
use crate::game::{Game, State};
use crate::strategy::{MoveReport, PlayerStats, Strategy, stop_time};

/// A rollout longer than this is cut, and counts as a draw (50).
const MAX_STEPS: usize = 1000;

pub struct MonteCarloStrategy {
    rng: SmallRng,
    rollouts: Rollouts,
    report: Option<MoveReport>,
    stats: PlayerStats,
}

impl MonteCarloStrategy {
    pub fn new(seed: u64) -> MonteCarloStrategy {
        MonteCarloStrategy {
            rng: SmallRng::seed_from_u64(seed),
            rollouts: Rollouts::default(),
            report: None,
            stats: PlayerStats::default(),
        }
    }
}

impl Strategy for MonteCarloStrategy {
    fn select(&mut self, game: &mut Game, deadline: Instant) -> Result<TermId, PlayError> {
        let began = Instant::now();
        let stop = stop_time(began, deadline);
        let state = game.state.clone();
        let all = game.machine.all_legal_moves(&state)?;
        let mine = all.get(game.role).cloned().unwrap_or_default();
        if mine.is_empty() {
            return Err(PlayError::NoLegalMove);
        }
        let mut counts = vec![0u64; mine.len()];
        let mut sums = vec![0u64; mine.len()];
        let mut simulations = 0;
        let mut error = None;
        if mine.len() > 1 {
            let width = game.machine.parallel_playouts().max(1);
            // The others' moves are drawn afresh for each start unless they have one each.
            let fixed = all
                .iter()
                .enumerate()
                .all(|(r, moves)| r == game.role || moves.len() == 1);
            let samples = if fixed {
                1
            } else {
                (width / mine.len()).max(1)
            };
            let per_start = if fixed {
                (width / mine.len()).max(1) as u32
            } else {
                1
            };
            let mut starts: Vec<State> = Vec::new();
            let mut owner: Vec<usize> = Vec::new();
            let mut joint = Vec::with_capacity(all.len());
            'search: while Instant::now() < stop {
                if !fixed || starts.is_empty() {
                    starts.clear();
                    owner.clear();
                    for _ in 0..samples {
                        for (i, &mv) in mine.iter().enumerate() {
                            if Instant::now() >= stop {
                                break;
                            }
                            joint.clear();
                            for (r, moves) in all.iter().enumerate() {
                                joint.push(if r == game.role {
                                    mv
                                } else {
                                    *moves.choose(&mut self.rng).expect("a legal move")
                                });
                            }
                            match game.machine.next_state(&state, &joint) {
                                Ok(next) => {
                                    starts.push(next);
                                    owner.push(i);
                                }
                                Err(e) => {
                                    error = Some(e.to_string());
                                    break 'search;
                                }
                            }
                        }
                    }
                }
                if let Err(e) = game.machine.playouts_from(
                    &starts,
                    per_start,
                    MAX_STEPS,
                    Some(stop),
                    &mut self.rng,
                    &mut self.rollouts,
                ) {
                    error = Some(e.to_string());
                    break;
                }
                for (k, &i) in owner.iter().enumerate() {
                    let finished = u64::from(self.rollouts.finished[k]);
                    let cut = u64::from(self.rollouts.cut[k]);
                    counts[i] += finished + cut;
                    sums[i] += self.rollouts.goal_sums_of(k)[game.role] + 50 * cut;
                    simulations += finished + cut;
                }
            }
        }
        // The best mean; a move never tried is worth nothing.
        let mean = |i: usize| (counts[i] > 0).then(|| sums[i] as f64 / counts[i] as f64);
        let best = (0..mine.len())
            .max_by(|&a, &b| {
                mean(a)
                    .unwrap_or(-1.0)
                    .partial_cmp(&mean(b).unwrap_or(-1.0))
                    .unwrap_or(std::cmp::Ordering::Equal)
                    .then(b.cmp(&a))
            })
            .unwrap_or(0);
        let report = MoveReport {
            simulations,
            iterations: None,
            time: began.elapsed(),
            nodes: None,
            visits: Some(counts[best]),
            value: mean(best),
            note: if mine.len() == 1 {
                Some("one legal move".into())
            } else {
                error.map(|e| format!("stopped by an error: {e}"))
            },
        };
        self.stats.add(&report);
        self.report = Some(report);
        Ok(mine[best])
    }

    fn report(&self) -> Option<MoveReport> {
        self.report.clone()
    }

    fn stats(&self) -> Option<PlayerStats> {
        Some(self.stats)
    }
}
