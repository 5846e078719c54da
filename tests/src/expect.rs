//! What the probes must report: the check lines (`check NAME key=value ...
//! ok`, see [`crate::passed!`]) of a passing run, as the tests in
//! `tests/tests/*.rs` assert them with [`crate::Run::assert_checks`].
//!
//! Each function lists every check its probe makes, on every locale, with
//! the values the test pins computed here from the job's size and rounds
//! (totals, counts, masks); values that depend on the provider (its inject
//! size, whether an atomic is native) are left out of the expectation and
//! stay visible in the printed line. A probe that skips a check, or makes
//! one nobody expects, fails its test.

/// The scenarios of `shim_probe` (its `all`), in the order it runs them:
/// each prints `shim_probe NAME ok on PROVIDER`.
pub const SHIM_PROBE_SCENARIOS: [&str; 7] = [
    "atomics",
    "nb",
    "strided",
    "tasks",
    "unordered",
    "collectives",
    "bad",
];

/// The sizes `rma_probe` moves, by the labels it prints them with.
pub const RMA_SIZES: [&str; 5] = ["1", "8", "inject+1", "64KiB", "4MiB"];

/// What `rma_probe` misuses on purpose; each must be an error naming the
/// bad value.
pub const RMA_BAD_INPUT: [&str; 6] = [
    "put_to_locale_n",
    "get_from_locale_99",
    "put_outside_heap",
    "get_past_heap_end",
    "misaligned_amo",
    "free_foreign_address",
];

/// `rma_probe` on `n` locales, every locale checking:
/// - `put_get size=S writers=n targets=n`: at each size, the data every
///   writer PUT here reads back here, and what this locale PUT everywhere
///   reads back with a GET;
/// - `amo_totals target=t`: after every locale fetch-added `me + 1` twice
///   and added 100 once on each target, the totals `n(n+1)` and `100n`;
/// - `fetch_add_olds count=2n`: every fetched value below the total;
/// - `cas_winners mask`: one compare-and-swap winner per target word, the
///   winners' bits summed on locale 0: `n` ones;
/// - `swap prev=0xaaaa now=0xbbbb`: write then exchange, read back;
/// - `bad_input case=...`: each misuse of [`RMA_BAD_INPUT`] refused.
pub fn rma_probe(n: usize) -> Vec<String> {
    let mut v = Vec::new();
    for me in 0..n {
        for size in RMA_SIZES {
            v.push(format!(
                "put_get size={size} writers={n} targets={n} locale={me}"
            ));
        }
        for t in 0..n {
            v.push(format!(
                "amo_totals target={t} fetch_add={} add={} locale={me}",
                n * (n + 1),
                100 * n
            ));
        }
        v.push(format!("fetch_add_olds count={} locale={me}", 2 * n));
        v.push(format!(
            "cas_winners mask={:#b} locale={me}",
            (1u64 << n) - 1
        ));
        v.push(format!("swap prev=0xaaaa now=0xbbbb locale={me}"));
        for case in RMA_BAD_INPUT {
            v.push(format!("bad_input case={case} locale={me}"));
        }
    }
    v
}

/// The sizes `mcm_probe`'s RAW and MP-AM checks use, by label.
pub const MCM_SIZES: [&str; 3] = ["8", "inject+1", "64KiB"];

/// The checks of `mcm_probe` (`MCM_PROBE_ONLY` names).
pub const MCM_CHECKS: [&str; 7] = ["raw", "waw", "mp-am", "amo", "mp-atomic", "task-end", "nb"];

/// `mcm_probe` on `n` locales with `rounds` rounds, running the checks
/// `only` names (all of [`MCM_CHECKS`] when None). Every locale reports:
/// - `raw size=S targets=n rounds=R`: `put; get` reads what it wrote, on
///   every target, every round;
/// - `waw target=t rounds=R` (every other locale): blocking and
///   non-blocking PUTs land last-wins;
/// - `mp_am target=t size=S rounds=R`: a body on `t` sees the PUT made
///   before the on-statement;
/// - `amo_visible target=t adds=R`: a body on `t` sees every add (the line
///   also says whether the add was native);
/// - `mp_atomic`: locale 0 writes `4R` flags (`role=writer flags=4R`),
///   locale 1 sees data no older than each (`role=reader seen=4R`); with 2
///   or more locales;
/// - `task_end rounds=R slots=n`: every locale's PUT visible here after its
///   `task_end`;
/// - `nb puts=48 gets=48`: non-blocking handles waited out of order.
pub fn mcm_probe(n: usize, rounds: usize, only: Option<&str>) -> Vec<String> {
    let on = |c: &str| only.is_none_or(|o| o.split(',').any(|x| x == c));
    let mut v = Vec::new();
    for me in 0..n {
        let others = (0..n).filter(move |&t| t != me);
        if on("raw") {
            for size in MCM_SIZES {
                v.push(format!(
                    "raw size={size} targets={n} rounds={rounds} locale={me}"
                ));
            }
        }
        for t in others {
            if on("waw") {
                v.push(format!("waw target={t} rounds={rounds} locale={me}"));
            }
            if on("mp-am") {
                for size in MCM_SIZES {
                    v.push(format!(
                        "mp_am target={t} size={size} rounds={rounds} locale={me}"
                    ));
                }
            }
            if on("amo") {
                v.push(format!("amo_visible target={t} adds={rounds} locale={me}"));
            }
        }
        if on("mp-atomic") && n >= 2 {
            match me {
                0 => v.push(format!(
                    "mp_atomic role=writer flags={} locale=0",
                    4 * rounds
                )),
                1 => v.push(format!(
                    "mp_atomic role=reader seen={} locale=1",
                    4 * rounds
                )),
                _ => {}
            }
        }
        if on("task-end") {
            v.push(format!("task_end rounds={rounds} slots={n} locale={me}"));
        }
        if on("nb") {
            v.push(format!("nb puts=48 gets=48 locale={me}"));
        }
    }
    v
}

/// `am_probe kinds` on `n` locales. Every locale, towards every locale `t`
/// (itself included):
/// - `exec size=S target=t echo=yes|no`: a blocking and a fast body get the
///   arguments (digest checked) at 0 B, 1 B, the inline limit, one more,
///   and 1 MiB; the echo body returns them (not at 1 MiB);
/// - `reply size=S target=t`: replies around the reply slot's inline limit;
/// - `nb_count target=t ran=10`: 5 non-blocking and 5 fast non-blocking
///   bodies ran on `t`;
/// - `nop target=t`, `remote_panic target=t` (the error names the panic);
/// - `put_before_on target=t`, `put_after_done target=t`: the MCM
///   visibility of a PUT before an on-statement and of a body's PUT after
///   its 'done';
/// - `am_get size=S target=t`, `am_put sizes=3 target=t`,
///   `am_get_bad_address target=t`: AM-mediated RMA on unregistered memory;
/// - `am_put_window from=w`: what each locale PUT into this one's memory;
/// - `bad_locale`, `unregistered_id`: misuse refused at the sender.
pub fn am_kinds(n: usize) -> Vec<String> {
    let mut v = Vec::new();
    for me in 0..n {
        for t in 0..n {
            for (size, echo) in [
                ("0", "yes"),
                ("1", "yes"),
                ("inline", "yes"),
                ("inline+1", "yes"),
                ("1MiB", "no"),
            ] {
                v.push(format!(
                    "exec size={size} target={t} echo={echo} locale={me}"
                ));
            }
            for size in ["0", "1", "reply_inline", "reply_inline+1", "1MiB"] {
                v.push(format!("reply size={size} target={t} locale={me}"));
            }
            for check in [
                "nb_count ran=10",
                "nop",
                "remote_panic",
                "put_before_on",
                "put_after_done",
                "am_put sizes=3",
                "am_get_bad_address",
            ] {
                v.push(format!("{check} target={t} locale={me}"));
            }
            for size in ["1", "inline", "inline+1", "1MiB"] {
                v.push(format!("am_get size={size} target={t} locale={me}"));
            }
            v.push(format!("am_put_window from={t} locale={me}"));
        }
        v.push(format!("bad_locale locale={me}"));
        v.push(format!("unregistered_id locale={me}"));
    }
    v
}

/// `mapped_probe mixed` on `n` locales with `rounds` updates per (thread,
/// target). Every locale reports:
/// - `mixed_count count=2nR`: its word got every update of every locale's
///   two threads (CPU atomics from co-located locales, AMs from others);
/// - `mixed_patterns target=t slots=2n`: every thread's PUT on `t` reads
///   back with a GET;
/// - `mixed_on target=t answer=t`: an on-statement to `t` ran there.
pub fn mapped_mixed(n: usize, rounds: u64) -> Vec<String> {
    let mut v = Vec::new();
    for me in 0..n {
        v.push(format!(
            "mixed_count count={} locale={me}",
            2 * n as u64 * rounds
        ));
        for t in 0..n {
            v.push(format!(
                "mixed_patterns target={t} slots={} locale={me}",
                2 * n
            ));
            v.push(format!("mixed_on target={t} answer={t} locale={me}"));
        }
    }
    v
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_sets_count_every_check_on_every_locale() {
        // 5 sizes + 3 targets + olds + cas + swap + 6 misuses, per locale.
        assert_eq!(rma_probe(3).len(), 3 * (5 + 3 + 1 + 1 + 1 + 6));
        // 3 raw + 2 others x (waw + 3 mp_am + amo) + task_end + nb, plus
        // one mp_atomic line on locales 0 and 1.
        assert_eq!(mcm_probe(3, 5, None).len(), 3 * (3 + 2 * 5 + 2) + 2);
        assert_eq!(mcm_probe(3, 5, Some("task-end")).len(), 3);
        assert_eq!(mcm_probe(1, 5, Some("mp-atomic")).len(), 0);
        assert_eq!(am_kinds(3).len(), 3 * (3 * (5 + 5 + 7 + 4 + 1) + 2));
        assert_eq!(mapped_mixed(3, 10).len(), 3 * (1 + 2 * 3));
        assert!(mapped_mixed(3, 10).contains(&"mixed_count count=60 locale=2".to_string()));
        assert!(rma_probe(3).contains(&"cas_winners mask=0b111 locale=0".to_string()));
    }
}
