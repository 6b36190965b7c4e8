//! Ratings and standings from finished matches.
//!
//! Ratings are Weng-Lin's (the Bayesian approximation of online ranking, as in OpenSkill),
//! computed by the `skillratings` crate: every seated player is a team of one, ranked by its
//! goal value (higher is better, equal goals tie), so two-, three- and more-player games and
//! partial results all count. A rating is μ and σ (25 and 25/3 to start); leaderboards sort by
//! the conservative rating μ − 3σ. docs/ratings.md says which matches are not rated.

use std::collections::{BTreeMap, HashMap};

use serde::Serialize;
use skillratings::MultiTeamOutcome;
use skillratings::weng_lin::{WengLinConfig, WengLinRating, weng_lin_multi_team};

/// One finished match as ratings see it: the seated players in seat order (the manager's
/// GDL-II `random` seat left out), their goal values, and for each whether it failed in that
/// match (see [`failed`]).
pub struct MatchResult<'a> {
    pub game: &'a str,
    pub players: &'a [String],
    pub goals: &'a [u8],
    pub failed: &'a [bool],
}

/// A Weng-Lin rating.
#[derive(Clone, Copy, Debug, PartialEq, Serialize)]
pub struct Rating {
    pub mu: f64,
    pub sigma: f64,
}

impl Default for Rating {
    fn default() -> Rating {
        Rating::from(WengLinRating::new())
    }
}

impl From<WengLinRating> for Rating {
    fn from(r: WengLinRating) -> Rating {
        Rating {
            mu: r.rating,
            sigma: r.uncertainty,
        }
    }
}

impl From<Rating> for WengLinRating {
    fn from(r: Rating) -> WengLinRating {
        WengLinRating {
            rating: r.mu,
            uncertainty: r.sigma,
        }
    }
}

impl Rating {
    /// μ − 3σ: what leaderboards sort by.
    pub fn conservative(&self) -> f64 {
        self.mu - 3.0 * self.sigma
    }
}

/// Why a match changed no rating.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub enum Unrated {
    /// These players failed in it.
    Failed(Vec<String>),
    /// A puzzle: one seated player.
    OnePlayer,
    /// Self-play: this name in two seats.
    SamePlayerTwice(String),
    /// A person's seat (`human`): people share that name.
    Human,
    /// Goals missing for some seat.
    NoGoals,
}

/// The rule for "a player failed a match": its START failed (`start_error` not empty), or
/// more than half of its moves were errors (`errors`: its error at each step, empty when its
/// move stood). A match of no steps is judged by its START alone.
pub fn failed(start_error: &str, errors: &[&str]) -> bool {
    let bad = errors.iter().filter(|e| !e.is_empty()).count();
    !start_error.is_empty() || 2 * bad > errors.len()
}

/// The ratings from matches recorded one after the other: overall and per game.
#[derive(Default, Clone, Debug)]
pub struct Ratings {
    overall: HashMap<String, (Rating, usize)>,
    per_game: HashMap<String, HashMap<String, (Rating, usize)>>,
}

/// A line of a leaderboard.
#[derive(Clone, Debug, Serialize)]
pub struct Entry {
    pub player: String,
    pub rating: Rating,
    pub conservative: f64,
    /// Matches rated.
    pub rated: usize,
}

/// Why `m` is not rated, if it is not.
fn unrated(m: &MatchResult) -> Option<Unrated> {
    let failed: Vec<String> = m
        .players
        .iter()
        .zip(m.failed)
        .filter(|(_, f)| **f)
        .map(|(p, _)| p.clone())
        .collect();
    if !failed.is_empty() {
        return Some(Unrated::Failed(failed));
    }
    if m.players.len() < 2 {
        return Some(Unrated::OnePlayer);
    }
    if m.goals.len() != m.players.len() {
        return Some(Unrated::NoGoals);
    }
    if m.players
        .iter()
        .any(|p| p.eq_ignore_ascii_case(crate::seat::HUMAN))
    {
        return Some(Unrated::Human);
    }
    for (k, p) in m.players.iter().enumerate() {
        if m.players[..k].contains(p) {
            return Some(Unrated::SamePlayerTwice(p.clone()));
        }
    }
    None
}

/// Ranks from goals: 1 for the highest goal, equal goals the same rank.
fn ranks(goals: &[u8]) -> Vec<usize> {
    goals
        .iter()
        .map(|g| 1 + goals.iter().filter(|h| *h > g).count())
        .collect()
}

/// One Weng-Lin update of `table` by the match's players and ranks.
fn update(table: &mut HashMap<String, (Rating, usize)>, players: &[String], ranks: &[usize]) {
    let before: Vec<[WengLinRating; 1]> = players
        .iter()
        .map(|p| [table.get(p).map(|e| e.0).unwrap_or_default().into()])
        .collect();
    let teams: Vec<(&[WengLinRating], MultiTeamOutcome)> = before
        .iter()
        .zip(ranks)
        .map(|(r, &k)| (&r[..], MultiTeamOutcome::new(k)))
        .collect();
    let after = weng_lin_multi_team(&teams, &WengLinConfig::new());
    for (p, r) in players.iter().zip(after) {
        let entry = table.entry(p.clone()).or_default();
        entry.0 = r[0].into();
        entry.1 += 1;
    }
}

impl Ratings {
    pub fn new() -> Ratings {
        Ratings::default()
    }

    /// Rates one match, in the order matches finished. Nothing changes (and why is said) when
    /// a player failed, when it has one seated player, when a name is in two seats, when a
    /// seat is `human`, or when goals are missing. Updates the game's ratings and the overall
    /// ones.
    pub fn record(&mut self, m: &MatchResult) -> Option<Unrated> {
        if let Some(why) = unrated(m) {
            return Some(why);
        }
        let ranks = ranks(m.goals);
        update(&mut self.overall, m.players, &ranks);
        update(
            self.per_game.entry(m.game.to_string()).or_default(),
            m.players,
            &ranks,
        );
        None
    }

    pub fn overall(&self, player: &str) -> Option<Rating> {
        self.overall.get(player).map(|e| e.0)
    }

    pub fn per_game(&self, game: &str, player: &str) -> Option<Rating> {
        self.per_game.get(game)?.get(player).map(|e| e.0)
    }

    /// A player's ratings per game, by game.
    pub fn player(&self, player: &str) -> BTreeMap<&str, Rating> {
        self.per_game
            .iter()
            .filter_map(|(g, t)| Some((g.as_str(), t.get(player)?.0)))
            .collect()
    }

    /// Best first by conservative rating (ties: name); `game: None` is overall.
    pub fn leaderboard(&self, game: Option<&str>) -> Vec<Entry> {
        let table = match game {
            None => Some(&self.overall),
            Some(g) => self.per_game.get(g),
        };
        let mut out: Vec<Entry> = table
            .into_iter()
            .flatten()
            .map(|(p, (r, n))| Entry {
                player: p.clone(),
                rating: *r,
                conservative: r.conservative(),
                rated: *n,
            })
            .collect();
        out.sort_by(|a, b| {
            b.conservative
                .total_cmp(&a.conservative)
                .then_with(|| a.player.cmp(&b.player))
        });
        out
    }
}

/// A player's line of a tournament's standings.
#[derive(Clone, Debug, Serialize)]
pub struct Standing {
    pub player: String,
    /// Finished matches played (failed or not).
    pub played: usize,
    /// Mean goal over them.
    pub mean: f64,
    /// Matches it failed.
    pub failed: usize,
    /// Its rating from these matches only.
    pub rating: Rating,
    pub conservative: f64,
    pub per_game: Vec<GameStanding>,
}

#[derive(Clone, Debug, Serialize)]
pub struct GameStanding {
    pub game: String,
    pub played: usize,
    pub mean: f64,
}

/// A tournament's standings from its finished matches (in the order they finished). Best
/// first: mean goal, then conservative rating, then name.
pub fn standings(results: &[MatchResult]) -> Vec<Standing> {
    #[derive(Default)]
    struct Tally {
        played: usize,
        goals: u64,
        failed: usize,
        games: BTreeMap<String, (usize, u64)>,
    }
    let mut tallies: BTreeMap<String, Tally> = BTreeMap::new();
    let mut ratings = Ratings::new();
    for m in results {
        for (k, p) in m.players.iter().enumerate() {
            let t = tallies.entry(p.clone()).or_default();
            let goal = u64::from(m.goals.get(k).copied().unwrap_or(0));
            t.played += 1;
            t.goals += goal;
            t.failed += usize::from(m.failed.get(k).copied().unwrap_or(false));
            let g = t.games.entry(m.game.to_string()).or_default();
            g.0 += 1;
            g.1 += goal;
        }
        ratings.record(m);
    }
    let mut out: Vec<Standing> = tallies
        .into_iter()
        .map(|(player, t)| {
            let rating = ratings.overall(&player).unwrap_or_default();
            Standing {
                mean: t.goals as f64 / t.played.max(1) as f64,
                played: t.played,
                failed: t.failed,
                conservative: rating.conservative(),
                rating,
                per_game: t
                    .games
                    .into_iter()
                    .map(|(game, (n, goals))| GameStanding {
                        game,
                        played: n,
                        mean: goals as f64 / n.max(1) as f64,
                    })
                    .collect(),
                player,
            }
        })
        .collect();
    out.sort_by(|a, b| {
        b.mean
            .total_cmp(&a.mean)
            .then_with(|| b.conservative.total_cmp(&a.conservative))
            .then_with(|| a.player.cmp(&b.player))
    });
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Values worked by hand from Weng & Lin (2011), Algorithm 1 (Bradley-Terry, full pairs),
    // with β = 25/6, a start of μ = 25, σ = 25/3 and γ = σ_i / c_iq:
    //   c² = σ² + σ² + 2β² = 2·625/9 + 2·625/36 = 6250/36, so c = 25·√10 / 6 and σ²/c² = 0.4;
    //   between equal ratings p = 1/2, so a win adds δ = σ²/c · (1 − ½) = 5√10/6 ≈ 2.63523,
    //   a loss takes as much, a tie nothing; every opponent adds η = √0.4 · 0.4 · ¼ = √0.4/10
    //   to Δ and σ' = σ·√(1 − Δ).
    const WIN: f64 = 2.635_231_383_473_65; // 5·√10 / 6
    const TOL: f64 = 1e-9;

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() < TOL
    }

    fn names(ns: &[&str]) -> Vec<String> {
        ns.iter().map(|s| s.to_string()).collect()
    }

    fn rate(r: &mut Ratings, game: &str, players: &[String], goals: &[u8]) -> Option<Unrated> {
        let failed = vec![false; players.len()];
        r.record(&MatchResult {
            game,
            players,
            goals,
            failed: &failed,
        })
    }

    #[test]
    fn hand_worked_values_are_those_of_the_paper() {
        assert!(close(WIN, 5.0 * 10f64.sqrt() / 6.0));
        let sigma_one = 25.0 / 3.0 * (1.0 - 0.4f64.sqrt() / 10.0).sqrt();
        let sigma_two = 25.0 / 3.0 * (1.0 - 2.0 * 0.4f64.sqrt() / 10.0).sqrt();
        assert!(close(sigma_one, 8.065_506_316_323_548));
        assert!(close(sigma_two, 7.788_474_807_872_567));
    }

    #[test]
    fn two_players_a_win_and_a_draw() {
        let sigma = 8.065_506_316_323_548;
        let mut r = Ratings::new();
        let ab = names(&["a", "b"]);
        assert_eq!(rate(&mut r, "g", &ab, &[100, 0]), None);
        let (a, b) = (r.overall("a").unwrap(), r.overall("b").unwrap());
        assert!(close(a.mu, 25.0 + WIN) && close(a.sigma, sigma), "{a:?}");
        assert!(close(b.mu, 25.0 - WIN) && close(b.sigma, sigma), "{b:?}");
        assert_eq!(r.per_game("g", "a"), Some(a));

        let mut r = Ratings::new();
        assert_eq!(rate(&mut r, "g", &ab, &[50, 50]), None);
        for p in ["a", "b"] {
            let x = r.overall(p).unwrap();
            assert!(close(x.mu, 25.0) && close(x.sigma, sigma), "{x:?}");
        }
    }

    #[test]
    fn two_players_a_second_match_from_unequal_ratings() {
        // After a beat b (above), b beats a. By hand: σ² = 65.05239, c² = 2σ² + 2β²
        // = 164.8270, c = 12.83850; p(a) = e^(μa/c) / (e^(μa/c) + e^(μb/c)) with μa − μb =
        // 2·WIN, so p(a) = 1 / (1 + e^(−5.27046/12.83850)) = 0.601213; a's loss moves it by
        // σ²/c · (0 − p) = 5.06698 · (−0.601213) = −3.04633 to 24.58890; η = (σ/c)³ p (1 − p)
        // with σ/c = 0.628228 gives 0.0594459, σ' = σ·√(1 − η) = 7.82210.
        let mut r = Ratings::new();
        let ab = names(&["a", "b"]);
        rate(&mut r, "g", &ab, &[100, 0]);
        rate(&mut r, "g", &ab, &[0, 100]);
        let (a, b) = (r.overall("a").unwrap(), r.overall("b").unwrap());
        assert!((a.mu - 24.588_899_826).abs() < 1e-6, "{a:?}");
        assert!((b.mu - 25.411_100_174).abs() < 1e-6, "{b:?}");
        assert!((a.sigma - 7.822_102_957).abs() < 1e-6, "{a:?}");
        assert!((b.sigma - 7.822_102_957).abs() < 1e-6, "{b:?}");
        // The earlier winner loses more than the earlier loser gained (it was expected to win).
        assert!(25.0 + WIN - a.mu > WIN);
    }

    #[test]
    fn three_players_ranked_by_goals_and_with_a_tie() {
        let sigma = 7.788_474_807_872_567;
        let abc = names(&["a", "b", "c"]);
        let mut r = Ratings::new();
        // 100 / 50 / 0: a beats two, b beats one and loses to one, c loses to two.
        assert_eq!(rate(&mut r, "g", &abc, &[100, 50, 0]), None);
        let mus: Vec<f64> = abc.iter().map(|p| r.overall(p).unwrap().mu).collect();
        assert!(close(mus[0], 25.0 + 2.0 * WIN), "{mus:?}");
        assert!(close(mus[1], 25.0), "{mus:?}");
        assert!(close(mus[2], 25.0 - 2.0 * WIN), "{mus:?}");
        for p in &abc {
            assert!(close(r.overall(p).unwrap().sigma, sigma));
        }

        // 70 / 70 / 10: a and b tie with each other (nothing) and beat c.
        let mut r = Ratings::new();
        assert_eq!(rate(&mut r, "g", &abc, &[70, 70, 10]), None);
        let mus: Vec<f64> = abc.iter().map(|p| r.overall(p).unwrap().mu).collect();
        assert!(
            close(mus[0], 25.0 + WIN) && close(mus[1], 25.0 + WIN),
            "{mus:?}"
        );
        assert!(close(mus[2], 25.0 - 2.0 * WIN), "{mus:?}");
    }

    #[test]
    fn ranks_follow_goals_with_ties_sharing_the_best_rank() {
        assert_eq!(ranks(&[100, 50, 0]), vec![1, 2, 3]);
        assert_eq!(ranks(&[0, 100, 0]), vec![2, 1, 2]);
        assert_eq!(ranks(&[50, 50]), vec![1, 1]);
        assert_eq!(ranks(&[30, 70, 70, 10]), vec![3, 1, 1, 4]);
    }

    #[test]
    fn per_game_and_overall_are_kept_apart() {
        let mut r = Ratings::new();
        let ab = names(&["a", "b"]);
        rate(&mut r, "chess", &ab, &[100, 0]);
        rate(&mut r, "go", &ab, &[0, 100]);
        let chess = r.per_game("chess", "a").unwrap();
        assert!(close(chess.mu, 25.0 + WIN));
        let go = r.per_game("go", "a").unwrap();
        assert!(close(go.mu, 25.0 - WIN));
        // Overall saw both matches, in order: the second match of the test above.
        assert!((r.overall("a").unwrap().mu - 24.588_899_826).abs() < 1e-6);
        assert_eq!(r.per_game("checkers", "a"), None);
        let board = r.leaderboard(Some("go"));
        assert_eq!(board[0].player, "b");
        assert_eq!(board[0].rated, 1);
        assert_eq!(r.leaderboard(None)[0].rated, 2);
        assert!(r.leaderboard(Some("checkers")).is_empty());
    }

    #[test]
    fn matches_that_rate_nobody_say_why() {
        let mut r = Ratings::new();
        let ab = names(&["a", "b"]);
        let failed = [false, true];
        let m = MatchResult {
            game: "g",
            players: &ab,
            goals: &[0, 100],
            failed: &failed,
        };
        assert_eq!(r.record(&m), Some(Unrated::Failed(vec!["b".into()])));
        assert_eq!(
            rate(&mut r, "g", &names(&["a"]), &[100]),
            Some(Unrated::OnePlayer)
        );
        assert_eq!(
            rate(&mut r, "g", &names(&["a", "a"]), &[100, 0]),
            Some(Unrated::SamePlayerTwice("a".into()))
        );
        assert_eq!(
            rate(&mut r, "g", &names(&["a", "human"]), &[100, 0]),
            Some(Unrated::Human)
        );
        assert_eq!(rate(&mut r, "g", &ab, &[100]), Some(Unrated::NoGoals));
        assert!(r.leaderboard(None).is_empty());
    }

    #[test]
    fn a_player_fails_on_its_start_or_on_most_of_its_moves() {
        assert!(failed("timeout", &[]));
        assert!(!failed("", &[]));
        assert!(!failed("", &["", "illegal", ""]));
        assert!(!failed("", &["", "illegal"]));
        assert!(failed("", &["timeout", "illegal", ""]));
        assert!(failed("", &["timeout"]));
    }

    #[test]
    fn standings_count_every_match_and_rate_the_rated_ones() {
        let ab = names(&["a", "b"]);
        let ba = names(&["b", "a"]);
        let ok = [false, false];
        let results = [
            MatchResult {
                game: "g",
                players: &ab,
                goals: &[100, 0],
                failed: &ok,
            },
            MatchResult {
                game: "h",
                players: &ba,
                goals: &[50, 50],
                failed: &ok,
            },
            MatchResult {
                game: "g",
                players: &ba,
                goals: &[100, 0],
                failed: &[true, false],
            },
        ];
        let s = standings(&results);
        assert_eq!(s.len(), 2);
        // b: 0 + 50 + 100 over 3 = 50; a: 100 + 50 + 0 over 3 = 50; tie on the mean, then a's
        // rating (one win, one draw; the failed match is not rated) is the better.
        assert_eq!(s[0].player, "a");
        assert_eq!((s[0].played, s[0].failed), (3, 0));
        assert_eq!((s[1].played, s[1].failed), (3, 1));
        assert!(close(s[0].mean, 50.0) && close(s[1].mean, 50.0));
        let mut check = Ratings::new();
        rate(&mut check, "g", &ab, &[100, 0]);
        rate(&mut check, "h", &ba, &[50, 50]);
        assert_eq!(s[0].rating, check.overall("a").unwrap());
        assert_eq!(s[1].rating, check.overall("b").unwrap());
        let g: Vec<(String, usize, f64)> = s[0]
            .per_game
            .iter()
            .map(|x| (x.game.clone(), x.played, x.mean))
            .collect();
        assert_eq!(g, vec![("g".into(), 2, 50.0), ("h".into(), 1, 50.0)]);
    }

    proptest! {
        /// Whatever the goals: a player ranked first never loses rating, one ranked last
        /// never gains, nobody's uncertainty grows, and equal players with equal goals move
        /// alike.
        #[test]
        fn updates_move_the_right_way(goals in proptest::collection::vec(0u8..=100, 2..6),
                                      warmup in proptest::collection::vec(0u8..=100, 0..4)) {
            let players: Vec<String> = (0..goals.len()).map(|k| format!("p{k}")).collect();
            let mut r = Ratings::new();
            // Some history first, the same for everyone, so ratings start equal but not default.
            for _ in &warmup {
                let zeros = vec![0; players.len()];
                rate(&mut r, "g", &players, &zeros);
            }
            let before: Vec<Rating> =
                players.iter().map(|p| r.overall(p).unwrap_or_default()).collect();
            prop_assert_eq!(rate(&mut r, "g", &players, &goals), None);
            let best = *goals.iter().max().unwrap();
            let worst = *goals.iter().min().unwrap();
            for (k, p) in players.iter().enumerate() {
                let after = r.overall(p).unwrap();
                prop_assert!(after.sigma <= before[k].sigma + 1e-12);
                if goals[k] == best {
                    prop_assert!(after.mu >= before[k].mu - 1e-12);
                }
                if goals[k] == worst {
                    prop_assert!(after.mu <= before[k].mu + 1e-12);
                }
                for (j, q) in players.iter().enumerate() {
                    if goals[j] == goals[k] {
                        prop_assert!((r.overall(q).unwrap().mu - after.mu).abs() < 1e-9);
                    }
                }
            }
        }
    }
}
