//! Where a match database is: a SQLite file or a PostgreSQL database, told apart once, when
//! the command line (or a configuration) is read, and carried as such from then on.

use std::fmt;
use std::path::{Path, PathBuf};
use std::str::FromStr;

/// A match database's location: `--db` as read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DatabaseUrl {
    /// A SQLite file (created, with its directory, when opened for writing).
    Sqlite(PathBuf),
    /// A PostgreSQL database (`postgres://…` or `postgresql://…`), which must exist; the URL
    /// as given, checked when it was read.
    Postgres(String),
}

/// A `postgres://` URL that the PostgreSQL client does not read.
#[derive(Debug, thiserror::Error)]
#[error("{shown} is not a PostgreSQL URL this program reads")]
pub struct BadDatabaseUrl {
    /// The URL without its password.
    shown: String,
    #[source]
    source: postgres::Error,
}

impl DatabaseUrl {
    /// Reads `--db`: a `postgres://` or `postgresql://` URL (any case) names a PostgreSQL
    /// database and must be one the client reads; anything else is a SQLite file's path.
    pub fn parse(location: &str) -> Result<DatabaseUrl, BadDatabaseUrl> {
        let trimmed = location.trim();
        let Some(scheme) = ["postgres://", "postgresql://"].into_iter().find(|scheme| {
            trimmed
                .get(..scheme.len())
                .is_some_and(|s| s.eq_ignore_ascii_case(scheme))
        }) else {
            return Ok(DatabaseUrl::Sqlite(PathBuf::from(location)));
        };
        // The client reads the scheme in lower case only.
        let url = format!("{scheme}{}", &trimmed[scheme.len()..]);
        match url.parse::<postgres::Config>() {
            Ok(_) => Ok(DatabaseUrl::Postgres(url)),
            Err(source) => Err(BadDatabaseUrl {
                shown: redact(location),
                source,
            }),
        }
    }

    /// A SQLite file.
    pub fn sqlite(path: impl Into<PathBuf>) -> DatabaseUrl {
        DatabaseUrl::Sqlite(path.into())
    }

    /// The SQLite file, if this is one.
    pub fn as_path(&self) -> Option<&Path> {
        match self {
            DatabaseUrl::Sqlite(path) => Some(path),
            DatabaseUrl::Postgres(_) => None,
        }
    }

    pub fn is_postgres(&self) -> bool {
        matches!(self, DatabaseUrl::Postgres(_))
    }
}

impl FromStr for DatabaseUrl {
    type Err = BadDatabaseUrl;

    fn from_str(s: &str) -> Result<DatabaseUrl, BadDatabaseUrl> {
        DatabaseUrl::parse(s)
    }
}

/// The file, or the URL without its password: what messages show.
impl fmt::Display for DatabaseUrl {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DatabaseUrl::Sqlite(path) => write!(f, "{}", path.display()),
            DatabaseUrl::Postgres(url) => f.write_str(&redact(url)),
        }
    }
}

/// A PostgreSQL URL without its password (in the authority or as `password=` in the query),
/// to be shown.
fn redact(url: &str) -> String {
    let (url, query) = match url.split_once('?') {
        Some((u, q)) => (u, Some(q)),
        None => (url, None),
    };
    let base = redact_authority(url);
    match query {
        None => base,
        Some(q) => {
            let q: Vec<String> = q
                .split('&')
                .map(|kv| match kv.split_once('=') {
                    Some((k, _)) if k.eq_ignore_ascii_case("password") => format!("{k}=…"),
                    _ => kv.to_string(),
                })
                .collect();
            format!("{base}?{}", q.join("&"))
        }
    }
}

fn redact_authority(url: &str) -> String {
    // postgres://user:password@host/db → postgres://user:…@host/db
    let Some(scheme_end) = url.find("://") else {
        return url.to_string();
    };
    let rest = &url[scheme_end + 3..];
    let Some(at) = rest.find('@') else {
        return url.to_string();
    };
    let auth = &rest[..at];
    match auth.find(':') {
        Some(colon) => format!(
            "{}{}:…{}",
            &url[..scheme_end + 3],
            &auth[..colon],
            &rest[at..]
        ),
        None => url.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls_are_told_from_files_and_shown_without_password() {
        let pg = |s: &str| DatabaseUrl::parse(s).unwrap().is_postgres();
        assert!(pg("postgres://u@h/db"));
        assert!(pg("PostgreSQL://u@h/db"));
        assert!(!pg("matches.db"));
        assert!(!pg("./postgres:/x"));
        assert_eq!(
            DatabaseUrl::parse("matches.db").unwrap(),
            DatabaseUrl::sqlite("matches.db")
        );
        let shown = |s: &str| DatabaseUrl::parse(s).unwrap().to_string();
        assert_eq!(
            shown("postgres://u:secret@h:5432/db"),
            "postgres://u:…@h:5432/db"
        );
        assert_eq!(shown("postgres://u@h/db"), "postgres://u@h/db");
        assert_eq!(
            shown("postgres://u@h/db?sslmode=disable&password=secret"),
            "postgres://u@h/db?sslmode=disable&password=…"
        );
    }

    #[test]
    fn a_url_the_client_cannot_read_is_refused_when_read_without_its_password() {
        let e = DatabaseUrl::parse("postgres://u:secret@h/db?sslmode=sometimes").unwrap_err();
        let text = e.to_string();
        assert!(text.contains("postgres://u:…@h/db"), "{text}");
        assert!(!text.contains("secret"), "{text}");
        assert!(std::error::Error::source(&e).is_some());
    }
}
