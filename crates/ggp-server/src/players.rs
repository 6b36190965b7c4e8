//! Registered players: what a name and a URL must be, and the INFO rounds that keep their
//! status (the only thing sent to a registered URL outside a match, and it is GGP).

use std::sync::Arc;
use std::time::Duration;

use ggp_match::{PlayerUrl, ping};

use crate::error::Error;
use crate::state::Gamemaster;

/// The longest player name.
pub const MAX_NAME: usize = 64;

/// The longest URL.
pub const MAX_URL: usize = 512;

/// How long a player has to answer INFO.
const PING_TIMEOUT: Duration = Duration::from_secs(5);

/// Checks a player's name: 1 to 64 characters, no control characters, not the name of a
/// built-in player or `human` (those name seats).
pub fn check_name(name: &str) -> Result<(), Error> {
    if name.trim().is_empty() || name.trim() != name {
        return Err(Error::BadRequest(
            "a player's name cannot be empty, or begin or end with a space".into(),
        ));
    }
    if name.chars().count() > MAX_NAME {
        return Err(Error::BadRequest(format!(
            "a player's name has at most {MAX_NAME} characters"
        )));
    }
    if name.chars().any(char::is_control) {
        return Err(Error::BadRequest(
            "a player's name cannot contain control characters".into(),
        ));
    }
    if name.eq_ignore_ascii_case(crate::seat::HUMAN)
        || ggp_play::StrategyKind::parse(name).is_some()
    {
        return Err(Error::Conflict(format!(
            "`{name}` is the name of a built-in seat; choose another"
        )));
    }
    Ok(())
}

/// Checks a player's URL (`http://host:port`, a bare `host:port` getting `http://`) and
/// returns it as it will be contacted.
pub fn check_url(url: &str) -> Result<String, Error> {
    if url.len() > MAX_URL {
        return Err(Error::BadRequest(format!(
            "a player's URL has at most {MAX_URL} characters"
        )));
    }
    PlayerUrl::parse(url).map_err(|e| Error::BadRequest(e.to_string()))?;
    Ok(if url.contains("://") {
        url.to_string()
    } else {
        format!("http://{url}")
    })
}

/// Asks one player INFO and records what it said.
pub async fn check_player(gm: &Gamemaster, id: i64, url: &str) {
    let (status, info_name, detail, seen) = match ping(url, PING_TIMEOUT).await {
        Ok(Some(info)) => {
            let status = match info
                .status
                .as_deref()
                .map(str::to_ascii_lowercase)
                .as_deref()
            {
                Some("busy") => "busy",
                _ => "available",
            };
            (status, info.name, info.status, true)
        }
        Ok(None) => (
            "available",
            None,
            Some("it answered, but not with an INFO reply".to_string()),
            true,
        ),
        Err(e) => ("unreachable", None, Some(e.to_string()), false),
    };
    let _ = gm
        .db
        .set_player_status(id, status, info_name, detail, seen)
        .await;
}

/// Asks every registered player INFO, at once, every `ping_interval` (and when woken).
pub async fn ping_rounds(gm: Arc<Gamemaster>) {
    loop {
        if gm.stopping() {
            return;
        }
        if let Ok(players) = gm.db.players().await {
            let mut round = tokio::task::JoinSet::new();
            for p in players {
                let gm = gm.clone();
                round.spawn(async move { check_player(&gm, p.id, &p.url).await });
            }
            while round.join_next().await.is_some() {}
        }
        tokio::select! {
            () = tokio::time::sleep(gm.config.ping_interval) => {}
            () = gm.ping_now.notified() => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_urls_are_checked() {
        assert!(check_name("alice").is_ok());
        assert!(check_name("<script>alert(1)</script>").is_ok());
        for bad in ["", " a", "a\n", "random", "Human", &"x".repeat(65)] {
            assert!(check_name(bad).is_err(), "{bad:?}");
        }
        assert_eq!(
            check_url("127.0.0.1:9147").unwrap(),
            "http://127.0.0.1:9147"
        );
        assert!(check_url("https://example.org").is_err());
        assert!(check_url("javascript:alert(1)").is_err());
    }
}
