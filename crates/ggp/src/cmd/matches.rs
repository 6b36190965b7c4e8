//! `ggp match`: runs a match between players (HTTP URLs or built-in strategies) and prints it.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use ggp_match::{MatchConfig, MatchRecord, PlayerSpec, post, run_match};
use ggp_protocol::Request;

use crate::{INPUT_ERRORS, SUCCESS, USAGE_OR_IO, input};

#[derive(clap::Args)]
pub struct Args {
    /// The game description (prefix KIF).
    game: PathBuf,
    /// A player for each role, in the order of the game's roles: `random`, `legal`, or the URL
    /// of an HTTP player (`http://127.0.0.1:9147`).
    #[arg(long = "player", required = true, value_name = "SPEC")]
    players: Vec<String>,
    /// Seconds the players get after START.
    #[arg(long, default_value_t = 10)]
    startclock: u64,
    /// Seconds each player gets for each move.
    #[arg(long, default_value_t = 5)]
    playclock: u64,
    /// Milliseconds added to each clock for the network before a reply counts as late.
    #[arg(long, default_value_t = 1000)]
    grace_ms: u64,
    /// Seed of the substituted moves and of the built-in players.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// The match id sent to the players (default: `ggp.<game>.<seed>`).
    #[arg(long)]
    id: Option<String>,
    /// Write the record (ggp.org match JSON) to this file, after every step.
    #[arg(long, value_name = "FILE")]
    json: Option<PathBuf>,
}

pub fn run(args: Args) -> u8 {
    let fail = |message: String, status: u8| {
        eprintln!("ggp match: {message}");
        status
    };
    let input = match input::read(&args.game) {
        Ok(input) => input,
        Err(message) => return fail(message, USAGE_OR_IO),
    };
    let mut players = Vec::new();
    for spec in &args.players {
        match PlayerSpec::parse(spec) {
            Ok(p) => players.push(p),
            Err(e) => return fail(e, USAGE_OR_IO),
        }
    }
    let stem = args
        .game
        .file_stem()
        .map_or("game".into(), |s| s.to_string_lossy().into_owned());
    let config = MatchConfig {
        match_id: args
            .id
            .clone()
            .unwrap_or_else(|| format!("ggp.{stem}.{}", args.seed)),
        rules: input.text.clone(),
        start_clock: Duration::from_secs(args.startclock),
        play_clock: Duration::from_secs(args.playclock),
        grace: Duration::from_millis(args.grace_ms),
        seed: args.seed,
    };
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => return fail(format!("cannot start the runtime: {e}"), USAGE_OR_IO),
    };
    let latest: Arc<Mutex<Option<MatchRecord>>> = Arc::new(Mutex::new(None));
    let json_path = args.json.clone();
    let save = {
        let latest = latest.clone();
        move |record: &MatchRecord| {
            *latest.lock().expect("not poisoned") = Some(record.clone());
            if let Some(path) = &json_path
                && let Err(e) = input::write_atomically(path, &record.to_json())
            {
                eprintln!("ggp match: {e}");
            }
        }
    };
    let names: Vec<String> = players.iter().map(PlayerSpec::name).collect();
    let urls: Vec<String> = players
        .iter()
        .filter_map(|p| match p {
            PlayerSpec::Url(u) => Some(u.clone()),
            PlayerSpec::Builtin(_) => None,
        })
        .collect();
    let match_id = config.match_id.clone();
    let outcome = runtime.block_on(async {
        let progress = |p: &ggp_match::Progress| {
            let mut line = format!("step {:>3}: {}", p.step + 1, p.moves.join("  "));
            for e in &p.errors {
                line.push_str(&format!("   [{}: {}]", names[e.player], e.text()));
            }
            println!("{line}");
        };
        tokio::select! {
            result = run_match(config, players, progress, save.clone()) => Some(result),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    match outcome {
        None => {
            // Ctrl-C: tell the players, and keep the record as aborted.
            runtime.block_on(async {
                let abort = Request::Abort { match_id }.to_string();
                for url in &urls {
                    let _ = post(url, &abort, Duration::from_secs(2)).await;
                }
            });
            if let Some(mut record) = latest.lock().expect("not poisoned").take() {
                record.is_aborted = true;
                save(&record);
            }
            fail("aborted".into(), INPUT_ERRORS)
        }
        Some(Err(e)) => fail(format!("{}: {e}", input.name), INPUT_ERRORS),
        Some(Ok(record)) => {
            println!();
            println!("{:<12} {:<32} {:>5}", "role", "player", "goal");
            for ((role, player), goal) in record
                .game_role_names
                .iter()
                .zip(&record.player_names_from_host)
                .zip(&record.goal_values)
            {
                println!("{role:<12} {player:<32} {goal:>5}");
            }
            SUCCESS
        }
    }
}
