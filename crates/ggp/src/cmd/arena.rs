//! `ggp arena`: many matches of a game between players, seats rotated so that every player
//! plays every role equally often, and each player's results: mean goal with a 95 %
//! confidence interval, wins, draws and losses, simulations (random playouts) and search
//! iterations per second, and time per move.

use std::ops::ControlFlow;
use std::path::PathBuf;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ggp_match::{
    DEFAULT_MAX_STEPS, Finished, MatchConfig, MatchError, MatchRecord, PlayerSpec, Store,
    run_match_until,
};
use ggp_play::PlayerStats;
use indicatif::{ProgressBar, ProgressStyle};

use crate::cmd::matches::id_part;
use crate::cmd::records::open_store;
use crate::cmd::{clock_seconds, count_up_to, milliseconds, runtime};
use crate::out::errln;
use crate::{INPUT_ERRORS, INTERRUPTED, OUTPUT_CLOSED, SUCCESS, USAGE_OR_IO, input, out};

#[derive(clap::Args)]
pub struct Args {
    /// The game description (prefix KIF).
    game: PathBuf,
    /// A player: `random`, `legal`, `montecarlo`, `mcts`, `sample` (built in, run in this process under
    /// the same clocks), or the URL of an HTTP player. As many as the game has roles.
    #[arg(long = "player", required = true, value_name = "SPEC")]
    players: Vec<String>,
    /// Matches to play (a multiple of the number of roles gives every player every role
    /// equally often).
    #[arg(long, default_value_t = 10, value_parser = count_up_to(1_000_000))]
    matches: usize,
    /// Seconds the players get after START (at most a day).
    #[arg(long, default_value_t = 10, value_parser = clock_seconds)]
    startclock: u64,
    /// Seconds each player gets for each move (at most a day).
    #[arg(long, default_value_t = 5, value_parser = clock_seconds)]
    playclock: u64,
    /// Milliseconds added to each clock for the network before a reply counts as late.
    #[arg(long, default_value_t = 1000, value_parser = milliseconds)]
    grace_ms: u64,
    /// Abort a match if the game has not ended after this many joint moves.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STEPS, value_parser = count_up_to(usize::MAX))]
    max_steps: usize,
    /// Seed of match 1 (match `k` uses `seed + k - 1`): the built-in players' and the
    /// substituted moves' randomness.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Write the results as JSON to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
    /// The match database where every match is recorded (default: as `ggp match`): a SQLite
    /// file or a `postgres://` URL.
    #[arg(long, value_name = "FILE|URL", conflicts_with = "no_db")]
    db: Option<ggp_match::DatabaseUrl>,
    /// Record the matches in no database.
    #[arg(long)]
    no_db: bool,
}

/// One player's results over the arena.
#[derive(Default)]
struct Tally {
    name: String,
    goals: Vec<f64>,
    wins: u64,
    draws: u64,
    losses: u64,
    /// Replies that were late, illegal, unparsable or missing (a random move was played).
    errors: u64,
    /// What the strategy reported (built-in players); `None` until it does.
    stats: Option<PlayerStats>,
}

impl Tally {
    fn mean(&self) -> f64 {
        if self.goals.is_empty() {
            return 0.0;
        }
        self.goals.iter().sum::<f64>() / self.goals.len() as f64
    }

    /// Half the width of the 95 % confidence interval of the mean (normal approximation,
    /// sample standard deviation); 0 with fewer than two matches.
    fn ci95(&self) -> f64 {
        let n = self.goals.len();
        if n < 2 {
            return 0.0;
        }
        let mean = self.mean();
        let var = self.goals.iter().map(|g| (g - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
        1.96 * (var / n as f64).sqrt()
    }

    fn sims_per_sec(&self) -> Option<f64> {
        self.stats
            .as_ref()
            .and_then(PlayerStats::simulations_per_second)
    }

    fn iterations_per_sec(&self) -> Option<f64> {
        self.stats
            .as_ref()
            .and_then(PlayerStats::iterations_per_second)
    }

    fn seconds_per_move(&self) -> Option<f64> {
        self.stats
            .as_ref()
            .filter(|s| s.moves > 0)
            .map(|s| s.thinking.as_secs_f64() / s.moves as f64)
    }
}

/// Which player sits in each role in match `k` (from 0): the players' list turned `k` places,
/// so that over `players` matches each plays every role once.
fn seating(players: usize, k: u64) -> Vec<usize> {
    (0..players)
        .map(|role| (role + k as usize) % players)
        .collect()
}

/// Wins, draws and losses of one match: a win is the highest goal, alone; a draw the highest
/// shared; anything else a loss. With one role (a puzzle) a win is a goal of 100, a draw a
/// goal between 0 and 100, a loss 0.
fn outcome(goals: &[u8], role: usize) -> (u64, u64, u64) {
    if goals.len() == 1 {
        return match goals[0] {
            100.. => (1, 0, 0),
            0 => (0, 0, 1),
            _ => (0, 1, 0),
        };
    }
    let best = goals.iter().copied().max().unwrap_or(0);
    let tied = goals.iter().filter(|&&g| g == best).count();
    match (goals[role] == best, tied) {
        (true, 1) => (1, 0, 0),
        (true, _) => (0, 1, 0),
        _ => (0, 0, 1),
    }
}

fn separated(x: f64) -> String {
    let digits = format!("{:.0}", x);
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A player's errors in a record: a failed START, and each step whose move was substituted.
fn error_count(record: &MatchRecord, player: usize) -> u64 {
    let start = record
        .start_errors
        .get(player)
        .is_some_and(|e| !e.is_empty());
    u64::from(start)
        + record
            .errors
            .iter()
            .filter(|row| row.get(player).is_some_and(|e| !e.is_empty()))
            .count() as u64
}

/// Reports a refusal or a failure on standard error; the exit status to end with.
fn fail(message: String, status: u8) -> u8 {
    errln!("ggp arena: {message}");
    status
}

/// What the arena's steps share: the arguments, the game and the players checked, the
/// database and the runtime.
struct Arena<'a> {
    args: &'a Args,
    input: input::Input,
    players: Vec<PlayerSpec>,
    roles: usize,
    /// The game's part of the match ids, and its name in the results.
    stem: String,
    runtime: tokio::runtime::Runtime,
    store: Option<Store>,
    /// The start time, in milliseconds, in the match ids.
    now: u128,
}

/// What the matches came to.
struct Results {
    /// Each player's results, in the order the players were given.
    tallies: Vec<Tally>,
    played: u64,
    /// Matches aborted by an error of the game (not counted).
    aborted: u64,
    status: u8,
}

pub fn run(args: Args) -> u8 {
    let arena = match Arena::prepare(&args) {
        Ok(arena) => arena,
        Err(status) => return status,
    };
    let results = arena.play_all();
    if let Some(store) = &arena.store {
        let _ = arena.runtime.block_on(store.flush());
    }
    arena.report(&results)
}

impl<'a> Arena<'a> {
    /// Checks the arguments against the game and opens the database; the exit status, once
    /// the refusal is reported, when something is wrong.
    fn prepare(args: &'a Args) -> Result<Self, u8> {
        if let Some(path) = &args.json
            && let Err(e) = input::check_writable(path)
        {
            return Err(fail(e, USAGE_OR_IO));
        }
        let input = input::read(&args.game).map_err(|message| fail(message, USAGE_OR_IO))?;
        let mut players = Vec::new();
        for spec in &args.players {
            match PlayerSpec::parse(spec) {
                Ok(p) => players.push(p),
                Err(e) => return Err(fail(e.to_string(), USAGE_OR_IO)),
            }
        }
        let roles = match ggp_play::load(&input.text) {
            Ok(machine) => gdl_reason::StateMachine::roles(&machine).len(),
            Err(first) => {
                return Err(fail(
                    format!("{}: the rules cannot be played: {first}", input.name),
                    INPUT_ERRORS,
                ));
            }
        };
        if roles != players.len() {
            return Err(fail(
                format!(
                    "{} has {roles} role{}, but {} player{} given",
                    input.name,
                    if roles == 1 { "" } else { "s" },
                    players.len(),
                    if players.len() == 1 { " was" } else { "s were" }
                ),
                USAGE_OR_IO,
            ));
        }
        if !args.matches.is_multiple_of(roles) {
            errln!(
                "ggp arena: note: {} matches are not a multiple of the {roles} roles: some players play some roles once more",
                args.matches
            );
        }
        let stem = args
            .game
            .file_stem()
            .map_or("game".into(), |s| id_part(&s.to_string_lossy()));
        let store = open_store(args.db.as_ref(), args.no_db).map_err(|e| fail(e, USAGE_OR_IO))?;
        let runtime = runtime().map_err(|e| fail(e, USAGE_OR_IO))?;
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_millis());
        Ok(Arena {
            args,
            input,
            players,
            roles,
            stem,
            runtime,
            store,
            now,
        })
    }

    /// Plays the matches one after the other, with a progress bar, until all are played or
    /// one fails in a way that ends the arena.
    fn play_all(&self) -> Results {
        let bar = ProgressBar::new(self.args.matches as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:30} {pos}/{len} matches [{elapsed} < {eta}] {msg}")
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
        );
        let mut results = Results {
            tallies: self
                .players
                .iter()
                .map(|p| Tally {
                    name: p.name(),
                    ..Tally::default()
                })
                .collect(),
            played: 0,
            aborted: 0,
            status: SUCCESS,
        };
        for k in 0..self.args.matches {
            let seats = seating(self.players.len(), k as u64);
            let config = self.config(k);
            let match_id = config.match_id.clone();
            match self.play(config, &seats) {
                Ok(finished) => {
                    results.add(&seats, &finished);
                    bar.set_message(
                        results
                            .tallies
                            .iter()
                            .map(|t| format!("{} {:.1}", t.name, t.mean()))
                            .collect::<Vec<_>>()
                            .join(", "),
                    );
                    bar.inc(1);
                }
                Err(e) => match self.failed(k, &match_id, e, &bar) {
                    ControlFlow::Break(status) => {
                        results.status = status;
                        break;
                    }
                    ControlFlow::Continue(status) => {
                        results.aborted += 1;
                        results.status = status;
                        bar.inc(1);
                    }
                },
            }
        }
        if results.status != INTERRUPTED && results.status != USAGE_OR_IO {
            bar.finish_and_clear();
        }
        results
    }

    /// The configuration of match `k` (from 0).
    fn config(&self, k: usize) -> MatchConfig {
        let args = self.args;
        MatchConfig {
            match_id: format!("ggp.arena.{}.{}.{}", self.stem, self.now, k + 1),
            game_name: self.stem.clone(),
            rules: self.input.text.clone(),
            start_clock: Duration::from_secs(args.startclock),
            play_clock: Duration::from_secs(args.playclock),
            grace: Duration::from_millis(args.grace_ms),
            seed: args.seed.wrapping_add(k as u64),
            max_steps: args.max_steps,
            memory: None,
        }
    }

    /// Plays one match with the players in `seats`, recorded in the database step by step.
    fn play(&self, config: MatchConfig, seats: &[usize]) -> Result<Finished, MatchError> {
        let specs: Vec<PlayerSpec> = seats.iter().map(|&p| self.players[p].clone()).collect();
        let mut writer = self.store.as_ref().map(Store::writer);
        let save = move |record: &MatchRecord| {
            let committed = writer.as_mut().map(|w| w.save(record));
            async move {
                match committed {
                    Some(c) => c.await,
                    None => Ok(()),
                }
            }
        };
        let stop = async {
            let _ = tokio::signal::ctrl_c().await;
            "Ctrl-C".to_string()
        };
        self.runtime
            .block_on(run_match_until(config, specs, |_| {}, save, stop))
    }

    /// Reports match `k` (from 0) that did not finish: the arena ends with the exit status
    /// (`Break`), or goes on without it (`Continue`, with the exit status to end with).
    fn failed(
        &self,
        k: usize,
        match_id: &str,
        error: MatchError,
        bar: &ProgressBar,
    ) -> ControlFlow<u8, u8> {
        match error {
            MatchError::Stopped(reason) => {
                bar.abandon_with_message("interrupted");
                errln!("ggp arena: match {} ({match_id}) aborted: {reason}", k + 1);
                ControlFlow::Break(INTERRUPTED)
            }
            e @ (MatchError::Record(_) | MatchError::Players(_)) => {
                bar.abandon_with_message("failed");
                errln!("ggp arena: match {} ({match_id}): {e}", k + 1);
                ControlFlow::Break(USAGE_OR_IO)
            }
            e @ MatchError::Rules(_) => {
                bar.abandon_with_message("failed");
                errln!("ggp arena: {}: {e}", self.input.name);
                ControlFlow::Break(INPUT_ERRORS)
            }
            e @ (MatchError::Game(_) | MatchError::TooLong(_)) => {
                // Recorded as aborted; the arena goes on without it.
                bar.suspend(|| {
                    errln!(
                        "ggp arena: match {} ({match_id}) aborted, not counted: {e}",
                        k + 1
                    )
                });
                ControlFlow::Continue(INPUT_ERRORS)
            }
        }
    }

    /// Prints the results, and writes them to the `--json` file; the exit status.
    fn report(&self, results: &Results) -> u8 {
        let closed = out::print(&self.table(results)).is_err();
        if let Some(path) = &self.args.json {
            let text = serde_json::to_string_pretty(&self.json(results)).unwrap_or_default() + "\n";
            if let Err(e) = input::write_atomically(path, &text) {
                errln!("ggp arena: {e}");
                return USAGE_OR_IO;
            }
        }
        if closed && results.status == SUCCESS {
            return OUTPUT_CLOSED;
        }
        results.status
    }

    /// The results as a table, a line for each player under a line on the arena.
    fn table(&self, results: &Results) -> String {
        let (played, aborted, roles) = (results.played, results.aborted, self.roles);
        let mut table = format!(
            "{}: {played} match{} ({roles} role{}), start clock {} s, play clock {} s{}\n",
            self.stem,
            if played == 1 { "" } else { "es" },
            if roles == 1 { "" } else { "s" },
            self.args.startclock,
            self.args.playclock,
            if aborted > 0 {
                format!(", {aborted} aborted (not counted)")
            } else {
                String::new()
            }
        );
        table.push_str(&format!(
            "{:<24} {:>6} {:>7} {:>5} {:>5} {:>6} {:>12} {:>12} {:>8} {:>6}\n",
            "player",
            "mean",
            "±95%",
            "wins",
            "draws",
            "losses",
            "sims/s",
            "iter/s",
            "s/move",
            "errors"
        ));
        for t in &results.tallies {
            table.push_str(&format!(
                "{:<24} {:>6.1} {:>7} {:>5} {:>5} {:>6} {:>12} {:>12} {:>8} {:>6}\n",
                t.name,
                t.mean(),
                format!("±{:.1}", t.ci95()),
                t.wins,
                t.draws,
                t.losses,
                t.sims_per_sec().map_or("-".into(), separated),
                t.iterations_per_sec().map_or("-".into(), separated),
                t.seconds_per_move()
                    .map_or("-".into(), |s| format!("{s:.2}")),
                t.errors
            ));
        }
        if let Some(store) = &self.store {
            table.push_str(&format!("matches recorded in {}\n", store.url()));
        }
        table
    }

    /// The results for `--json`.
    fn json(&self, results: &Results) -> serde_json::Value {
        serde_json::json!({
            "game": self.stem,
            "matches": results.played,
            "players": results.tallies.iter().map(|t| serde_json::json!({
                "player": t.name,
                "mean": t.mean(),
                "ci95": t.ci95(),
                "wins": t.wins,
                "draws": t.draws,
                "losses": t.losses,
                "sims_per_sec": t.sims_per_sec(),
                "iterations_per_sec": t.iterations_per_sec(),
                "seconds_per_move": t.seconds_per_move(),
                "errors": t.errors,
            })).collect::<Vec<_>>(),
        })
    }
}

impl Results {
    /// Adds a finished match, played with the players in `seats`.
    fn add(&mut self, seats: &[usize], finished: &Finished) {
        let goals = &finished.record.goal_values;
        for (role, &p) in seats.iter().enumerate() {
            let t = &mut self.tallies[p];
            t.goals.push(f64::from(goals[role]));
            let (w, d, l) = outcome(goals, role);
            t.wins += w;
            t.draws += d;
            t.losses += l;
            t.errors += error_count(&finished.record, role);
            if let Some(stats) = finished.player_stats.get(role).copied().flatten() {
                t.stats
                    .get_or_insert_with(PlayerStats::default)
                    .merge(&stats);
            }
        }
        self.played += 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_player_plays_every_role_equally_often() {
        let mut count = [[0; 3]; 3];
        for k in 0..6 {
            let seats = seating(3, k);
            let mut seen = seats.clone();
            seen.sort();
            assert_eq!(seen, [0, 1, 2]);
            for (role, &p) in seats.iter().enumerate() {
                count[p][role] += 1;
            }
        }
        assert_eq!(count, [[2; 3]; 3]);
    }

    #[test]
    fn a_win_is_the_highest_goal_alone() {
        assert_eq!(outcome(&[100, 0], 0), (1, 0, 0));
        assert_eq!(outcome(&[100, 0], 1), (0, 0, 1));
        assert_eq!(outcome(&[50, 50], 1), (0, 1, 0));
        assert_eq!(outcome(&[50, 50, 0], 2), (0, 0, 1));
        assert_eq!(outcome(&[0, 0, 0], 0), (0, 1, 0));
        // A puzzle is won when solved.
        assert_eq!(outcome(&[100], 0), (1, 0, 0));
        assert_eq!(outcome(&[99], 0), (0, 1, 0));
        assert_eq!(outcome(&[0], 0), (0, 0, 1));
    }

    #[test]
    fn the_confidence_interval() {
        let t = Tally {
            goals: vec![100.0, 0.0, 100.0, 0.0],
            ..Tally::default()
        };
        assert_eq!(t.mean(), 50.0);
        // Sample sd 57.735; 1.96 * 57.735 / 2.
        assert!((t.ci95() - 56.58).abs() < 0.01, "{}", t.ci95());
        assert_eq!(separated(1234567.4), "1,234,567");
        assert_eq!(separated(12.0), "12");
    }
}
