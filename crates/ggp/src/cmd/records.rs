//! `ggp matches`: what the match database holds: a table of matches, one match for people,
//! one match as ggp.org match JSON.

use std::path::PathBuf;

use ggp_match::{Database, MatchRecord, utc_date};

use crate::out::errln;
use crate::{SUCCESS, USAGE_OR_IO, out};

#[derive(clap::Args)]
pub struct Args {
    #[command(subcommand)]
    command: Command,
    /// The match database (default: the one `ggp match` writes to): a SQLite file or a
    /// `postgres://` URL.
    #[arg(long, value_name = "FILE|URL", global = true)]
    db: Option<ggp_match::DatabaseUrl>,
}

#[derive(clap::Subcommand)]
enum Command {
    /// A table of the recorded matches, oldest first.
    List,
    /// One match: roles, players, steps, errors, goals and status.
    Show {
        /// The match id (as `list` shows it).
        id: String,
    },
    /// One match as ggp.org match JSON.
    Export {
        /// The match id (as `list` shows it).
        id: String,
    },
}

/// Where `ggp match` keeps its records unless told otherwise: `$XDG_DATA_HOME/ggp`, or
/// `~/.local/share/ggp` (on Windows `%APPDATA%\ggp`, on macOS `~/Library/Application Support/ggp`).
pub fn default_db_path() -> Result<ggp_match::DatabaseUrl, String> {
    let env = |name: &str| {
        std::env::var_os(name)
            .map(PathBuf::from)
            .filter(|p| p.is_absolute())
    };
    let data = if cfg!(windows) {
        env("APPDATA")
    } else if cfg!(target_os = "macos") {
        env("HOME").map(|h| h.join("Library/Application Support"))
    } else {
        env("XDG_DATA_HOME").or_else(|| env("HOME").map(|h| h.join(".local/share")))
    };
    data.map(|d| ggp_match::DatabaseUrl::sqlite(d.join("ggp").join("matches.sqlite")))
        .ok_or_else(|| {
            "no data directory for the match database (HOME is not set): use --db FILE".to_string()
        })
}

/// The match database of `--db` / `--no-db` (`None` with `--no-db`; the default path
/// otherwise), opened for writing.
pub fn open_store(
    db: Option<&ggp_match::DatabaseUrl>,
    no_db: bool,
) -> Result<Option<ggp_match::Store>, String> {
    if no_db {
        return Ok(None);
    }
    let url = match db {
        Some(url) => url.clone(),
        None => default_db_path()?,
    };
    ggp_match::Store::open(&url)
        .map(Some)
        .map_err(|e| e.to_string())
}

pub fn run(args: Args) -> u8 {
    let fail = |message: String| {
        errln!("ggp matches: {message}");
        USAGE_OR_IO
    };
    let print = |text: String| match out::print(&text) {
        Ok(()) => SUCCESS,
        // `ggp matches list | head` has what it wanted.
        Err(e) if out::is_closed(&e) => SUCCESS,
        Err(e) => fail(format!("cannot write standard output: {e}")),
    };
    let url = match args.db.map_or_else(default_db_path, Ok) {
        Ok(url) => url,
        Err(e) => return fail(e),
    };
    let db = match Database::open_existing(&url) {
        Ok(db) => db,
        Err(e) => return fail(e.to_string()),
    };
    match args.command {
        Command::List => match db.list() {
            Ok(matches) => print(list_table(&matches)),
            Err(e) => fail(e.to_string()),
        },
        Command::Show { id } => match db.load(&id) {
            Ok(record) => print(show(&record)),
            Err(e) => fail(e.to_string()),
        },
        Command::Export { id } => match db.load(&id) {
            Ok(record) => print(record.to_json() + "\n"),
            Err(e) => fail(e.to_string()),
        },
    }
}

fn list_table(matches: &[ggp_match::MatchSummary]) -> String {
    if matches.is_empty() {
        return "no matches recorded\n".into();
    }
    let rows: Vec<[String; 6]> = matches
        .iter()
        .map(|m| {
            [
                m.match_id.clone(),
                m.game_name.clone(),
                utc_date(m.start_time),
                m.status.clone(),
                m.steps.to_string(),
                m.players
                    .iter()
                    .enumerate()
                    .map(|(k, p)| match m.goal_values.get(k) {
                        Some(goal) => format!("{p} {goal}"),
                        None => p.clone(),
                    })
                    .collect::<Vec<_>>()
                    .join(", "),
            ]
        })
        .collect();
    let header = [
        "id",
        "game",
        "started (UTC)",
        "status",
        "steps",
        "players (goals)",
    ];
    let mut widths = header.map(str::len);
    for row in &rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let line = |cells: &[&str]| {
        let mut out = String::new();
        for (k, cell) in cells.iter().enumerate() {
            if k + 1 == cells.len() {
                out.push_str(cell);
            } else {
                let pad = widths[k] - cell.chars().count();
                out.push_str(cell);
                out.push_str(&" ".repeat(pad + 2));
            }
        }
        out.push('\n');
        out
    };
    let mut out = line(&header);
    for row in &rows {
        out.push_str(&line(&row.each_ref().map(String::as_str)));
    }
    out
}

/// A match for people.
fn show(record: &MatchRecord) -> String {
    let mut out = String::new();
    let steps = record.moves.len();
    out.push_str(&format!("match    {}\n", record.match_id));
    out.push_str(&format!("game     {}\n", record.game_name));
    out.push_str(&format!("status   {}\n", record.status()));
    out.push_str(&format!("started  {} UTC\n", utc_date(record.start_time)));
    out.push_str(&format!(
        "clocks   start {} s, play {} s\n",
        record.start_clock, record.play_clock
    ));
    out.push_str(&format!("steps    {steps}\n"));
    if let Some(reason) = &record.abort_reason {
        out.push_str(&format!("aborted  {reason}\n"));
    }
    out.push('\n');
    let role_width = record
        .game_role_names
        .iter()
        .map(String::len)
        .chain([4])
        .max()
        .unwrap_or(4);
    let player_width = record
        .player_names_from_host
        .iter()
        .map(String::len)
        .chain([6])
        .max()
        .unwrap_or(6);
    out.push_str(&format!(
        "{:<role_width$}  {:<player_width$}  {:>6}  {:>4}\n",
        "role", "player", "errors", "goal"
    ));
    for (k, role) in record.game_role_names.iter().enumerate() {
        let errors = record
            .errors
            .iter()
            .chain([&record.start_errors])
            .filter(|row| row.get(k).is_some_and(|e| !e.is_empty()))
            .count();
        let goal = record
            .goal_values
            .get(k)
            .map_or("-".to_string(), u8::to_string);
        let player = record
            .player_names_from_host
            .get(k)
            .map_or("", String::as_str);
        out.push_str(&format!(
            "{role:<role_width$}  {player:<player_width$}  {errors:>6}  {goal:>4}\n"
        ));
    }
    if steps > 0 {
        out.push_str("\nmoves\n");
        for (k, moves) in record.moves.iter().enumerate() {
            out.push_str(&format!("{:>5}  {}\n", k + 1, moves.join("  ")));
        }
    }
    let errors: Vec<String> = record
        .errors
        .iter()
        .enumerate()
        .flat_map(|(step, row)| {
            row.iter()
                .enumerate()
                .filter(|(_, e)| !e.is_empty())
                .map(move |(k, e)| {
                    let role = record.game_role_names.get(k).map_or("?", String::as_str);
                    format!("{:>5}  {role}: {e}\n", step + 1)
                })
        })
        .collect();
    let start_errors: Vec<String> = record
        .start_errors
        .iter()
        .enumerate()
        .filter(|(_, e)| !e.is_empty())
        .map(|(k, e)| {
            let role = record.game_role_names.get(k).map_or("?", String::as_str);
            format!("       {role}: {e}\n")
        })
        .collect();
    if !start_errors.is_empty() {
        out.push_str("\nSTART (play went on without these players' READY)\n");
        for e in start_errors {
            out.push_str(&e);
        }
    }
    if !errors.is_empty() {
        out.push_str("\nerrors (the move was replaced by a random legal one)\n");
        for e in errors {
            out.push_str(&e);
        }
    }
    out
}
