//! The manager's view of the game: it judges the players' replies, substitutes a random legal
//! move for a failing one, and plays the joint move.

use gdl_reason::{ReasonError, StateMachine, TermId};
use ggp_play::{Machine, PlayError, State, load};
use ggp_protocol::move_candidates;
use rand::rngs::StdRng;
use rand::seq::IndexedRandom;

use super::knowledge::{self, Knowledge};
use crate::record::StepError;

/// A role's answer at a step: a player's reply (or what went wrong), or the manager's own
/// turn for the `random` role.
pub(super) enum Answer {
    Player(Result<String, StepError>),
    Chance,
}

/// The manager's view of the game: the rules as a state machine, the current state and what
/// it allows. It works on blocking threads, so that a slow game never holds up the runtime.
pub(super) struct Referee {
    pub(super) machine: Machine,
    pub(super) state: State,
    pub(super) terminal: bool,
    /// Every role's legal moves in `state` (none when terminal), in the order of their text.
    pub(super) legal: Vec<Vec<TermId>>,
    /// Draws the substituted moves and the `random` role's.
    rng: StdRng,
    /// Whether the game is GDL-II (percepts are computed and recorded).
    pub(super) gdl2: bool,
    /// Whether every role's percepts are needed even in a GDL game (a GDL-II player is seated:
    /// it sees `(did role move)` for every role).
    pub(super) did: bool,
    /// Every role's percepts of the last step (none before the first).
    pub(super) last_percepts: Vec<Vec<String>>,
}

/// Why the manager cannot go on with the game.
#[derive(Debug, thiserror::Error)]
pub(super) enum RefereeError {
    /// The rules cannot be read into a state machine.
    #[error("the rules cannot be played: {0}")]
    Rules(#[source] PlayError),
    /// The reasoner could not answer a question about the game.
    #[error(transparent)]
    Reason(#[from] ReasonError),
    /// A role (its name) has no legal move in a state that is not terminal.
    #[error("`{role}` has no legal move at step {step} (the game is not playable)")]
    NoLegalMove { role: String, step: usize },
}

/// What a step did.
pub(super) struct Advanced {
    pub(super) moves: Vec<String>,
    pub(super) errors: Vec<StepError>,
    pub(super) state: String,
    pub(super) terminal: bool,
    /// Once terminal.
    pub(super) goals: Option<Vec<u8>>,
    /// Every role's percepts of the step (GDL-II, or `(did …)` for GDL-II players of a GDL
    /// game), each sorted; empty when no one needs them.
    pub(super) percepts: Vec<Vec<String>>,
    /// GDL-III: the `knows` atoms that hold after the true history; `None` in a game
    /// without `knows`.
    pub(super) knowledge: Option<Knowledge>,
}

impl Referee {
    pub(super) fn load(rules: &str, rng: StdRng) -> Result<Referee, RefereeError> {
        let mut machine = load(rules).map_err(RefereeError::Rules)?;
        let state = machine.initial_state()?;
        let gdl2 = machine.is_gdl2();
        let mut referee = Referee {
            machine,
            state,
            terminal: false,
            legal: Vec::new(),
            rng,
            gdl2,
            did: false,
            last_percepts: Vec::new(),
        };
        referee.survey(0)?;
        Ok(referee)
    }

    /// A term as the rules spell it: what is sent to the players and recorded.
    pub(super) fn text(&self, term: TermId) -> String {
        self.machine.terms().spelled(self.machine.symbols(), term)
    }

    pub(super) fn roles(&self) -> Vec<String> {
        self.machine.roles().iter().map(|&r| self.text(r)).collect()
    }

    /// The current state as `((fluent) …)`, fluents sorted.
    pub(super) fn state_text(&self) -> String {
        let mut fluents: Vec<String> = self
            .machine
            .fluents(&self.state)
            .iter()
            .map(|&f| self.text(f))
            .collect();
        fluents.sort();
        format!("({})", fluents.join(" "))
    }

    /// Whether the current state is terminal, and if not every role's legal moves.
    fn survey(&mut self, step: usize) -> Result<(), RefereeError> {
        self.terminal = self.machine.is_terminal(&self.state)?;
        self.legal = if self.terminal {
            Vec::new()
        } else {
            self.machine.all_legal_moves(&self.state)?
        };
        // In the order of their text, not the engine's (which differs between engines and
        // between versions of one): a human is shown them in that order, and a seeded match
        // substitutes the same moves whichever engine runs it.
        let mut legal = std::mem::take(&mut self.legal);
        for moves in &mut legal {
            moves.sort_by_cached_key(|&m| self.text(m));
        }
        self.legal = legal;
        if let Some(role) = self.legal.iter().position(Vec::is_empty) {
            return Err(RefereeError::NoLegalMove {
                role: self.text(self.machine.roles()[role]),
                step,
            });
        }
        Ok(())
    }

    /// Judges the replies (a legal move stands; anything else is replaced by a random legal
    /// move and recorded as an error), then plays the joint move.
    pub(super) fn advance(
        &mut self,
        replies: Vec<Answer>,
        step: usize,
    ) -> Result<Advanced, RefereeError> {
        let mut joint = Vec::with_capacity(replies.len());
        let mut errors = Vec::new();
        // Role by role, so that the moves drawn from the match's seed come in the same order
        // whatever the players reply.
        for (k, answer) in replies.into_iter().enumerate() {
            joint.push(match answer {
                // GDL-II's `random` role: a uniformly random legal move from the match's seed.
                Answer::Chance => self.random_move(k),
                Answer::Player(reply) => match self.judge(k, reply) {
                    Ok(m) => m,
                    Err(e) => {
                        errors.push(e);
                        self.random_move(k)
                    }
                },
            });
        }
        let moves: Vec<String> = joint.iter().map(|&m| self.text(m)).collect();
        let percepts = self.percepts(&joint, &moves)?;
        self.last_percepts = percepts.clone();
        self.state = self.machine.next_state(&self.state, &joint)?;
        self.survey(step + 1)?;
        let goals = if self.terminal {
            Some(self.machine.goals(&self.state)?)
        } else {
            None
        };
        let knowledge = knowledge::after(&mut self.machine, &self.state)?;
        Ok(Advanced {
            moves,
            errors,
            state: self.state_text(),
            terminal: self.terminal,
            goals,
            percepts,
            knowledge,
        })
    }

    /// The legal move of role `k` that a player's reply names, or the error it is recorded as
    /// (the reply cannot be read, or names no legal move, or there was no reply).
    fn judge(&mut self, k: usize, reply: Result<String, StepError>) -> Result<TermId, StepError> {
        let body = reply?;
        match move_candidates(&body) {
            None => Err(StepError {
                player: k,
                kind: "unparsable".into(),
                detail: body,
            }),
            Some(candidates) => candidates
                .iter()
                .find_map(|c| {
                    self.machine
                        .intern(c)
                        .ok()
                        .filter(|t| self.legal[k].contains(t))
                })
                .ok_or(StepError {
                    player: k,
                    kind: "illegal".into(),
                    detail: body,
                }),
        }
    }

    /// A uniformly random legal move of role `k`, drawn from the match's seed: the `random`
    /// role's, or the substitute for a player's failed reply.
    fn random_move(&mut self, k: usize) -> TermId {
        *self.legal[k]
            .choose(&mut self.rng)
            .expect("every role has a legal move")
    }

    /// Every role's percepts of the joint move `joint` (spelled `moves`) in the current state,
    /// each sorted: GDL-II's, or in a GDL game with a GDL-II player seated `(did role move)`
    /// for every role; none when no one needs them.
    fn percepts(
        &mut self,
        joint: &[TermId],
        moves: &[String],
    ) -> Result<Vec<Vec<String>>, RefereeError> {
        Ok(if self.gdl2 {
            let all = self.machine.all_percepts(&self.state, joint)?;
            all.iter()
                .map(|seen| {
                    let mut texts: Vec<String> = seen.iter().map(|&t| self.text(t)).collect();
                    texts.sort();
                    texts
                })
                .collect()
        } else if self.did {
            // The GameController's convention for a GDL game: every role sees every move.
            let did: Vec<String> = self
                .roles()
                .iter()
                .zip(moves)
                .map(|(role, m)| format!("(did {role} {m})"))
                .collect();
            vec![did; moves.len()]
        } else {
            Vec::new()
        })
    }
}
