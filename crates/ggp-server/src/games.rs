//! The repository of games: checking rules before they are kept, importing a directory,
//! and analysing each version once in the background (which engine plays it, which fluents
//! can hold, for drawing its board, and its traits: turns, board size, length, GDL-II).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use gdl_reason::StateMachine;
use gdl_syntax::{Diagnostic, Item, SourceFile, Term as AstTerm};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;
use sha2::{Digest, Sha256};

use crate::db::{Added, Analysis, Db, NewVersion, Version};
use crate::error::Error;
use crate::traits::{Traits, Turns};
use crate::verdict::Verdict;

/// The largest rules accepted: a mebibyte (the largest game of the corpus is 425 KB).
pub const MAX_RULES: usize = 1 << 20;

/// The longest game key.
pub const MAX_KEY: usize = 64;

/// What the checker says of rules that can be kept.
#[derive(Debug)]
pub struct Checked {
    pub roles: Vec<String>,
    /// Every diagnostic, as `ggp check --format json` objects (none blocks reasoning).
    pub warnings: Vec<serde_json::Value>,
}

/// Checks a game key: 1 to 64 ASCII letters, digits, `.`, `_` and `-`, beginning with a
/// letter or a digit (it appears in URLs and match ids).
pub fn check_key(key: &str) -> Result<(), Error> {
    let ok = !key.is_empty()
        && key.len() <= MAX_KEY
        && key.as_bytes()[0].is_ascii_alphanumeric()
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'));
    if ok {
        Ok(())
    } else {
        Err(Error::BadRequest(format!(
            "`{}` is not a game key: 1 to {MAX_KEY} ASCII letters, digits, `.`, `_` and `-`, beginning with a letter or a digit",
            key.escape_debug()
        )))
    }
}

/// A key from a file name: its stem, with anything a key cannot hold replaced by `_`.
pub fn key_from_file_name(name: &str) -> String {
    let stem = Path::new(name)
        .file_stem()
        .map_or(String::new(), |s| s.to_string_lossy().into_owned());
    let mut key: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
                c
            } else {
                '_'
            }
        })
        .take(MAX_KEY)
        .collect();
    if !key.starts_with(|c: char| c.is_ascii_alphanumeric()) {
        key.insert(0, 'g');
        key.truncate(MAX_KEY);
    }
    key
}

/// The SHA-256 of rules, in hex.
pub fn rules_hash(rules: &str) -> String {
    Sha256::digest(rules.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Checks rules as `ggp check` does: refused (422, with every diagnostic) when they have
/// errors that leave them without an agreed meaning, or no role; accepted with their
/// diagnostics otherwise. `decoding` are the diagnostics of reading the bytes as UTF-8.
pub fn check_rules(name: &str, text: &str, decoding: Vec<Diagnostic>) -> Result<Checked, Error> {
    if text.len() > MAX_RULES {
        return Err(Error::TooLarge(format!(
            "the rules have {} bytes; at most {MAX_RULES} (1 MiB) are accepted",
            text.len()
        )));
    }
    let checked = gdl_check::check(text);
    let mut diagnostics = decoding;
    diagnostics.extend(checked.diagnostics.iter().cloned());
    diagnostics.sort_by_key(|d| d.span);
    let blocking: Vec<&Diagnostic> = diagnostics
        .iter()
        .filter(|d| d.is_error() && gdl_check::blocks_reasoning(d.code))
        .collect();
    let file = SourceFile::new(name, text);
    let json: Vec<serde_json::Value> = diagnostics
        .iter()
        .map(|d| gdl_syntax::diagnostic::to_json(&file, d))
        .collect();
    if !blocking.is_empty() {
        let rendered = blocking.iter().map(|d| file.render(d, false)).collect();
        return Err(Error::Unprocessable {
            message: format!(
                "the rules have {} error{} that leave{} them without an agreed meaning",
                blocking.len(),
                if blocking.len() == 1 { "" } else { "s" },
                if blocking.len() == 1 { "s" } else { "" },
            ),
            diagnostics: json,
            rendered,
        });
    }
    let roles = roles(text);
    if roles.is_empty() {
        return Err(Error::Unprocessable {
            message: "the rules have no `role`: nobody could play them".into(),
            diagnostics: json,
            rendered: Vec::new(),
        });
    }
    Ok(Checked {
        roles,
        warnings: json,
    })
}

/// The roles, as the rules spell them, in order, each once.
fn roles(text: &str) -> Vec<String> {
    let parse = gdl_syntax::parse(text);
    let mut roles: Vec<String> = Vec::new();
    for item in &parse.description.items {
        if let Item::Fact(s) = item
            && s.name.text.eq_ignore_ascii_case("role")
            && let [AstTerm::Constant(name)] = &*s.args
            && !roles.iter().any(|r| r.eq_ignore_ascii_case(name.text))
        {
            roles.push(name.text.to_string());
        }
    }
    roles
}

/// The role GDL-II's manager plays, `random` (recognised by name, as the reasoner does), if
/// the game has one: it is no seat of a match.
pub fn random_role(roles: &[String]) -> Option<usize> {
    roles.iter().position(|r| r.eq_ignore_ascii_case("random"))
}

/// Whether rules are a GDL-II game: a `random` role or a `sees` rule (as
/// `StateMachine::is_gdl2` says, read from the text so that nothing needs to be loaded).
pub fn is_gdl2(text: &str) -> bool {
    let parse = gdl_syntax::parse(text);
    random_role(&roles(text)).is_some()
        || parse.description.items.iter().any(|item| {
            let head = match item {
                Item::Fact(s) => s,
                Item::Rule(r) => &r.head,
            };
            head.name.text.eq_ignore_ascii_case("sees")
        })
}

/// Whether rules are a GDL-III game: a rule uses `knows`.
pub fn is_gdl3(text: &str) -> bool {
    gdl_check::knows::first_use(&gdl_check::check(text).program).is_some()
}

/// Checks and keeps a version of a game; returns what was added and the version.
pub async fn add(
    db: &Db,
    key: &str,
    text: String,
    decoding: Vec<Diagnostic>,
    source: String,
) -> Result<(Added, Checked), Error> {
    check_key(key)?;
    let name = format!("{key}.kif");
    let (checked, text) = tokio::task::spawn_blocking(move || {
        let checked = check_rules(&name, &text, decoding);
        (checked, text)
    })
    .await
    .map_err(|e| Error::Internal(format!("checking the rules failed: {e}")))?;
    let checked = checked?;
    let hash = rules_hash(&text);
    let added = db
        .add_version(NewVersion {
            key: key.to_string(),
            rules: text,
            hash,
            roles: checked.roles.clone(),
            warnings: checked.warnings.clone(),
            source,
        })
        .await?;
    Ok((added, checked))
}

/// What importing a directory did.
#[derive(Debug, Default)]
pub struct Imported {
    pub added: usize,
    pub unchanged: usize,
    /// Files refused, and why.
    pub refused: Vec<(PathBuf, String)>,
}

/// A directory of games that cannot be read.
#[derive(Debug, thiserror::Error)]
#[error("cannot read {}: {source}", dir.display())]
pub struct ImportError {
    pub dir: PathBuf,
    #[source]
    pub source: std::io::Error,
}

/// Why a game file is refused before its rules are read.
#[derive(Debug, thiserror::Error)]
enum RulesFileError {
    #[error("cannot read it: {0}")]
    Unreadable(#[source] std::io::Error),
    #[error("it is larger than {MAX_RULES} bytes (1 MiB), the largest rules accepted")]
    TooLarge,
}

/// Every `.kif` file under `dir`, recursively, in name order.
fn kif_files(dir: &Path) -> Result<Vec<PathBuf>, ImportError> {
    let mut out = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        let entries = std::fs::read_dir(&d).map_err(|source| ImportError {
            dir: d.clone(),
            source,
        })?;
        for entry in entries.flatten() {
            let path = entry.path();
            match entry.file_type() {
                Ok(t) if t.is_dir() => pending.push(path),
                Ok(_)
                    if path
                        .extension()
                        .is_some_and(|e| e.eq_ignore_ascii_case("kif")) =>
                {
                    out.push(path)
                }
                _ => {}
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The game files imported at one start, by key: a key is one game, so a second file of the
/// same name (in another `--games` directory, or another folder of one) is refused, rather
/// than made the key's next version, and the first's again at the next start, and so on.
pub type ImportedKeys = std::collections::HashMap<String, PathBuf>;

/// Imports every `.kif` file under `dir`: its key is its file name's stem; rules that are the
/// key's latest version already add nothing; files with blocking errors are refused, and so
/// are files whose key a file read earlier in this start (`taken`) has.
pub async fn import(
    db: &Db,
    dir: &Path,
    taken: &mut ImportedKeys,
) -> Result<Imported, ImportError> {
    let files = kif_files(dir)?;
    let mut report = Imported::default();
    for path in files {
        let key = key_from_file_name(&path.to_string_lossy());
        if let Some(first) = taken.get(&key) {
            let why = format!(
                "its key `{key}` is that of {}, read before it: a key names one game (rename one of them)",
                first.display()
            );
            report.refused.push((path, why));
            continue;
        }
        let bytes = match read_rules_file(&path) {
            Ok(b) => b,
            Err(e) => {
                report.refused.push((path, e.to_string()));
                continue;
            }
        };
        taken.insert(key.clone(), path.clone());
        let (text, decoding) = gdl_syntax::cst::decode(&bytes);
        match add(db, &key, text, decoding, path.display().to_string()).await {
            Ok((added, _)) if added.new => report.added += 1,
            Ok(_) => report.unchanged += 1,
            Err(e) => report.refused.push((path, e.message().to_string())),
        }
    }
    Ok(report)
}

/// A game file's bytes, read up to [`MAX_RULES`] and no further (a file that is larger, or
/// grows while read, is refused: uploads are held to the same limit).
fn read_rules_file(path: &Path) -> Result<Vec<u8>, RulesFileError> {
    use std::io::Read;
    let file = std::fs::File::open(path).map_err(RulesFileError::Unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_RULES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(RulesFileError::Unreadable)?;
    if bytes.len() > MAX_RULES {
        return Err(RulesFileError::TooLarge);
    }
    Ok(bytes)
}

/// The most fluents kept per version for drawing boards.
const MAX_FLUENTS: usize = 20_000;

/// How long the analysis of one version may play random games to see its fluents.
const SAMPLE_TIME: Duration = Duration::from_secs(2);

/// How long one question of the trial may run past [`SAMPLE_TIME`] (the join tier and the
/// reference engine stop a question at its deadline).
const QUESTION_GRACE: Duration = Duration::from_secs(5);

/// The trial of a version, charged to `memory` (a match's budget): see [`analyse`]. `None`
/// when it found the game unplayable while the process as a whole was short of memory (a
/// refusal that was not the trial's own): that verdict is not the game's, so nothing is kept
/// and the trial is to be run again later.
pub fn analyse_within(rules: &str, memory: &ggp_memory::Account) -> Option<Analysis> {
    let (process, own) = (ggp_memory::refusals(), memory.refused());
    let analysis = memory.run(|| analyse(rules));
    let refused = (ggp_memory::refusals() - process, memory.refused() - own);
    verdict_stands(&analysis, refused).then_some(analysis)
}

/// Whether a trial's verdict is the game's: it is, unless the game was found unplayable while
/// memory checks refused more than the trial's own account did (`(in the process, the
/// trial's own)` refusals during it): the process as a whole was short.
fn verdict_stands(analysis: &Analysis, (process, own): (u64, u64)) -> bool {
    analysis.engine.unplayable().is_none() || process <= own
}

/// The trial of a version: builds its engine and plays random games with it for
/// [`SAMPLE_TIME`], asking every question a match asks (legal moves, next states, terminal,
/// goals). Finds which engine plays the rules (`fast`, `reference: <why>`, `unplayable:
/// <why>`), the fluents that can hold (the `base` facts, or those seen in the games), and, on
/// a thread charging a memory account, the memory it took. A game whose questions need more
/// than the account's budget is unplayable: every match of it would fail.
pub fn analyse(rules: &str) -> Analysis {
    let account = ggp_memory::current();
    let peak = || account.as_ref().map_or(0, ggp_memory::Account::peak);
    let gdl2 = is_gdl2(rules);
    let gdl3 = is_gdl3(rules);
    let unplayable = |why: String| Analysis {
        engine: Verdict::Unplayable(why),
        fluents: Vec::new(),
        memory: peak(),
        traits: Traits {
            gdl2,
            gdl3,
            ..Traits::default()
        },
    };
    let mut machine = match ggp_play::load(rules) {
        Ok(m) => m,
        Err(e) => return unplayable(e.to_string()),
    };
    // Refusals while building choose the engine; those of the questions make it unplayable.
    let refused = || account.as_ref().map_or(0, ggp_memory::Account::refused);
    let building = refused();
    let engine = match machine.fallback() {
        None => Verdict::Fast,
        Some(why) => Verdict::Reference(why.to_string()),
    };
    let deadline = Instant::now() + SAMPLE_TIME;
    let until = deadline + QUESTION_GRACE;
    machine.set_until(Some(until));
    let too_much_memory = || {
        let limit = account.as_ref().map_or(0, ggp_memory::Account::limit);
        unplayable(format!(
            "it needs more than {} of memory, the budget of a match (--match-memory)",
            ggp_memory::Mib(limit)
        ))
    };
    let mut seen = BTreeSet::new();
    let spelled = |m: &ggp_play::Machine, t| m.terms().spelled(m.symbols(), t);
    let initial = match machine.initial_state() {
        Ok(s) => s,
        Err(_) if refused() > building => return too_much_memory(),
        Err(e) => return unplayable(e.to_string()),
    };
    // The first state's questions, as the manager asks them: when they fail within their
    // budgets (before the trial's deadline, so not for time), every match fails at its first
    // step.
    let first = machine.is_terminal(&initial).and_then(|over| match over {
        true => machine.goals(&initial).map(drop),
        false => machine.all_legal_moves(&initial).map(drop),
    });
    if let Err(e) = first {
        if refused() > building {
            return too_much_memory();
        }
        if Instant::now() < until {
            return unplayable(format!("in the first state: {e}"));
        }
    }
    for f in machine.fluents(&initial) {
        seen.insert(spelled(&machine, f));
    }
    let base = match machine.base_fluents() {
        Ok(Some(base)) => {
            for f in base.into_iter().take(MAX_FLUENTS) {
                seen.insert(spelled(&machine, f));
            }
            true
        }
        _ => false,
    };
    let mut rng = SmallRng::seed_from_u64(1);
    let mut trial = Trial::default();
    'games: for _ in 0..64 {
        let mut state = initial.clone();
        for step in 0..500 {
            if Instant::now() > deadline || seen.len() >= MAX_FLUENTS {
                break 'games;
            }
            match machine.is_terminal(&state) {
                Ok(false) => {}
                Ok(true) => {
                    let _ = machine.goals(&state);
                    trial.ended(step);
                    break;
                }
                Err(_) => break,
            }
            let Ok(legal) = machine.all_legal_moves(&state) else {
                break;
            };
            trial.choices(&legal);
            let joint: Option<Vec<_>> = legal.iter().map(|m| m.choose(&mut rng).copied()).collect();
            let Some(joint) = joint else {
                break;
            };
            let Ok(next) = machine.next_state(&state, &joint) else {
                break;
            };
            state = next;
            if !base {
                for f in machine.fluents(&state) {
                    seen.insert(spelled(&machine, f));
                }
            }
        }
    }
    machine.set_until(None);
    if refused() > building {
        return too_much_memory();
    }
    let fluents: Vec<String> = seen.into_iter().take(MAX_FLUENTS).collect();
    let board = crate::board::Geometry::detect(&fluents_as_terms(&fluents))
        .map(|g| (g.columns.len(), g.rows.len()));
    let traits = Traits {
        turns: trial.turns(machine.roles().len()),
        gdl2,
        gdl3,
        board,
        steps: trial.mean_steps(),
    };
    Analysis {
        engine,
        fluents,
        memory: peak(),
        traits,
    }
}

/// What the random games of a trial saw of the roles' choices and the games' lengths.
#[derive(Default)]
struct Trial {
    /// States in which two roles or more had a choice.
    simultaneous: usize,
    /// States whose moves were read.
    states: usize,
    /// The games that ended, and their steps in all.
    ended: usize,
    steps: usize,
}

impl Trial {
    fn choices<T>(&mut self, legal: &[Vec<T>]) {
        self.states += 1;
        if legal.iter().filter(|moves| moves.len() > 1).count() > 1 {
            self.simultaneous += 1;
        }
    }

    fn ended(&mut self, steps: usize) {
        self.ended += 1;
        self.steps += steps;
    }

    /// In turn or at once, for a game of several roles whose moves were read.
    fn turns(&self, roles: usize) -> Option<Turns> {
        match (roles, self.states, self.simultaneous) {
            (0 | 1, _, _) | (_, 0, _) => None,
            (_, _, 0) => Some(Turns::InTurn),
            _ => Some(Turns::Simultaneous),
        }
    }

    fn mean_steps(&self) -> Option<f64> {
        (self.ended > 0).then(|| self.steps as f64 / self.ended as f64)
    }
}

/// Fluents as the trial spells them, as terms.
fn fluents_as_terms(fluents: &[String]) -> Vec<crate::term::Term> {
    fluents
        .iter()
        .filter_map(|f| crate::term::parse(f))
        .collect()
}

/// Analyses versions one at a time on a thread of its own, as their ids arrive (and those not
/// analysed yet at start). Each trial has a match's budget, reserved from the matches' memory
/// (waiting while the matches running hold it).
pub fn start_analysis(
    db: Db,
    runtime: tokio::runtime::Handle,
    admission: crate::limits::Admission,
) -> tokio::sync::mpsc::UnboundedSender<i64> {
    let (queue, mut ids) = tokio::sync::mpsc::unbounded_channel::<i64>();
    let first = queue.clone();
    let scan = db.clone();
    runtime.spawn(async move {
        if let Ok(pending) = scan.unanalysed().await {
            for (id, _) in pending {
                let _ = first.send(id);
            }
        }
    });
    std::thread::Builder::new()
        .name("ggp-serve-analysis".into())
        .spawn(move || {
            let mut done = std::collections::HashSet::new();
            while let Some(id) = ids.blocking_recv() {
                if !done.insert(id) {
                    continue;
                }
                let rules = runtime.block_on(db.read(move |d| {
                    d.connection()
                        .query_row(
                            "SELECT rules FROM game_versions
                             WHERE id = $1 AND (engine IS NULL OR memory IS NULL)",
                            [id],
                            |r| r.get::<_, String>(0),
                        )
                        .map_err(|e| Error::NotFound(e.to_string()))
                }));
                let Ok(rules) = rules else { continue };
                // A trial cut short by the process's memory (not its own) is run again a
                // little later, at most three times; after that the version stays unanalysed
                // until the next start.
                for attempt in 1..=3 {
                    let memory = admission.trial_account(id);
                    let analysis = analyse_within(&rules, &memory);
                    drop(memory);
                    if let Some(analysis) = analysis {
                        let _ = runtime.block_on(db.set_analysis(id, analysis));
                        break;
                    }
                    std::thread::sleep(Duration::from_secs(5 * attempt));
                }
            }
        })
        .expect("a thread can be started");
    queue
}

/// The fluents of a version as terms, for [`crate::board::Geometry::detect`].
pub fn hint(version: &Version) -> Vec<crate::term::Term> {
    fluents_as_terms(version.fluents.as_deref().unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_are_checked_and_made_from_file_names() {
        assert!(check_key("tictactoe").is_ok());
        assert!(check_key("connect-4_v2.1").is_ok());
        for bad in ["", ".hidden", "a b", "<script>", "é", &"a".repeat(65)] {
            assert!(check_key(bad).is_err(), "{bad}");
        }
        assert_eq!(key_from_file_name("games/tic tac<toe>.kif"), "tic_tac_toe_");
        assert_eq!(key_from_file_name("_x.kif"), "g_x");
        assert!(check_key(&key_from_file_name("ü.kif")).is_ok());
    }

    #[test]
    fn rules_with_blocking_errors_are_refused_with_their_diagnostics() {
        let refused = check_rules(
            "bad.kif",
            "(role x)\n(<= (legal x ?m) (true (p)))\n",
            Vec::new(),
        );
        match refused {
            Err(Error::Unprocessable {
                diagnostics,
                rendered,
                ..
            }) => {
                assert!(
                    diagnostics.iter().any(|d| d["code"] == "E001"),
                    "{diagnostics:?}"
                );
                assert!(
                    rendered.iter().any(|r| r.contains("bad.kif:2:")),
                    "{rendered:?}"
                );
            }
            other => panic!("{other:?}"),
        }
        let ok = check_rules(
            "ok.kif",
            include_str!("../../../games/tictactoe.kif"),
            Vec::new(),
        )
        .unwrap();
        assert_eq!(ok.roles, ["x", "o"]);
    }

    #[test]
    fn gdl2_and_gdl3_games_are_recognised_by_random_sees_and_knows() {
        let monty = include_str!("../../../games/montyhall.kif");
        assert!(is_gdl2(monty));
        assert_eq!(random_role(&roles(monty)), Some(1));
        assert!(is_gdl2("(role a) (role b) (<= (sees a (x)) (does b y))"));
        assert!(is_gdl2("(role Random) (role b)"));
        let tictactoe = include_str!("../../../games/tictactoe.kif");
        assert!(!is_gdl2(tictactoe));
        assert!(!is_gdl3(tictactoe) && !is_gdl3(monty));
        assert!(is_gdl3(include_str!("../../../games/number_guessing.kif")));
        assert_eq!(random_role(&roles(tictactoe)), None);
    }

    #[test]
    fn an_unplayable_verdict_stands_only_when_the_trial_met_its_own_budget() {
        let verdict = |engine: &str| Analysis {
            engine: Verdict::parse(engine),
            fluents: Vec::new(),
            memory: 0,
            traits: Traits::default(),
        };
        let unplayable = verdict("unplayable: it needs more than 64 MiB of memory");
        assert!(verdict_stands(&unplayable, (0, 0)));
        assert!(verdict_stands(&unplayable, (3, 3)), "its own budget");
        assert!(!verdict_stands(&unplayable, (4, 3)), "the process's");
        assert!(!verdict_stands(&unplayable, (1, 0)));
        assert!(verdict_stands(&verdict("fast"), (5, 0)), "a playable game");
    }

    #[test]
    fn analysis_names_the_engine_and_the_fluents() {
        let Analysis {
            engine, fluents, ..
        } = analyse(include_str!("../../../games/tictactoe.kif"));
        assert_eq!(engine, Verdict::Fast);
        assert!(fluents.iter().any(|f| f == "(square 2 2 x)"), "{fluents:?}");
    }
}
