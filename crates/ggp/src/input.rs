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

/// Writes `contents` to `path` atomically: a temporary file beside it, then a rename, so an
/// interrupted write never leaves a half-written game.
pub fn write_atomically(path: &Path, contents: &str) -> Result<(), String> {
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
