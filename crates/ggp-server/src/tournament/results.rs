//! The results of tournaments' matches: what each player scored, standings and ratings.

use std::collections::HashMap;

use ggp_match::sql::{self};
use serde::Serialize;

use crate::db::{Db, from_json, sql};
use crate::error::Error;

/// A finished served match, as standings and ratings see it: its seated players (not the
/// manager's GDL-II `random` seat) in seat order, their goals, and whether each failed.
#[derive(Clone, Debug, Serialize)]
pub struct Played {
    #[serde(rename = "matchId")]
    pub match_id: String,
    pub game: String,
    pub players: Vec<String>,
    pub goals: Vec<u8>,
    pub failed: Vec<bool>,
    /// When it ended (milliseconds since the epoch).
    pub ended: i64,
}

impl Played {
    /// Whether `player` (its name in any case) failed in this match.
    pub fn failed_by(&self, player: &str) -> bool {
        self.players
            .iter()
            .zip(&self.failed)
            .any(|(name, &failed)| failed && name.eq_ignore_ascii_case(player))
    }

    pub fn result(&self) -> crate::ratings::MatchResult<'_> {
        crate::ratings::MatchResult {
            game: &self.game,
            players: &self.players,
            goals: &self.goals,
            failed: &self.failed,
        }
    }
}

/// The finished served matches, in the order they ended: a tournament's (every attempt that
/// finished), or with `None` every served match's.
pub async fn played(db: &Db, tournament: Option<i64>) -> Result<Vec<Played>, Error> {
    db.read(move |db| {
        let conn = db.connection();
        let mut st = conn
            .prepare(
                "SELECT m.id, m.match_id, g.key, m.goal_values, m.start_errors, m.end_time
                 FROM served_matches s
                 JOIN matches m USING (match_id)
                 JOIN game_versions v ON v.id = s.game_version_ref
                 JOIN games g ON g.id = v.game_ref
                 LEFT JOIN scheduled q ON q.id = s.scheduled_ref
                 WHERE m.status = 'finished' AND ($1 IS NULL OR q.tournament_ref = $1)
                 ORDER BY m.end_time, m.id",
            )
            .map_err(sql)?;
        let rows = st
            .query_map([tournament], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    from_json::<Vec<u8>>(&r.get::<_, String>(3)?),
                    from_json::<Vec<String>>(&r.get::<_, String>(4)?),
                    r.get::<_, Option<i64>>(5)?.unwrap_or_default(),
                ))
            })
            .map_err(sql)?
            .collect::<sql::Result<Vec<_>>>()
            .map_err(sql)?;
        // The seats and the steps' errors of all of them, in two queries (not two per match:
        // a tournament's page asks for its standings every few seconds).
        let filter = "FROM served_matches s
             JOIN matches m USING (match_id)
             LEFT JOIN scheduled q ON q.id = s.scheduled_ref
             WHERE m.status = 'finished' AND ($1 IS NULL OR q.tournament_ref = $1)";
        let mut seats: HashMap<String, Vec<(usize, String)>> = HashMap::new();
        for seat in conn
            .prepare(&format!(
                "SELECT t.match_id, t.seat, t.name FROM seats t
                 WHERE t.match_id IN (SELECT s.match_id {filter}) ORDER BY t.match_id, t.seat"
            ))
            .map_err(sql)?
            .query_map([tournament], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, i64>(1)? as usize,
                    r.get::<_, String>(2)?,
                ))
            })
            .map_err(sql)?
        {
            let (match_id, k, name) = seat.map_err(sql)?;
            seats.entry(match_id).or_default().push((k, name));
        }
        let mut errors_of: HashMap<i64, Vec<Vec<String>>> = HashMap::new();
        for step in conn
            .prepare(&format!(
                "SELECT t.match_ref, t.errors FROM steps t
                 WHERE t.match_ref IN (SELECT m.id {filter}) ORDER BY t.match_ref, t.step"
            ))
            .map_err(sql)?
            .query_map([tournament], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    from_json::<Vec<String>>(&r.get::<_, String>(1)?),
                ))
            })
            .map_err(sql)?
        {
            let (row, errors) = step.map_err(sql)?;
            errors_of.entry(row).or_default().push(errors);
        }
        let mut out = Vec::with_capacity(rows.len());
        for (row, match_id, game, goals, start_errors, ended) in rows {
            let seats = seats.remove(&match_id).unwrap_or_default();
            let errors = errors_of.remove(&row).unwrap_or_default();
            let mut players = Vec::new();
            let mut seat_goals = Vec::new();
            let mut failed = Vec::new();
            for (k, name) in seats {
                let start = start_errors.get(k).map_or("", String::as_str);
                let step_errors: Vec<&str> = errors
                    .iter()
                    .map(|e| e.get(k).map_or("", String::as_str))
                    .collect();
                players.push(name);
                seat_goals.push(goals.get(k).copied().unwrap_or(0));
                failed.push(crate::ratings::failed(start, &step_errors));
            }
            out.push(Played {
                match_id,
                game,
                players,
                goals: seat_goals,
                failed,
                ended,
            });
        }
        Ok(out)
    })
    .await
}

/// A tournament's standings from its finished matches.
pub async fn standings(db: &Db, id: i64) -> Result<Vec<crate::ratings::Standing>, Error> {
    let played = played(db, Some(id)).await?;
    let results: Vec<_> = played.iter().map(Played::result).collect();
    Ok(crate::ratings::standings(&results))
}

/// The ratings from every finished served match, in the order they ended.
pub async fn ratings(db: &Db) -> Result<crate::ratings::Ratings, Error> {
    Ok(rate(&played(db, None).await?))
}

/// The ratings from these finished matches, in their order.
pub fn rate(played: &[Played]) -> crate::ratings::Ratings {
    let mut ratings = crate::ratings::Ratings::new();
    for p in played {
        ratings.record(&p.result());
    }
    ratings
}
