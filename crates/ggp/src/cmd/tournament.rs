//! `ggp tournament`: a round robin (or random pairings) between players on one or more
//! games, without a web server: the games and the players go into the match database, the
//! tournament's schedule too, and this process plays it as a Gamemaster's worker would
//! (`ggp_server::tournament`), then prints the standings. Other workers sharing the database
//! (`ggp serve --worker`) may play its matches too.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use ggp_play::StrategyKind;
use ggp_server::ratings::Standing;
use ggp_server::tournament::{self, TournamentRequest};
use ggp_server::{Config, Gamemaster};
use serde_json::json;

use crate::cmd::records::default_db_path;
use crate::cmd::{clock_seconds, count_up_to, milliseconds, runtime};
use crate::out::errln;
use crate::{INPUT_ERRORS, INTERRUPTED, SUCCESS, USAGE_OR_IO, out};

#[derive(clap::Args)]
pub struct Args {
    /// The games (prefix KIF files); each is kept in the database under its file name (a new
    /// version if its rules changed).
    #[arg(required = true, value_name = "GAME")]
    games: Vec<PathBuf>,
    /// A player: `random`, `legal`, `montecarlo`, `mcts`, `sample` (built in), the URL of an
    /// HTTP player (registered in the database under its host and port, unless a player with
    /// that URL is registered already), or a registered player's name. Each once.
    #[arg(long = "player", required = true, value_name = "SPEC")]
    players: Vec<String>,
    /// Rounds: each plays every assignment of distinct players to each game's roles once.
    #[arg(long, default_value_t = 1, value_parser = count_up_to(10_000))]
    rounds: usize,
    /// `roundrobin`, or `random` (each round, players shuffled into groups per game).
    #[arg(long, default_value = "roundrobin")]
    format: String,
    /// Seconds the players get after START (at most a day).
    #[arg(long, default_value_t = 10, value_parser = clock_seconds)]
    startclock: u64,
    /// Seconds each player gets for each move (at most a day).
    #[arg(long, default_value_t = 5, value_parser = clock_seconds)]
    playclock: u64,
    /// Milliseconds added to each clock for the network before a reply counts as late.
    #[arg(long, default_value_t = 1000, value_parser = milliseconds)]
    grace_ms: u64,
    /// Seed of the schedule and of every match's randomness (random if not given).
    #[arg(long)]
    seed: Option<u64>,
    /// Matches played at once by this process.
    #[arg(long, default_value_t = 1, value_parser = count_up_to(256))]
    parallel: usize,
    /// A name for the tournament (default: its games and the day).
    #[arg(long)]
    name: Option<String>,
    /// The match database (default: as `ggp match`): a SQLite file or a `postgres://` URL.
    #[arg(long, value_name = "FILE|URL")]
    db: Option<ggp_match::DatabaseUrl>,
    /// Write `{"matches": N, "standings": [{"player", "played", "mean", "rating"}, …]}` (best
    /// first) to this file.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

/// Reports a refusal or a failure on standard error; the exit status to end with.
fn fail(status: u8, message: String) -> u8 {
    errln!("ggp tournament: {message}");
    status
}

pub fn run(args: Args) -> u8 {
    let db = match args.db.clone().map_or_else(default_db_path, Ok) {
        Ok(path) => path,
        Err(e) => return fail(USAGE_OR_IO, e.to_string()),
    };
    let runtime = match runtime() {
        Ok(r) => r,
        Err(e) => return fail(USAGE_OR_IO, e.to_string()),
    };
    runtime.block_on(async move {
        let config = Config {
            grace: Duration::from_millis(args.grace_ms),
            kind: "tournament",
            capacity: args.parallel,
            poll: Duration::from_millis(200),
            ..Config::new(db.clone(), ggp_server::auth::new_token())
        };
        let (gm, _) = match Gamemaster::start(config).await {
            Ok(started) => started,
            Err(e) => return fail(USAGE_OR_IO, e.to_string()),
        };
        let status = match (Steps {
            gm: &gm,
            args: &args,
        })
        .play()
        .await
        {
            Ok(()) => SUCCESS,
            Err(status) => status,
        };
        gm.shut_down("the tournament was interrupted", Duration::from_secs(10))
            .await;
        status
    })
}

/// What the tournament's steps share: the Gamemaster it is played in, and the arguments.
/// Each step returns the exit status, once the failure is reported, when the tournament
/// cannot go on.
struct Steps<'a> {
    gm: &'a Arc<Gamemaster>,
    args: &'a Args,
}

impl Steps<'_> {
    async fn play(&self) -> Result<(), u8> {
        let games = self.add_games().await?;
        let players = self.add_players().await?;
        let made = self.create(games, players).await?;
        let finished = self.play_until_finished(&made).await?;
        self.report(&finished).await
    }

    /// The games, kept as versions in the database; their keys.
    async fn add_games(&self) -> Result<Vec<String>, u8> {
        let mut keys = Vec::new();
        for path in &self.args.games {
            let bytes = crate::input::read_file_bytes(path)
                .map_err(|message| fail(USAGE_OR_IO, message))?;
            let (text, decoding) = gdl_syntax::cst::decode(&bytes);
            let key = ggp_server::games::key_from_file_name(&path.to_string_lossy());
            match ggp_server::games::add(
                &self.gm.db,
                &key,
                text,
                decoding,
                path.display().to_string(),
            )
            .await
            {
                Ok(_) => keys.push(key),
                Err(e) => {
                    errln!("ggp tournament: {}: {}", path.display(), e.message());
                    if let ggp_server::error::Error::Unprocessable { rendered, .. } = &e {
                        for r in rendered {
                            errln!("{r}");
                        }
                    }
                    return Err(INPUT_ERRORS);
                }
            }
        }
        Ok(keys)
    }

    /// The players: built in, registered by URL, or registered already; their names.
    async fn add_players(&self) -> Result<Vec<String>, u8> {
        let mut players = Vec::new();
        let registered = self
            .gm
            .db
            .players()
            .await
            .map_err(|e| fail(USAGE_OR_IO, e.message().to_string()))?;
        for spec in &self.args.players {
            let spec = spec.trim();
            if StrategyKind::parse(spec).is_some() {
                players.push(spec.to_ascii_lowercase());
            } else if spec.contains("://") {
                let url = ggp_server::players::check_url(spec)
                    .map_err(|e| fail(USAGE_OR_IO, format!("--player {spec}: {}", e.message())))?;
                if let Some(p) = registered.iter().find(|p| p.url == url) {
                    players.push(p.name.clone());
                    continue;
                }
                let name = url
                    .split("://")
                    .nth(1)
                    .unwrap_or(&url)
                    .trim_end_matches('/')
                    .to_string();
                match ggp_server::api::register(self.gm, &name, &url).await {
                    Ok((p, _)) => players.push(p.name),
                    Err(e) => {
                        return Err(fail(
                            USAGE_OR_IO,
                            format!(
                                "--player {spec}: registering it as `{name}`: {}",
                                e.message()
                            ),
                        ));
                    }
                }
            } else {
                players.push(spec.to_string());
            }
        }
        Ok(players)
    }

    /// The tournament of `games` between `players`, scheduled in the database.
    async fn create(
        &self,
        games: Vec<String>,
        players: Vec<String>,
    ) -> Result<tournament::Tournament, u8> {
        let args = self.args;
        let request = TournamentRequest {
            name: args.name.clone(),
            format: Some(args.format.clone()),
            games,
            players,
            rounds: Some(args.rounds as u64),
            startclock: args.startclock,
            playclock: args.playclock,
            seed: args.seed,
        };
        let made = tournament::create(self.gm, request)
            .await
            .map_err(|e| fail(USAGE_OR_IO, e.message().to_string()))?;
        if made.format == tournament::Format::Continuous {
            return Err(fail(
                USAGE_OR_IO,
                "a continuous tournament never ends by itself: run it in `ggp serve`".into(),
            ));
        }
        Ok(made)
    }

    /// Plays the tournament's matches as a worker, saying how many are played, until all are
    /// (the tournament as it finished) or Ctrl-C.
    async fn play_until_finished(
        &self,
        made: &tournament::Tournament,
    ) -> Result<tournament::Tournament, u8> {
        let gm = self.gm;
        let total = made.progress.queued;
        errln!(
            "ggp tournament: tournament {} ({}): {} match{} to play, in {}",
            made.id,
            made.name,
            total,
            if total == 1 { "" } else { "es" },
            gm.db.shown()
        );
        tokio::spawn(tournament::work(gm.clone(), Some(made.id)));
        let interrupted = async {
            let _ = tokio::signal::ctrl_c().await;
        };
        tokio::pin!(interrupted);
        let mut reported = 0;
        loop {
            let t = tournament::tournament(&gm.db, made.id)
                .await
                .map_err(|e| fail(USAGE_OR_IO, e.message().to_string()))?;
            let played = t.progress.done + t.progress.failed;
            if played != reported {
                reported = played;
                errln!("ggp tournament: {played}/{total} played");
            }
            if t.status == "finished" {
                return Ok(t);
            }
            tokio::select! {
                () = &mut interrupted => {
                    errln!("ggp tournament: interrupted: the matches being played are aborted and recorded; the rest stay scheduled");
                    return Err(INTERRUPTED);
                }
                () = gm.ended.notified() => {}
                () = tokio::time::sleep(Duration::from_millis(500)) => {}
            }
        }
    }

    /// Prints the standings of the finished tournament, and writes them to the `--json` file.
    async fn report(&self, finished: &tournament::Tournament) -> Result<(), u8> {
        let db = &self.gm.db;
        let standings = tournament::standings(db, finished.id)
            .await
            .map_err(|e| fail(USAGE_OR_IO, e.message().to_string()))?;
        let matches = tournament::played(db, Some(finished.id))
            .await
            .map_err(|e| fail(USAGE_OR_IO, e.message().to_string()))?
            .len();
        if finished.progress.failed > 0 {
            errln!(
                "ggp tournament: {} scheduled match{} could not be played (see `ggp serve`'s tournament page or the database)",
                finished.progress.failed,
                if finished.progress.failed == 1 {
                    ""
                } else {
                    "es"
                }
            );
        }
        // A reader that went away stops nothing: the tournament is recorded, and the JSON
        // below is still written.
        let _ = out::print(&standings_table(&standings));
        if let Some(path) = &self.args.json {
            let value = json!({
                "tournament": finished.id,
                "matches": matches,
                "standings": standings.iter().map(|s| json!({
                    "player": s.player,
                    "played": s.played,
                    "mean": s.mean,
                    "rating": s.rating.conservative(),
                    "mu": s.rating.mu,
                    "sigma": s.rating.sigma,
                    "failed": s.failed,
                })).collect::<Vec<_>>(),
            });
            let body = serde_json::to_string_pretty(&value).expect("plain data serialises") + "\n";
            if let Err(e) = std::fs::write(path, body) {
                return Err(fail(
                    USAGE_OR_IO,
                    format!("cannot write {}: {e}", path.display()),
                ));
            }
        }
        Ok(())
    }
}

/// The standings as a table, best first.
fn standings_table(standings: &[Standing]) -> String {
    let width = standings
        .iter()
        .map(|s| s.player.chars().count())
        .max()
        .unwrap_or(6)
        .max(6);
    let mut text = format!(
        "{:>3}  {:<width$}  {:>6}  {:>9}  {:>8}  {:>14}  {:>6}\n",
        "#", "player", "played", "mean goal", "rating", "μ ± 3σ", "failed"
    );
    for (k, s) in standings.iter().enumerate() {
        text.push_str(&format!(
            "{:>3}  {:<width$}  {:>6}  {:>9.2}  {:>8.2}  {:>14}  {:>6}\n",
            k + 1,
            s.player,
            s.played,
            s.mean,
            s.rating.conservative(),
            format!("{:.1} ± {:.1}", s.rating.mu, 3.0 * s.rating.sigma),
            s.failed
        ));
    }
    text
}
