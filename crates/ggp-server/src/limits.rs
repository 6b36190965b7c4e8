//! What the Gamemaster lets its users spend (docs/limits.md): connections and time per
//! request (the server loop, `ggp_http`, and a timeout on every answer but event streams),
//! matches at once, and memory.
//!
//! Memory is the budget a game's rules can exhaust: a two-kilobyte game can ask for 10^12
//! tuples. Three quarters of the server's budget (`--max-memory`) are for matches. A match
//! runs only with its share reserved ([`Admission::admit`]): what the trial of its game
//! version measured (16 MiB while it is not measured yet), for the manager's engine and each
//! built-in player's, plus room for the built-in players' search trees. Everything done for
//! the match (the manager's reasoning, the built-in players') is charged to that account,
//! which takes more from the matches' memory as it needs, up to a match's budget
//! (`--match-memory`); its engines stop with an error naming the budget when there is no
//! more, and the match is aborted with that reason. A request for a match that finds
//! no room is answered 503; a tournament's match waits in the schedule. The trial itself
//! ([`crate::games::analyse`]) has a match's budget: a game that needs more is marked
//! unplayable when it is uploaded, not at its twentieth match.

use std::sync::Arc;
use std::time::Duration;

use ggp_memory::{Account, Mib, Pool};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::error::Error;

/// What the Gamemaster lets its users spend.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Limits {
    /// Matches running at once in this process (live and tournament matches).
    pub max_matches: usize,
    /// The memory of the whole server; three quarters are for matches.
    pub max_memory: usize,
    /// The most one match may take (its manager's engine and its built-in players).
    pub match_memory: usize,
    /// Connections, request heads, idle connections.
    pub http: ggp_http::Limits,
    /// How long a page or an API answer may take to begin (not an event stream's events).
    pub request_timeout: Duration,
}

/// The least memory a match is given.
pub const MIN_MATCH_MEMORY: usize = 16 << 20;

/// What an engine is reckoned to take while its game's trial has not measured it.
pub const UNMEASURED_ENGINE: usize = 16 << 20;

/// What a built-in search player's tree (`mcts`, `montecarlo`) is given beside its engine.
pub const SEARCH_MEMORY: usize = 64 << 20;

/// A match's budget by default: 1 GiB, at most half the matches' memory.
pub const DEFAULT_MATCH_MEMORY: usize = 1 << 30;

/// Matches at once by default, per core.
pub const MATCHES_PER_CORE: usize = 32;

/// How long a page or an API answer may take by default.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(30);

impl Limits {
    /// The defaults for a server with `max_memory` bytes: a match's budget of 1 GiB (at most
    /// half the matches' memory), [`MATCHES_PER_CORE`] matches per core (at most as many as
    /// the matches' memory holds at [`MIN_MATCH_MEMORY`] each), the server loop's defaults.
    pub fn with_memory(max_memory: usize) -> Limits {
        let matches = max_memory / 4 * 3;
        let cores = std::thread::available_parallelism().map_or(1, |n| n.get());
        Limits {
            max_matches: (cores * MATCHES_PER_CORE)
                .min(matches / MIN_MATCH_MEMORY)
                .max(1),
            max_memory,
            match_memory: DEFAULT_MATCH_MEMORY.min(matches / 2).max(MIN_MATCH_MEMORY),
            http: ggp_http::Limits::default(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
        }
    }

    /// The memory matches share: three quarters of the server's.
    pub fn matches_memory(&self) -> usize {
        self.max_memory / 4 * 3
    }

    /// Whether the limits fit together: a match's budget within the matches' memory.
    pub fn check(&self) -> Result<(), LimitsError> {
        if self.match_memory > self.matches_memory() {
            return Err(LimitsError::MatchOverShare {
                match_memory: self.match_memory,
                matches_memory: self.matches_memory(),
                max_memory: self.max_memory,
            });
        }
        if self.match_memory < MIN_MATCH_MEMORY {
            return Err(LimitsError::MatchUnderMinimum {
                match_memory: self.match_memory,
            });
        }
        Ok(())
    }
}

/// Why the limits do not fit together ([`Limits::check`]); sizes in bytes.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LimitsError {
    /// A match's budget is more than all the matches share.
    #[error(
        "a match's memory ({}) is more than the matches share ({}, three quarters of --max-memory {})",
        Mib(*match_memory),
        Mib(*matches_memory),
        Mib(*max_memory)
    )]
    MatchOverShare {
        match_memory: usize,
        matches_memory: usize,
        max_memory: usize,
    },
    /// A match's budget is below [`MIN_MATCH_MEMORY`].
    #[error(
        "a match's memory ({}) is less than {}, the least a match is given",
        Mib(*match_memory),
        Mib(MIN_MATCH_MEMORY)
    )]
    MatchUnderMinimum { match_memory: usize },
}

impl Default for Limits {
    /// The defaults for the process's budget (half the machine's memory unless set).
    fn default() -> Limits {
        Limits::with_memory(
            ggp_memory::process_limit().unwrap_or_else(ggp_memory::default_process_budget),
        )
    }
}

/// Who may start a match now: a slot of `max_matches` and its memory from the matches' pool.
#[derive(Clone)]
pub struct Admission {
    limits: Limits,
    slots: Arc<Semaphore>,
    pool: Pool,
}

/// A match let in: it holds its slot and its memory until it is dropped.
pub struct Admitted {
    _slot: OwnedSemaphorePermit,
    /// The match's memory account.
    pub memory: Account,
}

impl Admission {
    pub fn new(limits: Limits) -> Admission {
        Admission {
            limits,
            slots: Arc::new(Semaphore::new(limits.max_matches)),
            pool: Pool::new(limits.matches_memory()),
        }
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The matches' memory.
    pub fn pool(&self) -> &Pool {
        &self.pool
    }

    /// Matches running now.
    pub fn running(&self) -> usize {
        self.limits.max_matches - self.slots.available_permits()
    }

    /// A slot and `need` bytes for a match (which takes more from the matches' memory as it
    /// needs, up to a match's budget), or a 503 saying which limit is reached.
    pub fn admit(&self, need: usize) -> Result<Admitted, Error> {
        let slot = self.slots.clone().try_acquire_owned().map_err(|_| {
            Error::Unavailable(format!(
                "the server runs its maximum of {} matches at once (--max-matches): try again when one ends",
                self.limits.max_matches
            ))
        })?;
        let memory = self
            .pool
            .account("this match", need, self.limits.match_memory)
            .map_err(|full| {
                Error::Unavailable(format!(
                    "the matches running hold the server's memory for matches: this one needs {}, and {} of {} are free (--max-memory, --match-memory): try again when one ends",
                    Mib(full.wanted),
                    Mib(full.free),
                    Mib(full.capacity)
                ))
            })?;
        Ok(Admitted {
            _slot: slot,
            memory,
        })
    }

    /// Whether a match needing `need` bytes would be let in now.
    pub fn has_room(&self, need: usize) -> bool {
        self.slots.available_permits() > 0
            && self.pool.capacity().saturating_sub(self.pool.reserved()) >= need
    }

    /// What a match of a game version is given to begin with: `machines` engines (the
    /// manager's and each built-in player's) of the size its trial measured ([`UNMEASURED_ENGINE`]
    /// each while it is not measured yet), half as much again for the states and tables a
    /// match adds, [`SEARCH_MEMORY`] for each of `searchers` search trees; within
    /// [`MIN_MATCH_MEMORY`] and a match's budget. It takes more as it needs, up to a match's
    /// budget, while the matches' memory has room.
    pub fn need(&self, measured: Option<i64>, machines: usize, searchers: usize) -> usize {
        let bytes = measured.map_or(UNMEASURED_ENGINE, |b| {
            usize::try_from(b).unwrap_or(usize::MAX)
        });
        machines
            .saturating_mul(bytes.saturating_add(bytes / 2))
            .saturating_add(searchers.saturating_mul(SEARCH_MEMORY))
            .clamp(MIN_MATCH_MEMORY, self.limits.match_memory)
    }

    /// The account of the trial of game version `id`: a match's budget from the matches'
    /// memory, waiting (on this blocking thread) while the matches running hold it.
    pub fn trial_account(&self, id: i64) -> Account {
        loop {
            if let Ok(account) = self.pool.account(
                format!("the trial of game version {id}"),
                self.limits.match_memory,
                self.limits.match_memory,
            ) {
                return account;
            }
            std::thread::sleep(Duration::from_millis(500));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits() -> Limits {
        Limits {
            max_matches: 2,
            max_memory: 400 << 20,
            match_memory: 100 << 20,
            http: ggp_http::Limits::default(),
            request_timeout: DEFAULT_REQUEST_TIMEOUT,
        }
    }

    #[test]
    fn matches_need_their_slot_and_their_memory() {
        let admission = Admission::new(Limits {
            max_matches: 4,
            ..limits()
        });
        assert_eq!(admission.pool().capacity(), 300 << 20);
        let a = admission.admit(100 << 20).unwrap();
        let b = admission.admit(100 << 20).unwrap();
        let c = admission.admit(250 << 20).unwrap();
        assert_eq!(c.memory.held(), 100 << 20, "no more than a match's budget");
        let refused = admission.admit(MIN_MATCH_MEMORY).err().unwrap();
        assert!(
            refused
                .message()
                .contains("needs 16 MiB, and 0 MiB of 300 MiB are free"),
            "{}",
            refused.message()
        );
        // The slot taken for the refused match was given back.
        drop(c);
        let d = admission.admit(50 << 20).unwrap();
        let e = admission.admit(MIN_MATCH_MEMORY).unwrap();
        let refused = admission.admit(MIN_MATCH_MEMORY).err().unwrap();
        assert!(
            refused.message().contains("maximum of 4 matches at once"),
            "{}",
            refused.message()
        );
        assert_eq!(admission.running(), 4);
        drop((a, d));
        assert!(admission.has_room(150 << 20));
        drop((b, e));
        assert_eq!(admission.pool().reserved(), 0);
    }

    #[test]
    fn a_match_needs_what_its_trial_measured() {
        let admission = Admission::new(limits());
        assert_eq!(
            admission.need(None, 3, 0),
            72 << 20,
            "not measured: 16 MiB an engine"
        );
        assert_eq!(admission.need(Some(1 << 20), 3, 0), MIN_MATCH_MEMORY);
        assert_eq!(admission.need(Some(10 << 20), 3, 0), 45 << 20);
        assert_eq!(
            admission.need(Some(10 << 20), 3, 1),
            100 << 20,
            "a search tree's room, within a match's budget"
        );
        assert!(limits().check().is_ok());
        let too_large = Limits {
            match_memory: 301 << 20,
            ..limits()
        };
        assert!(
            too_large
                .check()
                .unwrap_err()
                .to_string()
                .contains("three quarters")
        );
    }
}
