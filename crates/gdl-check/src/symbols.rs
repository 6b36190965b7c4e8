//! Interned names. GDL is case-insensitive: a symbol is the lower-case form of a name, so `ROBOT`
//! and `robot` are one symbol. Each symbol also keeps the spelling it was first interned with
//! (the rules' own, when the rules are read first): what is sent to other programs or recorded
//! is spelled as the author wrote it, since other programs compare symbols with their case.

use std::hash::BuildHasher;

use hashbrown::HashTable;
use rustc_hash::{FxBuildHasher, FxHashMap};

/// An interned, case-folded name.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Symbol(pub u32);

#[derive(Clone, Default)]
pub struct Symbols {
    /// The symbols, by the hash of their name (each name is stored once, in `names`).
    map: HashTable<Symbol>,
    hasher: FxBuildHasher,
    names: Vec<Box<str>>,
    /// The first spelling of each symbol, where it differs from its name.
    spellings: FxHashMap<Symbol, Box<str>>,
}

impl std::fmt::Debug for Symbols {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Symbols({} names)", self.names.len())
    }
}

impl Symbols {
    pub fn new() -> Symbols {
        Symbols::default()
    }

    /// The symbol of `name`, in any letter case.
    pub fn intern(&mut self, name: &str) -> Symbol {
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            let lower = name.to_ascii_lowercase();
            let known = self.names.len();
            let symbol = self.intern_lower(&lower);
            if symbol.0 as usize == known {
                self.spellings.insert(symbol, name.into());
            }
            symbol
        } else {
            self.intern_lower(name)
        }
    }

    fn find(&self, lower: &str) -> Option<Symbol> {
        let hash = self.hasher.hash_one(lower);
        self.map
            .find(hash, |s| &*self.names[s.0 as usize] == lower)
            .copied()
    }

    fn intern_lower(&mut self, lower: &str) -> Symbol {
        if let Some(symbol) = self.find(lower) {
            return symbol;
        }
        let symbol = Symbol(self.names.len() as u32);
        self.names.push(lower.into());
        let (names, hasher) = (&self.names, &self.hasher);
        self.map.insert_unique(hasher.hash_one(lower), symbol, |s| {
            hasher.hash_one(&*names[s.0 as usize])
        });
        symbol
    }

    /// The symbol of `name` if it was interned.
    pub fn get(&self, name: &str) -> Option<Symbol> {
        if name.bytes().any(|b| b.is_ascii_uppercase()) {
            self.find(&name.to_ascii_lowercase())
        } else {
            self.find(name)
        }
    }

    /// The canonical (lower-case) spelling.
    pub fn name(&self, symbol: Symbol) -> &str {
        &self.names[symbol.0 as usize]
    }

    /// The spelling the symbol was first interned with.
    pub fn spelling(&self, symbol: Symbol) -> &str {
        match self.spellings.get(&symbol) {
            Some(spelled) => spelled,
            None => self.name(symbol),
        }
    }

    pub fn len(&self) -> usize {
        self.names.len()
    }

    pub fn is_empty(&self) -> bool {
        self.names.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn interning_folds_case() {
        let mut symbols = Symbols::new();
        let a = symbols.intern("Robot");
        let b = symbols.intern("ROBOT");
        let c = symbols.intern("robot");
        assert_eq!(a, b);
        assert_eq!(b, c);
        assert_eq!(symbols.name(a), "robot");
        assert_ne!(symbols.intern("robots"), a);
        assert_eq!(symbols.get("rObOt"), Some(a));
        assert_eq!(symbols.get("nobody"), None);
    }

    #[test]
    fn the_first_spelling_is_kept() {
        let mut symbols = Symbols::new();
        let a = symbols.intern("xPlayer");
        assert_eq!(symbols.intern("XPLAYER"), a);
        assert_eq!(symbols.intern("xplayer"), a);
        assert_eq!(symbols.spelling(a), "xPlayer");
        assert_eq!(symbols.name(a), "xplayer");
        let b = symbols.intern("noop");
        assert_eq!(symbols.intern("NOOP"), b);
        assert_eq!(symbols.spelling(b), "noop");
    }
}
