//! The simplest strategies: a random legal move, and the first legal move.

use std::time::Instant;

use gdl_reason::{StateMachine, TermId};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;

use crate::error::PlayError;
use crate::game::Game;
use crate::strategy::{MoveReport, PlayerStats, Strategy};

/// A uniformly random legal move.
pub struct RandomStrategy {
    rng: SmallRng,
    stats: PlayerStats,
}

impl RandomStrategy {
    pub fn new(seed: u64) -> RandomStrategy {
        RandomStrategy {
            rng: SmallRng::seed_from_u64(seed),
            stats: PlayerStats::default(),
        }
    }
}

impl Strategy for RandomStrategy {
    fn select(&mut self, game: &mut Game, _deadline: Instant) -> Result<TermId, PlayError> {
        let began = Instant::now();
        let moves = game.legal_moves()?;
        let chosen = moves
            .choose(&mut self.rng)
            .copied()
            .ok_or(PlayError::NoLegalMove);
        self.stats.add(&MoveReport {
            time: began.elapsed(),
            ..MoveReport::default()
        });
        chosen
    }

    fn stats(&self) -> Option<PlayerStats> {
        Some(self.stats)
    }
}

/// The first legal move in canonical text order: deterministic, as ggp-base's legal player.
#[derive(Default)]
pub struct LegalStrategy {
    stats: PlayerStats,
}

impl Strategy for LegalStrategy {
    fn select(&mut self, game: &mut Game, _deadline: Instant) -> Result<TermId, PlayError> {
        let began = Instant::now();
        let moves = game.legal_moves()?;
        let chosen = moves
            .iter()
            .copied()
            .min_by_key(|&m| game.machine.terms().text(game.machine.symbols(), m))
            .ok_or(PlayError::NoLegalMove);
        self.stats.add(&MoveReport {
            time: began.elapsed(),
            ..MoveReport::default()
        });
        chosen
    }

    fn stats(&self) -> Option<PlayerStats> {
        Some(self.stats)
    }
}
