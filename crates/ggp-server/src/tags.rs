//! The tags a person searches the games by, made from what the server finds (the version's
//! `traits`, its engine, its roles) and a search over them.
//!
//! A tag is derived, never typed in: the number of roles, whether the roles move in turn or
//! at once, GDL-II, GDL-III, the board's size, the engine that plays it, how long a random match lasts,
//! and whether the game is featured (one of the project's own: the first `--games` directory).

use std::fmt;

use crate::db::{GameSummary, Version};
use crate::traits::Turns;
use crate::verdict::Verdict;

/// How long a random match lasts, in steps.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Length {
    /// 20 steps or fewer.
    Short,
    /// 21 to 80.
    Medium,
    /// More than 80, or no random match ended.
    Long,
}

impl Length {
    pub fn of(steps: Option<f64>) -> Length {
        match steps {
            Some(s) if s <= 20.0 => Length::Short,
            Some(s) if s <= 80.0 => Length::Medium,
            _ => Length::Long,
        }
    }
}

/// A tag of a game.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Tag {
    Featured,
    Roles(usize),
    InTurn,
    Simultaneous,
    Gdl2,
    Gdl3,
    Board { columns: usize, rows: usize },
    Fast,
    Reference,
    Unplayable,
    Length(Length),
}

impl Tag {
    /// The tags of a game: its latest version's, and whether it is featured.
    pub fn of(game: &GameSummary) -> Vec<Tag> {
        let mut tags = Tag::of_version(&game.latest);
        if game.featured {
            tags.insert(0, Tag::Featured);
        }
        tags
    }

    /// The tags of a version (those of its traits once it is analysed).
    pub fn of_version(v: &Version) -> Vec<Tag> {
        let mut tags = Vec::new();
        tags.push(Tag::Roles(v.roles.len()));
        if let Some(traits) = &v.traits {
            match traits.turns {
                Some(Turns::InTurn) => tags.push(Tag::InTurn),
                Some(Turns::Simultaneous) => tags.push(Tag::Simultaneous),
                None => {}
            }
            if traits.gdl2 {
                tags.push(Tag::Gdl2);
            }
            if traits.gdl3 {
                tags.push(Tag::Gdl3);
            }
            if let Some((columns, rows)) = traits.board {
                tags.push(Tag::Board { columns, rows });
            }
        }
        match &v.engine {
            Some(Verdict::Fast) => tags.push(Tag::Fast),
            Some(Verdict::Reference(_)) => tags.push(Tag::Reference),
            Some(Verdict::Unplayable(_)) => tags.push(Tag::Unplayable),
            None => {}
        }
        if let (Some(traits), Some(Verdict::Fast | Verdict::Reference(_))) = (&v.traits, &v.engine)
        {
            tags.push(Tag::Length(Length::of(traits.steps)));
        }
        tags
    }

    /// The tag as a query parameter spells it (`2-roles`, `simultaneous`, `board-8x8`).
    pub fn slug(&self) -> String {
        match self {
            Tag::Featured => "featured".into(),
            Tag::Roles(1) => "1-role".into(),
            Tag::Roles(n) => format!("{n}-roles"),
            Tag::InTurn => "in-turn".into(),
            Tag::Simultaneous => "simultaneous".into(),
            Tag::Gdl2 => "gdl-ii".into(),
            Tag::Gdl3 => "gdl-iii".into(),
            Tag::Board { columns, rows } => format!("board-{columns}x{rows}"),
            Tag::Fast => "fast".into(),
            Tag::Reference => "reference".into(),
            Tag::Unplayable => "unplayable".into(),
            Tag::Length(Length::Short) => "short".into(),
            Tag::Length(Length::Medium) => "medium".into(),
            Tag::Length(Length::Long) => "long".into(),
        }
    }

    /// The tag a slug spells, if any.
    pub fn parse(slug: &str) -> Option<Tag> {
        let simple = [
            Tag::Featured,
            Tag::InTurn,
            Tag::Simultaneous,
            Tag::Gdl2,
            Tag::Gdl3,
            Tag::Fast,
            Tag::Reference,
            Tag::Unplayable,
            Tag::Length(Length::Short),
            Tag::Length(Length::Medium),
            Tag::Length(Length::Long),
        ];
        if let Some(tag) = simple.into_iter().find(|t| t.slug() == slug) {
            return Some(tag);
        }
        if slug == "1-role" {
            return Some(Tag::Roles(1));
        }
        if let Some(n) = slug.strip_suffix("-roles") {
            return n.parse().ok().filter(|&n| n > 1).map(Tag::Roles);
        }
        let (columns, rows) = slug.strip_prefix("board-")?.split_once('x')?;
        Some(Tag::Board {
            columns: columns.parse().ok()?,
            rows: rows.parse().ok()?,
        })
    }

    /// What the tag means, in a few words (its title on the page).
    pub fn meaning(&self) -> &'static str {
        match self {
            Tag::Featured => "one of the project's own games",
            Tag::Roles(_) => "the number of roles",
            Tag::InTurn => "at most one role has a choice in each state: the roles move in turn",
            Tag::Simultaneous => "two roles or more choose at once",
            Tag::Gdl2 => "GDL-II: players see only their percepts (sees) and chance moves (random)",
            Tag::Gdl3 => "GDL-III: the rules depend on what the players know (knows)",
            Tag::Board { .. } => "the board drawn for it: columns × rows",
            Tag::Fast => "the fast engine compiles it",
            Tag::Reference => "the reference engine plays it (the fast engine does not compile it)",
            Tag::Unplayable => "no engine plays it within a match's budgets",
            Tag::Length(Length::Short) => "a random match lasts 20 steps or fewer",
            Tag::Length(Length::Medium) => "a random match lasts 21 to 80 steps",
            Tag::Length(Length::Long) => "a random match lasts more than 80 steps",
        }
    }
}

impl fmt::Display for Tag {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Tag::Featured => f.write_str("featured"),
            Tag::Roles(1) => f.write_str("1 role"),
            Tag::Roles(n) => write!(f, "{n} roles"),
            Tag::InTurn => f.write_str("in turn"),
            Tag::Simultaneous => f.write_str("simultaneous"),
            Tag::Gdl2 => f.write_str("GDL-II"),
            Tag::Gdl3 => f.write_str("GDL-III"),
            Tag::Board { columns, rows } => write!(f, "{columns}×{rows} board"),
            Tag::Fast => f.write_str("fast engine"),
            Tag::Reference => f.write_str("reference engine"),
            Tag::Unplayable => f.write_str("unplayable"),
            Tag::Length(Length::Short) => f.write_str("short"),
            Tag::Length(Length::Medium) => f.write_str("medium length"),
            Tag::Length(Length::Long) => f.write_str("long"),
        }
    }
}

/// A search over the games: words their key or roles contain, and tags they all have.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Search {
    pub words: String,
    pub tags: Vec<Tag>,
}

/// A tag in a search that is not one the server knows.
#[derive(Debug, thiserror::Error)]
#[error(
    "`{0}` is not a tag: tags are featured, N-roles (1-role), in-turn, simultaneous, gdl-ii, gdl-iii, board-CxR, fast, reference, unplayable, short, medium, long"
)]
pub struct UnknownTag(pub String);

impl Search {
    /// A search from a query's parameters: `q` (words) and `tags` (slugs separated by commas).
    pub fn from_query(
        params: &std::collections::HashMap<String, String>,
    ) -> Result<Search, UnknownTag> {
        Search::parse(
            params.get("q").map(String::as_str),
            params.get("tags").map(String::as_str),
        )
    }

    /// A search from the query's `q` (words) and `tags` (slugs separated by commas).
    pub fn parse(words: Option<&str>, tags: Option<&str>) -> Result<Search, UnknownTag> {
        let mut parsed = Vec::new();
        for slug in tags.unwrap_or("").split(',').map(str::trim) {
            if slug.is_empty() {
                continue;
            }
            let tag = Tag::parse(slug).ok_or_else(|| UnknownTag(slug.to_string()))?;
            if !parsed.contains(&tag) {
                parsed.push(tag);
            }
        }
        Ok(Search {
            words: words.unwrap_or("").trim().to_string(),
            tags: parsed,
        })
    }

    pub fn is_empty(&self) -> bool {
        self.words.is_empty() && self.tags.is_empty()
    }

    /// Whether a game is found: every word in its key, a role or a tag (ignoring case), every
    /// tag of the search among its tags.
    pub fn matches(&self, game: &GameSummary, tags: &[Tag]) -> bool {
        let words_match = self.words.split_whitespace().all(|w| {
            let w = w.to_lowercase();
            game.key.to_lowercase().contains(&w)
                || game
                    .latest
                    .roles
                    .iter()
                    .any(|r| r.to_lowercase().contains(&w))
                || tags
                    .iter()
                    .any(|t| t.to_string().to_lowercase().contains(&w))
        });
        words_match && self.tags.iter().all(|t| tags.contains(t))
    }

    /// This search with `tag` added, or taken away if it is in it.
    pub fn toggled(&self, tag: Tag) -> Search {
        let mut tags = self.tags.clone();
        match tags.iter().position(|t| *t == tag) {
            Some(i) => {
                tags.remove(i);
            }
            None => tags.push(tag),
        }
        Search {
            words: self.words.clone(),
            tags,
        }
    }

    /// The tags as the query's `tags` spells them.
    pub fn slugs(&self) -> String {
        let slugs: Vec<String> = self.tags.iter().map(Tag::slug).collect();
        slugs.join(",")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tag_reads_back_from_its_slug() {
        let tags = [
            Tag::Featured,
            Tag::Roles(1),
            Tag::Roles(2),
            Tag::Roles(12),
            Tag::InTurn,
            Tag::Simultaneous,
            Tag::Gdl2,
            Tag::Board {
                columns: 8,
                rows: 6,
            },
            Tag::Fast,
            Tag::Reference,
            Tag::Unplayable,
            Tag::Length(Length::Short),
            Tag::Length(Length::Medium),
            Tag::Length(Length::Long),
        ];
        for tag in tags {
            assert_eq!(Tag::parse(&tag.slug()), Some(tag), "{}", tag.slug());
        }
        for wrong in [
            "", "0-roles", "1-roles", "board-8", "board-x8", "roles", "FAST",
        ] {
            assert_eq!(Tag::parse(wrong), None, "{wrong}");
        }
    }

    #[test]
    fn a_search_reads_its_tags_and_says_which_is_unknown() {
        let s = Search::parse(Some(" tic "), Some("fast, 2-roles,,fast")).unwrap();
        assert_eq!(s.words, "tic");
        assert_eq!(s.tags, [Tag::Fast, Tag::Roles(2)]);
        assert_eq!(s.slugs(), "fast,2-roles");
        assert_eq!(s.toggled(Tag::Fast).slugs(), "2-roles");
        assert_eq!(s.toggled(Tag::Gdl2).slugs(), "fast,2-roles,gdl-ii");
        assert_eq!(s.toggled(Tag::Gdl2).words, "tic");
        let e = Search::parse(None, Some("fast,quick")).unwrap_err();
        assert!(e.to_string().starts_with("`quick` is not a tag"), "{e}");
        assert!(Search::parse(None, Some(" , ")).unwrap().is_empty());
    }

    #[test]
    fn lengths_fall_in_three_bands() {
        assert_eq!(Length::of(Some(9.0)), Length::Short);
        assert_eq!(Length::of(Some(20.0)), Length::Short);
        assert_eq!(Length::of(Some(20.5)), Length::Medium);
        assert_eq!(Length::of(Some(80.0)), Length::Medium);
        assert_eq!(Length::of(Some(81.0)), Length::Long);
        assert_eq!(Length::of(None), Length::Long);
    }
}
