//! Saved states: a copy of what a [`Runtime`] changes as it runs.

use super::*;

/// A copy of everything a [`Runtime`] changes as it runs, for a state (settled, no move set):
/// loading that state again is a copy of these instead of a propagation of every difference.
#[derive(Clone, Default)]
pub(crate) struct Saved {
    /// The nodes: counters, flags and values (and, unchanged, where their successors start:
    /// the records are copied whole).
    nodes: Vec<Node>,
    lists: Vec<List>,
    armed: Vec<u64>,
    passive: Vec<Span>,
    passive_items: Vec<u32>,
    passive_pos: Vec<u32>,
    legal: Vec<Vec<u32>>,
    legal_pos: Vec<u32>,
    next_bits: Vec<u64>,
    cur_bits: Vec<u64>,
    set_value: Vec<u64>,
    on: Vec<u32>,
    on_slot: Vec<u32>,
    on_frame: Vec<u32>,
    lazy_valid: bool,
}

impl Saved {
    /// The state saved.
    pub fn bits(&self) -> &[u64] {
        &self.cur_bits
    }
}

/// Calls `$apply!` with the arrays of fixed length that [`Saved`] keeps (one list, so that
/// saving, restoring and their size cannot disagree).
macro_rules! saved_arrays {
    ($apply:ident) => {
        $apply!(
            nodes,
            lists,
            armed,
            passive,
            passive_items,
            passive_pos,
            legal_pos,
            next_bits,
            cur_bits,
            set_value,
            on,
            on_slot,
            on_frame
        )
    };
}

impl Runtime {
    /// The bytes [`Runtime::save`] copies, and [`Runtime::restore`] back.
    pub fn saved_bytes(&self) -> usize {
        macro_rules! bytes {
            ($($field:ident),*) => { 0 $(+ size_of_val(&self.$field[..]))* };
        }
        saved_arrays!(bytes)
            + self
                .legal
                .iter()
                .map(|l| size_of_val(&l[..]))
                .sum::<usize>()
    }

    /// Saves the values of the state loaded (settled, with the inputs as they are) into
    /// `saved` (its buffers reused).
    pub fn save(&self, saved: &mut Saved) {
        debug_assert!(self.dirty.iter().all(|&d| d == 0));
        debug_assert!(self.set_dirty.iter().all(|&d| d == 0));
        macro_rules! save {
            ($($field:ident),*) => { $(saved.$field.clone_from(&self.$field);)* };
        }
        saved_arrays!(save);
        saved.legal.clone_from(&self.legal);
        saved.lazy_valid = self.lazy_valid;
    }

    /// Makes the state `saved` (from [`Runtime::save`] on this runtime) the current one, with
    /// the inputs that were on then: as [`Runtime::load`] of its bits would.
    pub fn restore(&mut self, saved: &Saved) {
        if !self.flips_seen.is_empty() {
            // A profile counts the flips of loading it.
            let bits = saved.cur_bits.clone();
            self.load(&bits);
            return;
        }
        macro_rules! restore {
            ($($field:ident),*) => { $(self.$field.copy_from_slice(&saved.$field);)* };
        }
        saved_arrays!(restore);
        if std::mem::replace(&mut self.deferred, false) {
            // What waited is the old state's, and the saved one is settled.
            self.dirty.fill(0);
            self.summary.fill(0);
        }
        for (list, from) in self.legal.iter_mut().zip(&saved.legal) {
            list.clone_from(from);
        }
        self.lazy_valid = saved.lazy_valid;
        self.sees_valid = false;
    }
}
