//! A locale that receives malformed active messages from the fabric drops
//! each with a log line and keeps serving the others. Run under `pgasrun`
//! by `tests/tests/hostile_am.rs`.
//!
//! ```text
//! pgasrun -n 3 hostile_am
//! ```
//!
//! Locale 0 sends locale 1, through the AM layer's own port
//! (`AmPort::send`: the bytes go out as they are, as a broken or hostile
//! peer's would), one message of each malformed kind in [`cases`]: short,
//! bad magic, unknown op, payload length, sender outside the job, unknown
//! flags, misaligned done slot, a large argument buffer outside the
//! sender's heap, an unknown atomic code, a non-blocking atomic on a word
//! outside the target's heap, a reply naming a slot that is not the
//! target's, a reply with unknown done flags, a GET into a buffer outside
//! the sender's heap; and a blocking request with a sound done slot but an
//! argument buffer outside the sender's heap, whose sender must get an
//! error reply. Then a blocking on-statement on the same context
//! (dispatched after them). Locale 1 must count exactly that many dropped
//! messages (`Stats::dropped`); locales 0 and 2 must then get right
//! answers from it: on-statements (blocking and not), a GET of a value it
//! PUT, fetch-adds with a checked total.

use amhandler::wire::{self, Header, Op, FLAG_BLOCKING, HEADER};
use pgas_tests::e;
use runtime_shim::{Builder, Runtime};
use std::process::ExitCode;

type R<T = ()> = Result<T, String>;

/// The malformed messages, each with what it is.
fn cases(n: usize, heap_end: u64) -> Vec<(&'static str, Vec<u8>)> {
    let enc = |h: Header, payload: &[u8]| {
        let mut b = vec![0u8; HEADER];
        h.encode(&mut b);
        b.extend_from_slice(payload);
        b
    };
    let nop = enc(Header::new(Op::Nop, 0, 0, 0), &[]);
    let mut out = vec![("short", nop[..10].to_vec())];
    let mut m = nop.clone();
    m[2] ^= 0xff;
    out.push(("bad magic", m));
    let mut m = nop.clone();
    m[0] = 200;
    out.push(("unknown op", m));
    let mut h = Header::new(Op::ExecOn, 0, 0, 0);
    h.len = 9;
    out.push(("payload length", enc(h, b"abc")));
    out.push((
        "sender outside the job",
        enc(Header::new(Op::Nop, 0, n + 5, 0), &[]),
    ));
    out.push(("unknown flags", enc(Header::new(Op::Nop, 0x40, 0, 0), &[])));
    out.push((
        "misaligned slot",
        enc(Header::new(Op::Nop, FLAG_BLOCKING, 0, 0x1003), &[]),
    ));
    let mut h = Header::new(Op::ExecOnLarge, 0, 0, 0);
    h.a = amhandler::fn_id("hostile_am.count").0;
    h.b = heap_end + (1 << 20);
    h.len = u32::MAX;
    out.push(("large arguments outside the sender's heap", enc(h, &[])));
    let mut h = Header::new(Op::Amo, 0, 0, 0);
    h.c = 0xee;
    out.push(("unknown atomic code", enc(h, &[])));
    let mut h = Header::new(Op::Amo, 0, 0, 0);
    h.a = 8; // page 0: outside every heap
    h.c = 3; // u64 (type index 3), op 0
    out.push(("atomic outside the target's heap", enc(h, &[])));
    let mut h = Header::new(Op::Reply, 0, 0, 0x10);
    h.c = wire::DONE_SET as u32;
    out.push(("reply to a slot not the target's", enc(h, &[])));
    let mut h = Header::new(Op::Reply, 0, 0, 0x1000);
    h.c = 0x81;
    out.push(("reply with unknown done flags", enc(h, &[])));
    let mut h = Header::new(Op::Get, 0, 0, 0);
    h.a = 0x1000;
    h.b = 16;
    h.len = 1 << 30;
    out.push(("GET into a buffer outside the sender's heap", enc(h, &[])));
    out
}

fn run() -> R {
    let builder = Builder::new();
    let count = builder
        .register("hostile_am.count", |ctx, args| {
            let v = u64::from_le_bytes(args[..8].try_into().expect("8 bytes"));
            (v + 1 + ctx.rt().here() as u64).to_le_bytes().to_vec()
        })
        .map_err(e("register"))?;
    let rt: &'static Runtime = builder.init().map_err(e("init"))?;
    let (me, n) = (rt.here(), rt.num_locales());
    if n != 3 {
        return Err(format!("run on 3 locales, not {n}"));
    }
    let word = rt.alloc_all::<u64>(2).map_err(e("alloc_all"))?;
    rt.barrier().map_err(e("barrier"))?;
    let comm = rt.am().comm().clone();
    let heap_end = comm.heap().base_addr() + comm.heap().size() as u64;
    let cases = cases(n, heap_end);
    if me == 0 {
        let buf = comm.alloc(64 << 10, 64).map_err(e("alloc"))?;
        for (what, bytes) in &cases {
            // SAFETY: a fresh heap buffer of 64 KiB; every case is shorter.
            let msg = unsafe { std::slice::from_raw_parts_mut(buf.addr as *mut u8, bytes.len()) };
            msg.copy_from_slice(bytes);
            comm.am_port()
                .send(1, msg)
                .map_err(|err| format!("sending the {what:?} case: {err}"))?;
        }
        // A blocking request whose done slot is sound but whose argument
        // buffer is not in our heap: dropped, and we are told (an error
        // reply in the slot).
        let slot = comm.alloc(wire::SLOT_SIZE, 128).map_err(e("alloc slot"))?;
        // SAFETY: a fresh heap allocation of SLOT_SIZE bytes.
        unsafe { std::ptr::write_bytes(slot.addr as *mut u8, 0, wire::SLOT_SIZE) };
        let mut h = Header::new(Op::ExecOnLarge, FLAG_BLOCKING, 0, slot.addr);
        h.a = count.0;
        h.b = heap_end + 4096;
        h.len = 5000;
        // SAFETY: as above, the 64 KiB send buffer.
        let msg = unsafe { std::slice::from_raw_parts_mut(buf.addr as *mut u8, HEADER) };
        h.encode(msg);
        comm.am_port().send(1, msg).map_err(e("blocking case"))?;
        // SAFETY: the slot's first word, 128-aligned in our heap; the
        // target's reply stores it (through our poller), we only load it.
        let done = unsafe { std::sync::atomic::AtomicU64::from_ptr(slot.addr as *mut u64) };
        let t0 = std::time::Instant::now();
        let w = loop {
            let w = done.load(std::sync::atomic::Ordering::Acquire);
            if w != 0 {
                break w;
            }
            if t0.elapsed() > std::time::Duration::from_secs(10) {
                return Err("no reply to the rejected blocking request in 10 s".into());
            }
            std::thread::yield_now();
        };
        let (len, large, error) = wire::parse_done(w);
        // SAFETY: the reply bytes follow the done word in the slot, written
        // before it (acquired above).
        let text = unsafe {
            std::slice::from_raw_parts((slot.addr + 8) as *const u8, len.min(wire::SLOT_INLINE))
        };
        let text = String::from_utf8_lossy(text);
        if !error || large || !text.contains("argument buffer") {
            return Err(format!(
                "the rejected blocking request got done word {w:#x} and {text:?}, not an error \
                 naming its argument buffer"
            ));
        }
        comm.free(slot).map_err(e("free slot"))?;
        // Same context, sent after them: dispatched after them.
        let got = rt
            .on(1, count, &41u64.to_le_bytes())
            .map_err(e("on-statement after the malformed messages"))?;
        if got != 43u64.to_le_bytes() {
            return Err(format!("on-statement answered {got:?}, expected 43"));
        }
        comm.free(buf).map_err(e("free"))?;
    }
    rt.barrier()
        .map_err(e("barrier after the malformed messages"))?;
    if me == 1 {
        // Most are dropped by the poller as they arrive; the atomic on a
        // bad word by the handler thread, on its own time.
        let t0 = std::time::Instant::now();
        while rt.am().stats().dropped < cases.len() as u64 + 1
            && t0.elapsed() < std::time::Duration::from_secs(10)
        {
            std::thread::sleep(std::time::Duration::from_millis(1));
        }
        let dropped = rt.am().stats().dropped;
        if dropped != cases.len() as u64 + 1 {
            return Err(format!(
                "locale 1 dropped {dropped} messages, {} were malformed",
                cases.len() + 1
            ));
        }
        rt.put(word.at(1).map_err(e("at"))?, &[7, 0])
            .map_err(e("put"))?;
    }
    rt.barrier().map_err(e("barrier"))?;
    // Locale 1 still serves: both others, every kind of request.
    if me != 1 {
        let target = word.at(1).map_err(e("at"))?;
        for i in 0..50u64 {
            let got = rt
                .on(1, count, &i.to_le_bytes())
                .map_err(e("on-statement"))?;
            if got != (i + 2).to_le_bytes() {
                return Err(format!("on-statement {i} answered {got:?}"));
            }
            rt.on_nb(1, count, &i.to_le_bytes())
                .map_err(e("non-blocking on-statement"))?;
            let v = rt.get_value(target).map_err(e("get"))?;
            if v != 7 {
                return Err(format!("GET from locale 1 read {v}, expected 7"));
            }
            rt.atomic(target.add(1))
                .fetch_add(1)
                .map_err(e("fetch-add"))?;
        }
    }
    rt.barrier().map_err(e("barrier"))?;
    if me == 1 {
        let total = rt
            .get_value(word.at(1).map_err(e("at"))?.add(1))
            .map_err(e("get total"))?;
        if total != 100 {
            return Err(format!(
                "fetch-adds on locale 1 total {total}, expected 100"
            ));
        }
        println!(
            "hostile_am locale 1 dropped {} malformed messages and served on",
            cases.len() + 1
        );
    }
    pgas_tests::finish(
        rt,
        "hostile_am",
        &format!("{} malformed messages", cases.len() + 1),
    )
}

fn main() -> ExitCode {
    pgas_tests::exit("hostile_am", run())
}
