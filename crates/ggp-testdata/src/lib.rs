//! Finds the shared test data (`../shared` beside the checkout, or `$GGP_SHARED`).
//!
//! Corpus-wide tests call [`shared_dir`] and, when it is absent, print why they skip and pass:
//! the data is others' work and is not part of the project.

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

pub mod legacy_schema;

use std::path::{Path, PathBuf};

/// A SQLite database file `name` in `dir` (made if missing) that starts empty: the file and
/// its `-wal` and `-shm` companions an earlier run left are removed. A directory of that name
/// (a test's path that is not a database) is left as it is.
pub fn fresh_sqlite_file(dir: &Path, name: &str) -> PathBuf {
    std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("cannot make {}: {e}", dir.display()));
    let path = dir.join(name);
    for suffix in ["", "-wal", "-shm"] {
        let file = format!("{}{suffix}", path.display());
        if Path::new(&file).is_dir() {
            continue;
        }
        match std::fs::remove_file(&file) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => panic!("cannot remove {file}: {e}"),
        }
    }
    path
}

/// The shared folder, if present.
pub fn shared_dir() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os("GGP_SHARED") {
        let dir = PathBuf::from(dir);
        return dir.is_dir().then_some(dir);
    }
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = workspace.join("../shared");
    dir.join("corpus")
        .is_dir()
        .then(|| dir.canonicalize().unwrap_or(dir))
}

/// The shared folder, or `None` after printing that the named test skips.
pub fn shared_or_skip(test: &str) -> Option<PathBuf> {
    let dir = shared_dir();
    if dir.is_none() {
        eprintln!("SKIP {test}: ../shared (or $GGP_SHARED) is absent");
    }
    dir
}

/// Every `.kif` file under `dir`, sorted.
pub fn kif_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                stack.push(path);
            } else if path.extension().is_some_and(|e| e == "kif") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// Every corpus game (`corpus/games` and `corpus/gdl2`).
pub fn corpus_files(shared: &Path) -> Vec<PathBuf> {
    let mut files = kif_files(&shared.join("corpus/games"));
    files.extend(kif_files(&shared.join("corpus/gdl2")));
    files
}

/// A path relative to the shared folder, for messages.
pub fn relative<'a>(shared: &Path, path: &'a Path) -> std::borrow::Cow<'a, str> {
    path.strip_prefix(shared).unwrap_or(path).to_string_lossy()
}

/// Whether `UPDATE_EXPECT` asks the tests to record what they found instead of comparing.
pub fn updating() -> bool {
    std::env::var_os("UPDATE_EXPECT").is_some()
}

/// Compares `found` with the file recorded at `path`, or records it when [`updating`].
/// Returns what differs: `None` when they are the same (or after recording).
pub fn differs_from_recorded(path: &Path, found: &str) -> Option<String> {
    if updating() {
        std::fs::write(path, found)
            .unwrap_or_else(|e| panic!("cannot write {}: {e}", path.display()));
        return None;
    }
    let recorded = std::fs::read_to_string(path).unwrap_or_default();
    (recorded != found).then(|| format!("--- recorded\n{recorded}\n--- found\n{found}"))
}

/// Asserts that `found` is what `path` records (`UPDATE_EXPECT=1` records it instead).
pub fn assert_recorded(path: &Path, found: &str) {
    if let Some(difference) = differs_from_recorded(path, found) {
        panic!(
            "{} changed (UPDATE_EXPECT=1 to accept):\n{difference}",
            path.display()
        );
    }
}

/// `files` grouped by `key` (a file without one is alone): each group in the order of
/// `files`, the groups in the order of their first file. With the rules as clean S-expressions
/// for key, the copies of a game that the corpus holds in several collections come together,
/// to be compared once.
pub fn group_by<K: Eq + std::hash::Hash>(
    files: &[PathBuf],
    key: impl Fn(&Path) -> Option<K>,
) -> Vec<Vec<PathBuf>> {
    group_indices(files, key)
        .into_iter()
        .map(|group| group.into_iter().map(|k| files[k].clone()).collect())
        .collect()
}

/// [`group_by`], each file by its index in `files`.
fn group_indices<K: Eq + std::hash::Hash>(
    files: &[PathBuf],
    key: impl Fn(&Path) -> Option<K>,
) -> Vec<Vec<usize>> {
    let mut groups: Vec<Vec<usize>> = Vec::new();
    let mut by_key: std::collections::HashMap<K, usize> = std::collections::HashMap::new();
    for (k, path) in files.iter().enumerate() {
        let at = match key(path) {
            Some(found) => *by_key.entry(found).or_insert(groups.len()),
            None => groups.len(),
        };
        if at == groups.len() {
            groups.push(Vec::new());
        }
        groups[at].push(k);
    }
    groups
}

/// `f` applied to one file of each group of [`group_by`] `key` (as [`parallel_map`] does), its
/// result given to every file of the group; the results in the order of `files`.
pub fn parallel_map_by<K: Eq + std::hash::Hash, R: Send + Clone>(
    files: &[PathBuf],
    key: impl Fn(&Path) -> Option<K>,
    f: impl Fn(&Path) -> R + Sync,
) -> Vec<R> {
    let groups = group_indices(files, key);
    let results = parallel_map(&groups, |group| f(&files[group[0]]));
    let mut each: Vec<Option<R>> = vec![None; files.len()];
    for (group, result) in groups.iter().zip(results) {
        for &k in group {
            each[k] = Some(result.clone());
        }
    }
    each.into_iter()
        .map(|r| r.expect("every file is in a group"))
        .collect()
}

/// The threads [`parallel_map`] runs on: one per core, four at most.
pub fn threads() -> usize {
    std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .min(4)
}

/// `f` applied to every item, on [`threads`] threads (items are taken in order as threads free
/// up); the results in the items' order.
pub fn parallel_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: Vec<std::sync::Mutex<Option<R>>> =
        items.iter().map(|_| Default::default()).collect();
    std::thread::scope(|scope| {
        for _ in 0..threads() {
            scope.spawn(|| {
                loop {
                    let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some(item) = items.get(k) else { break };
                    *results[k].lock().unwrap() = Some(f(item));
                }
            });
        }
    });
    results
        .into_iter()
        .map(|r| r.into_inner().unwrap().expect("every item was done"))
        .collect()
}

/// A fresh, empty PostgreSQL database `ggp_test_<name>` in the cluster `$GGP_TEST_POSTGRES`
/// names (`scripts/pg_test_cluster.sh` starts a throw-away one and prints its URL), as the URL
/// `--db` and `Store::open` take. `None`, said on stderr, when the variable is not set: the
/// test is skipped. A cluster named but not reachable fails the test. Safe to call from an
/// async test (the blocking client runs on a thread of its own).
pub fn fresh_postgres(name: &str) -> Option<String> {
    let Ok(admin) = std::env::var("GGP_TEST_POSTGRES") else {
        eprintln!(
            "skipped on PostgreSQL: GGP_TEST_POSTGRES is not set (export GGP_TEST_POSTGRES=$(bash scripts/pg_test_cluster.sh))"
        );
        return None;
    };
    let db = format!("ggp_test_{name}");
    let (url, made) = (admin.clone(), db.clone());
    std::thread::spawn(move || {
        let mut client = postgres::Client::connect(&url, postgres::NoTls)
            .unwrap_or_else(|e| panic!("GGP_TEST_POSTGRES={url} cannot be reached: {e}"));
        client
            .batch_execute(&format!("DROP DATABASE IF EXISTS {made} WITH (FORCE)"))
            .unwrap();
        client
            .batch_execute(&format!("CREATE DATABASE {made}"))
            .unwrap();
    })
    .join()
    .unwrap_or_else(|panic| std::panic::resume_unwind(panic));
    let base = admin.rsplit_once('/').map_or(admin.as_str(), |(b, _)| b);
    Some(format!("{base}/{db}"))
}
