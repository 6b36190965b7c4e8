//! Memory budgets: what a match, a player's session or a trial build may allocate, and what
//! the whole process may.
//!
//! Every resource a remote party can make the toolkit spend has a limit, and memory is the
//! one a game's rules make grow fastest: a two-kilobyte description can ask a grounder for
//! 10^12 tuples. Counts (atoms, rules, tuples) bound each engine's work, but only bytes add
//! up across matches, so this crate counts bytes:
//!
//! - [`Counting`] is the `ggp` binary's global allocator: the system allocator, counting. It
//!   keeps the process's heap size ([`allocated`]) and charges each allocation (and each
//!   release) to the [`Account`] the thread works for, if any.
//! - An [`Account`] is a budget in bytes. A thread charges its allocations to it while it
//!   runs work with [`Account::run`]. Work that can grow without bound (grounding,
//!   evaluating rules) calls [`check`] where it already checks its time, and stops with
//!   [`Exceeded`] once its account, or the process ([`set_process_limit`]), is over budget.
//! - A [`Pool`] is what a server's accounts are reserved from. An account made from a pool
//!   reserves a first share when it is made (one that does not fit is refused at once,
//!   [`PoolFull`], which the server answers with a 503 instead of failing later), takes more
//!   from the pool as it needs (in [`check`], up to its own cap), and gives everything back
//!   when its last clone is dropped. The accounts of a pool never hold more than the pool.
//!
//! Without [`Counting`] installed (a program that links the libraries with its own
//! allocator), nothing is counted: accounts stay at zero and [`check`] never stops anything.
//!
//! Charging follows the thread, not the allocation: memory allocated while charging one
//! account and freed while charging another (or none) is credited to the second. Work for a
//! match runs on the threads that charge its account, so the error is what crosses between
//! a match and the rest of the server (a state handed to a page, say), small beside a budget.

// Functions of at most 150 lines (clippy.toml), so that each can be read at once.
#![warn(clippy::too_many_lines)]

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, AtomicIsize, AtomicU64, AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};

/// Bytes allocated on the heap by the whole process, less what it freed.
static ALLOCATED: AtomicIsize = AtomicIsize::new(0);
/// Whether [`Counting`] is the global allocator (it has allocated once).
static INSTALLED: AtomicBool = AtomicBool::new(false);
/// The process's budget in bytes (0: none).
static PROCESS_LIMIT: AtomicUsize = AtomicUsize::new(0);
/// How many times [`check`] has refused, in all.
static REFUSALS: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The account this thread's allocations are charged to (null: none). Set and restored
    /// only by [`Charging`], which keeps the account alive while it is set.
    static CHARGED: Cell<*const Inner> = const { Cell::new(std::ptr::null()) };
}

/// The global allocator that counts: the system allocator, with every allocation added to
/// the process's total and to the thread's account. Install it in a binary:
///
/// ```
/// #[global_allocator]
/// static ALLOCATOR: ggp_memory::Counting = ggp_memory::Counting;
/// # fn main() {
/// # let kept = vec![0u8; 1 << 20];
/// # assert!(ggp_memory::is_counting() && ggp_memory::allocated() >= 1 << 20);
/// # }
/// ```
pub struct Counting;

#[inline]
fn note(delta: isize) {
    ALLOCATED.fetch_add(delta, Relaxed);
    // `try_with`: a thread's allocations after its thread-locals are gone are counted in the
    // total only. The thread-local has no destructor and a constant initialiser, so reading it
    // never allocates (which would call this allocator again).
    let _ = CHARGED.try_with(|charged| {
        let account = charged.get();
        if !account.is_null() {
            // SAFETY: `CHARGED` is non-null only while a `Charging` guard of this thread is
            // alive (guards are made and dropped in order, by `Account::run` alone), and the
            // guard holds a clone of the account's `Arc`, so `account` points to a live
            // `Inner`.
            let inner = unsafe { &*account };
            let used = inner.used.fetch_add(delta, Relaxed) + delta;
            if delta > 0 && used > inner.peak.load(Relaxed) {
                inner.peak.fetch_max(used, Relaxed);
            }
        }
    });
}

#[inline]
fn installed() {
    if !INSTALLED.load(Relaxed) {
        INSTALLED.store(true, Relaxed);
    }
}

// SAFETY: every method forwards to `System` with the same arguments and returns its result
// unchanged; the bookkeeping beside it neither allocates nor touches the memory.
unsafe impl GlobalAlloc for Counting {
    #[inline]
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            installed();
            note(layout.size() as isize);
        }
        p
    }

    #[inline]
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.alloc_zeroed(layout) };
        if !p.is_null() {
            installed();
            note(layout.size() as isize);
        }
        p
    }

    #[inline]
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) };
        note(-(layout.size() as isize));
    }

    #[inline]
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: forwarded with the caller's guarantees.
        let p = unsafe { System.realloc(ptr, layout, new_size) };
        if !p.is_null() {
            note(new_size as isize - layout.size() as isize);
        }
        p
    }
}

/// Bytes the process has on its heap now (0 without [`Counting`]).
pub fn allocated() -> usize {
    ALLOCATED.load(Relaxed).max(0) as usize
}

/// Whether allocations are counted ([`Counting`] is the global allocator).
pub fn is_counting() -> bool {
    INSTALLED.load(Relaxed)
}

/// Sets the process's budget: once its heap is larger, [`check`] fails everywhere. `None`
/// removes it.
pub fn set_process_limit(bytes: Option<usize>) {
    PROCESS_LIMIT.store(bytes.unwrap_or(0), Relaxed);
}

/// The process's budget, if one is set.
pub fn process_limit() -> Option<usize> {
    match PROCESS_LIMIT.load(Relaxed) {
        0 => None,
        n => Some(n),
    }
}

/// A budget ran out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Exceeded {
    /// The account the work is charged to is at its cap.
    #[error("more than {} of memory, the budget of {label}", Mib(*limit))]
    Account { label: String, limit: usize },
    /// The account the work is charged to needs more, and the pool it shares has no more.
    #[error(
        "more than {} of memory for {label}: the {} shared with the others at work is taken",
        Mib(*held),
        Mib(*pool)
    )]
    Pool {
        label: String,
        held: usize,
        pool: usize,
    },
    /// The whole process is over its budget.
    #[error("more than {} of memory in all, the budget of this process (--max-memory)", Mib(*limit))]
    Process { limit: usize },
}

/// Whether the work of this thread may go on allocating: `Err` once the account it is
/// charged to is over its budget (after taking what it may from its pool) or the process is
/// over its. Cheap while within budget (relaxed loads and a thread-local): call it where a
/// long computation checks its time.
pub fn check() -> Result<(), Exceeded> {
    if !INSTALLED.load(Relaxed) {
        return Ok(());
    }
    let account = CHARGED.try_with(Cell::get).unwrap_or(std::ptr::null());
    let refused = if account.is_null() {
        None
    } else {
        // SAFETY: as in `note`: a non-null `CHARGED` is kept alive by this thread's guard.
        unsafe { &*account }.within_budget().err()
    };
    let refused = refused.or_else(|| match process_limit() {
        Some(limit) if allocated() > limit => Some(Exceeded::Process { limit }),
        _ => None,
    });
    match refused {
        None => Ok(()),
        Some(e) => {
            REFUSALS.fetch_add(1, Relaxed);
            Err(e)
        }
    }
}

/// How many times [`check`] has refused, in all, in this process: a computation whose verdict
/// is kept for later (a game the fast engine refuses, say) compares it before and after, since
/// a refusal for memory depends on what else the process held at the time.
pub fn refusals() -> u64 {
    REFUSALS.load(Relaxed)
}

/// The account this thread's allocations are charged to, if any: for the threads a
/// computation starts, which charge the same account.
pub fn current() -> Option<Account> {
    let account = CHARGED.try_with(Cell::get).ok()?;
    if account.is_null() {
        return None;
    }
    // SAFETY: a non-null `CHARGED` points to the `Inner` of an `Arc` that this thread's guard
    // holds a clone of; taking one more strong count and making an `Arc` of it is a clone.
    unsafe {
        Arc::increment_strong_count(account);
        Some(Account(Arc::from_raw(account)))
    }
}

/// What the account this thread is charged to has used, and the most it could have now
/// (its cap, or less when its pool has not the room): `(used, attainable)`. A search that
/// keeps what it finds (a tree) keeps within it.
pub fn current_usage() -> Option<(usize, usize)> {
    let account = CHARGED.try_with(Cell::get).ok()?;
    if account.is_null() {
        return None;
    }
    // SAFETY: as in `check`.
    let inner = unsafe { &*account };
    Some((inner.used(), inner.attainable()))
}

/// A byte count shown in mebibytes: `512 MiB`, `1.5 MiB`.
#[derive(Clone, Copy, Debug)]
pub struct Mib(pub usize);

impl std::fmt::Display for Mib {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mib = self.0 as f64 / (1u64 << 20) as f64;
        if self.0.is_multiple_of(1 << 20) || mib >= 100.0 {
            write!(f, "{mib:.0} MiB")
        } else {
            write!(f, "{mib:.1} MiB")
        }
    }
}

struct Inner {
    label: String,
    /// The most the account may hold.
    cap: usize,
    /// What it held when it was made: it never gives back more than it holds beyond this.
    first: usize,
    /// What it holds now: its budget until it takes more from its pool (never above `cap`).
    held: AtomicUsize,
    /// Bytes charged less bytes credited (negative when the account frees what it did not
    /// allocate).
    used: AtomicIsize,
    /// The most `used` has been.
    peak: AtomicIsize,
    /// How many times [`check`] has refused work charged to the account.
    refused: AtomicU64,
    /// The pool `held` comes from, given back when the account is dropped.
    pool: Option<Pool>,
}

impl Inner {
    fn used(&self) -> usize {
        self.used.load(Relaxed).max(0) as usize
    }

    /// The most the account could hold now.
    fn attainable(&self) -> usize {
        let held = self.held.load(Relaxed);
        match &self.pool {
            None => held,
            Some(pool) => {
                let free = pool.capacity().saturating_sub(pool.reserved());
                held.saturating_add(free).min(self.cap)
            }
        }
    }

    /// `Ok` when what the account uses fits what it holds, after taking more from its pool
    /// if it needs to (half as much again as it uses, at least [`GROWTH`], within its cap).
    fn within_budget(&self) -> Result<(), Exceeded> {
        let used = self.used();
        let held = self.held.load(Relaxed);
        if used <= held {
            return Ok(());
        }
        let refused = |e: Exceeded| {
            self.refused.fetch_add(1, Relaxed);
            Err(e)
        };
        let Some(pool) = &self.pool else {
            return refused(Exceeded::Account {
                label: self.label.clone(),
                limit: self.cap,
            });
        };
        if used > self.cap {
            return refused(Exceeded::Account {
                label: self.label.clone(),
                limit: self.cap,
            });
        }
        let mut reserved = pool.lock();
        // Held again under the pool's lock: another thread of the account may have grown it.
        let held = self.held.load(Relaxed);
        if used <= held {
            return Ok(());
        }
        let want = used
            .saturating_add((used / 2).max(GROWTH))
            .min(self.cap)
            .saturating_sub(held);
        let free = pool.capacity().saturating_sub(*reserved);
        // All it wants, or what is free if that covers what it uses.
        let take = if want <= free {
            want
        } else if used - held <= free {
            free
        } else {
            return refused(Exceeded::Pool {
                label: self.label.clone(),
                held,
                pool: pool.capacity(),
            });
        };
        *reserved += take;
        self.held.store(held + take, Relaxed);
        Ok(())
    }
}

/// The least an account takes from its pool when it needs more.
const GROWTH: usize = 16 << 20;

impl Drop for Inner {
    fn drop(&mut self) {
        if let Some(pool) = &self.pool {
            let mut reserved = pool.lock();
            *reserved = reserved.saturating_sub(*self.held.get_mut());
        }
    }
}

/// A budget in bytes that threads charge their allocations to (see the crate's
/// documentation). Clones are the same account.
#[derive(Clone)]
pub struct Account(Arc<Inner>);

impl std::fmt::Debug for Account {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Account")
            .field("label", &self.0.label)
            .field("cap", &self.0.cap)
            .field("held", &self.held())
            .field("used", &self.used())
            .finish()
    }
}

impl Account {
    /// An account of `limit` bytes, named by `label` in messages (`the match m1`).
    pub fn new(label: impl Into<String>, limit: usize) -> Account {
        Account(Arc::new(Inner {
            label: label.into(),
            cap: limit,
            first: limit,
            held: AtomicUsize::new(limit),
            used: AtomicIsize::new(0),
            peak: AtomicIsize::new(0),
            refused: AtomicU64::new(0),
            pool: None,
        }))
    }

    pub fn label(&self) -> &str {
        &self.0.label
    }

    /// The most the account may hold.
    pub fn limit(&self) -> usize {
        self.0.cap
    }

    /// What the account holds now (of its pool's memory, for an account of a pool).
    pub fn held(&self) -> usize {
        self.0.held.load(Relaxed)
    }

    /// Bytes charged to the account and not freed.
    pub fn used(&self) -> usize {
        self.0.used()
    }

    /// The most bytes the account has held at once.
    pub fn peak(&self) -> usize {
        self.0.peak.load(Relaxed).max(0) as usize
    }

    /// How many times work charged to the account was stopped because it was used up.
    pub fn refused(&self) -> u64 {
        self.0.refused.load(Relaxed)
    }

    /// Gives back to the pool what the account holds beyond what it uses now and room to grow
    /// (half as much again, at least 16 MiB; never below its first share): for when a
    /// computation that needed much is over (a move chosen, a step taken), so that an
    /// account keeps what it uses rather than the most it ever used.
    pub fn trim(&self) {
        let inner = &*self.0;
        let Some(pool) = &inner.pool else {
            return;
        };
        let mut reserved = pool.lock();
        let held = inner.held.load(Relaxed);
        let used = inner.used();
        let keep = used
            .saturating_add((used / 2).max(GROWTH))
            .max(inner.first)
            .min(held);
        if keep < held {
            *reserved = reserved.saturating_sub(held - keep);
            inner.held.store(keep, Relaxed);
        }
    }

    /// Runs `work` with this thread's allocations charged to the account (then to the account
    /// charged before, if any, even if `work` panics).
    pub fn run<T>(&self, work: impl FnOnce() -> T) -> T {
        let _charging = Charging::enter(self);
        work()
    }
}

/// Charges an optional account: `work` runs charged to `account` if there is one.
pub fn run_in<T>(account: Option<&Account>, work: impl FnOnce() -> T) -> T {
    match account {
        Some(a) => a.run(work),
        None => work(),
    }
}

/// While alive, this thread's allocations are charged to an account. Made and dropped only by
/// [`Account::run`], so guards end in the order they began (a guard dropped out of order
/// would restore a pointer to an account another guard no longer keeps alive), and never
/// leak. Not `Send`: it belongs to the thread that made it.
struct Charging {
    previous: *const Inner,
    /// Keeps the account alive while the thread-local points to it.
    _account: Account,
}

impl Charging {
    fn enter(account: &Account) -> Charging {
        let previous = CHARGED.with(|c| c.replace(Arc::as_ptr(&account.0)));
        Charging {
            previous,
            _account: account.clone(),
        }
    }
}

impl Drop for Charging {
    fn drop(&mut self) {
        let previous = self.previous;
        let _ = CHARGED.try_with(|c| c.set(previous));
    }
}

/// What a server's accounts are reserved from: `capacity` bytes in all.
#[derive(Clone)]
pub struct Pool(Arc<PoolInner>);

struct PoolInner {
    capacity: usize,
    reserved: Mutex<usize>,
}

/// A pool had not the room for an account.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error(
    "{} of memory are wanted, and {} of the {} budget are free",
    Mib(*wanted),
    Mib(*free),
    Mib(*capacity)
)]
pub struct PoolFull {
    pub wanted: usize,
    pub free: usize,
    pub capacity: usize,
}

impl std::fmt::Debug for Pool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Pool")
            .field("capacity", &self.0.capacity)
            .field("reserved", &self.reserved())
            .finish()
    }
}

impl Pool {
    pub fn new(capacity: usize) -> Pool {
        Pool(Arc::new(PoolInner {
            capacity,
            reserved: Mutex::new(0),
        }))
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, usize> {
        self.0.reserved.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn capacity(&self) -> usize {
        self.0.capacity
    }

    /// Bytes held by the accounts made from the pool and alive.
    pub fn reserved(&self) -> usize {
        *self.lock()
    }

    /// An account holding `first` bytes of the pool at once, which takes more as it needs, up
    /// to `cap` in all; or why there is not the room for `first`. Everything it holds goes
    /// back when the account's last clone is dropped.
    pub fn account(
        &self,
        label: impl Into<String>,
        first: usize,
        cap: usize,
    ) -> Result<Account, PoolFull> {
        let first = first.min(cap);
        let mut reserved = self.lock();
        let free = self.0.capacity.saturating_sub(*reserved);
        if first > free {
            return Err(PoolFull {
                wanted: first,
                free,
                capacity: self.0.capacity,
            });
        }
        *reserved += first;
        drop(reserved);
        Ok(Account(Arc::new(Inner {
            label: label.into(),
            cap,
            first,
            held: AtomicUsize::new(first),
            used: AtomicIsize::new(0),
            peak: AtomicIsize::new(0),
            refused: AtomicU64::new(0),
            pool: Some(self.clone()),
        })))
    }
}

/// The machine's memory as this process may use it: the smaller of the physical memory
/// (`MemTotal` of `/proc/meminfo`) and the limit of the process's control group (cgroup v2's
/// `memory.max`, v1's `memory.limit_in_bytes`), where they can be read.
pub fn machine_memory() -> Option<usize> {
    let total = std::fs::read_to_string("/proc/meminfo").ok().and_then(|m| {
        m.lines()
            .find_map(|l| l.strip_prefix("MemTotal:"))
            .and_then(|v| v.trim().strip_suffix("kB"))
            .and_then(|kb| kb.trim().parse::<usize>().ok())
            .map(|kb| kb.saturating_mul(1024))
    });
    let cgroup = [
        "/sys/fs/cgroup/memory.max",
        "/sys/fs/cgroup/memory/memory.limit_in_bytes",
    ]
    .iter()
    .find_map(|p| {
        std::fs::read_to_string(p)
            .ok()?
            .trim()
            .parse::<usize>()
            .ok()
    });
    match (total, cgroup) {
        (Some(t), Some(c)) => Some(t.min(c)),
        (t, c) => t.or(c),
    }
}

/// The default budget of a process: half the machine's memory ([`machine_memory`]), or 4 GiB
/// where it cannot be read.
pub fn default_process_budget() -> usize {
    machine_memory().map_or(4 << 30, |m| m / 2)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pools_reserve_and_give_back() {
        let pool = Pool::new(100);
        let a = pool.account("a", 60, 60).unwrap();
        let a2 = a.clone();
        assert_eq!(pool.reserved(), 60);
        let full = pool.account("b", 50, 80).unwrap_err();
        assert_eq!(
            full,
            PoolFull {
                wanted: 50,
                free: 40,
                capacity: 100
            }
        );
        drop(a);
        assert_eq!(pool.reserved(), 60, "a clone still holds it");
        drop(a2);
        assert_eq!(pool.reserved(), 0);
        assert!(pool.account("b", 100, 100).is_ok());
    }

    #[test]
    fn messages_name_the_budget() {
        let e = Exceeded::Account {
            label: "the match `m1`".into(),
            limit: 512 << 20,
        };
        assert_eq!(
            e.to_string(),
            "more than 512 MiB of memory, the budget of the match `m1`"
        );
        assert_eq!(Mib(3 << 19).to_string(), "1.5 MiB");
        let full = PoolFull {
            wanted: 1 << 30,
            free: 0,
            capacity: 2 << 30,
        };
        assert_eq!(
            full.to_string(),
            "1024 MiB of memory are wanted, and 0 MiB of the 2048 MiB budget are free"
        );
    }

    #[test]
    fn run_restores_the_account_charged_before_even_after_a_panic() {
        let outer = Account::new("outer", 1);
        let inner = Account::new("inner", 1);
        outer.run(|| {
            inner.run(|| assert_eq!(CHARGED.with(Cell::get), Arc::as_ptr(&inner.0)));
            assert_eq!(CHARGED.with(Cell::get), Arc::as_ptr(&outer.0));
            let panicked = std::panic::catch_unwind(|| inner.run(|| panic!("in the work")));
            assert!(panicked.is_err());
            assert_eq!(CHARGED.with(Cell::get), Arc::as_ptr(&outer.0));
        });
        assert!(CHARGED.with(Cell::get).is_null());
    }
}
