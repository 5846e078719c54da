//! The families of generated programs (one row of the report each).

use super::build::*;
use super::program::{Coll, Mem, OnKind, Program, Size, Step, ThreadKind, LOCALES};

/// Every generated program, in a fixed order (the same on every locale).
pub fn generate() -> Vec<Program> {
    let mut out = Vec::new();
    for size in [Size::Eight, Size::InjectPlusOne] {
        mp(&mut out, size);
        task_create(&mut out, size);
        task_end(&mut out, size);
        war(&mut out, size);
        barrier(&mut out, size);
        raw_waw(&mut out, size);
    }
    // Transfers cut into chunks (in the cells that lower max_msg_size).
    mp(&mut out, Size::OverMaxMsg);
    war(&mut out, Size::OverMaxMsg);
    raw_waw(&mut out, Size::OverMaxMsg);
    sb(&mut out);
    unbound_amo(&mut out);
    amo_window(&mut out);
    unordered_add(&mut out);
    coherence_amo(&mut out);
    sb_local(&mut out);
    mp_static(&mut out);
    fence(&mut out);
    signal(&mut out);
    nested(&mut out);
    lock(&mut out);
    collective(&mut out);
    out
}

/// MP: T0 stores data, then sets a flag with an atomic; T1 waits for the
/// flag, then reads the data. Every placement of data and flag, every way
/// to write, release, read; the writer as a task, the main thread or a
/// foreign thread.
fn mp(out: &mut Vec<Program>, size: Size) {
    let (l0, l1, l2) = (0u8, 1u8, 2u8);
    // Transfers over max_msg_size: the ways that matter for chunks only.
    let chunked = size == Size::OverMaxMsg;
    for dp in PLACES {
        for fp in PLACES {
            for (k, (wr, rel, rd)) in [
                (DataWrite::Put, Release::Write, DataRead::Get),
                (DataWrite::PutNb, Release::FetchAdd, DataRead::GetNb),
                (DataWrite::PutNbLate, Release::Cas, DataRead::OnHome),
                (DataWrite::Put, Release::Add, DataRead::GetNb),
                (DataWrite::PutNbLate, Release::Write, DataRead::Get),
                (DataWrite::PutNb, Release::Write, DataRead::OnHome),
            ]
            .into_iter()
            .enumerate()
            {
                if chunked && !matches!(k, 0 | 2 | 4) {
                    continue;
                }
                let kinds: &[ThreadKind] = if k == 0 && !chunked {
                    &[ThreadKind::Task, ThreadKind::Main, ThreadKind::Foreign]
                } else {
                    &[ThreadKind::Task]
                };
                // The reader waits with an atomic read, and where the flag
                // is on its own locale also with the point-to-point calls.
                let mut awaits = vec![None];
                if fp == Place::Peer && !chunked && matches!(k, 0 | 3) {
                    awaits.extend([Some(false), Some(true)]);
                }
                for &kind in kinds {
                    for &local in &awaits {
                        if local.is_some() && kind != ThreadKind::Task {
                            continue;
                        }
                        let mut b = B::new();
                        let d = b.word(home(dp, l0, l1, l2), false);
                        let f = b.word(home(fp, l0, l1, l2), true);
                        let t0 = b.thread(l0, kind);
                        let t1 = b.thread(l1, ThreadKind::Task);
                        let late = write_data(&mut b, t0, d, wr);
                        release(&mut b, t0, f, rel);
                        if let Some(h) = late {
                            b.push(t0, Step::Wait { h });
                        }
                        b.push(t1, await_step(f, 1, local));
                        read_data(&mut b, t1, d, rd);
                        out.push(b.build("MP", size, false));
                    }
                }
            }
        }
    }
}

/// Waits for `w == v`: with an atomic read (`None`), or with the
/// point-to-point calls (`Some(poll)`; the word is the thread's own).
fn await_step(w: u8, v: u8, local: Option<bool>) -> Step {
    match local {
        None => Step::Await { w, v },
        Some(poll) => Step::AwaitLocal { w, v, poll },
    }
}

/// TASK-CREATE: T0 stores, then starts a child that reads (begin on this
/// locale, on_nb / on_fast_nb to itself, on_nb / on to the peer).
fn task_create(out: &mut Vec<Program>, size: Size) {
    let (l0, l1, l2) = (0u8, 1u8, 2u8);
    for dp in PLACES {
        for (wr, start) in [
            (DataWrite::Put, "begin"),
            (DataWrite::PutNb, "begin"),
            (DataWrite::Put, "on_nb_self"),
            (DataWrite::PutNbLate, "on_nb_self"),
            (DataWrite::Put, "on_fast_nb_self"),
            (DataWrite::Put, "on_nb_peer"),
            (DataWrite::PutNbLate, "on_peer"),
        ] {
            // A fast body runs in the handler: local steps only.
            if start == "on_fast_nb_self" && dp != Place::Acting {
                continue;
            }
            let mut b = B::new();
            let d = b.word(home(dp, l0, l1, l2), false);
            let t0 = b.thread(l0, ThreadKind::Task);
            let late = write_data(&mut b, t0, d, wr);
            let at = if start.ends_with("peer") { l1 } else { l0 };
            let c = b.thread(at, ThreadKind::Child);
            let r = b.reg();
            b.push(c, Step::Get { w: d, r, nb: None });
            match start {
                "begin" => {
                    b.push(t0, Step::Begin { child: c });
                    b.push(t0, Step::Join { child: c });
                }
                "on_nb_self" | "on_nb_peer" => b.push(t0, Step::on(c, OnKind::Nb)),
                "on_fast_nb_self" => b.push(t0, Step::on(c, OnKind::FastNb)),
                _ => b.push(t0, Step::on(c, OnKind::Blocking)),
            }
            if let Some(h) = late {
                b.push(t0, Step::Wait { h });
            }
            out.push(b.build("TASK-CREATE", size, false));
        }
    }
}

/// TASK-END: children on three locales store (PUT or atomic add); the
/// parent joins them and reads.
fn task_end(out: &mut Vec<Program>, size: Size) {
    for ap in PLACES {
        for (kind, amo) in [
            (OnKind::Blocking, false),
            (OnKind::Blocking, true),
            (OnKind::Fast, false),
        ] {
            let mut b = B::new();
            let t0 = b.thread(0, ThreadKind::Task);
            let mut slots = Vec::new();
            for child_locale in [1u8, 2] {
                // Place seen from the child: on itself, on the parent's
                // locale (its peer), on the other child's.
                let other = if child_locale == 1 { 2 } else { 1 };
                let h = home(ap, child_locale, 0, other);
                // A fast body runs in the handler: local steps only.
                if kind == OnKind::Fast && h != child_locale {
                    continue;
                }
                let a = b.word(h, amo);
                let c = b.thread(child_locale, ThreadKind::Child);
                if amo {
                    b.push(c, Step::AAdd { w: a });
                } else {
                    b.push(c, Step::put(a, child_locale));
                }
                b.push(t0, Step::on(c, kind));
                slots.push(a);
            }
            if slots.is_empty() {
                continue;
            }
            for a in slots {
                let r = b.reg();
                if amo {
                    b.push(t0, Step::ARead { w: a, r });
                } else {
                    b.push(t0, Step::Get { w: a, r, nb: None });
                }
            }
            out.push(b.build("TASK-END", size, false));
        }
        // A begin on this locale storing remotely, joined, then read.
        let mut b = B::new();
        let t0 = b.thread(0, ThreadKind::Task);
        let a = b.word(home(ap, 0, 1, 2), false);
        let c = b.thread(0, ThreadKind::Child);
        b.push(c, Step::put(a, 1));
        b.push(t0, Step::Begin { child: c });
        b.push(t0, Step::Join { child: c });
        let r = b.reg();
        b.push(t0, Step::Get { w: a, r, nb: None });
        out.push(b.build("TASK-END", size, false));
    }
}

/// WAR: a non-blocking GET, then a write of the same word before the wait
/// (by the same task, by its on-statement, or by another task it releases).
fn war(out: &mut Vec<Program>, size: Size) {
    for xp in [Place::Peer, Place::Third, Place::Acting] {
        for variant in [
            "put",
            "on_put",
            "on_nb_put",
            "release",
            "release_acting",
            "release_third",
            "release_local",
        ] {
            let mut b = B::new();
            let x = b.word(home(xp, 0, 1, 2), false);
            let t0 = b.thread(0, ThreadKind::Task);
            let r = b.reg();
            let h = b.handle();
            b.push(
                t0,
                Step::Get {
                    w: x,
                    r,
                    nb: Some(h),
                },
            );
            match variant {
                "put" => b.push(t0, Step::put(x, 2)),
                "on_put" => {
                    let c = b.thread(b.words[x as usize].home, ThreadKind::Child);
                    b.push(c, Step::put(x, 2));
                    b.push(t0, Step::on(c, OnKind::Blocking));
                }
                "on_nb_put" => {
                    // The release is the on-statement itself (an AM).
                    let c = b.thread(b.words[x as usize].home, ThreadKind::Child);
                    b.push(c, Step::put(x, 2));
                    b.push(t0, Step::on(c, OnKind::Nb));
                }
                _ => {
                    // The flag on the peer (where the released task runs),
                    // on the acting locale, or on a third one (a mapped
                    // peer of the acting locale in the mixed-host cells):
                    // the CPU route's atomics must wait the GET out too.
                    let fh = match variant {
                        "release_acting" => 0,
                        "release_third" => 2,
                        _ => 1,
                    };
                    let f = b.word(fh, true);
                    let t1 = b.thread(1, ThreadKind::Task);
                    b.push(t0, Step::AWrite { w: f, v: 1 });
                    let local = (variant == "release_local").then_some(false);
                    b.push(t1, await_step(f, 1, local));
                    b.push(t1, Step::put(x, 2));
                }
            }
            b.push(t0, Step::Wait { h });
            out.push(b.build("WAR", size, false));
        }
    }
}

/// BARRIER: a store before the barrier is seen after it; the barrier is
/// entered from a task (it must progress its own context while it waits),
/// from the main thread, or a mix.
fn barrier(out: &mut Vec<Program>, size: Size) {
    for dp in PLACES {
        for (k0, k1) in [
            (ThreadKind::Task, ThreadKind::Task),
            (ThreadKind::Main, ThreadKind::Task),
            (ThreadKind::Task, ThreadKind::Main),
        ] {
            let mut b = B::new();
            let d = b.word(home(dp, 0, 1, 2), false);
            let t0 = b.thread(0, k0);
            let t1 = b.thread(1, k1);
            b.push(t0, Step::put(d, 1));
            b.push(t0, Step::Barrier);
            b.push(t1, Step::Barrier);
            let r = b.reg();
            b.push(t1, Step::Get { w: d, r, nb: None });
            for l in 2..LOCALES {
                let t = b.thread(l, ThreadKind::Task);
                b.push(t, Step::Barrier);
            }
            out.push(b.build("BARRIER", size, false));
        }
    }
}

/// RAW and WAW through the public API, blocking and non-blocking, on every
/// placement (one task; the final value is checked too).
fn raw_waw(out: &mut Vec<Program>, size: Size) {
    for xp in PLACES {
        for nb in [false, true] {
            let mut b = B::new();
            let x = b.word(home(xp, 0, 1, 2), false);
            let t0 = b.thread(0, ThreadKind::Task);
            let h1 = nb.then(|| b.handle());
            let h2 = nb.then(|| b.handle());
            b.push(t0, Step::Put { w: x, v: 1, nb: h1 });
            b.push(t0, Step::Put { w: x, v: 2, nb: h2 });
            let r = b.reg();
            b.push(t0, Step::Get { w: x, r, nb: None });
            for h in [h1, h2].into_iter().flatten() {
                b.push(t0, Step::Wait { h });
            }
            out.push(b.build("RAW-WAW", size, false));
        }
    }
}

/// SB with atomics: each task writes one atomic and reads the other; every
/// placement of the two words over four locales, read by read or fetch-add.
fn sb(out: &mut Vec<Program>) {
    for xh in 0..LOCALES {
        for yh in 0..LOCALES {
            for fetch in [false, true] {
                let mut b = B::new();
                let x = b.word(xh, true);
                let y = b.word(yh, true);
                let t0 = b.thread(0, ThreadKind::Task);
                let t1 = b.thread(1, ThreadKind::Task);
                for (t, mine, other) in [(t0, x, y), (t1, y, x)] {
                    b.push(t, Step::AWrite { w: mine, v: 1 });
                    let r = b.reg();
                    if fetch {
                        b.push(t, Step::AFetchAdd { w: other, r });
                    } else {
                        b.push(t, Step::ARead { w: other, r });
                    }
                }
                out.push(b.build("SB", Size::Eight, false));
            }
        }
    }
}

/// Two non-fetching atomics of one thread (data, then flag) that a reader
/// orders: from threads without a context of their own, so they may leave
/// on different shared contexts (run in the unbound cells).
fn unbound_amo(out: &mut Vec<Program>) {
    for kind in [ThreadKind::Main, ThreadKind::Foreign, ThreadKind::Task] {
        for (dh, fh) in [(1u8, 1u8), (2, 1), (1, 2)] {
            let mut b = B::new();
            let d = b.word(dh, true);
            let f = b.word(fh, true);
            let t0 = b.thread(0, kind);
            let t1 = b.thread(1, ThreadKind::Task);
            b.push(t0, Step::AAdd { w: d });
            b.push(t0, Step::AWrite { w: f, v: 1 });
            b.push(t1, Step::Await { w: f, v: 1 });
            read_data(&mut b, t1, d, DataRead::Atomic);
            out.push(b.build("MP-AMO", Size::Eight, true));
        }
    }
}

/// The add window's shortcuts (message-order forces only the *other*
/// targets before an AMO, and a fetching AMO's result puts the earlier PUTs
/// to its target behind it): from a bound task, two non-fetching adds to a
/// data word then an atomic flag write, the flag on the data's locale or
/// another (no proof between the adds and the flag at one target, a proof
/// before a flag elsewhere); and a PUT, a fetch-add at the PUT's target
/// (RAW: the PUT is visible once it returns, so nothing is forced for it
/// later), then a flag on another locale.
fn amo_window(out: &mut Vec<Program>) {
    for (dh, fh) in [(1u8, 1u8), (1, 2)] {
        let mut b = B::new();
        let d = b.word(dh, true);
        let f = b.word(fh, true);
        let t0 = b.thread(0, ThreadKind::Task);
        let t1 = b.thread(1, ThreadKind::Task);
        b.push(t0, Step::AAdd { w: d });
        b.push(t0, Step::AAdd { w: d });
        b.push(t0, Step::AWrite { w: f, v: 1 });
        b.push(t1, Step::Await { w: f, v: 1 });
        read_data(&mut b, t1, d, DataRead::Atomic);
        out.push(b.build("AMO-WINDOW", Size::Eight, false));
    }
    for reader in [1u8, 2] {
        let mut b = B::new();
        let d = b.word(1, false);
        let x = b.word(1, true);
        let f = b.word(2, true);
        let t0 = b.thread(0, ThreadKind::Task);
        let t1 = b.thread(reader, ThreadKind::Task);
        write_data(&mut b, t0, d, DataWrite::Put);
        let r = b.reg();
        b.push(t0, Step::AFetchAdd { w: x, r });
        b.push(t0, Step::AWrite { w: f, v: 1 });
        b.push(t1, Step::Await { w: f, v: 1 });
        read_data(&mut b, t1, d, DataRead::Get);
        out.push(b.build("AMO-WINDOW", Size::Eight, false));
    }
}

/// Unordered adds (flushed in batches that may be in flight together):
/// from a bound task, `add_unordered` to two words, made visible by the
/// task's `fence` or by its end (a child task joined by its parent), then
/// an atomic flag; the reader waits for the flag and reads both words.
/// Words on one locale or two, the flag at the words' locale or another.
fn unordered_add(out: &mut Vec<Program>) {
    for (ah, bh, fh) in [(1u8, 1u8, 1u8), (1, 2, 1), (1, 1, 2)] {
        for by_task_end in [false, true] {
            let mut b = B::new();
            let a = b.word(ah, true);
            let w2 = b.word(bh, true);
            let f = b.word(fh, true);
            let t0 = b.thread(0, ThreadKind::Task);
            let t1 = b.thread(3, ThreadKind::Task);
            if by_task_end {
                let c = b.thread(0, ThreadKind::Child);
                b.push(c, Step::AAddUnordered { w: a });
                b.push(c, Step::AAddUnordered { w: w2 });
                b.push(t0, Step::Begin { child: c });
                b.push(t0, Step::Join { child: c });
            } else {
                b.push(t0, Step::AAddUnordered { w: a });
                b.push(t0, Step::AAddUnordered { w: w2 });
                b.push(t0, Step::Fence);
            }
            b.push(t0, Step::AWrite { w: f, v: 1 });
            b.push(t1, Step::Await { w: f, v: 1 });
            read_data(&mut b, t1, a, DataRead::Atomic);
            read_data(&mut b, t1, w2, DataRead::Atomic);
            out.push(b.build("UNORDERED-ADD", Size::Eight, false));
        }
    }
}

/// Coherence of atomics: two writes by one thread, then a read by it and the
/// final value; plus an atomic on the acting locale after a remote store.
fn coherence_amo(out: &mut Vec<Program>) {
    for xh in 0..3u8 {
        let mut b = B::new();
        let x = b.word(xh, true);
        let t0 = b.thread(0, ThreadKind::Task);
        b.push(t0, Step::AWrite { w: x, v: 1 });
        b.push(t0, Step::AAdd { w: x });
        read_data(&mut b, t0, x, DataRead::Atomic);
        out.push(b.build("COHERENCE", Size::Eight, false));
    }
}

/// SB through the point-to-point reads: each task writes a word of the
/// other's locale with an atomic, then reads a word of its own locale with
/// `test_local`; both reading the old value is forbidden (they are SC
/// reads). The second task on the peer or on a third locale (a mapped peer
/// of the first in the mixed-host cells); the first as a task or the main
/// thread.
fn sb_local(out: &mut Vec<Program>) {
    for t1_locale in [1u8, 2] {
        for kind in [ThreadKind::Task, ThreadKind::Main] {
            for add in [false, true] {
                let mut b = B::new();
                let x = b.word(t1_locale, true);
                let y = b.word(0, true);
                let t0 = b.thread(0, kind);
                let t1 = b.thread(t1_locale, ThreadKind::Task);
                for (t, theirs, mine) in [(t0, x, y), (t1, y, x)] {
                    b.push(
                        t,
                        if add {
                            Step::AAdd { w: theirs }
                        } else {
                            Step::AWrite { w: theirs, v: 1 }
                        },
                    );
                    let r = b.reg();
                    b.push(t, Step::ReadLocal { w: mine, v: 1, r });
                }
                out.push(b.build("SB-LOCAL", Size::Eight, false));
            }
        }
    }
}

/// MP with static data: the data, the flag or both in the executable's
/// static data (mapped by co-located locales, or reached through the
/// provider while their heaps are mapped: `PGAS_LOCAL_PATH=mapped-heap`).
fn mp_static(out: &mut Vec<Program>) {
    let (l0, l1, l2) = (0u8, 1u8, 2u8);
    for (dm, fm) in [
        (Mem::Static, Mem::Heap),
        (Mem::Heap, Mem::Static),
        (Mem::Static, Mem::Static),
    ] {
        for dp in [Place::Peer, Place::Third] {
            for fp in [Place::Acting, Place::Third] {
                for (wr, rel, rd) in [
                    (DataWrite::Put, Release::Write, DataRead::Get),
                    (DataWrite::PutNbLate, Release::Add, DataRead::GetNb),
                ] {
                    let mut b = B::new();
                    let d = b.word_in(home(dp, l0, l1, l2), false, dm);
                    let f = b.word_in(home(fp, l0, l1, l2), true, fm);
                    let t0 = b.thread(l0, ThreadKind::Task);
                    let t1 = b.thread(l1, ThreadKind::Task);
                    let late = write_data(&mut b, t0, d, wr);
                    release(&mut b, t0, f, rel);
                    if let Some(h) = late {
                        b.push(t0, Step::Wait { h });
                    }
                    b.push(t1, Step::Await { w: f, v: 1 });
                    read_data(&mut b, t1, d, rd);
                    out.push(b.build("MP-STATIC", Size::Eight, false));
                }
            }
        }
    }
}

/// FENCE: data PUT, `fence`, flag PUT to the same locale (`shmem_put;
/// shmem_fence; shmem_p`); the reader awaits the flag (atomic read, or the
/// point-to-point wait where the flag is its own) and reads the data. The
/// locale is the peer or a third one (a mapped peer in the mixed-host
/// cells), data and flag on the heap or in static data.
fn fence(out: &mut Vec<Program>) {
    for xh in [1u8, 2] {
        for (dm, fm) in [
            (Mem::Heap, Mem::Heap),
            (Mem::Static, Mem::Heap),
            (Mem::Heap, Mem::Static),
            (Mem::Static, Mem::Static),
        ] {
            for local_reader in [false, true] {
                let mut b = B::new();
                let d = b.word_in(xh, false, dm);
                let f = b.word_in(xh, true, fm);
                let t0 = b.thread(0, ThreadKind::Task);
                let reader = if local_reader { xh } else { 3 };
                let t1 = b.thread(reader, ThreadKind::Task);
                b.push(t0, Step::put(d, 1));
                b.push(t0, Step::Fence);
                b.push(t0, Step::PutFlag { w: f, v: 1 });
                b.push(t1, await_step(f, 1, local_reader.then_some(false)));
                let r = b.reg();
                b.push(t1, Step::Get { w: d, r, nb: None });
                out.push(b.build("FENCE", Size::Eight, false));
            }
        }
    }
}

/// SIGNAL: `put_with_signal`, then the reader awaits the signal (atomic
/// read, or the point-to-point wait where it is its own) and reads the data.
fn signal(out: &mut Vec<Program>) {
    let (l0, l1, l2) = (0u8, 1u8, 2u8);
    for (dp, sp, dm) in [
        (Place::Peer, Place::Peer, Mem::Heap),
        (Place::Third, Place::Third, Mem::Heap),
        (Place::Third, Place::Peer, Mem::Heap),
        (Place::Peer, Place::Acting, Mem::Heap),
        (Place::Third, Place::Third, Mem::Static),
    ] {
        for local in [false, true] {
            if local && sp != Place::Peer {
                continue;
            }
            let mut b = B::new();
            let d = b.word_in(home(dp, l0, l1, l2), false, dm);
            let sig = b.word(home(sp, l0, l1, l2), true);
            let t0 = b.thread(l0, ThreadKind::Task);
            let t1 = b.thread(l1, ThreadKind::Task);
            b.push(t0, Step::PutSignal { w: d, v: 1, sig });
            b.push(t1, await_step(sig, 1, local.then_some(false)));
            let r = b.reg();
            b.push(t1, Step::Get { w: d, r, nb: None });
            out.push(b.build("SIGNAL", Size::Eight, false));
        }
    }
}

/// NESTED: a task whose store waits for its own postponed atomic (a
/// non-fetching AMO via AM to the same locale) and runs another task
/// meanwhile (help-while-waiting, one worker), whose end is a boundary of
/// the same context; then it releases a reader with an atomic on its own
/// locale or a mapped peer's (the CPU route). The reader must see the store
/// and the atomic. Meaningful with `PGAS_NUM_WORKERS=1` and CPU-route
/// atomics (`PGAS_AMO_VIA_AM=1`, or the mixed-host cells).
fn nested(out: &mut Vec<Program>) {
    for (dh, fh) in [(1u8, 0u8), (1, 2), (2, 0)] {
        for helper_stores in [false, true] {
            let mut b = B::new();
            let a = b.word(dh, true);
            let d = b.word(dh, false);
            let f = b.word(fh, true);
            let e = b.word(0, false);
            let t0 = b.thread(0, ThreadKind::Task);
            let t2 = b.thread(0, ThreadKind::Child);
            let t1 = b.thread(3, ThreadKind::Task);
            // The begin first: its task-create boundary would settle the
            // add; queued behind the running task, the child is what the
            // PUT's settle runs while it waits (one worker).
            b.push(t0, Step::Begin { child: t2 });
            b.push(t0, Step::AAdd { w: a });
            b.push(t0, Step::put(d, 1));
            b.push(t0, Step::AWrite { w: f, v: 1 });
            b.push(t0, Step::Join { child: t2 });
            if helper_stores {
                b.push(t2, Step::put(e, 1));
            } else {
                let r = b.reg();
                b.push(t2, Step::Get { w: e, r, nb: None });
            }
            b.push(t1, Step::Await { w: f, v: 1 });
            let r = b.reg();
            b.push(t1, Step::Get { w: d, r, nb: None });
            read_data(&mut b, t1, a, DataRead::Atomic);
            out.push(b.build("NESTED", Size::Eight, false));
        }
    }
}

/// LOCK: three tasks on three locales increment a plain word under an MCS
/// lock (the lock word on one of them or a fourth, the word on the peer or
/// a third locale): mutual exclusion and the data's visibility from holder
/// to holder.
fn lock(out: &mut Vec<Program>) {
    for lh in [0u8, 1, 3] {
        for xh in [1u8, 2] {
            let mut b = B::new();
            let l = b.word_in(lh, true, Mem::Lock);
            let x = b.word(xh, false);
            for at in [0u8, 1, 2] {
                let t = b.thread(at, ThreadKind::Task);
                b.push(t, Step::Lock { l });
                let r = b.reg();
                b.push(t, Step::Incr { w: x, r });
                b.push(t, Step::Unlock { l });
            }
            out.push(b.build("LOCK", Size::Eight, false));
        }
    }
}

/// COLLECTIVE: a store before a collective of the world team is seen after
/// it (every collective is a boundary), with the collective's own result
/// checked by the runner.
fn collective(out: &mut Vec<Program>) {
    for kind in Coll::ALL {
        for dh in [1u8, 2] {
            let mut b = B::new();
            let d = b.word(dh, false);
            let t0 = b.thread(0, ThreadKind::Task);
            b.push(t0, Step::put(d, 1));
            b.push(t0, Step::Collective { kind });
            let t1 = b.thread(1, ThreadKind::Task);
            b.push(t1, Step::Collective { kind });
            let r = b.reg();
            b.push(t1, Step::Get { w: d, r, nb: None });
            for l in 2..LOCALES {
                let t = b.thread(l, ThreadKind::Task);
                b.push(t, Step::Collective { kind });
            }
            out.push(b.build("COLLECTIVE", Size::Eight, false));
        }
    }
}
