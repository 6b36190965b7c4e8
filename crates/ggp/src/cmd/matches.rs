//! `ggp match`: runs a match between players (HTTP URLs or built-in strategies), prints it and
//! records it in the match database.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ggp_match::{
    DEFAULT_MAX_STEPS, Event, Finished, MatchConfig, MatchError, MatchRecord, MatchWriter,
    PlayerSpec, PlayerUrl, Store, ping, run_match_until,
};

use crate::cmd::records::open_store;
use crate::cmd::{clock_seconds, count_up_to, milliseconds, runtime};
use crate::out::errln;
use crate::{INPUT_ERRORS, INTERRUPTED, OUTPUT_CLOSED, SUCCESS, USAGE_OR_IO, input, out};

#[derive(clap::Args)]
pub struct Args {
    /// The game description (prefix KIF).
    game: PathBuf,
    /// A player for each role, in the order of the game's roles: a built-in one (`random`,
    /// `legal`, `montecarlo`, `mcts`, `sample`), or the URL of an HTTP player
    /// (`http://127.0.0.1:9147`); `gdl2:URL` for a player that speaks GDL-II (told its percepts
    /// as the GameController does), `gdl2-turn:URL` for one told the turn, its own move and its
    /// percepts. In a GDL-II game the `random` role gets no player: the
    /// manager plays it, and a plain URL is told its percepts as `gdl2:` is.
    #[arg(long = "player", required = true, value_name = "SPEC")]
    players: Vec<String>,
    /// Seconds the players get after START (at most a day).
    #[arg(long, default_value_t = 10, value_parser = clock_seconds)]
    startclock: u64,
    /// Seconds each player gets for each move (at most a day).
    #[arg(long, default_value_t = 5, value_parser = clock_seconds)]
    playclock: u64,
    /// Milliseconds added to each clock for the network before a reply counts as late.
    #[arg(long, default_value_t = 1000, value_parser = milliseconds)]
    grace_ms: u64,
    /// Seed of the substituted moves and of the built-in players.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The match id sent to the players and recorded (default: `ggp.<game>.<start time in
    /// milliseconds>`): ASCII letters, digits and `. _ - + : @ /`.
    #[arg(long, value_parser = match_id)]
    id: Option<String>,
    /// Abort the match if the game has not ended after this many joint moves.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_MAX_STEPS, value_parser = count_up_to(usize::MAX))]
    max_steps: usize,
    /// Refuse to start unless every remote player answers INFO first (by default an
    /// unreachable player is reported and the match is played, its moves substituted).
    #[arg(long)]
    strict: bool,
    /// Let one URL play several roles (a player plays one role of a match, since the protocol's
    /// messages do not say which role they are for; use this only for a player that knows).
    #[arg(long)]
    allow_same_url: bool,
    /// The match database, where every step is committed before the next PLAY (default:
    /// `$XDG_DATA_HOME/ggp/matches.sqlite`, or `~/.local/share/ggp/matches.sqlite`; a
    /// `postgres://` URL for PostgreSQL).
    #[arg(long, value_name = "FILE|URL", conflicts_with = "no_db")]
    db: Option<ggp_match::DatabaseUrl>,
    /// Record the match in no database.
    #[arg(long)]
    no_db: bool,
    /// Write the record (ggp.org match JSON) to this file, after every step.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// A clap value parser for a match id the protocol can carry.
fn match_id(text: &str) -> Result<String, ggp_protocol::MatchIdError> {
    ggp_protocol::check_match_id(text).map(|()| text.to_string())
}

/// The default match id's game part: the file name with anything a match id cannot hold
/// replaced by `_`.
pub(crate) fn id_part(stem: &str) -> String {
    let part: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '+') {
                c
            } else {
                '_'
            }
        })
        .take(100)
        .collect();
    if part.is_empty() { "game".into() } else { part }
}

/// How long the players get to answer the INFO sent before START.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// Reports a refusal or a failure on standard error; the exit status to end with.
fn fail(message: String, status: u8) -> u8 {
    errln!("ggp match: {message}");
    status
}

/// What `ggp match` has checked and set up before any player is contacted, and what its
/// later steps share.
struct Setup {
    runtime: tokio::runtime::Runtime,
    store: Option<Store>,
    input: input::Input,
    match_id: String,
    /// Set once standard output is closed by its reader (`| head`).
    closed: Arc<AtomicBool>,
    /// Set once the `--json` file cannot be written.
    json_failed: Arc<AtomicBool>,
}

/// The match to play: its configuration and a player for each role.
struct Lineup {
    config: MatchConfig,
    players: Vec<PlayerSpec>,
}

pub fn run(args: Args) -> u8 {
    let (setup, lineup) = match prepare(&args) {
        Ok(prepared) => prepared,
        Err(status) => return status,
    };
    if let Err(status) = setup.contact_players(&lineup.players, args.strict) {
        return status;
    }
    let outcome = setup.play(lineup, args.json.clone());
    let status = setup.report(outcome);
    if setup.json_failed.load(Ordering::SeqCst) && status == SUCCESS {
        return USAGE_OR_IO;
    }
    status
}

/// Checks the arguments, reads the game and opens the database; the exit status, once the
/// refusal is reported, when something is wrong.
fn prepare(args: &Args) -> Result<(Setup, Lineup), u8> {
    // Everything that can be refused is refused before any player is contacted.
    if let Some(path) = &args.json
        && let Err(e) = input::check_writable(path)
    {
        return Err(fail(e, USAGE_OR_IO));
    }
    let input = read_game(&args.game)?;
    let players = parse_players(args)?;
    let config = match_config(args, &input);
    let store = open_store(args.db.as_ref(), args.no_db).map_err(|e| fail(e, USAGE_OR_IO))?;
    let runtime = runtime().map_err(|e| fail(e, USAGE_OR_IO))?;
    let setup = Setup {
        runtime,
        store,
        input,
        match_id: config.match_id.clone(),
        closed: Arc::new(AtomicBool::new(false)),
        json_failed: Arc::new(AtomicBool::new(false)),
    };
    Ok((setup, Lineup { config, players }))
}

/// Reads the game description, refused when it is not valid UTF-8 outside its comments.
fn read_game(path: &std::path::Path) -> Result<input::Input, u8> {
    let input = input::read(path).map_err(|message| fail(message, USAGE_OR_IO))?;
    if let Some(bad) = input.decode_diagnostics.iter().find(|d| d.is_error()) {
        return Err(fail(
            format!(
                "{}: {} (at byte {}; see `ggp check`)",
                input.name, bad.message, bad.span.start
            ),
            INPUT_ERRORS,
        ));
    }
    Ok(input)
}

/// The players given, one URL for one player unless `--allow-same-url`.
fn parse_players(args: &Args) -> Result<Vec<PlayerSpec>, u8> {
    let mut players = Vec::new();
    for spec in &args.players {
        match PlayerSpec::parse(spec) {
            Ok(p) => players.push(p),
            Err(e) => return Err(fail(e.to_string(), USAGE_OR_IO)),
        }
    }
    if args.allow_same_url {
        return Ok(players);
    }
    // Two spellings of one address are one player.
    let normal: Vec<Option<String>> = players
        .iter()
        .map(|p| {
            p.url()
                .and_then(|u| PlayerUrl::parse(u).ok().map(|u| u.to_string()))
        })
        .collect();
    for (k, p) in players.iter().enumerate() {
        if let Some(url) = p.url()
            && let Some(j) = (0..k).find(|&j| normal[j].is_some() && normal[j] == normal[k])
        {
            return Err(fail(
                format!(
                    "{url} is given for players {} and {}: a player plays one role of a match (the protocol's messages do not say which role they are for), so run one player per role (another port), or pass --allow-same-url if this player knows",
                    j + 1,
                    k + 1
                ),
                USAGE_OR_IO,
            ));
        }
    }
    Ok(players)
}

/// The match's configuration from the arguments, its id by default from the game's file name
/// and the time.
fn match_config(args: &Args, input: &input::Input) -> MatchConfig {
    let stem = args
        .game
        .file_stem()
        .map_or("game".into(), |s| id_part(&s.to_string_lossy()));
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    MatchConfig {
        match_id: args
            .id
            .clone()
            .unwrap_or_else(|| format!("ggp.{stem}.{now}")),
        game_name: stem,
        rules: input.text.clone(),
        start_clock: Duration::from_secs(args.startclock),
        play_clock: Duration::from_secs(args.playclock),
        grace: Duration::from_millis(args.grace_ms),
        seed: args.seed,
        max_steps: args.max_steps,
        memory: None,
    }
}

impl Setup {
    /// Looks up the remote players' hosts and asks each for INFO, saying what became of each;
    /// the exit status when the match cannot start (an unknown host, or with `strict` a player
    /// that does not answer).
    fn contact_players(&self, players: &[PlayerSpec], strict: bool) -> Result<(), u8> {
        let urls: Vec<(usize, String)> = players
            .iter()
            .enumerate()
            .filter_map(|(k, p)| p.url().map(|u| (k, u.to_string())))
            .collect();
        // Host names are looked up, and every remote player asked for INFO, before the match:
        // a typo or a player that is not running is reported now, not as a substituted move at
        // every step.
        let contacted = self.runtime.block_on(contact_players(&urls));
        let mut unreachable = 0;
        for (k, url, outcome) in &contacted {
            match outcome {
                Contact::NoSuchHost(e) => {
                    return Err(fail(
                        format!("player {} ({url}): cannot find the host: {e}", k + 1),
                        USAGE_OR_IO,
                    ));
                }
                Contact::Unreachable(e) => {
                    unreachable += 1;
                    errln!(
                        "ggp match: {}: player {} ({url}) does not answer: {e}",
                        if strict { "error" } else { "warning" },
                        k + 1
                    );
                }
                Contact::Answered(info) => {
                    let about = match info {
                        Some(info) => format!(
                            "{}{}",
                            info.name.as_deref().unwrap_or("(no name)"),
                            info.status
                                .as_deref()
                                .map_or(String::new(), |s| format!(", {s}"))
                        ),
                        None => "answers (not INFO)".into(),
                    };
                    errln!("ggp match: player {} ({url}): {about}", k + 1);
                }
            }
        }
        if unreachable > 0 {
            if strict {
                return Err(fail(
                    format!(
                        "{unreachable} player{} cannot be reached; not starting (--strict)",
                        if unreachable == 1 { "" } else { "s" }
                    ),
                    USAGE_OR_IO,
                ));
            }
            errln!(
                "ggp match: playing anyway: the moves of a player that does not answer are replaced by random legal moves (--strict refuses to start)"
            );
        }
        Ok(())
    }

    /// Plays the match, printing each step, saving the record after each (to the database and
    /// to `json`), until it ends, Ctrl-C, or standard output is closed.
    fn play(&self, lineup: Lineup, json: Option<PathBuf>) -> Result<Finished, MatchError> {
        let mut saver = Saver {
            writer: self.store.as_ref().map(Store::writer),
            json,
            json_failed: self.json_failed.clone(),
        };
        let mut screen = Screen {
            names: Vec::new(),
            closed: self.closed.clone(),
            output_closed: Arc::new(tokio::sync::Notify::new()),
        };
        let output_closed = screen.output_closed.clone();
        self.runtime.block_on(async {
            let stop = async {
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => "Ctrl-C".to_string(),
                    () = output_closed.notified() => "the standard output of `ggp match` was closed".to_string(),
                }
            };
            run_match_until(
                lineup.config,
                lineup.players,
                |event| screen.show(event),
                |record| saver.save(record),
                stop,
            )
            .await
        })
    }

    /// Says how the match ended; the exit status.
    fn report(&self, outcome: Result<Finished, MatchError>) -> u8 {
        match outcome {
            Err(MatchError::Stopped(reason)) => {
                self.recorded_in("aborted");
                let status = if self.closed.load(Ordering::SeqCst) {
                    OUTPUT_CLOSED
                } else {
                    INTERRUPTED
                };
                fail(format!("aborted: {reason}"), status)
            }
            Err(e @ (MatchError::Record(_) | MatchError::Players(_))) => {
                fail(e.to_string(), USAGE_OR_IO)
            }
            Err(e @ MatchError::Rules(_)) => {
                fail(format!("{}: {e}", self.input.name), INPUT_ERRORS)
            }
            Err(e @ (MatchError::Game(_) | MatchError::TooLong(_))) => {
                self.recorded_in("aborted");
                fail(format!("{}: {e}", self.input.name), INPUT_ERRORS)
            }
            Ok(finished) => {
                self.print_results(&finished);
                self.recorded_in("finished");
                SUCCESS
            }
        }
    }

    /// The table of a finished match's roles, players, errors and goals, and a warning for
    /// each player with errors.
    fn print_results(&self, finished: &Finished) {
        let record = &finished.record;
        let mut table = String::new();
        table.push_str(&format!("\nreasoner: {}\n", finished.reasoner));
        table.push_str(&format!(
            "{:<12} {:<32} {:>6} {:>5}\n",
            "role", "player", "errors", "goal"
        ));
        for (k, ((role, player), goal)) in record
            .game_role_names
            .iter()
            .zip(&record.player_names_from_host)
            .zip(&record.goal_values)
            .enumerate()
        {
            let errors = error_count(record, k);
            table.push_str(&format!("{role:<12} {player:<32} {errors:>6} {goal:>5}\n"));
        }
        if out::print(&table).is_err() {
            self.closed.store(true, Ordering::SeqCst);
        }
        for (k, player) in record.player_names_from_host.iter().enumerate() {
            let errors = error_count(record, k);
            if errors > 0 {
                errln!(
                    "ggp match: warning: {player} ({}): {errors} error{} (START or moves; `ggp matches show {}` lists them)",
                    record.game_role_names[k],
                    if errors == 1 { "" } else { "s" },
                    self.match_id
                );
            }
        }
    }

    /// Says where the match is recorded, if it is, and how (`finished`, `aborted`).
    fn recorded_in(&self, status: &str) {
        if let Some(store) = &self.store {
            let line = format!(
                "match {} ({status}) is recorded in {}\n",
                self.match_id,
                store.url()
            );
            // After its reader went away, standard error says it.
            if self.closed.load(Ordering::SeqCst) || out::print(&line).is_err() {
                errln!("ggp match: {}", line.trim_end());
            }
        }
    }
}

/// Where the record goes after every step: the JSON file (if asked), and the database, whose
/// commit the manager waits for before it sends the next PLAY.
struct Saver {
    writer: Option<MatchWriter>,
    json: Option<PathBuf>,
    /// Set once the JSON file cannot be written: it is not tried again, and the match goes on.
    json_failed: Arc<AtomicBool>,
}

impl Saver {
    fn save(
        &mut self,
        record: &MatchRecord,
    ) -> impl Future<Output = Result<(), ggp_match::StoreError>> + use<> {
        if let Some(path) = &self.json
            && !self.json_failed.load(Ordering::SeqCst)
            && let Err(e) = input::write_atomically(path, &record.to_json())
        {
            self.json_failed.store(true, Ordering::SeqCst);
            errln!("ggp match: {e} (the match goes on; it is recorded in the database)");
        }
        let committed = self.writer.as_mut().map(|w| w.save(record));
        async move {
            match committed {
                Some(committed) => committed.await,
                None => Ok(()),
            }
        }
    }
}

/// The match's steps on standard output, as they are played.
struct Screen {
    /// Each role's player's name (in a GDL-II game, the `random` role's is the manager).
    names: Vec<String>,
    /// Set once standard output is closed by its reader; nothing more is written to it.
    closed: Arc<AtomicBool>,
    /// Told when standard output is closed by its reader (`| head`): the match is aborted, as
    /// on Ctrl-C.
    output_closed: Arc<tokio::sync::Notify>,
}

impl Screen {
    fn show(&mut self, event: Event<'_>) {
        match event {
            Event::Started { errors, players } => {
                self.names = players.to_vec();
                for e in errors {
                    self.print(format!(
                        "START: player {} ({}): {}\n",
                        e.player + 1,
                        self.names[e.player],
                        e.text()
                    ));
                }
            }
            Event::Step(p) => {
                let mut line = format!("step {:>3}: {}", p.step + 1, p.moves.join("  "));
                for e in &p.errors {
                    line.push_str(&format!("   [{}: {}]", self.names[e.player], e.text()));
                }
                line.push('\n');
                self.print(line);
            }
        }
    }

    fn print(&self, line: String) {
        if self.closed.load(Ordering::SeqCst) {
            return;
        }
        if let Err(e) = out::print(&line) {
            self.closed.store(true, Ordering::SeqCst);
            if !out::is_closed(&e) {
                errln!("ggp match: cannot write standard output: {e}");
            }
            self.output_closed.notify_one();
        }
    }
}

/// A player's errors in a record: a failed START, and each step whose move was substituted.
fn error_count(record: &MatchRecord, player: usize) -> usize {
    let start = record
        .start_errors
        .get(player)
        .is_some_and(|e| !e.is_empty());
    usize::from(start)
        + record
            .errors
            .iter()
            .filter(|row| row.get(player).is_some_and(|e| !e.is_empty()))
            .count()
}

/// What became of a remote player contacted before the match.
enum Contact {
    /// Its host name has no address.
    NoSuchHost(String),
    /// The host was found, but the player did not answer INFO.
    Unreachable(String),
    /// It answered (its INFO reply, if it could be read).
    Answered(Option<ggp_protocol::InfoReply>),
}

/// Looks up every remote player's host and asks it for INFO, all at once.
async fn contact_players(urls: &[(usize, String)]) -> Vec<(usize, String, Contact)> {
    let tasks: Vec<_> =
        urls.iter()
            .map(|(k, url)| {
                let (k, url) = (*k, url.clone());
                tokio::spawn(async move {
                    let contact = match PlayerUrl::parse(&url) {
                        Err(e) => Contact::NoSuchHost(e.to_string()),
                        Ok(parsed) => match tokio::net::lookup_host(parsed.authority()).await {
                            Err(e) => Contact::NoSuchHost(e.to_string()),
                            Ok(_) => match ping(&url, PING_TIMEOUT).await {
                                Ok(info) => Contact::Answered(info),
                                Err(ggp_match::HttpError::Timeout) => Contact::Unreachable(
                                    format!("no reply to INFO within {} s", PING_TIMEOUT.as_secs()),
                                ),
                                Err(e) => Contact::Unreachable(e.to_string()),
                            },
                        },
                    };
                    (k, url, contact)
                })
            })
            .collect();
    let mut out = Vec::new();
    for task in tasks {
        if let Ok(result) = task.await {
            out.push(result);
        }
    }
    out
}
