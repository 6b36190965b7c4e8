//! What a GDL-II role knows of the state: from the rules, its own moves and its percepts, the
//! states it may be in (`ggp_play::game::Game`, as a player keeps them), and of those the
//! fluents true in every one (certain) and in some (possible).

use gdl_reason::StateMachine;
use ggp_play::{Game, load};

use crate::term::{Term, parse};

/// What a role knows after some steps: the fluents true in every state it may be in, and
/// those true in at least one.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Known {
    pub certain: Vec<Term>,
    pub possible: Vec<Term>,
}

/// Follows what one role knows, step by step.
pub struct Knowledge {
    game: Game,
    steps: usize,
}

impl Knowledge {
    /// The role's knowledge at the start (the initial state, which every role knows), or
    /// `None` if the rules cannot be played or the game has no percepts.
    pub fn new(rules: &str, role: usize) -> Option<Knowledge> {
        let machine = load(rules).ok()?;
        let game = Game::new(machine, role).ok()?;
        game.possible.as_ref()?;
        Some(Knowledge { game, steps: 0 })
    }

    /// Steps taken into account.
    pub fn steps(&self) -> usize {
        self.steps
    }

    /// The next step as the role saw it: the move made for it and its percepts. `false` if
    /// they cannot be explained (the knowledge is then that of the step before).
    pub fn step(&mut self, own: Option<&str>, percepts: &[String]) -> bool {
        self.steps += 1;
        self.game.perceive(own, percepts).is_ok()
    }

    /// What the role knows now.
    pub fn known(&self) -> Known {
        let Some(possible) = &self.game.possible else {
            return Known::default();
        };
        let m = &self.game.machine;
        let mut sets: Vec<Vec<String>> = possible
            .iter()
            .map(|s| {
                let mut v: Vec<String> = m
                    .fluents(s)
                    .into_iter()
                    .map(|f| m.terms().spelled(m.symbols(), f))
                    .collect();
                v.sort();
                v.dedup();
                v
            })
            .collect();
        let Some(first) = sets.pop() else {
            return Known::default();
        };
        let mut union: std::collections::BTreeSet<String> = first.iter().cloned().collect();
        let mut certain = first;
        for s in &sets {
            certain.retain(|f| s.binary_search(f).is_ok());
            union.extend(s.iter().cloned());
        }
        Known {
            certain: certain.iter().filter_map(|f| parse(f)).collect(),
            possible: union.iter().filter_map(|f| parse(f)).collect(),
        }
    }
}
