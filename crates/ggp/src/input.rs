//! Reading game files: bytes from a path or standard input, decoded as UTF-8 with offsets kept.
//!
//! Every file and standard input a command reads is read through [`read_bytes`] (or
//! [`read_file_bytes`]), which stops at the largest input ggp reads ([`max_size`]:
//! [`DEFAULT_MAX_SIZE`], or `--max-input-size`): memory never holds more than that plus one
//! byte, whatever the input (`/dev/zero`, an endless pipe, a file that grows while it is read).

use std::fs::File;
use std::io::Read;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};

use gdl_syntax::{Diagnostic, MAX_SOURCE_LEN, cst};

/// The largest input ggp reads unless `--max-input-size` says otherwise: 16 MiB. The largest
/// game of the corpus is 425 KB; a larger input is refused with a message rather than read
/// until memory runs out.
pub const DEFAULT_MAX_SIZE: u64 = 16 << 20;

/// The largest value `--max-input-size` takes: the largest description the parsers accept.
pub const MAX_MAX_SIZE: u64 = MAX_SOURCE_LEN as u64;

/// The limit in force for this process ([`set_max_size`]).
static MAX_SIZE: AtomicU64 = AtomicU64::new(DEFAULT_MAX_SIZE);

/// Sets the largest input this process reads (once, from the command line, before any input
/// is read).
pub fn set_max_size(bytes: u64) {
    MAX_SIZE.store(bytes.min(MAX_MAX_SIZE), Ordering::Relaxed);
}

/// The largest input this process reads, in bytes.
pub fn max_size() -> u64 {
    MAX_SIZE.load(Ordering::Relaxed)
}

/// A size for people: `16 MiB`, `64 KiB`, `1000 bytes`.
pub fn shown_size(bytes: u64) -> String {
    for (shift, unit) in [(30, "GiB"), (20, "MiB"), (10, "KiB")] {
        if bytes >= 1 << shift && bytes.trailing_zeros() >= shift {
            return format!("{} {unit}", bytes >> shift);
        }
    }
    if bytes == 1 {
        "1 byte".into()
    } else {
        format!("{bytes} bytes")
    }
}

/// Reads `reader` to its end if it holds at most `limit` bytes (`None` when it holds more: it
/// is read no further than `limit + 1` bytes). `expected` is the size it is thought to have,
/// to reserve memory at once.
pub fn read_at_most(
    reader: impl Read,
    limit: u64,
    expected: u64,
) -> std::io::Result<Option<Vec<u8>>> {
    let reserved = usize::try_from(expected.min(limit)).unwrap_or(0);
    let mut bytes = Vec::with_capacity(reserved);
    reader
        .take(limit.saturating_add(1))
        .read_to_end(&mut bytes)?;
    Ok((bytes.len() as u64 <= limit).then_some(bytes))
}

/// The message for an input larger than the limit.
fn too_large(shown: &str, limit: u64) -> String {
    format!(
        "cannot read {shown}: it is larger than {}, the largest input ggp reads (--max-input-size)",
        shown_size(limit)
    )
}

/// Reads the bytes of `path`, or of standard input for `-`, up to the largest input ggp
/// reads. The error message names the file and the reason.
pub fn read_bytes(path: &Path) -> Result<Vec<u8>, String> {
    if path != Path::new("-") {
        return read_file_bytes(path);
    }
    let limit = max_size();
    let shown = "standard input";
    match read_at_most(std::io::stdin().lock(), limit, 0) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(too_large(shown, limit)),
        Err(e) => Err(format!("cannot read {shown}: {e}")),
    }
}

/// Reads the bytes of the file at `path` (never standard input), up to the largest input ggp
/// reads. A regular file known to be larger is refused before it is read.
pub fn read_file_bytes(path: &Path) -> Result<Vec<u8>, String> {
    let limit = max_size();
    let shown = path.display().to_string();
    let file = File::open(path).map_err(|e| format!("cannot read {shown}: {e}"))?;
    let expected = match file.metadata() {
        Ok(meta) if meta.is_file() && meta.len() > limit => return Err(too_large(&shown, limit)),
        Ok(meta) if meta.is_file() => meta.len(),
        _ => 0,
    };
    match read_at_most(file, limit, expected) {
        Ok(Some(bytes)) => Ok(bytes),
        Ok(None) => Err(too_large(&shown, limit)),
        Err(e) => Err(format!("cannot read {shown}: {e}")),
    }
}

/// A file read from disk or standard input (`-`).
pub struct Input {
    /// The name to show in messages.
    pub name: String,
    pub text: String,
    /// Problems found while decoding (invalid UTF-8).
    pub decode_diagnostics: Vec<Diagnostic>,
}

/// Reads `path`, or standard input for `-`, up to the largest input ggp reads. The error
/// message names the file and the reason.
pub fn read(path: &Path) -> Result<Input, String> {
    let bytes = read_bytes(path)?;
    let (text, decode_diagnostics) = cst::decode(&bytes);
    let name = path.display().to_string();
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_shown_in_the_largest_exact_unit() {
        assert_eq!(shown_size(DEFAULT_MAX_SIZE), "16 MiB");
        assert_eq!(shown_size(64 << 10), "64 KiB");
        assert_eq!(shown_size(3 << 30), "3 GiB");
        assert_eq!(shown_size(1000), "1000 bytes");
        assert_eq!(shown_size(1025), "1025 bytes");
        assert_eq!(shown_size(1), "1 byte");
    }

    /// An endless reader: it never ends, and counts what was taken from it.
    struct Endless(u64);

    impl Read for Endless {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            buf.fill(b'(');
            self.0 += buf.len() as u64;
            Ok(buf.len())
        }
    }

    #[test]
    fn reading_stops_one_byte_past_the_limit() {
        let mut endless = Endless(0);
        assert_eq!(read_at_most(&mut endless, 1000, 0).unwrap(), None);
        assert_eq!(
            endless.0, 1001,
            "read no further than the limit and one byte"
        );
        let exact = vec![b'x'; 1000];
        assert_eq!(
            read_at_most(&exact[..], 1000, 1000).unwrap(),
            Some(exact.clone())
        );
        assert_eq!(read_at_most(&exact[..], 999, 1000).unwrap(), None);
        assert_eq!(read_at_most(&b""[..], 999, 0).unwrap(), Some(Vec::new()));
        // A size thought larger than it is does not reserve more than the limit.
        let small = read_at_most(&b"abc"[..], 10, u64::MAX).unwrap().unwrap();
        assert_eq!(small, b"abc");
        assert!(small.capacity() <= 11);
    }
}
