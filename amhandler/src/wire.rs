//! The AM wire format: one fixed 48-byte little-endian header, optionally
//! followed by an inline payload, plus the layout of the initiator's 'done'
//! slots that targets write replies into.
//!
//! Exists so that encoding and decoding live in one place, are tested without
//! a network, and every received message is checked (magic, op, lengths)
//! before anything acts on it.
//!
//! ```text
//! off size field
//!   0   1  op        (Op)
//!   1   1  flags     (FLAG_FAST | FLAG_BLOCKING)
//!   2   2  magic     0xA3C7
//!   4   4  src       initiator locale
//!   8   8  slot      initiator's done slot (heap address), 0 = no reply
//!  16   8  a         ExecOn*: body id; Get/Put/Amo: target address; Free: address
//!  24   8  b         ExecOnLarge / large Put: payload address in the initiator's heap;
//!                    Get: destination in the initiator's heap; Amo: operand bits
//!  32   4  len       payload bytes (inline, or at `b` for the large kinds)
//!  36   4  c         Amo: type index | op index << 8 | fetch << 16
//!  40   8  d         Amo: compare bits
//!                    Reply: slot = done slot, c = done flags, len = reply
//!                    length, a = reply address in the replier's heap if large
//!  48 len  payload   (inline kinds only)
//! ```

use crate::error::{Error, Result};
use comm_ofi::{cpu_amo, AmoRequest, GlobalAddr, Locale};

/// Header bytes.
pub const HEADER: usize = 48;
/// Largest inline payload; larger arguments travel by GET from the initiator.
pub const INLINE_MAX: usize = 1024;
/// Largest request on the wire.
pub const MAX_REQUEST: usize = HEADER + INLINE_MAX;
/// Magic number in every header.
pub const MAGIC: u16 = 0xA3C7;

/// The body runs in the target's handler thread.
pub const FLAG_FAST: u8 = 1;
/// The initiator waits: the target replies into `slot`.
pub const FLAG_BLOCKING: u8 = 2;

/// Inline reply bytes in a slot (a larger reply stays in the target's heap
/// and the initiator GETs it).
pub const SLOT_INLINE: usize = INLINE_MAX;
/// Bytes of one done slot in the initiator's heap: the done word, then the
/// inline reply area.
pub const SLOT_SIZE: usize = (8 + SLOT_INLINE).next_multiple_of(128);

/// Largest reply of one request (its length travels as a `u32` in a Reply
/// header); a body that returns more gets an error reply instead.
pub const MAX_REPLY: usize = u32::MAX as usize;

/// Done word: nonzero once written; the flags and the reply length.
pub const DONE_SET: u64 = 1;
/// Done word flag: the reply is too large for the slot; the slot's reply area
/// holds its address in the target's heap (initiator GETs it, then sends Free).
pub const DONE_LARGE: u64 = 2;
/// Done word flag: the reply is an error message, not a result.
pub const DONE_ERROR: u64 = 4;

/// Encodes a done word.
pub fn done_word(len: usize, large: bool, error: bool) -> u64 {
    DONE_SET
        | if large { DONE_LARGE } else { 0 }
        | if error { DONE_ERROR } else { 0 }
        | ((len as u64) << 8)
}

/// Decodes a done word into (len, large, error), trusting it (words this
/// process wrote itself); a word a peer wrote goes through [`check_done`].
pub fn parse_done(w: u64) -> (usize, bool, bool) {
    ((w >> 8) as usize, w & DONE_LARGE != 0, w & DONE_ERROR != 0)
}

/// Decodes a done word a peer wrote into our slot (`PGAS_AM_DONE=put`, or
/// a Reply message's flags): (len, large, error), or why it cannot be one
/// of ours. An inline reply fits the slot; a large one is longer than the
/// slot's inline area and at most [`MAX_REPLY`] bytes; no unknown flag bit.
pub fn check_done(w: u64) -> std::result::Result<(usize, bool, bool), String> {
    let (len, large, error) = parse_done(w);
    let flags = w & 0xff;
    if flags & !(DONE_SET | DONE_LARGE | DONE_ERROR) != 0 || flags & DONE_SET == 0 {
        return Err(format!("done word {w:#x} has flags {flags:#x}"));
    }
    if !large && len > SLOT_INLINE {
        return Err(format!(
            "done word {w:#x}: a {len}-byte inline reply does not fit the {SLOT_INLINE}-byte slot"
        ));
    }
    if large && (len <= SLOT_INLINE || len > MAX_REPLY) {
        return Err(format!(
            "done word {w:#x}: a large reply of {len} bytes (must be {}..={MAX_REPLY})",
            SLOT_INLINE + 1
        ));
    }
    Ok((len, large, error))
}

/// AM kinds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Op {
    /// Execute a body; arguments inline.
    ExecOn = 1,
    /// Execute a body; arguments fetched by GET from the initiator.
    ExecOnLarge = 2,
    /// RMA GET on memory the target did not register: the target PUTs it back.
    Get = 3,
    /// RMA PUT on memory the target did not register: inline, or the target GETs it.
    Put = 4,
    /// Atomic on a word of the target, done with CPU atomics there.
    Amo = 5,
    /// Free a heap buffer of the target (large payload / large reply fetched).
    Free = 6,
    /// Blocking no-op (liveness, visibility of native AMOs).
    Nop = 7,
    /// The sender will send nothing more (finalize).
    Shutdown = 8,
    /// Reply of a blocking request (`PGAS_AM_DONE=msg`): `slot` names the
    /// initiator's done slot, `c` the done flags, `len` the reply length,
    /// `a` the reply's address in the replier's heap if large, else the
    /// reply follows inline.
    Reply = 9,
}

impl Op {
    fn from_u8(v: u8) -> Option<Op> {
        Some(match v {
            1 => Op::ExecOn,
            2 => Op::ExecOnLarge,
            3 => Op::Get,
            4 => Op::Put,
            5 => Op::Amo,
            6 => Op::Free,
            7 => Op::Nop,
            8 => Op::Shutdown,
            9 => Op::Reply,
            _ => return None,
        })
    }
}

/// A decoded header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Header {
    /// Kind.
    pub op: Op,
    /// `FLAG_*` bits.
    pub flags: u8,
    /// Initiator (a `u32` on the wire).
    pub src: Locale,
    /// Initiator's done slot, 0 = none.
    pub slot: u64,
    /// See the module table.
    pub a: u64,
    /// See the module table.
    pub b: u64,
    /// Payload length.
    pub len: u32,
    /// See the module table.
    pub c: u32,
    /// See the module table.
    pub d: u64,
}

impl Header {
    /// A header with every operand zero.
    pub fn new(op: Op, flags: u8, src: Locale, slot: u64) -> Header {
        Header {
            op,
            flags,
            src,
            slot,
            a: 0,
            b: 0,
            len: 0,
            c: 0,
            d: 0,
        }
    }

    /// Writes the atomic `req` into an Amo request's fields (see the
    /// module table): its word's address, operand and compare bits, and
    /// type, op and fetch as codes.
    pub fn set_amo(&mut self, req: &AmoRequest) {
        self.a = req.target.addr;
        self.b = req.operand;
        self.d = req.compare;
        self.c =
            cpu_amo::type_code(req.ty) | cpu_amo::op_code(req.op) << 8 | (req.fetch as u32) << 16;
    }

    /// The atomic an Amo request carries, its word on `owner` (the locale
    /// that received it); `None` if a code is unknown.
    pub fn amo(&self, owner: Locale) -> Option<AmoRequest> {
        Some(AmoRequest {
            target: GlobalAddr::new(owner, self.a),
            ty: cpu_amo::type_from(self.c & 0xff)?,
            op: cpu_amo::op_from((self.c >> 8) & 0xff)?,
            operand: self.b,
            compare: self.d,
            fetch: (self.c >> 16) & 1 != 0,
        })
    }

    /// Whether the body runs in the handler thread.
    pub fn fast(&self) -> bool {
        self.flags & FLAG_FAST != 0
    }

    /// Whether the initiator waits for a reply.
    pub fn blocking(&self) -> bool {
        self.flags & FLAG_BLOCKING != 0
    }

    /// Whether the payload follows the header.
    pub fn inline_payload(&self) -> bool {
        matches!(self.op, Op::ExecOn)
            || (self.op == Op::Put && self.b == 0)
            || (self.op == Op::Reply && self.c as u64 & DONE_LARGE == 0)
    }

    /// Writes the header into `out[..HEADER]`.
    pub fn encode(&self, out: &mut [u8]) {
        out[0] = self.op as u8;
        out[1] = self.flags;
        out[2..4].copy_from_slice(&MAGIC.to_le_bytes());
        out[4..8].copy_from_slice(&(self.src as u32).to_le_bytes());
        out[8..16].copy_from_slice(&self.slot.to_le_bytes());
        out[16..24].copy_from_slice(&self.a.to_le_bytes());
        out[24..32].copy_from_slice(&self.b.to_le_bytes());
        out[32..36].copy_from_slice(&self.len.to_le_bytes());
        out[36..40].copy_from_slice(&self.c.to_le_bytes());
        out[40..48].copy_from_slice(&self.d.to_le_bytes());
    }

    /// Decodes and checks a received message; returns the header and the
    /// inline payload.
    pub fn decode(msg: &[u8]) -> Result<(Header, &[u8])> {
        let bad = |why: String| Error::Unsupported(format!("malformed active message: {why}"));
        if msg.len() < HEADER {
            return Err(bad(format!(
                "{} bytes, shorter than the {HEADER}-byte header",
                msg.len()
            )));
        }
        let u32_at = |o: usize| u32::from_le_bytes(msg[o..o + 4].try_into().expect("4 bytes"));
        let u64_at = |o: usize| u64::from_le_bytes(msg[o..o + 8].try_into().expect("8 bytes"));
        let magic = u16::from_le_bytes([msg[2], msg[3]]);
        if magic != MAGIC {
            return Err(bad(format!("magic {magic:#06x}, expected {MAGIC:#06x}")));
        }
        let op = Op::from_u8(msg[0]).ok_or_else(|| bad(format!("unknown op {}", msg[0])))?;
        let h = Header {
            op,
            flags: msg[1],
            src: u32_at(4) as Locale,
            slot: u64_at(8),
            a: u64_at(16),
            b: u64_at(24),
            len: u32_at(32),
            c: u32_at(36),
            d: u64_at(40),
        };
        let payload = &msg[HEADER..];
        let expect = if h.inline_payload() {
            h.len as usize
        } else {
            0
        };
        if payload.len() != expect {
            return Err(bad(format!(
                "{:?} from locale {} carries {} payload bytes, header says {expect}",
                h.op,
                h.src,
                payload.len()
            )));
        }
        if h.blocking() && h.slot == 0 {
            return Err(bad(format!(
                "blocking {:?} from locale {} without a done slot",
                h.op, h.src
            )));
        }
        Ok((h, payload))
    }

    /// What a decoded header must also satisfy before the receiver acts on
    /// it, checked without the network: a sender inside the job of
    /// `locales`, known flag bits, aligned done slots, operands each kind
    /// needs (an atomic's codes, the large kinds' buffers), lengths a
    /// sender of ours would use. The ranges in the sender's heap are
    /// checked by the receiver against the exchanged heaps
    /// (`Comm::check_range`) before anything is allocated for them.
    pub fn check(&self, locales: Locale) -> Result<()> {
        let bad = |why: String| {
            Error::Unsupported(format!(
                "malformed active message: {:?} from locale {}: {why}",
                self.op, self.src
            ))
        };
        if self.src >= locales {
            return Err(bad(format!("sender outside the job of {locales} locales")));
        }
        if self.flags & !(FLAG_FAST | FLAG_BLOCKING) != 0 {
            return Err(bad(format!("unknown flags {:#04x}", self.flags)));
        }
        if self.blocking() && self.slot % 8 != 0 {
            return Err(bad(format!("done slot {:#x} not 8-aligned", self.slot)));
        }
        let len = self.len as usize;
        match self.op {
            Op::ExecOn | Op::Put if self.inline_payload() && len > INLINE_MAX => {
                Err(bad(format!("{len} inline bytes, over {INLINE_MAX}")))
            }
            Op::ExecOnLarge | Op::Put if !self.inline_payload() && self.b == 0 => {
                Err(bad("large payload without its address".into()))
            }
            Op::ExecOnLarge if len <= INLINE_MAX => Err(bad(format!(
                "a {len}-byte payload sent as large (at most {INLINE_MAX} go inline)"
            ))),
            Op::Get if self.b == 0 => Err(bad("GET without a destination".into())),
            Op::Amo => {
                let known = self
                    .amo(self.src)
                    .is_some_and(|r| cpu_amo::valid(r.ty, r.op));
                if !known || self.c >> 17 != 0 {
                    return Err(bad(format!("unknown atomic code {:#x}", self.c)));
                }
                Ok(())
            }
            Op::Reply => {
                if self.slot == 0 || self.slot % 8 != 0 {
                    return Err(bad(format!("done slot {:#x}", self.slot)));
                }
                // The done flags travel in `c`'s low byte, the length in
                // `len`: a bit above would mean something else in a word.
                if self.c > 0xff {
                    return Err(bad(format!("done flags {:#x}", self.c)));
                }
                let w = u64::from(self.c) | (u64::from(self.len) << 8);
                let (_, large, _) = check_done(w).map_err(bad)?;
                if large && self.a == 0 {
                    return Err(bad("large reply without its address".into()));
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

/// A reply of at most one word (a no-op's nothing, an atomic's old value):
/// what the AM poller answers a request with, kept on the stack (no
/// allocation per atomic) and, when the transmit queue is full, in
/// `Am::deferred_answers`.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct WordReply {
    bytes: [u8; 8],
    len: usize,
}

impl WordReply {
    /// The low `len` bytes (little-endian) of `v`.
    pub(crate) fn word(v: u64, len: usize) -> Self {
        debug_assert!(len <= 8, "a poller answer is at most one word");
        WordReply {
            bytes: v.to_le_bytes(),
            len,
        }
    }

    /// The answer's bytes.
    pub(crate) fn as_slice(&self) -> &[u8] {
        &self.bytes[..self.len]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roundtrip() {
        let mut h = Header::new(Op::ExecOn, FLAG_BLOCKING | FLAG_FAST, 7, 0x1000);
        h.a = 0xdead_beef_0000_0001;
        h.len = 3;
        let mut buf = vec![0u8; HEADER + 3];
        h.encode(&mut buf);
        buf[HEADER..].copy_from_slice(b"abc");
        let (g, p) = Header::decode(&buf).unwrap();
        assert_eq!(g, h);
        assert_eq!(p, b"abc");
        assert!(g.fast() && g.blocking());
    }

    #[test]
    fn rejects_garbage() {
        assert!(Header::decode(&[0u8; 10]).is_err());
        let mut buf = vec![0u8; HEADER];
        Header::new(Op::Nop, FLAG_BLOCKING, 1, 64).encode(&mut buf);
        assert!(Header::decode(&buf).is_ok());
        for (at, byte, complaint) in [(2, 0, "magic"), (0, 99, "unknown op")] {
            let mut bad = buf.clone();
            bad[at] = byte;
            let e = Header::decode(&bad).unwrap_err().to_string();
            assert!(e.contains(complaint), "{e}");
        }
        // Blocking without a slot.
        Header::new(Op::Nop, FLAG_BLOCKING, 1, 0).encode(&mut buf);
        assert!(Header::decode(&buf).is_err());
        // Payload length mismatch.
        let mut h = Header::new(Op::ExecOn, 0, 1, 0);
        h.len = 5;
        let mut buf = vec![0u8; HEADER + 4];
        h.encode(&mut buf);
        assert!(Header::decode(&buf)
            .unwrap_err()
            .to_string()
            .contains("payload"));
    }

    #[test]
    fn check_rejects_what_no_sender_of_ours_sends() {
        let ok = Header::new(Op::Nop, FLAG_BLOCKING, 1, 128);
        assert!(ok.check(2).is_ok());
        let msg = |h: Header| h.check(2).unwrap_err().to_string();
        assert!(msg(Header::new(Op::Nop, 0, 2, 0)).contains("outside the job of 2"));
        assert!(msg(Header::new(Op::Nop, 0x80, 1, 0)).contains("flags 0x80"));
        assert!(msg(Header::new(Op::Nop, FLAG_BLOCKING, 1, 12)).contains("not 8-aligned"));
        let mut h = Header::new(Op::ExecOnLarge, 0, 1, 0);
        h.len = 5000;
        assert!(msg(h).contains("without its address"));
        h.b = 4096;
        assert!(h.check(2).is_ok());
        h.len = 10;
        assert!(msg(h).contains("sent as large"));
        let mut h = Header::new(Op::Amo, FLAG_BLOCKING, 1, 128);
        h.c = 0xff;
        assert!(msg(h).contains("atomic code"));
        h.c = 3 | 1 << 16;
        assert!(h.check(2).is_ok());
        h.c |= 1 << 20;
        assert!(msg(h).contains("atomic code"));
        let mut h = Header::new(Op::Reply, 0, 1, 128);
        h.c = DONE_SET as u32;
        h.len = 8;
        assert!(h.check(2).is_ok());
        h.len = 5000;
        assert!(msg(h).contains("does not fit"));
        h.c |= DONE_LARGE as u32;
        assert!(msg(h).contains("without its address"));
        h.a = 4096;
        assert!(h.check(2).is_ok());
        h.c = 0x80;
        assert!(msg(h).contains("flags"));
        // Found by the fuzz sweep: flag bits above the low byte.
        h.c = 0x101;
        assert!(msg(h).contains("done flags 0x101"));
    }

    #[test]
    fn done_words_from_peers_are_checked() {
        assert_eq!(
            check_done(done_word(8, false, false)),
            Ok((8, false, false))
        );
        assert_eq!(
            check_done(done_word(5000, true, true)),
            Ok((5000, true, true))
        );
        assert!(check_done(0).is_err());
        assert!(check_done(done_word(5000, false, false)).is_err());
        assert!(check_done(done_word(8, true, false)).is_err());
        assert!(check_done(done_word(MAX_REPLY + 1, true, false)).is_err());
        assert!(check_done(done_word(8, false, false) | 0x40).is_err());
    }

    #[test]
    fn done_words() {
        let w = done_word(1000, true, false);
        assert_ne!(w, 0);
        assert_eq!(parse_done(w), (1000, true, false));
        assert_eq!(parse_done(done_word(0, false, true)), (0, false, true));
        assert_ne!(done_word(0, false, false), 0);
    }
}
