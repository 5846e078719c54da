//! The fuzz targets' bodies: every decoder that reads bytes another process
//! sent, driven with arbitrary bytes, and what must hold of whatever it
//! accepts.
//!
//! Exists apart from `fuzz_targets/` so that the same bodies run three
//! ways: under libFuzzer (`cargo fuzz run <target>`, nightly, with
//! AddressSanitizer), over the committed corpus and a seeded sweep of
//! mutations on the stable toolchain (`tests/corpus.rs`, what
//! `scripts/fuzz --short` falls back to without nightly), and from the
//! seeds below. Each body panics only when a decoder broke its contract:
//! a panic inside a decoder, or an accepted input that violates what the
//! decoder promises (a length over its bound, a re-encoding that decodes
//! to something else). An allocation sized by an attacker shows up as
//! libFuzzer's malloc limit (`scripts/fuzz` passes `-malloc_limit_mb=64`).
//! docs/fuzzing.md lists the targets, their run times and what they found.

use amhandler::wire::{self, Header, Op};
use bootstrap::wire::{decode_parts, encode_parts, Msg, PmixValue};
use comm_ofi::exchange::{check_names, Choice, Registration};
use runtime_shim::{BcastHeader, SlotHeader, BCAST_INLINE, TEAM_INLINE};

/// Locales of the job the AM target pretends to be in.
const LOCALES: usize = 4;

/// An AM as it arrives in a landing zone: header decode, then the checks
/// before the receiver acts on it ([`Header::check`]).
pub fn am_message(data: &[u8]) {
    let Ok((h, payload)) = Header::decode(data) else {
        return;
    };
    let mut again = [0u8; wire::HEADER];
    h.encode(&mut again);
    assert_eq!(
        again[..],
        data[..wire::HEADER],
        "header re-encodes differently"
    );
    let expect = if h.inline_payload() {
        h.len as usize
    } else {
        0
    };
    assert_eq!(payload.len(), expect, "payload length not the header's");
    match h.check(LOCALES) {
        Err(e) => assert!(e.to_string().contains("malformed active message"), "{e}"),
        Ok(()) => {
            assert!(h.src < LOCALES, "sender {} accepted", h.src);
            assert!(!h.blocking() || (h.slot != 0 && h.slot % 8 == 0));
            let len = h.len as usize;
            match h.op {
                Op::ExecOn => assert!(len <= wire::INLINE_MAX),
                Op::ExecOnLarge => assert!(len > wire::INLINE_MAX && h.b != 0),
                Op::Put if h.b == 0 => assert!(len <= wire::INLINE_MAX),
                Op::Get => assert!(h.b != 0),
                Op::Reply => {
                    let w = u64::from(h.c) | (u64::from(h.len) << 8);
                    let (rlen, large, _) = wire::check_done(w).expect("accepted reply word");
                    assert_eq!(rlen, len);
                    assert!(large || payload.len() <= wire::SLOT_INLINE);
                    assert!(!large || h.a != 0);
                }
                _ => {}
            }
        }
    }
}

/// A done word a target wrote into our slot (`PGAS_AM_DONE=put`, or a
/// mapped target): what `take_reply` sizes its buffer by.
pub fn am_reply_word(data: &[u8]) {
    let mut b = [0u8; 8];
    let n = data.len().min(8);
    b[..n].copy_from_slice(&data[..n]);
    let w = u64::from_le_bytes(b);
    if let Ok((len, large, error)) = wire::check_done(w) {
        if large {
            assert!(len > wire::SLOT_INLINE && len <= wire::MAX_REPLY, "{w:#x}");
        } else {
            assert!(len <= wire::SLOT_INLINE, "{w:#x}");
        }
        assert_eq!(wire::done_word(len, large, error), w);
    }
}

/// The launcher connection's frames (both directions: `pgasrun` reads the
/// locales', a locale reads the launcher's), the allgather parts inside a
/// result, and a collective's value under PMIx.
pub fn oob_frame(data: &[u8]) {
    let mut r = data;
    while let Ok(m) = Msg::read_from(&mut r) {
        let enc = m.encode();
        assert_eq!(
            Msg::decode(&enc[4..]).ok(),
            Some(m),
            "re-encoding decodes differently"
        );
    }
    let expected = data.first().map_or(0, |b| (b % 8) as usize);
    if let Ok(parts) = decode_parts(data, expected) {
        assert_eq!(parts.len(), expected);
        assert_eq!(encode_parts(parts.iter().map(|p| p.as_slice())), data);
    }
    if let Ok(v) = PmixValue::decode(data) {
        assert_eq!(v.encode(), data);
    }
}

/// The start-up exchange: endpoint names (before `fi_av_insert`), heap and
/// static registrations, locale 0's choice, the knob agreement and the
/// native-type masks. Records are the input cut at 0xff bytes.
pub fn exchange(data: &[u8]) {
    if let Ok(r) = Registration::decode(1, data) {
        assert_eq!(r.encode(), data);
        assert!(r.heap_size > 0 && r.heap_base.checked_add(r.heap_size).is_some());
        assert!(r.statics_base.checked_add(r.statics_size).is_some());
    }
    if let Ok(c) = Choice::decode(data) {
        assert_eq!(Choice::decode(&c.encode()).ok(), Some(c));
    }
    let records: Vec<Vec<u8>> = data.split(|b| *b == 0xff).map(<[u8]>::to_vec).collect();
    if let Some(own) = records.first() {
        if check_names(&records, own).is_ok() {
            assert!(records
                .iter()
                .all(|r| !r.is_empty() && r.len() <= comm_ofi::exchange::MAX_NAME));
            let padded = comm_ofi::exchange::names_for_av(&records, own);
            assert!(padded.iter().all(|r| r.len() >= own.len()));
        }
    }
    let _ = comm_ofi::agree::check(&records);
    if let Ok(mask) = comm_ofi::agree::intersect_masks(&records) {
        assert!(records.iter().all(|r| r.len() == 8));
        let _ = mask;
    }
}

/// The headers of the collectives' slots: a team slot (what a member PUT)
/// and a broadcast slot (what the root PUT).
pub fn collective_headers(data: &[u8]) {
    let mut team = [0u8; SlotHeader::BYTES];
    let n = data.len().min(team.len());
    team[..n].copy_from_slice(&data[..n]);
    if let Ok(Some(h)) = SlotHeader::decode(&team) {
        match h.large_at {
            None => assert!(h.len <= TEAM_INLINE),
            Some(a) => assert!(h.len > TEAM_INLINE && a != 0),
        }
        assert_eq!(SlotHeader::decode(&h.encode()), Ok(Some(h)));
    }
    let mut bcast = [0u8; BcastHeader::BYTES];
    let rest = &data[n..];
    let m = rest.len().min(bcast.len());
    bcast[..m].copy_from_slice(&rest[..m]);
    if let Ok(h) = BcastHeader::decode(&bcast) {
        match h.large_at {
            None => assert!(h.len <= BCAST_INLINE),
            Some(a) => assert!(h.len > BCAST_INLINE && a != 0),
        }
        assert_eq!(BcastHeader::decode(&h.encode()), Ok(h));
    }
}

/// A target's body.
pub type Body = fn(&[u8]);

/// Every target by name.
pub const TARGETS: [(&str, Body); 5] = [
    ("am_message", am_message),
    ("am_reply_word", am_reply_word),
    ("oob_frame", oob_frame),
    ("exchange", exchange),
    ("collective_headers", collective_headers),
];

/// Valid inputs of each target (what a peer of ours sends), the corpus's
/// starting points.
pub fn seeds(target: &str) -> Vec<Vec<u8>> {
    match target {
        "am_message" => {
            let mut out = Vec::new();
            let mut push = |h: Header, payload: &[u8]| {
                let mut b = vec![0u8; wire::HEADER];
                h.encode(&mut b);
                b.extend_from_slice(payload);
                out.push(b);
            };
            let mut h = Header::new(Op::ExecOn, wire::FLAG_BLOCKING, 1, 0x1000);
            h.a = 0x8000_0000_dead_beef;
            h.len = 3;
            push(h, b"abc");
            let mut h = Header::new(Op::ExecOnLarge, 0, 2, 0);
            h.len = 5000;
            h.b = 0x10_0000;
            push(h, &[]);
            let mut h = Header::new(Op::Amo, wire::FLAG_BLOCKING, 3, 0x2000);
            h.a = 0x4000;
            h.b = 1;
            h.c = 3 | 1 << 16;
            push(h, &[]);
            push(Header::new(Op::Nop, wire::FLAG_BLOCKING, 0, 0x80), &[]);
            let mut h = Header::new(Op::Reply, 0, 1, 0x1000);
            h.c = wire::DONE_SET as u32;
            h.len = 8;
            push(h, &7u64.to_le_bytes());
            let mut h = Header::new(Op::Get, wire::FLAG_BLOCKING, 1, 0x1000);
            h.a = 0x7000;
            h.b = 0x9000;
            h.len = 64;
            push(h, &[]);
            out
        }
        "am_reply_word" => vec![
            wire::done_word(8, false, false).to_le_bytes().to_vec(),
            wire::done_word(5000, true, false).to_le_bytes().to_vec(),
            wire::done_word(12, false, true).to_le_bytes().to_vec(),
        ],
        "oob_frame" => {
            let msgs = [
                Msg::Hello {
                    job_id: 42,
                    rank: 1,
                    pid: 7,
                },
                Msg::Collective {
                    seq: 3,
                    op: bootstrap::wire::Op::Allgather,
                    root: 0,
                    data: b"abc".to_vec(),
                },
                Msg::Result {
                    seq: 3,
                    data: encode_parts([&b"ab"[..], &b""[..]].into_iter()),
                },
                Msg::Failed {
                    seq: 4,
                    peer: Some(2),
                    detail: "gone".into(),
                },
                Msg::Stop {
                    reason: "locale 1 died".into(),
                },
            ];
            let mut out: Vec<Vec<u8>> = msgs.iter().map(Msg::encode).collect();
            out.push(msgs.iter().flat_map(Msg::encode).collect());
            out.push(encode_parts([&b"\x02ab"[..], &b"c"[..]].into_iter()));
            out.push(
                PmixValue {
                    kind: 2,
                    root: 1,
                    data: b"name",
                }
                .encode(),
            );
            out
        }
        "exchange" => {
            let reg = Registration {
                heap_base: 0x7f00_0000_0000,
                heap_size: 1 << 30,
                key: 3,
                statics_base: 0x55_0000,
                statics_size: 8192,
                static_key: 4,
            };
            let choice = Choice::Chosen {
                provider: "tcp;ofi_rxm".into(),
                mode: "message-order".into(),
                native_atomics: true,
                domain: "lo".into(),
            };
            let agree = comm_ofi::agree::encode(&[("PGAS_LOCAL_PATH", "mapped".into())]);
            vec![
                reg.encode(),
                choice.encode(),
                [&agree[..], &[0xff], &agree[..]].concat(),
                [
                    &u64::MAX.to_le_bytes()[..],
                    &[0xff],
                    &7u64.to_le_bytes()[..],
                ]
                .concat(),
            ]
        }
        "collective_headers" => {
            let t = SlotHeader {
                len: 12,
                large_at: None,
                epoch: 5,
            };
            let b = BcastHeader {
                len: 4096,
                large_at: Some(0x10_0000),
            };
            vec![
                [&t.encode()[..], &b.encode()[..]].concat(),
                t.encode().to_vec(),
            ]
        }
        _ => Vec::new(),
    }
}
