//! Loom over the real transmit-context table (`comm_ofi::contexts`): claims
//! are exclusive, and a shared context never changes hands with another
//! holder's stores dangling when every holder releases before handing back
//! (and does change hands dangling when one does not: the negative control).
//!
//! `RUSTFLAGS="--cfg loom" cargo test -p comm-ofi --release --test loom_contexts`
#![cfg(loom)]

use comm_ofi::contexts::ContextTable;
use loom::sync::Arc;
use loom::thread;

/// What a context carries across operations, as far as ordering goes.
#[derive(Debug, Default)]
struct Ctx {
    /// Stores of the last holder that are not known visible.
    dangling: Option<usize>,
}

#[test]
fn only_one_claim_of_a_context_succeeds() {
    loom::model(|| {
        let t = Arc::new(ContextTable::new(
            vec![Ctx::default(), Ctx::default()],
            vec![0],
        ));
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let t = t.clone();
                thread::spawn(move || t.claim(1).is_ok())
            })
            .collect();
        let wins = hs
            .into_iter()
            .filter(|_| true)
            .map(|h| h.join().unwrap())
            .filter(|w| *w)
            .count();
        assert_eq!(wins, 1);
    });
}

/// Three unbound threads, two shared contexts: each takes one, finds no
/// other holder's stores dangling, stores (dangles), and releases or not.
fn handover(release: bool) {
    let t = Arc::new(ContextTable::new(
        vec![Ctx::default(), Ctx::default(), Ctx::default()],
        vec![0, 2],
    ));
    let hs: Vec<_> = (0..3)
        .map(|me| {
            let t = t.clone();
            thread::spawn(move || {
                let r: Result<(), String> = t.with_shared(
                    me,
                    |c| {
                        if let Some(other) = c.dangling {
                            if other != me {
                                return Err(format!(
                                    "thread {me} took a context with thread {other}'s stores dangling"
                                ));
                            }
                        }
                        c.dangling = Some(me);
                        Ok(())
                    },
                    |c| {
                        if release {
                            c.dangling = None; // Selector::release forces them
                        }
                        Ok(())
                    },
                );
                r
            })
        })
        .collect();
    for h in hs {
        if let Err(e) = h.join().unwrap() {
            panic!("{e}");
        }
    }
}

#[test]
fn a_shared_context_is_handed_over_with_nothing_dangling() {
    loom::model(|| handover(true));
}

#[test]
fn without_release_a_shared_context_is_handed_over_dangling() {
    let caught = std::panic::catch_unwind(|| loom::model(|| handover(false)));
    let msg = caught
        .err()
        .and_then(|p| p.downcast_ref::<String>().cloned())
        .unwrap_or_default();
    assert!(
        msg.contains("dangling"),
        "loom did not find the hand-over: {msg:?}"
    );
}
