//! `ggp match`: runs a match between players (HTTP URLs or built-in strategies), prints it and
//! records it in the match database.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use ggp_match::{MatchConfig, MatchRecord, PlayerSpec, Store, post, run_match};
use ggp_protocol::Request;

use crate::cmd::records::default_db_path;
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
    /// The match id sent to the players and recorded (default: `ggp.<game>.<start time in
    /// milliseconds>`).
    #[arg(long)]
    id: Option<String>,
    /// The match database (SQLite), where every step is committed before the next PLAY
    /// (default: `$XDG_DATA_HOME/ggp/matches.sqlite`, or `~/.local/share/ggp/matches.sqlite`).
    #[arg(long, value_name = "FILE", conflicts_with = "no_db")]
    db: Option<PathBuf>,
    /// Record the match in no database.
    #[arg(long)]
    no_db: bool,
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
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let config = MatchConfig {
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
    };
    let db_path = match (&args.db, args.no_db) {
        (_, true) => None,
        (Some(path), false) => Some(path.clone()),
        (None, false) => match default_db_path() {
            Ok(path) => Some(path),
            Err(e) => return fail(e, USAGE_OR_IO),
        },
    };
    let store = match db_path.as_deref().map(Store::open).transpose() {
        Ok(store) => store,
        Err(e) => return fail(e.to_string(), USAGE_OR_IO),
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
    let write_json = move |record: &MatchRecord| {
        if let Some(path) = &json_path
            && let Err(e) = input::write_atomically(path, &record.to_json())
        {
            eprintln!("ggp match: {e}");
        }
    };
    // A database that fails mid-match is an I/O error (exit status 2), not a game's.
    let store_failed = Arc::new(AtomicBool::new(false));
    // After every step: the JSON file (if asked), and the database, whose commit the manager
    // waits for before it sends the next PLAY.
    let save = {
        let latest = latest.clone();
        let write_json = write_json.clone();
        let mut writer = store.as_ref().map(Store::writer);
        let store_failed = store_failed.clone();
        move |record: &MatchRecord| {
            *latest.lock().expect("not poisoned") = Some(record.clone());
            write_json(record);
            let committed = writer.as_mut().map(|w| w.save(record));
            let store_failed = store_failed.clone();
            async move {
                match committed {
                    Some(committed) => committed.await.map_err(|e| {
                        store_failed.store(true, Ordering::SeqCst);
                        e.to_string()
                    }),
                    None => Ok(()),
                }
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
            result = run_match(config, players, progress, save) => Some(result),
            _ = tokio::signal::ctrl_c() => None,
        }
    });
    let recorded_in = |status: &str| {
        if let Some(store) = &store {
            println!(
                "match {match_id} ({status}) is recorded in {}",
                store.path().display()
            );
        }
    };
    match outcome {
        None => {
            // Ctrl-C: tell the players, and keep the record as aborted.
            let marked = runtime.block_on(async {
                let abort = Request::Abort {
                    match_id: match_id.clone(),
                }
                .to_string();
                let aborts: Vec<_> = urls
                    .iter()
                    .map(|url| {
                        let (url, abort) = (url.clone(), abort.clone());
                        tokio::spawn(
                            async move { post(&url, &abort, Duration::from_secs(2)).await },
                        )
                    })
                    .collect();
                for a in aborts {
                    let _ = a.await;
                }
                match &store {
                    Some(store) => store.abort(&match_id).await,
                    None => Ok(false),
                }
            });
            if let Some(mut record) = latest.lock().expect("not poisoned").take() {
                record.is_aborted = true;
                write_json(&record);
            }
            match marked {
                Ok(true) => recorded_in("aborted"),
                Ok(false) => {}
                Err(e) => eprintln!("ggp match: {e}"),
            }
            fail("aborted".into(), INPUT_ERRORS)
        }
        Some(Err(e)) if store_failed.load(Ordering::SeqCst) => fail(e, USAGE_OR_IO),
        Some(Err(e)) => fail(format!("{}: {e}", input.name), INPUT_ERRORS),
        Some(Ok(finished)) => {
            let record = finished.record;
            println!();
            println!("reasoner: {}", finished.reasoner);
            println!("{:<12} {:<32} {:>5}", "role", "player", "goal");
            for ((role, player), goal) in record
                .game_role_names
                .iter()
                .zip(&record.player_names_from_host)
                .zip(&record.goal_values)
            {
                println!("{role:<12} {player:<32} {goal:>5}");
            }
            recorded_in("finished");
            SUCCESS
        }
    }
}
