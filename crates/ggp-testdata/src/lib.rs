//! Finds the shared test data (`../shared` beside the checkout, or `$GGP_SHARED`).
//!
//! Corpus-wide tests call [`shared_dir`] and, when it is absent, print why they skip and pass:
//! the data is others' work and is not part of the project.

use std::path::{Path, PathBuf};

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
