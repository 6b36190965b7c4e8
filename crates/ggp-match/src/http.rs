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
/// and returns the reply body, within `timeout` for the whole exchange.
pub async fn post(url: &str, body: &str, timeout: Duration) -> Result<String, HttpError> {
    match tokio::time::timeout(timeout, exchange(url, body)).await {
        Ok(result) => result,
        Err(_) => Err(HttpError::Timeout),
    }
}

fn split_url(url: &str) -> Result<(String, String), HttpError> {
    let rest = url
        .strip_prefix("http://")
        .ok_or_else(|| HttpError::Connection(format!("`{url}` is not an http:// URL")))?;
    let (host, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    if host.is_empty() {
        return Err(HttpError::Connection(format!("`{url}` has no host")));
    }
    let host = if host.contains(':') {
        host.to_string()
    } else {
        format!("{host}:80")
    };
    Ok((host, path.to_string()))
}

async fn exchange(url: &str, body: &str) -> Result<String, HttpError> {
    let (host, path) = split_url(url)?;
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
