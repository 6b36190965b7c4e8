//! Who may write. Three kinds of token, each 256 random bits written in hex: the admin token
//! (anything), a registered player's owner token (edit or remove that player), and a human
//! seat's token (that seat's moves). Only their SHA-256 is kept (the admin token's in memory,
//! the others in the database), and each is shown once, when it is made.
//!
//! The API takes a token as `Authorization: Bearer <token>`. Pages take it once, on the login
//! form, and keep a session in an `HttpOnly`, `SameSite=Strict` cookie; every form a session
//! sends carries the session's CSRF token, and a form whose `Origin` is another site is
//! refused.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use axum::http::{HeaderMap, header};
use sha2::{Digest, Sha256};

use crate::db::Db;
use crate::error::Error;

/// How long a page session lasts without use.
const SESSION_LIFE: Duration = Duration::from_secs(7 * 24 * 3600);

/// The cookie of a page session.
pub const COOKIE: &str = "ggp_session";

/// A new token: 256 bits from the operating system's random source, in hex.
pub fn new_token() -> String {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).expect("the operating system gives random bytes");
    hex(&bytes)
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The SHA-256 of a token, in hex: what is kept of it.
pub fn hash(token: &str) -> String {
    hex(&Sha256::digest(token.as_bytes()))
}

/// Compares two strings in time that depends only on their lengths.
pub fn same(a: &str, b: &str) -> bool {
    a.len() == b.len()
        && a.bytes()
            .zip(b.bytes())
            .fold(0u8, |acc, (x, y)| acc | (x ^ y))
            == 0
}

/// Who a token or a session is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Who {
    Admin,
    /// The owner of the registered player with this id and name.
    Owner {
        id: i64,
        name: String,
    },
}

impl Who {
    pub fn is_admin(&self) -> bool {
        *self == Who::Admin
    }

    /// Whether this may see what the last INFO to the player with this id said, or how it
    /// failed (the admin and the player's owner: to anyone else, a registered URL's answers
    /// would map the server's network).
    pub fn may_see_detail(&self, player: i64) -> bool {
        self.may_edit(player)
    }

    /// Whether this may edit or remove the player with this id.
    pub fn may_edit(&self, player: i64) -> bool {
        match self {
            Who::Admin => true,
            Who::Owner { id, .. } => *id == player,
        }
    }
}

struct Session {
    who: Who,
    csrf: String,
    expires: Instant,
}

/// The admin token's hash and the page sessions.
pub struct Auth {
    admin: String,
    sessions: Mutex<HashMap<String, Session>>,
}

impl Auth {
    pub fn new(admin_token: &str) -> Auth {
        Auth {
            admin: hash(admin_token),
            sessions: Mutex::new(HashMap::new()),
        }
    }

    /// Who a token is: the admin, or the owner of a registered player.
    pub async fn token(&self, db: &Db, token: &str) -> Result<Option<Who>, Error> {
        let h = hash(token);
        if same(&h, &self.admin) {
            return Ok(Some(Who::Admin));
        }
        Ok(db
            .player_by_token(&h)
            .await?
            .map(|(id, name)| Who::Owner { id, name }))
    }

    /// Who the request's bearer token is; 401 without one, or with one the server does not
    /// know.
    pub async fn bearer(&self, db: &Db, headers: &HeaderMap) -> Result<Who, Error> {
        let token = bearer_token(headers).ok_or_else(|| {
            Error::Unauthorized(
                "this needs a token: `Authorization: Bearer <token>` (the admin token, or a player's owner token for its player)".into(),
            )
        })?;
        self.token(db, token)
            .await?
            .ok_or_else(|| Error::Unauthorized("the token is not one this server knows".into()))
    }

    /// Starts a page session; returns its cookie value.
    pub fn login(&self, who: Who) -> String {
        let id = new_token();
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        sessions.retain(|_, s| s.expires > now);
        sessions.insert(
            hash(&id),
            Session {
                who,
                csrf: new_token(),
                expires: now + SESSION_LIFE,
            },
        );
        id
    }

    pub fn logout(&self, headers: &HeaderMap) {
        if let Some(id) = cookie(headers, COOKIE) {
            self.sessions
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&hash(id));
        }
    }

    /// The request's page session: who, and its CSRF token.
    pub fn session(&self, headers: &HeaderMap) -> Option<(Who, String)> {
        let id = cookie(headers, COOKIE)?;
        let mut sessions = self.sessions.lock().unwrap_or_else(|p| p.into_inner());
        let now = Instant::now();
        let session = sessions.get_mut(&hash(id))?;
        if session.expires <= now {
            return None;
        }
        session.expires = now + SESSION_LIFE;
        Some((session.who.clone(), session.csrf.clone()))
    }

    /// Drops the sessions of a removed player's owner.
    pub fn forget_owner(&self, player: i64) {
        self.sessions
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .retain(|_, s| !matches!(s.who, Who::Owner { id, .. } if id == player));
    }
}

/// The token of `Authorization: Bearer <token>`.
pub fn bearer_token(headers: &HeaderMap) -> Option<&str> {
    let value = headers.get(header::AUTHORIZATION)?.to_str().ok()?;
    let (scheme, token) = value.trim().split_once(' ')?;
    scheme
        .eq_ignore_ascii_case("bearer")
        .then(|| token.trim())
        .filter(|t| !t.is_empty())
}

/// A cookie's value.
pub fn cookie<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// Whether the request comes from a page of this site: no `Origin`, or one whose host is the
/// request's `Host`.
pub fn same_origin(headers: &HeaderMap) -> bool {
    let Some(origin) = headers.get(header::ORIGIN) else {
        return true;
    };
    let (Ok(origin), Some(host)) = (
        origin.to_str(),
        headers.get(header::HOST).and_then(|h| h.to_str().ok()),
    ) else {
        return false;
    };
    origin
        .split_once("://")
        .is_some_and(|(_, rest)| rest.eq_ignore_ascii_case(host))
}

/// Who is looking at a page, and the CSRF token their forms carry.
#[derive(Clone, Debug, Default)]
pub struct Viewer {
    pub who: Option<Who>,
    pub csrf: String,
}

impl Viewer {
    /// Who is looking, from the page session's cookie among `headers` (nobody without one).
    pub fn of(auth: &Auth, headers: &HeaderMap) -> Viewer {
        match auth.session(headers) {
            Some((who, csrf)) => Viewer {
                who: Some(who),
                csrf,
            },
            None => Viewer::default(),
        }
    }

    pub fn is_admin(&self) -> bool {
        self.who.as_ref().is_some_and(Who::is_admin)
    }

    /// Checks a form sent by this viewer: a session, its CSRF token, from this site.
    pub fn check_form(&self, headers: &HeaderMap, csrf: &str) -> Result<Who, Error> {
        let who = self.who.clone().ok_or_else(|| {
            Error::Unauthorized(
                "log in first (with the admin token or a player's owner token)".into(),
            )
        })?;
        if !same_origin(headers) {
            return Err(Error::Forbidden(
                "this form was sent from another site".into(),
            ));
        }
        if !same(csrf, &self.csrf) {
            return Err(Error::Forbidden(
                "this form is out of date (its CSRF token does not match your session): reload the page and send it again".into(),
            ));
        }
        Ok(who)
    }

    /// As [`Viewer::check_form`], for the admin only.
    pub fn check_admin_form(&self, headers: &HeaderMap, csrf: &str) -> Result<(), Error> {
        match self.check_form(headers, csrf)? {
            Who::Admin => Ok(()),
            Who::Owner { .. } => Err(Error::Forbidden(
                "only the admin may do this; you are logged in with a player's owner token".into(),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_long_random_and_kept_hashed() {
        let a = new_token();
        assert_eq!(a.len(), 64);
        assert_ne!(a, new_token());
        assert_eq!(hash("abc").len(), 64);
        assert_eq!(
            hash("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(same("abc", "abc") && !same("abc", "abd") && !same("abc", "ab"));
    }

    #[test]
    fn bearer_tokens_and_cookies_are_read() {
        let mut h = HeaderMap::new();
        h.insert(header::AUTHORIZATION, "Bearer  xyz ".parse().unwrap());
        h.insert(header::COOKIE, "a=1; ggp_session=s3; b=2".parse().unwrap());
        assert_eq!(bearer_token(&h), Some("xyz"));
        assert_eq!(cookie(&h, COOKIE), Some("s3"));
        h.insert(header::AUTHORIZATION, "Basic xyz".parse().unwrap());
        assert_eq!(bearer_token(&h), None);
    }

    #[test]
    fn forms_from_another_site_are_refused() {
        let mut h = HeaderMap::new();
        h.insert(header::HOST, "127.0.0.1:9000".parse().unwrap());
        assert!(same_origin(&h));
        h.insert(header::ORIGIN, "http://127.0.0.1:9000".parse().unwrap());
        assert!(same_origin(&h));
        h.insert(header::ORIGIN, "http://evil.example".parse().unwrap());
        assert!(!same_origin(&h));
        let viewer = Viewer {
            who: Some(Who::Admin),
            csrf: "t".into(),
        };
        assert!(matches!(
            viewer.check_form(&h, "t"),
            Err(Error::Forbidden(_))
        ));
        h.remove(header::ORIGIN);
        assert!(viewer.check_form(&h, "t").is_ok());
        assert!(matches!(
            viewer.check_form(&h, "u"),
            Err(Error::Forbidden(_))
        ));
        assert!(matches!(
            Viewer::default().check_form(&h, ""),
            Err(Error::Unauthorized(_))
        ));
    }
}
