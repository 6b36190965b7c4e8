//! GDL-III: what the roles know after the true history. Only the referee has the true history
//! (the `random` role's moves and every role's percepts); it asks the engine over histories
//! which `knows` atoms hold after it, each role's knowledge being what holds in every history
//! the role cannot tell from it (the same own moves and percepts at every step).

use gdl_reason::{Machine, MachineState, ReasonError, StateMachine, TermId};

/// A `knows` atom that holds after the true history, read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Known {
    /// `(knows R P)`: the role of index `role` knows `what` (P, as the rules spell it).
    Role { role: usize, what: String },
    /// `(knows P)`: P is common knowledge among all roles.
    Common(String),
}

/// The `knows` atoms that hold after a history (only those the rules ask about: the engine
/// computes no others).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Knowledge {
    /// Every atom as the rules spell it, sorted: `(knows guesser (secret 5))`.
    pub atoms: Vec<String>,
    /// The same atoms, read, in the same order.
    pub known: Vec<Known>,
}

impl Knowledge {
    /// What role `role` may be shown: what it knows itself, and what is common knowledge
    /// (which every role knows, and knows to be common). Never what another role knows.
    pub fn of_role(&self, role: usize) -> impl Iterator<Item = &Known> {
        self.known.iter().filter(move |k| match k {
            Known::Role { role: r, .. } => *r == role,
            Known::Common(_) => true,
        })
    }
}

/// The `knows` atoms that hold after `state`, the true history, if the machine reasons over
/// histories (a GDL-III game); `None` for any other game.
pub(super) fn after(
    machine: &mut Machine,
    state: &MachineState,
) -> Result<Option<Knowledge>, ReasonError> {
    let (Machine::Knowledge(m, _), MachineState::Knowledge(history)) = (&mut *machine, state)
    else {
        return Ok(None);
    };
    let atoms = m.knows_atoms(history)?;
    let roles: Vec<TermId> = machine.roles().to_vec();
    let spell = |t: TermId| machine.terms().spelled(machine.symbols(), t);
    let mut read: Vec<(String, Known)> = atoms
        .iter()
        .filter_map(|&atom| {
            let known = match machine.terms().args(atom) {
                [who, what] => Known::Role {
                    role: roles.iter().position(|r| r == who)?,
                    what: spell(*what),
                },
                [what] => Known::Common(spell(*what)),
                _ => return None,
            };
            Some((spell(atom), known))
        })
        .collect();
    read.sort_by(|a, b| a.0.cmp(&b.0));
    let (atoms, known) = read.into_iter().unzip();
    Ok(Some(Knowledge { atoms, known }))
}

#[cfg(test)]
mod tests {
    use super::{Knowledge, Known};

    #[test]
    fn a_role_is_shown_its_own_knowledge_and_common_knowledge_only() {
        let knowledge = Knowledge {
            atoms: vec![
                "(knows a (p))".into(),
                "(knows b (q))".into(),
                "(knows (r))".into(),
            ],
            known: vec![
                Known::Role {
                    role: 0,
                    what: "(p)".into(),
                },
                Known::Role {
                    role: 1,
                    what: "(q)".into(),
                },
                Known::Common("(r)".into()),
            ],
        };
        let of = |r| knowledge.of_role(r).cloned().collect::<Vec<_>>();
        assert_eq!(
            of(0),
            [
                Known::Role {
                    role: 0,
                    what: "(p)".into()
                },
                Known::Common("(r)".into())
            ]
        );
        assert_eq!(
            of(1),
            [
                Known::Role {
                    role: 1,
                    what: "(q)".into()
                },
                Known::Common("(r)".into())
            ]
        );
    }
}
