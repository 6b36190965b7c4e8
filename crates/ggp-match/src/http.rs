//! A minimal HTTP/1.0 client for talking to players: one request per connection, the body
//! read to the end of the stream or to its Content-Length, with a size cap, so a player that
//! sends 10 MB, never answers or closes the connection costs the manager nothing but the clock.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Why a request got no usable reply.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HttpError {
    /// No complete reply within the time allowed.
    Timeout,
    /// The connection could not be made or broke.
    Connection(String),
    /// A reply that is not HTTP, an error status, or too large.
    Protocol(String),
}

impl std::fmt::Display for HttpError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            HttpError::Timeout => f.write_str("no reply in time"),
            HttpError::Connection(m) => write!(f, "connection error: {m}"),
            HttpError::Protocol(m) => write!(f, "bad reply: {m}"),
        }
    }
}

/// The largest reply body read (a move is a few bytes; INFO a few hundred).
pub const MAX_REPLY: usize = 1024 * 1024;

/// POSTs `body` to `url` (`http://host:port[/path]`) as the specification's Appendix B shows,
/// and returns the reply body, within `timeout` for the whole exchange (a timeout too long to
/// represent is no timeout).
pub async fn post(url: &str, body: &str, timeout: Duration) -> Result<String, HttpError> {
    match tokio::time::timeout(timeout, exchange(url, body)).await {
        Ok(result) => result,
        Err(_) => Err(HttpError::Timeout),
    }
}

/// A player's address: `http://host[:port][/path]`, checked when it is read, so that a typo is
/// an error before a match starts rather than a connection error at every step.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct PlayerUrl {
    /// The host as written (lower case), without brackets for an IPv6 address.
    host: String,
    port: u16,
    /// From its `/` (at least `/`).
    path: String,
}

/// Why a text is not a player's URL ([`PlayerUrl::parse`]): the text and what is wrong with it.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("`{text}` is not a player's URL: {problem}")]
pub struct UrlError {
    pub text: String,
    pub problem: UrlProblem,
}

/// What is wrong with a player's URL.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UrlProblem {
    #[error("it contains a space or a control character")]
    Space,
    /// A scheme (as written) other than `http`.
    #[error("players speak plain HTTP (`http://`), not `{0}://`")]
    Scheme(String),
    #[error("a query or fragment needs a path before it (`/`)")]
    QueryWithoutPath,
    #[error("user names and passwords are not supported")]
    UserInfo,
    #[error("`[` without `]` around an IPv6 address")]
    Unclosed,
    /// What is written in brackets, which is not an IPv6 address.
    #[error("`{0}` is not an IPv6 address")]
    NotIpv6(String),
    #[error("expected `:port` after the IPv6 address")]
    AfterIpv6,
    #[error("it has no host")]
    NoHost,
    /// The host as written, with a character a host name cannot hold.
    #[error("`{0}` is not a host name")]
    NotAHost(String),
    /// The port as written, not a number from 1 to 65535.
    #[error("`{0}` is not a port (1 to 65535)")]
    NotAPort(String),
}

impl PlayerUrl {
    /// Reads `http://host[:port][/path]`; a bare `host:port` gets `http://`. The port defaults
    /// to 80. An IPv6 host is written in brackets (`http://[::1]:9147`).
    pub fn parse(text: &str) -> Result<PlayerUrl, UrlError> {
        let bad = |problem| UrlError {
            text: text.to_string(),
            problem,
        };
        if text.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(bad(UrlProblem::Space));
        }
        let rest = match text.split_once("://") {
            Some((scheme, rest)) if scheme.eq_ignore_ascii_case("http") => rest,
            Some((scheme, _)) => {
                return Err(bad(UrlProblem::Scheme(scheme.to_string())));
            }
            None => text,
        };
        let (authority, path) = match rest.find(['/', '?', '#']) {
            Some(i) if rest.as_bytes()[i] == b'/' => (&rest[..i], &rest[i..]),
            Some(_) => return Err(bad(UrlProblem::QueryWithoutPath)),
            None => (rest, "/"),
        };
        if authority.contains('@') {
            return Err(bad(UrlProblem::UserInfo));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let Some((host, after)) = v6.split_once(']') else {
                return Err(bad(UrlProblem::Unclosed));
            };
            if host.parse::<std::net::Ipv6Addr>().is_err() {
                return Err(bad(UrlProblem::NotIpv6(host.to_string())));
            }
            match after {
                "" => (host, None),
                _ => match after.strip_prefix(':') {
                    Some(port) => (host, Some(port)),
                    None => return Err(bad(UrlProblem::AfterIpv6)),
                },
            }
        } else {
            match authority.rsplit_once(':') {
                Some((host, port)) => (host, Some(port)),
                None => (authority, None),
            }
        };
        if host.is_empty() {
            return Err(bad(UrlProblem::NoHost));
        }
        if !host
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | '_' | ':'))
        {
            return Err(bad(UrlProblem::NotAHost(host.to_string())));
        }
        let port = match port {
            None => 80,
            Some(port) => match port.parse::<u16>() {
                Ok(p) if p > 0 => p,
                _ => return Err(bad(UrlProblem::NotAPort(port.to_string()))),
            },
        };
        Ok(PlayerUrl {
            host: host.to_ascii_lowercase(),
            port,
            path: path.to_string(),
        })
    }

    /// `host:port` for connecting (brackets around an IPv6 address).
    pub fn authority(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }

    pub fn host(&self) -> &str {
        &self.host
    }

    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn path(&self) -> &str {
        &self.path
    }
}

/// The URL in its normal form, `http://host:port/path`: two spellings of one player compare
/// equal after [`PlayerUrl::parse`].
impl std::fmt::Display for PlayerUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "http://{}{}", self.authority(), self.path)
    }
}

async fn exchange(url: &str, body: &str) -> Result<String, HttpError> {
    let url = PlayerUrl::parse(url).map_err(|e| HttpError::Connection(e.to_string()))?;
    let (host, path) = (url.authority(), url.path());
    let mut stream = TcpStream::connect(&host)
        .await
        .map_err(|e| HttpError::Connection(e.to_string()))?;
    let request = format!(
        "POST {path} HTTP/1.0\r\nHost: {host}\r\nAccept: text/delim\r\nSender: GAMEMASTER\r\nReceiver: GAMEPLAYER\r\nContent-Type: text/acl\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    );
    stream
        .write_all(request.as_bytes())
        .await
        .map_err(|e| HttpError::Connection(e.to_string()))?;
    let mut received = Vec::new();
    let mut buffer = [0u8; 8192];
    loop {
        let n = stream
            .read(&mut buffer)
            .await
            .map_err(|e| HttpError::Connection(e.to_string()))?;
        if n == 0 {
            break;
        }
        received.extend_from_slice(&buffer[..n]);
        if let Some(done) = complete(&received)? {
            return Ok(done);
        }
        if received.len() > MAX_REPLY + 64 * 1024 {
            return Err(HttpError::Protocol(format!(
                "a reply larger than {MAX_REPLY} bytes"
            )));
        }
    }
    // The end of the stream: the body is whatever came (HTTP/1.0 without Content-Length).
    let Some(end) = find(&received, b"\r\n\r\n").or_else(|| find(&received, b"\n\n")) else {
        return Err(HttpError::Connection(if received.is_empty() {
            "the connection closed with no reply".into()
        } else {
            "the connection closed in the middle of the headers".into()
        }));
    };
    let head = String::from_utf8_lossy(&received[..end]).into_owned();
    check_status(&head)?;
    let start = end
        + if received[end..].starts_with(b"\r\n\r\n") {
            4
        } else {
            2
        };
    if let Some(length) = content_length(&head)
        && received.len() - start < length
    {
        return Err(HttpError::Connection(
            "the connection closed before the end of the body".into(),
        ));
    }
    Ok(String::from_utf8_lossy(&received[start..])
        .trim()
        .to_string())
}

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

fn content_length(head: &str) -> Option<usize> {
    head.lines().find_map(|line| {
        let (name, value) = line.split_once(':')?;
        name.trim()
            .eq_ignore_ascii_case("content-length")
            .then(|| value.trim().parse().ok())
            .flatten()
    })
}

fn check_status(head: &str) -> Result<(), HttpError> {
    let status_line = head.lines().next().unwrap_or_default();
    let mut parts = status_line.split_whitespace();
    let (Some(version), Some(code)) = (parts.next(), parts.next()) else {
        return Err(HttpError::Protocol(format!(
            "not an HTTP status line: `{status_line}`"
        )));
    };
    if !version.starts_with("HTTP/") {
        return Err(HttpError::Protocol(format!(
            "not an HTTP status line: `{status_line}`"
        )));
    }
    match code.parse::<u16>() {
        Ok(200..=299) => Ok(()),
        Ok(_) => Err(HttpError::Protocol(format!("HTTP status `{status_line}`"))),
        Err(_) => Err(HttpError::Protocol(format!(
            "not an HTTP status line: `{status_line}`"
        ))),
    }
}

/// The body, once the headers and a Content-Length's worth of body have arrived.
fn complete(received: &[u8]) -> Result<Option<String>, HttpError> {
    let Some(end) = find(received, b"\r\n\r\n") else {
        return Ok(None);
    };
    let head = String::from_utf8_lossy(&received[..end]);
    let Some(length) = content_length(&head) else {
        return Ok(None);
    };
    if length > MAX_REPLY {
        return Err(HttpError::Protocol(format!(
            "a reply of {length} bytes (at most {MAX_REPLY} are read)"
        )));
    }
    let start = end + 4;
    if received.len() - start >= length {
        check_status(&head)?;
        Ok(Some(
            String::from_utf8_lossy(&received[start..start + length])
                .trim()
                .to_string(),
        ))
    } else {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::PlayerUrl;

    #[test]
    fn player_urls_are_checked_and_normalised() {
        let ok = |text: &str| PlayerUrl::parse(text).map(|u| u.to_string());
        assert_eq!(
            ok("http://127.0.0.1:9147").unwrap(),
            "http://127.0.0.1:9147/"
        );
        assert_eq!(
            ok("HTTP://LocalHost:9147/").unwrap(),
            "http://localhost:9147/"
        );
        assert_eq!(ok("localhost:9147").unwrap(), "http://localhost:9147/");
        assert_eq!(ok("http://example.org").unwrap(), "http://example.org:80/");
        assert_eq!(ok("http://[::1]:9147/p").unwrap(), "http://[::1]:9147/p");
        assert_eq!(ok("http://h:1/a?b=c").unwrap(), "http://h:1/a?b=c");
        for bad in [
            "http://",
            "http://:9147",
            "http://h:99999",
            "http://h:0",
            "http://h:port",
            "https://h:1",
            "http://h :1",
            "http://a@h:1",
            "http://[::1",
            "http://[zz]:1",
            "http://h\n:1",
            "http://h?x",
            "http://<h>:1",
        ] {
            assert!(ok(bad).is_err(), "{bad} should be refused");
        }
    }
}
