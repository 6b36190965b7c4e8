//! Two engines side by side: every question is put to both and the answers compared (in
//! canonical text, as the engines' terms are their own). The first engine's answers are the
//! ones returned; the first disagreement is kept for the validator to report.

use gdl_check::Symbols;
use gdl_reason::machine::Result;
use gdl_reason::{ReasonError, RoleIndex, StateMachine, TermError, TermId, TermStore};
use rustc_hash::FxHashMap;

use crate::Subject;

/// A machine that runs `A` and checks it against `B` on every question.
pub struct CrossCheck<A: StateMachine, B: StateMachine> {
    a: A,
    b: B,
    names: (String, String),
    /// `A`'s term → `B`'s term, for moves.
    to_b: FxHashMap<TermId, TermId>,
    disagreement: Option<String>,
}

/// A state of both engines; `B`'s is dropped where they disagreed on the next state (what
/// follows is not compared).
#[derive(Clone, PartialEq, Eq, Hash, Debug)]
pub struct PairState<S, T>(pub S, pub Option<T>);

fn texts<M: StateMachine>(m: &M, ids: &[TermId]) -> Vec<String> {
    let mut out: Vec<String> = ids
        .iter()
        .map(|&t| m.terms().text(m.symbols(), t))
        .collect();
    out.sort();
    out
}

fn list(items: &[String]) -> String {
    if items.is_empty() {
        "nothing".into()
    } else {
        items.join(" ")
    }
}

/// Why two engines cannot be run side by side.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CrossError {
    /// The engines (named as given to [`CrossCheck::new`]) read different roles (in canonical
    /// text, sorted).
    #[error(
        "the engines disagree on the roles: {} for the {} engine, {} for the {} engine",
        list(first_roles),
        names.0,
        list(second_roles),
        names.1
    )]
    Roles {
        names: (String, String),
        first_roles: Vec<String>,
        second_roles: Vec<String>,
    },
}

impl<A: StateMachine, B: StateMachine> CrossCheck<A, B> {
    /// `names` name the engines in messages (`reference`, `fast`).
    pub fn new(a: A, b: B, names: (&str, &str)) -> std::result::Result<Self, CrossError> {
        let (ra, rb) = (texts(&a, a.roles()), texts(&b, b.roles()));
        if ra != rb {
            return Err(CrossError::Roles {
                names: (names.0.into(), names.1.into()),
                first_roles: ra,
                second_roles: rb,
            });
        }
        Ok(CrossCheck {
            a,
            b,
            names: (names.0.into(), names.1.into()),
            to_b: FxHashMap::default(),
            disagreement: None,
        })
    }

    fn differ(&mut self, what: String, a: &[String], b: &[String]) -> bool {
        if a == b {
            return false;
        }
        if self.disagreement.is_none() {
            self.disagreement = Some(format!(
                "{what}: the {} engine says {}, the {} engine {}",
                self.names.0,
                list(a),
                self.names.1,
                list(b)
            ));
        }
        true
    }

    fn fails(&mut self, what: String, error: &ReasonError) {
        if self.disagreement.is_none() {
            self.disagreement = Some(format!(
                "{what}: the {} engine answers, the {} engine fails ({error})",
                self.names.0, self.names.1
            ));
        }
    }

    fn role_name(&self, role: RoleIndex) -> String {
        self.a.terms().text(self.a.symbols(), self.a.roles()[role])
    }

    fn b_term(&mut self, t: TermId) -> std::result::Result<TermId, TermError> {
        if let Some(&u) = self.to_b.get(&t) {
            return Ok(u);
        }
        let text = self.a.terms().text(self.a.symbols(), t);
        let u = self.b.intern(&text)?;
        self.to_b.insert(t, u);
        Ok(u)
    }

    /// Compares a question about a state, asked of both engines.
    fn compare<T>(
        &mut self,
        what: impl FnOnce(&Self) -> String,
        b_state: Option<&B::State>,
        a_answer: Result<T>,
        ask_b: impl FnOnce(&mut B, &B::State) -> Result<T>,
        show: impl Fn(&Self, &T, bool) -> Vec<String>,
    ) -> Result<T> {
        let a_answer = a_answer?;
        if let Some(bs) = b_state {
            match ask_b(&mut self.b, bs) {
                Ok(b_answer) => {
                    let (x, y) = (show(self, &a_answer, true), show(self, &b_answer, false));
                    let what = what(self);
                    self.differ(what, &x, &y);
                }
                Err(e) => {
                    let what = what(self);
                    self.fails(what, &e);
                }
            }
        }
        Ok(a_answer)
    }
}

impl<A: StateMachine, B: StateMachine> StateMachine for CrossCheck<A, B> {
    type State = PairState<A::State, B::State>;

    fn roles(&self) -> &[TermId] {
        self.a.roles()
    }

    fn terms(&self) -> &TermStore {
        self.a.terms()
    }

    fn symbols(&self) -> &Symbols {
        self.a.symbols()
    }

    fn intern(&mut self, text: &str) -> std::result::Result<TermId, TermError> {
        self.a.intern(text)
    }

    fn initial_state(&mut self) -> Result<Self::State> {
        let a = self.a.initial_state()?;
        let b = match self.b.initial_state() {
            Ok(b) => {
                let (x, y) = (
                    texts(&self.a, &self.a.fluents(&a)),
                    texts(&self.b, &self.b.fluents(&b)),
                );
                (!self.differ("the initial state".into(), &x, &y)).then_some(b)
            }
            Err(e) => {
                self.fails("the initial state".into(), &e);
                None
            }
        };
        Ok(PairState(a, b))
    }

    fn fluents(&self, state: &Self::State) -> Vec<TermId> {
        self.a.fluents(&state.0)
    }

    fn legal_moves(&mut self, state: &Self::State, role: RoleIndex) -> Result<Vec<TermId>> {
        let a = self.a.legal_moves(&state.0, role);
        self.compare(
            |s| format!("the legal moves of `{}`", s.role_name(role)),
            state.1.as_ref(),
            a,
            |b, bs| b.legal_moves(bs, role),
            |s, moves, first| {
                if first {
                    texts(&s.a, moves)
                } else {
                    texts(&s.b, moves)
                }
            },
        )
    }

    fn next_state(&mut self, state: &Self::State, joint: &[TermId]) -> Result<Self::State> {
        let a = self.a.next_state(&state.0, joint)?;
        let Some(bs) = &state.1 else {
            return Ok(PairState(a, None));
        };
        let b_joint: std::result::Result<Vec<TermId>, TermError> =
            joint.iter().map(|&m| self.b_term(m)).collect();
        let b = match b_joint.map_err(|e| ReasonError::BadRequest(e.to_string())) {
            Ok(j) => self.b.next_state(bs, &j),
            Err(e) => Err(e),
        };
        let b = match b {
            Ok(b) => {
                let x = texts(&self.a, &self.a.fluents(&a));
                let y = texts(&self.b, &self.b.fluents(&b));
                let moves = texts(&self.a, joint).join(" ");
                (!self.differ(format!("the next state after ({moves})"), &x, &y)).then_some(b)
            }
            Err(e) => {
                self.fails("the next state".into(), &e);
                None
            }
        };
        Ok(PairState(a, b))
    }

    fn has_sees(&self) -> bool {
        self.a.has_sees()
    }

    fn percepts(
        &mut self,
        state: &Self::State,
        joint: &[TermId],
        role: RoleIndex,
    ) -> Result<Vec<TermId>> {
        let a = self.a.percepts(&state.0, joint, role);
        let b_joint: std::result::Result<Vec<TermId>, TermError> =
            joint.iter().map(|&m| self.b_term(m)).collect();
        let Ok(b_joint) = b_joint else {
            return a;
        };
        self.compare(
            |s| format!("the percepts of `{}`", s.role_name(role)),
            state.1.as_ref(),
            a,
            |b, bs| b.percepts(bs, &b_joint, role),
            |s, seen, first| {
                if first {
                    texts(&s.a, seen)
                } else {
                    texts(&s.b, seen)
                }
            },
        )
    }

    fn is_terminal(&mut self, state: &Self::State) -> Result<bool> {
        let a = self.a.is_terminal(&state.0);
        self.compare(
            |_| "whether the state is terminal".into(),
            state.1.as_ref(),
            a,
            |b, bs| b.is_terminal(bs),
            |_, t, _| vec![t.to_string()],
        )
    }

    fn goal_values(&mut self, state: &Self::State, role: RoleIndex) -> Result<Vec<TermId>> {
        let a = self.a.goal_values(&state.0, role);
        self.compare(
            |s| format!("the goal values of `{}`", s.role_name(role)),
            state.1.as_ref(),
            a,
            |b, bs| b.goal_values(bs, role),
            |s, values, first| {
                if first {
                    texts(&s.a, values)
                } else {
                    texts(&s.b, values)
                }
            },
        )
    }

    fn base_fluents(&mut self) -> Result<Option<Vec<TermId>>> {
        let a = self.a.base_fluents()?;
        if let Ok(b) = self.b.base_fluents() {
            let x = a.as_ref().map(|f| texts(&self.a, f)).unwrap_or_default();
            let y = b.as_ref().map(|f| texts(&self.b, f)).unwrap_or_default();
            self.differ("the fluents `base` lists".into(), &x, &y);
        }
        Ok(a)
    }

    fn input_moves(&mut self, role: RoleIndex) -> Result<Option<Vec<TermId>>> {
        let a = self.a.input_moves(role)?;
        if let Ok(b) = self.b.input_moves(role) {
            let x = a.as_ref().map(|f| texts(&self.a, f)).unwrap_or_default();
            let y = b.as_ref().map(|f| texts(&self.b, f)).unwrap_or_default();
            let what = format!("the moves `input` lists for `{}`", self.role_name(role));
            self.differ(what, &x, &y);
        }
        Ok(a)
    }
}

impl<A: StateMachine, B: StateMachine> Subject for CrossCheck<A, B> {
    fn take_disagreement(&mut self) -> Option<String> {
        self.disagreement.take()
    }
}
