//! The counting allocator installed, as the `ggp` binary installs it.

use ggp_memory::{Account, Counting, Exceeded, Pool};

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// The process limit is global: tests that check take turns.
static TURNS: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn turn() -> std::sync::MutexGuard<'static, ()> {
    TURNS.lock().unwrap_or_else(|p| p.into_inner())
}

#[test]
fn allocations_are_charged_to_the_thread_s_account_and_checked() {
    let _turn = turn();
    assert!(ggp_memory::is_counting());
    let account = Account::new("the test", 8 << 20);
    let before = ggp_memory::allocated();
    let kept = account.run(|| {
        let small = vec![1u8; 1 << 20];
        assert!(ggp_memory::check().is_ok());
        let large = vec![1u8; 16 << 20];
        assert_eq!(
            ggp_memory::check(),
            Err(Exceeded::Account {
                label: "the test".into(),
                limit: 8 << 20
            })
        );
        drop(large);
        assert!(ggp_memory::check().is_ok(), "freed, so within budget again");
        assert_eq!(account.refused(), 1);
        small
    });
    assert!(account.used() >= 1 << 20 && account.used() < 2 << 20);
    assert!(account.peak() >= 17 << 20, "{}", account.peak());
    assert!(ggp_memory::allocated() >= before + (1 << 20) - (64 << 10));
    // Outside the account nothing is charged to it.
    let other = vec![0u8; 4 << 20];
    assert!(account.used() < 2 << 20);
    drop((kept, other));
}

#[test]
fn threads_charge_the_account_they_entered() {
    let _turn = turn();
    let pool = Pool::new(64 << 20);
    let account = pool.account("the match m", 32 << 20, 32 << 20).unwrap();
    let handles: Vec<_> = (0..2)
        .map(|_| {
            let account = account.clone();
            std::thread::spawn(move || account.run(|| vec![7u8; 3 << 20]))
        })
        .collect();
    let kept: Vec<Vec<u8>> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    assert!(account.used() >= 6 << 20, "{}", account.used());
    // Freed outside the account: credited to nobody, so the account keeps them.
    drop(kept);
    assert!(account.used() >= 6 << 20);
    drop(account);
    assert_eq!(pool.reserved(), 0);
}

#[test]
fn the_process_limit_stops_everyone() {
    let _turn = turn();
    // A limit below what the process has: every check fails, charged or not.
    ggp_memory::set_process_limit(Some(1));
    let refused = ggp_memory::check();
    ggp_memory::set_process_limit(None);
    assert_eq!(refused, Err(Exceeded::Process { limit: 1 }));
    assert!(ggp_memory::check().is_ok());
}

#[test]
fn accounts_of_a_pool_take_more_as_they_need_within_their_cap_and_the_pool() {
    let _turn = turn();
    let pool = Pool::new(96 << 20);
    let a = pool.account("a", 16 << 20, 64 << 20).unwrap();
    let b = pool.account("b", 16 << 20, 64 << 20).unwrap();
    // `a` grows past its first share: it takes from the pool.
    let kept = a.run(|| {
        let big = vec![1u8; 40 << 20];
        assert!(ggp_memory::check().is_ok());
        big
    });
    assert!(a.held() >= 40 << 20 && a.held() <= 64 << 20, "{}", a.held());
    assert_eq!(pool.reserved(), a.held() + b.held());
    // `b` would need more than is left: refused, saying the pool is taken.
    b.run(|| {
        let big = vec![1u8; 60 << 20];
        match ggp_memory::check() {
            Err(Exceeded::Pool {
                label,
                pool: capacity,
                ..
            }) => {
                assert_eq!((label.as_str(), capacity), ("b", 96 << 20));
            }
            other => panic!("{other:?}"),
        }
        drop(big);
    });
    // Once what it needed is freed, `a` gives back what it holds beyond what it uses.
    let held = a.held();
    let kept = a.run(|| {
        drop(kept);
        vec![1u8; 1 << 20]
    });
    a.trim();
    assert!(
        a.held() < held && a.held() >= 16 << 20,
        "{} of {held}",
        a.held()
    );
    assert_eq!(pool.reserved(), a.held() + b.held());
    // Past its cap `a` is refused, whatever the pool has.
    drop(b);
    a.run(|| {
        let more = vec![1u8; 70 << 20];
        assert_eq!(
            ggp_memory::check(),
            Err(Exceeded::Account {
                label: "a".into(),
                limit: 64 << 20
            })
        );
        drop(more);
    });
    drop((kept, a));
    assert_eq!(pool.reserved(), 0);
}
