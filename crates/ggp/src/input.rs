//! Reading game files: bytes from a path or standard input, decoded as UTF-8 with offsets kept.

use std::io::Read;
use std::path::Path;

use gdl_syntax::{Diagnostic, MAX_SOURCE_LEN, cst};

/// A file read from disk or standard input (`-`).
pub struct Input {
    /// The name to show in messages.
    pub name: String,
    pub text: String,
    /// Problems found while decoding (invalid UTF-8).
    pub decode_diagnostics: Vec<Diagnostic>,
}

/// Reads `path`, or standard input for `-`. The error message names the file and the reason.
pub fn read(path: &Path) -> Result<Input, String> {
    let name = path.display().to_string();
    let bytes = if name == "-" {
        let mut bytes = Vec::new();
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| format!("cannot read standard input: {e}"))?;
        bytes
    } else {
        std::fs::read(path).map_err(|e| format!("cannot read {name}: {e}"))?
    };
    if bytes.len() > MAX_SOURCE_LEN {
        return Err(format!(
            "cannot read {name}: it is larger than 4 GiB, the largest description supported"
        ));
    }
    let (text, decode_diagnostics) = cst::decode(&bytes);
    Ok(Input {
        name: if name == "-" { "<stdin>".into() } else { name },
        text,
        decode_diagnostics,
    })
}

/// Why a file with these diagnostics is not rewritten (formatted, converted): `it has 2
/// errors`, or, for a file whose only problem is a comment that is not UTF-8, that rewriting
/// would change those bytes.
pub fn why_not_rewritten(diagnostics: &[Diagnostic]) -> String {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    if errors == 0 {
        "it is not valid UTF-8 (in a comment), and rewriting it would change those bytes".into()
    } else {
        format!(
            "it has {errors} error{}",
            if errors == 1 { "" } else { "s" }
        )
    }
}

/// Checks, before any work is done, that a file can be written at `path`: its directory exists
/// and takes a new file, and `path` is not a directory. (An output that fails at the end of a
/// long match or conversion loses the work.)
pub fn check_writable(path: &Path) -> Result<(), String> {
    let shown = path.display();
    if path.is_dir() {
        return Err(format!("cannot write {shown}: it is a directory"));
    }
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let dir = target
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !dir.is_dir() {
        return Err(format!(
            "cannot write {shown}: the directory {} does not exist",
            dir.display()
        ));
    }
    let probe = dir.join(format!(".ggp-write-check{}", std::process::id()));
    std::fs::write(&probe, b"")
        .and_then(|()| std::fs::remove_file(&probe))
        .map_err(|e| format!("cannot write {shown}: {e}"))
}

/// Writes `contents` to `path` atomically: a temporary file beside it, then a rename, so an
/// interrupted write never leaves a half-written game. A symbolic link is written through (its
/// target is replaced; the link stays).
pub fn write_atomically(path: &Path, contents: &str) -> Result<(), String> {
    let resolved = match std::fs::symlink_metadata(path) {
        Ok(meta) if meta.file_type().is_symlink() => std::fs::canonicalize(path)
            .map_err(|e| format!("cannot write {}: {e}", path.display()))?,
        _ => path.to_path_buf(),
    };
    let path = resolved.as_path();
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file_name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let temp = dir.join(format!(".{file_name}.ggp-tmp{}", std::process::id()));
    std::fs::write(&temp, contents)
        .and_then(|()| {
            if let Ok(meta) = std::fs::metadata(path) {
                std::fs::set_permissions(&temp, meta.permissions())?;
            }
            std::fs::rename(&temp, path)
        })
        .map_err(|e| {
            let _ = std::fs::remove_file(&temp);
            format!("cannot write {}: {e}", path.display())
        })
}
