//! GDL-III on both engines: the knowledge machine over the fast engine (its network compiled
//! from the rules with `knows` read from the state) against the one over the reference engine,
//! on 200 seeded random playouts of every game of `games/`: at every step the same
//! fluents, terminal, `knows` atoms, legal moves, percepts of the joint move played, and goals
//! at the end.

use std::time::{Duration, Instant};

use gdl_reason::fast::FastLimits;
use gdl_reason::knowledge::KnowledgeLimits;
use gdl_reason::{History, KnowledgeMachine, StateMachine, TermId};
use rand::SeedableRng;
use rand::rngs::SmallRng;
use rand::seq::IndexedRandom;

const GAMES: [(&str, &str); 4] = [
    (
        "number_guessing",
        include_str!("../../../games/number_guessing.kif"),
    ),
    (
        "muddy_children",
        include_str!("../../../games/muddy_children.kif"),
    ),
    (
        "russian_cards",
        include_str!("../../../games/russian_cards.kif"),
    ),
    ("cups", include_str!("../../../games/cups.kif")),
];

const PLAYOUTS: u64 = 200;

/// No game here is longer; a playout that is not over by then is a failure.
const MAX_STEPS: usize = 40;

fn fast(text: &str) -> KnowledgeMachine {
    let checked = gdl_check::check(text);
    match KnowledgeMachine::fast(&checked, FastLimits::default(), KnowledgeLimits::default()) {
        Ok(m) => m,
        Err(e) => panic!("the fast engine refused: {e}"),
    }
}

fn reference(text: &str) -> KnowledgeMachine {
    KnowledgeMachine::from_text(text).unwrap_or_else(|d| panic!("{d:#?}"))
}

fn texts(m: &KnowledgeMachine, terms: &[TermId]) -> Vec<String> {
    let mut out: Vec<String> = terms
        .iter()
        .map(|&t| m.terms().text(m.symbols(), t))
        .collect();
    out.sort();
    out
}

/// One machine of each engine, playing the same moves.
struct Pair {
    fast: KnowledgeMachine,
    reference: KnowledgeMachine,
    /// Time spent in each machine's questions.
    fast_time: Duration,
    reference_time: Duration,
}

impl Pair {
    /// `ask` of both machines, as text, asserted equal; what it is.
    fn same<T: PartialEq + std::fmt::Debug>(
        &mut self,
        what: &str,
        (hf, hr): (&History, &History),
        ask: impl Fn(&mut KnowledgeMachine, &History) -> T,
    ) -> T {
        let started = Instant::now();
        let f = ask(&mut self.fast, hf);
        self.fast_time += started.elapsed();
        let started = Instant::now();
        let r = ask(&mut self.reference, hr);
        self.reference_time += started.elapsed();
        assert_eq!(f, r, "{what} after {:?}", self.moves(hr));
        r
    }

    fn moves(&self, h: &History) -> Vec<String> {
        texts(&self.reference, h.moves())
    }

    /// One random playout from the initial state, compared at every step; its length.
    fn playout(&mut self, rng: &mut SmallRng) -> usize {
        let mut hf = self.fast.initial_state().unwrap();
        let mut hr = self.reference.initial_state().unwrap();
        let roles = self.reference.roles().len();
        for step in 0..MAX_STEPS {
            let at = (&hf, &hr);
            self.same("the fluents", at, |m, h| texts(m, &m.fluents(h)));
            self.same("the `knows` atoms", at, |m, h| {
                let atoms = m.knows_atoms(h).unwrap();
                texts(m, &atoms)
            });
            if self.same("terminal", at, |m, h| m.is_terminal(h).unwrap()) {
                for role in 0..roles {
                    self.same("the goals", at, |m, h| {
                        let values = m.goal_values(h, role).unwrap();
                        texts(m, &values)
                    });
                }
                return step;
            }
            let legal: Vec<Vec<String>> = (0..roles)
                .map(|role| {
                    self.same("the legal moves", at, |m, h| {
                        let moves = m.legal_moves(h, role).unwrap();
                        texts(m, &moves)
                    })
                })
                .collect();
            let joint: Vec<String> = legal
                .iter()
                .map(|moves| moves.choose(rng).expect("a legal move").clone())
                .collect();
            let of = |m: &mut KnowledgeMachine| -> Vec<TermId> {
                joint.iter().map(|t| m.intern(t).unwrap()).collect()
            };
            let (jf, jr) = (of(&mut self.fast), of(&mut self.reference));
            for role in 0..roles {
                let started = Instant::now();
                let f = self.fast.percepts(&hf, &jf, role).unwrap();
                self.fast_time += started.elapsed();
                let started = Instant::now();
                let r = self.reference.percepts(&hr, &jr, role).unwrap();
                self.reference_time += started.elapsed();
                assert_eq!(
                    texts(&self.fast, &f),
                    texts(&self.reference, &r),
                    "percepts"
                );
            }
            let started = Instant::now();
            hf = self.fast.next_state(&hf, &jf).unwrap();
            self.fast_time += started.elapsed();
            let started = Instant::now();
            hr = self.reference.next_state(&hr, &jr).unwrap();
            self.reference_time += started.elapsed();
        }
        panic!("a playout of more than {MAX_STEPS} steps");
    }
}

fn cross_check(name: &str, text: &str) {
    let started = Instant::now();
    let mut pair = Pair {
        fast: fast(text),
        reference: reference(text),
        fast_time: Duration::ZERO,
        reference_time: Duration::ZERO,
    };
    assert!(pair.fast.is_fast());
    assert!(!pair.reference.is_fast());
    let mut steps = 0;
    for seed in 0..PLAYOUTS {
        steps += pair.playout(&mut SmallRng::seed_from_u64(seed));
    }
    // The same groups of histories, of the same sizes.
    assert_eq!(
        pair.fast.histories_per_length(),
        pair.reference.histories_per_length(),
        "{name}"
    );
    eprintln!(
        "{name}: {PLAYOUTS} playouts, {steps} steps: fast engine {:?}, reference engine {:?} \
         (in all {:?})",
        pair.fast_time,
        pair.reference_time,
        started.elapsed()
    );
}

#[test]
fn number_guessing_agrees_on_both_engines() {
    cross_check(GAMES[0].0, GAMES[0].1);
}

#[test]
fn muddy_children_agrees_on_both_engines() {
    cross_check(GAMES[1].0, GAMES[1].1);
}

#[test]
fn russian_cards_agrees_on_both_engines() {
    cross_check(GAMES[2].0, GAMES[2].1);
}

#[test]
fn cups_agrees_on_both_engines() {
    cross_check(GAMES[3].0, GAMES[3].1);
}
