//! Failed logins slow down. A client address that gives a wrong token (a bearer token the
//! server does not know, a wrong token at `/login`) [`FREE`] times is made to wait before it
//! may try again, twice as long after each further failure (1 s, 2 s, 4 s, … [`MAX_WAIT`]);
//! while it waits, its requests that carry credentials are answered 429 with `Retry-After`
//! (requests without credentials, the public pages, are served as ever). A right token does
//! not end the wait (an owner's token between guesses at the admin's would). Failures are
//! forgotten after [`FORGET_AFTER`] without one, and the table holds at most [`CAPACITY`]
//! addresses (the oldest forgotten first).
//!
//! The address is the connection's peer (`ConnectInfo`, which the server loop sets; an IPv6
//! address's /64, the block one client is usually given); behind a
//! reverse proxy every client shares the proxy's address, and a guesser slows everyone down
//! rather than nobody.

use std::collections::HashMap;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use axum::extract::{ConnectInfo, Request, State};
use axum::http::{HeaderValue, Method, StatusCode, header};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

/// Wrong tokens an address may give before it waits.
pub const FREE: u32 = 5;

/// The longest wait.
pub const MAX_WAIT: Duration = Duration::from_secs(300);

/// Failures are forgotten after this long without another.
pub const FORGET_AFTER: Duration = Duration::from_secs(15 * 60);

/// Addresses remembered at most.
pub const CAPACITY: usize = 10_000;

#[derive(Clone, Copy, Debug)]
struct Entry {
    failures: u32,
    last: Instant,
    until: Option<Instant>,
}

/// The failures of each client address.
#[derive(Default)]
pub struct Throttle {
    entries: Mutex<HashMap<IpAddr, Entry>>,
}

impl Throttle {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<IpAddr, Entry>> {
        self.entries.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// How long `ip` must still wait, if it must.
    pub fn wait(&self, ip: IpAddr, now: Instant) -> Option<Duration> {
        let entry = *self.lock().get(&ip)?;
        entry
            .until
            .and_then(|u| u.checked_duration_since(now))
            .filter(|d| !d.is_zero())
    }

    /// `ip` gave a wrong token.
    pub fn failed(&self, ip: IpAddr, now: Instant) {
        let mut entries = self.lock();
        if entries.len() >= CAPACITY && !entries.contains_key(&ip) {
            entries.retain(|_, e| now.duration_since(e.last) < FORGET_AFTER);
            if entries.len() >= CAPACITY
                && let Some(oldest) = entries.iter().min_by_key(|(_, e)| e.last).map(|(k, _)| *k)
            {
                entries.remove(&oldest);
            }
        }
        let entry = entries.entry(ip).or_insert(Entry {
            failures: 0,
            last: now,
            until: None,
        });
        if now.duration_since(entry.last) >= FORGET_AFTER {
            entry.failures = 0;
        }
        entry.failures = entry.failures.saturating_add(1);
        entry.last = now;
        if entry.failures >= FREE {
            let doublings = (entry.failures - FREE).min(16);
            let wait = Duration::from_secs(1u64 << doublings).min(MAX_WAIT);
            entry.until = Some(now + wait);
        }
    }
}

/// Whether a request gives a token to be checked: a bearer token, or the login form.
fn carries_credentials(request: &Request) -> bool {
    request.headers().contains_key(header::AUTHORIZATION)
        || (request.method() == Method::POST && request.uri().path() == "/login")
}

/// The middleware: refuses an address that must wait, and counts its wrong tokens.
pub async fn guard(
    State(throttle): State<Arc<Throttle>>,
    request: Request,
    next: Next,
) -> Response {
    let peer = request
        .extensions()
        .get::<ConnectInfo<SocketAddr>>()
        .map(|c| ggp_http::address_key(c.0.ip()));
    let (Some(ip), true) = (peer, carries_credentials(&request)) else {
        return next.run(request).await;
    };
    if let Some(wait) = throttle.wait(ip, Instant::now()) {
        let seconds = wait.as_secs() + u64::from(wait.subsec_nanos() > 0);
        let mut response = (
            StatusCode::TOO_MANY_REQUESTS,
            axum::Json(serde_json::json!({
                "error": format!(
                    "too many wrong tokens from this address: try again in {seconds} s"
                )
            })),
        )
            .into_response();
        if let Ok(v) = HeaderValue::from_str(&seconds.to_string()) {
            response.headers_mut().insert(header::RETRY_AFTER, v);
        }
        return response;
    }
    let response = next.run(request).await;
    if response.status() == StatusCode::UNAUTHORIZED {
        throttle.failed(ip, Instant::now());
    }
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn waits_double_after_the_free_failures_and_end_after_a_quiet_while() {
        let t = Throttle::default();
        let ip: IpAddr = "192.0.2.7".parse().unwrap();
        let now = Instant::now();
        for _ in 0..FREE - 1 {
            t.failed(ip, now);
        }
        assert_eq!(t.wait(ip, now), None);
        t.failed(ip, now);
        assert_eq!(t.wait(ip, now), Some(Duration::from_secs(1)));
        t.failed(ip, now);
        assert_eq!(t.wait(ip, now), Some(Duration::from_secs(2)));
        for _ in 0..20 {
            t.failed(ip, now);
        }
        assert_eq!(t.wait(ip, now), Some(MAX_WAIT));
        assert_eq!(t.wait(ip, now + MAX_WAIT), None);
        let other: IpAddr = "192.0.2.8".parse().unwrap();
        assert_eq!(t.wait(other, now), None);
        // Forgotten after a quiet while.
        t.failed(ip, now + FORGET_AFTER);
        assert_eq!(t.wait(ip, now + FORGET_AFTER), None);
    }

    #[test]
    fn the_table_is_bounded() {
        let t = Throttle::default();
        let now = Instant::now();
        for k in 0..CAPACITY as u32 + 10 {
            t.failed(
                IpAddr::from(k.to_be_bytes()),
                now + Duration::from_millis(u64::from(k)),
            );
        }
        assert_eq!(t.lock().len(), CAPACITY);
    }
}
