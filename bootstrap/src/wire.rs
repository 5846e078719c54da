//! Wire format between a locale and `pgasrun`, shared by both sides so they
//! cannot drift apart.
//!
//! Every message is one frame: a little-endian `u32` body length, then the
//! body, whose first byte is the message tag. Integers are little-endian;
//! strings are UTF-8 and run to the end of the body. A connection starts with
//! [`Msg::Hello`] (carrying [`MAGIC`] and [`VERSION`]) answered by
//! [`Msg::Welcome`] or [`Msg::Reject`]. It is not a stable public format: the
//! launcher and the locales of one job come from the same build.

use std::io::{self, Read, Write};

/// "PGAS", first field of a hello, so a stray connection is recognised.
pub const MAGIC: u32 = u32::from_le_bytes(*b"PGAS");
/// Protocol version; bumped on any change of this file's format.
pub const VERSION: u16 = 2;
/// Largest frame body accepted (1 GiB): bounds memory on a corrupt length.
pub const MAX_FRAME: usize = 1 << 30;
/// Largest contribution one locale may pass to a collective (256 MiB).
pub const MAX_PAYLOAD: usize = 256 << 20;

/// The collectives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    /// Gather every locale's bytes to every locale.
    Allgather,
    /// Root's bytes to every locale.
    Broadcast,
    /// Wait for everybody.
    Barrier,
}

impl Op {
    fn to_u8(self) -> u8 {
        match self {
            Op::Allgather => 1,
            Op::Broadcast => 2,
            Op::Barrier => 3,
        }
    }

    fn from_u8(b: u8) -> Option<Op> {
        match b {
            1 => Some(Op::Allgather),
            2 => Some(Op::Broadcast),
            3 => Some(Op::Barrier),
            _ => None,
        }
    }

    /// Lower-case name as the user called it.
    pub fn name(self) -> &'static str {
        match self {
            Op::Allgather => "allgather",
            Op::Broadcast => "broadcast",
            Op::Barrier => "barrier",
        }
    }
}

/// One protocol message. The first six go locale -> launcher, the rest
/// launcher -> locale.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Msg {
    /// First message of a locale: who it claims to be.
    Hello {
        /// [`crate::env::JOB_ID`] as given by the launcher.
        job_id: u64,
        /// [`crate::env::RANK`].
        rank: u32,
        /// The locale's process id (diagnostics only).
        pid: u32,
    },
    /// A locale's part of collective number `seq` (counted from 0 per job).
    Collective {
        /// Sequence number of this collective.
        seq: u64,
        /// Which collective.
        op: Op,
        /// Broadcast root (0 otherwise).
        root: u32,
        /// The contribution (empty for barrier and non-root broadcast).
        data: Vec<u8>,
    },
    /// The locale declares itself failed; the launcher stops the job (a
    /// PMIx job's collective service passes the reason on as `Stop`).
    Abort {
        /// The user's message.
        msg: String,
    },
    /// The program ended the whole job with an exit status (OpenSHMEM's
    /// `shmem_global_exit`): the launcher stops every locale and exits
    /// with `status`.
    GlobalExit {
        /// The job's exit status.
        status: i32,
        /// Who called it, for the launcher's message.
        msg: String,
    },
    /// From now on the locale's process must not end before it sends
    /// [`Msg::Finalized`]; if it does (any exit status), the launcher fails
    /// the job naming it.
    Guard,
    /// The locale has finalized: its process may end.
    Finalized,
    /// The locale's process is exiting with this status (sent from its exit
    /// handler; tells the launcher when it began to die, which a slow exit
    /// would otherwise blur).
    Exiting {
        /// The status passed to `exit`.
        status: i32,
        /// When the exit handler ran ([`monotonic_ns`]): the launcher reads
        /// each locale on a thread of its own, so the order in which it
        /// *reads* two locales' frames is not the order in which they
        /// exited (a reader thread can be descheduled for milliseconds on a
        /// loaded host; a survivor was once blamed for the crash it saw).
        /// Comparable between processes of one host, which is all
        /// `pgasrun` launches.
        sent_ns: u64,
    },
    /// Hello accepted.
    Welcome {
        /// Number of locales in the job.
        size: u32,
    },
    /// Hello refused; the launcher closes the connection.
    Reject {
        /// Why.
        reason: String,
    },
    /// Result of collective `seq`: the allgather parts ([`encode_parts`]),
    /// the broadcast bytes, or empty for a barrier.
    Result {
        /// Sequence number answered.
        seq: u64,
        /// Result bytes.
        data: Vec<u8>,
    },
    /// Collective `seq` cannot complete.
    Failed {
        /// Sequence number answered.
        seq: u64,
        /// The locale whose absence caused it, if that is the reason.
        peer: Option<u32>,
        /// Human-readable reason.
        detail: String,
    },
    /// The job is being stopped. From pgasrun: the locale must exit now.
    /// From a PMIx job's collective service: a locale is ending the job,
    /// for this reason (reported if the connection then closes).
    Stop {
        /// Why (printed by the locale).
        reason: String,
    },
}

const T_HELLO: u8 = 1;
const T_COLLECTIVE: u8 = 2;
const T_ABORT: u8 = 3;
const T_GUARD: u8 = 4;
const T_FINALIZED: u8 = 5;
const T_EXITING: u8 = 6;
const T_GLOBAL_EXIT: u8 = 7;

/// `CLOCK_MONOTONIC` in nanoseconds: one clock for every process of a host
/// (the time stamps of [`Msg::Exiting`]).
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists
    // on Linux, so the call cannot fail.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}
const T_WELCOME: u8 = 11;
const T_REJECT: u8 = 12;
const T_RESULT: u8 = 13;
const T_FAILED: u8 = 14;
const T_STOP: u8 = 15;
const NO_PEER: u32 = u32::MAX;

/// Why a frame could not be read.
#[derive(Debug, thiserror::Error)]
pub enum WireError {
    /// The peer closed the connection (at or inside a frame).
    #[error("connection closed")]
    Closed,
    /// Any other I/O error.
    #[error("{0}")]
    Io(#[from] io::Error),
    /// A frame that does not decode.
    #[error("malformed frame: {0}")]
    Malformed(String),
}

impl Msg {
    /// The message's name, for diagnostics (no payload).
    pub fn name(&self) -> &'static str {
        match self {
            Msg::Hello { .. } => "hello",
            Msg::Collective { .. } => "collective",
            Msg::Abort { .. } => "abort",
            Msg::GlobalExit { .. } => "global exit",
            Msg::Guard => "guard",
            Msg::Finalized => "finalized",
            Msg::Exiting { .. } => "exiting",
            Msg::Welcome { .. } => "welcome",
            Msg::Reject { .. } => "reject",
            Msg::Result { .. } => "result",
            Msg::Failed { .. } => "failed",
            Msg::Stop { .. } => "stop",
        }
    }

    /// The whole frame (length prefix included).
    pub fn encode(&self) -> Vec<u8> {
        let mut b = vec![0u8; 4];
        match self {
            Msg::Hello { job_id, rank, pid } => {
                b.push(T_HELLO);
                b.extend_from_slice(&MAGIC.to_le_bytes());
                b.extend_from_slice(&VERSION.to_le_bytes());
                b.extend_from_slice(&job_id.to_le_bytes());
                b.extend_from_slice(&rank.to_le_bytes());
                b.extend_from_slice(&pid.to_le_bytes());
            }
            Msg::Collective {
                seq,
                op,
                root,
                data,
            } => {
                b.reserve(data.len() + 13);
                b.push(T_COLLECTIVE);
                b.extend_from_slice(&seq.to_le_bytes());
                b.push(op.to_u8());
                b.extend_from_slice(&root.to_le_bytes());
                b.extend_from_slice(data);
            }
            Msg::Abort { msg } => {
                b.push(T_ABORT);
                b.extend_from_slice(msg.as_bytes());
            }
            Msg::GlobalExit { status, msg } => {
                b.push(T_GLOBAL_EXIT);
                b.extend_from_slice(&status.to_le_bytes());
                b.extend_from_slice(msg.as_bytes());
            }
            Msg::Guard => b.push(T_GUARD),
            Msg::Finalized => b.push(T_FINALIZED),
            Msg::Exiting { status, sent_ns } => {
                b.push(T_EXITING);
                b.extend_from_slice(&status.to_le_bytes());
                b.extend_from_slice(&sent_ns.to_le_bytes());
            }
            Msg::Welcome { size } => {
                b.push(T_WELCOME);
                b.extend_from_slice(&size.to_le_bytes());
            }
            Msg::Reject { reason } => {
                b.push(T_REJECT);
                b.extend_from_slice(reason.as_bytes());
            }
            Msg::Result { seq, data } => {
                b.reserve(data.len() + 9);
                b.push(T_RESULT);
                b.extend_from_slice(&seq.to_le_bytes());
                b.extend_from_slice(data);
            }
            Msg::Failed { seq, peer, detail } => {
                b.push(T_FAILED);
                b.extend_from_slice(&seq.to_le_bytes());
                b.extend_from_slice(&peer.unwrap_or(NO_PEER).to_le_bytes());
                b.extend_from_slice(detail.as_bytes());
            }
            Msg::Stop { reason } => {
                b.push(T_STOP);
                b.extend_from_slice(reason.as_bytes());
            }
        }
        let len = u32::try_from(b.len() - 4).expect("frame over 4 GiB");
        b[..4].copy_from_slice(&len.to_le_bytes());
        b
    }

    /// Decodes one frame body (without the length prefix).
    pub fn decode(body: &[u8]) -> Result<Msg, WireError> {
        let mut c = Cursor { b: body, at: 0 };
        let tag = c.u8()?;
        let msg = match tag {
            T_HELLO => {
                let magic = c.u32()?;
                if magic != MAGIC {
                    return Err(WireError::Malformed(format!(
                        "bad magic {magic:#010x} (not a pgas-comm locale?)"
                    )));
                }
                let version = c.u16()?;
                if version != VERSION {
                    return Err(WireError::Malformed(format!(
                        "protocol version {version}, this side speaks {VERSION} \
                         (program and pgasrun from different builds?)"
                    )));
                }
                Msg::Hello {
                    job_id: c.u64()?,
                    rank: c.u32()?,
                    pid: c.u32()?,
                }
            }
            T_COLLECTIVE => {
                let seq = c.u64()?;
                let op_byte = c.u8()?;
                let op = Op::from_u8(op_byte).ok_or_else(|| {
                    WireError::Malformed(format!("unknown collective kind {op_byte}"))
                })?;
                let root = c.u32()?;
                Msg::Collective {
                    seq,
                    op,
                    root,
                    data: c.rest().to_vec(),
                }
            }
            T_ABORT => Msg::Abort { msg: c.string() },
            T_GLOBAL_EXIT => Msg::GlobalExit {
                status: c.u32()? as i32,
                msg: c.string(),
            },
            T_GUARD => Msg::Guard,
            T_FINALIZED => Msg::Finalized,
            T_EXITING => Msg::Exiting {
                status: c.u32()? as i32,
                sent_ns: c.u64()?,
            },
            T_WELCOME => Msg::Welcome { size: c.u32()? },
            T_REJECT => Msg::Reject { reason: c.string() },
            T_RESULT => Msg::Result {
                seq: c.u64()?,
                data: c.rest().to_vec(),
            },
            T_FAILED => {
                let seq = c.u64()?;
                let peer = c.u32()?;
                Msg::Failed {
                    seq,
                    peer: (peer != NO_PEER).then_some(peer),
                    detail: c.string(),
                }
            }
            T_STOP => Msg::Stop { reason: c.string() },
            other => return Err(WireError::Malformed(format!("unknown message tag {other}"))),
        };
        if c.at != body.len() {
            return Err(WireError::Malformed(format!(
                "{} trailing byte(s) after message tag {tag}",
                body.len() - c.at
            )));
        }
        Ok(msg)
    }

    /// Sends one message.
    pub fn write_to(&self, w: &mut impl Write) -> io::Result<()> {
        w.write_all(&self.encode())
    }

    /// Reads one message.
    pub fn read_from(r: &mut impl Read) -> Result<Msg, WireError> {
        let mut len = [0u8; 4];
        read_exact(r, &mut len)?;
        let len = u32::from_le_bytes(len) as usize;
        if len == 0 || len > MAX_FRAME {
            return Err(WireError::Malformed(format!(
                "frame length {len} (must be 1..={MAX_FRAME})"
            )));
        }
        // The buffer grows with the bytes that arrive, never to the length
        // a peer claims before it sent them (a 1 GiB claim is no 1 GiB
        // allocation).
        let mut body = Vec::with_capacity(len.min(READ_CHUNK));
        let got = r
            .take(len as u64)
            .read_to_end(&mut body)
            .map_err(|e| match e.kind() {
                io::ErrorKind::ConnectionReset => WireError::Closed,
                _ => WireError::Io(e),
            })?;
        if got < len {
            return Err(WireError::Closed);
        }
        Msg::decode(&body)
    }
}

/// What [`Msg::read_from`] reserves up front; a longer frame's buffer
/// grows as its bytes arrive.
const READ_CHUNK: usize = 64 << 10;

/// The value a locale puts under PMIx for one collective (no launcher of
/// ours in between): a format byte, the collective's kind, its root (`u32`
/// LE), then the locale's bytes. Decoded by every other locale.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PmixValue<'a> {
    /// Collective kind (the PMIx backend's numbering).
    pub kind: u8,
    /// Broadcast root (0 otherwise).
    pub root: u32,
    /// The locale's contribution.
    pub data: &'a [u8],
}

impl<'a> PmixValue<'a> {
    /// Header bytes before the data.
    pub const HEADER: usize = 6;
    /// The format byte.
    pub const FORMAT: u8 = 1;

    /// The value as put.
    pub fn encode(&self) -> Vec<u8> {
        let mut v = Vec::with_capacity(Self::HEADER + self.data.len());
        v.push(Self::FORMAT);
        v.push(self.kind);
        v.extend_from_slice(&self.root.to_le_bytes());
        v.extend_from_slice(self.data);
        v
    }

    /// Decodes a value another locale put; `Err` says why it is not ours.
    pub fn decode(raw: &'a [u8]) -> Result<PmixValue<'a>, String> {
        let mut c = Cursor { b: raw, at: 0 };
        let format = c.u8().map_err(|e| e.to_string())?;
        if format != Self::FORMAT {
            return Err(format!(
                "format {format}, expected {} ({} bytes)",
                Self::FORMAT,
                raw.len()
            ));
        }
        let kind = c.u8().map_err(|e| e.to_string())?;
        let root = c.u32().map_err(|e| e.to_string())?;
        Ok(PmixValue {
            kind,
            root,
            data: c.rest(),
        })
    }
}

fn read_exact(r: &mut impl Read, buf: &mut [u8]) -> Result<(), WireError> {
    r.read_exact(buf).map_err(|e| match e.kind() {
        io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset => WireError::Closed,
        _ => WireError::Io(e),
    })
}

struct Cursor<'a> {
    b: &'a [u8],
    at: usize,
}

impl<'a> Cursor<'a> {
    fn take(&mut self, n: usize) -> Result<&'a [u8], WireError> {
        if self.b.len() - self.at < n {
            return Err(WireError::Malformed(format!(
                "truncated message: wanted {n} more byte(s) at offset {}, body is {}",
                self.at,
                self.b.len()
            )));
        }
        let s = &self.b[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }
    fn u8(&mut self) -> Result<u8, WireError> {
        Ok(self.take(1)?[0])
    }
    fn u16(&mut self) -> Result<u16, WireError> {
        Ok(u16::from_le_bytes(
            self.take(2)?.try_into().expect("2 bytes"),
        ))
    }
    fn u32(&mut self) -> Result<u32, WireError> {
        Ok(u32::from_le_bytes(
            self.take(4)?.try_into().expect("4 bytes"),
        ))
    }
    fn u64(&mut self) -> Result<u64, WireError> {
        Ok(u64::from_le_bytes(
            self.take(8)?.try_into().expect("8 bytes"),
        ))
    }
    fn rest(&mut self) -> &'a [u8] {
        let s = &self.b[self.at..];
        self.at = self.b.len();
        s
    }
    fn string(&mut self) -> String {
        String::from_utf8_lossy(self.rest()).into_owned()
    }
}

/// Packs allgather parts: `u32` count, then per part `u32` length + bytes.
pub fn encode_parts<'a>(parts: impl ExactSizeIterator<Item = &'a [u8]> + Clone) -> Vec<u8> {
    let total: usize = parts.clone().map(|p| p.len() + 4).sum::<usize>() + 4;
    let mut b = Vec::with_capacity(total);
    b.extend_from_slice(&(parts.len() as u32).to_le_bytes());
    for p in parts {
        b.extend_from_slice(&(p.len() as u32).to_le_bytes());
        b.extend_from_slice(p);
    }
    b
}

/// Size [`encode_parts`] would produce, to check limits before building it.
pub fn encoded_parts_len<'a>(parts: impl Iterator<Item = &'a [u8]>) -> usize {
    parts.map(|p| p.len() + 4).sum::<usize>() + 4
}

/// Unpacks [`encode_parts`]; `expected` is the number of parts (job size).
pub fn decode_parts(data: &[u8], expected: usize) -> Result<Vec<Vec<u8>>, String> {
    let mut c = Cursor { b: data, at: 0 };
    let n = c.u32().map_err(|e| e.to_string())? as usize;
    if n != expected {
        return Err(format!(
            "allgather result has {n} parts, expected {expected}"
        ));
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n {
        let len = c.u32().map_err(|e| format!("part {i}: {e}"))? as usize;
        out.push(c.take(len).map_err(|e| format!("part {i}: {e}"))?.to_vec());
    }
    if c.at != data.len() {
        return Err(format!(
            "{} trailing byte(s) after allgather parts",
            data.len() - c.at
        ));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all_msgs() -> Vec<Msg> {
        vec![
            Msg::Hello {
                job_id: 0xdead_beef_1234,
                rank: 7,
                pid: 4242,
            },
            Msg::Collective {
                seq: 9,
                op: Op::Broadcast,
                root: 3,
                data: b"hello".to_vec(),
            },
            Msg::Collective {
                seq: 0,
                op: Op::Barrier,
                root: 0,
                data: vec![],
            },
            Msg::Abort {
                msg: "disk on fire".into(),
            },
            Msg::GlobalExit {
                status: 7,
                msg: "PE 0 is done".into(),
            },
            Msg::Guard,
            Msg::Finalized,
            Msg::Exiting {
                status: -3,
                sent_ns: 123_456_789,
            },
            Msg::Welcome { size: 4 },
            Msg::Reject {
                reason: "nope".into(),
            },
            Msg::Result {
                seq: 1,
                data: vec![1, 2, 3],
            },
            Msg::Failed {
                seq: 2,
                peer: Some(3),
                detail: "gone".into(),
            },
            Msg::Failed {
                seq: 2,
                peer: None,
                detail: "too big".into(),
            },
            Msg::Stop {
                reason: "locale 1 died".into(),
            },
        ]
    }

    #[test]
    fn every_message_round_trips_through_a_stream() {
        let msgs = all_msgs();
        let mut stream = Vec::new();
        for m in &msgs {
            m.write_to(&mut stream).unwrap();
        }
        let mut r = &stream[..];
        for m in &msgs {
            assert_eq!(&Msg::read_from(&mut r).unwrap(), m);
        }
        assert!(matches!(Msg::read_from(&mut r), Err(WireError::Closed)));
    }

    #[test]
    fn truncated_frame_is_closed_not_garbage() {
        let frame = all_msgs()[1].encode();
        let mut r = &frame[..frame.len() - 1];
        assert!(matches!(Msg::read_from(&mut r), Err(WireError::Closed)));
    }

    #[test]
    fn malformed_bodies_are_rejected_with_a_reason() {
        let cases: Vec<(Vec<u8>, &str)> = vec![
            (vec![99], "unknown message tag 99"),
            (vec![T_WELCOME, 1, 2], "truncated"),
            (vec![T_WELCOME, 1, 0, 0, 0, 5], "trailing"),
            (vec![T_FINALIZED, 0], "trailing"),
            (
                vec![T_COLLECTIVE, 0, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0],
                "kind 9",
            ),
            ([&[T_HELLO][..], b"XXXX", &[1, 0]].concat(), "bad magic"),
            (
                [&[T_HELLO][..], &MAGIC.to_le_bytes(), &[9, 0]].concat(),
                "protocol version 9",
            ),
        ];
        for (body, want) in cases {
            match Msg::decode(&body) {
                Err(WireError::Malformed(m)) => assert!(m.contains(want), "{m:?} lacks {want:?}"),
                other => panic!("{body:?}: expected malformed, got {other:?}"),
            }
        }
    }

    #[test]
    fn oversized_and_empty_lengths_are_rejected() {
        for len in [0u32, (MAX_FRAME + 1) as u32] {
            let mut r = &len.to_le_bytes()[..];
            match Msg::read_from(&mut r) {
                Err(WireError::Malformed(m)) => assert!(m.contains(&len.to_string()), "{m}"),
                other => panic!("{other:?}"),
            }
        }
    }

    #[test]
    fn a_huge_claimed_length_cut_short_is_a_closed_connection() {
        // 1 GiB claimed, 3 bytes sent: the connection closed inside the
        // frame. (That the buffer grows only with the bytes that arrived is
        // checked by the fuzz target oob_frame under a 64 MB malloc limit.)
        let mut frame = (MAX_FRAME as u32).to_le_bytes().to_vec();
        frame.extend_from_slice(&[T_WELCOME, 1, 0]);
        assert!(matches!(
            Msg::read_from(&mut &frame[..]),
            Err(WireError::Closed)
        ));
    }

    #[test]
    fn pmix_values_round_trip_and_foreign_ones_are_named() {
        let v = PmixValue {
            kind: 2,
            root: 3,
            data: b"abc",
        };
        let raw = v.encode();
        assert_eq!(PmixValue::decode(&raw).unwrap(), v);
        assert!(PmixValue::decode(&raw[..4])
            .unwrap_err()
            .contains("truncated"));
        assert!(PmixValue::decode(&[9, 1, 0, 0, 0, 0])
            .unwrap_err()
            .contains("format 9"));
    }

    #[test]
    fn parts_round_trip_and_check_count() {
        let parts: Vec<Vec<u8>> = vec![vec![], b"a".to_vec(), vec![7; 300]];
        let enc = encode_parts(parts.iter().map(|p| p.as_slice()));
        assert_eq!(
            enc.len(),
            encoded_parts_len(parts.iter().map(|p| p.as_slice()))
        );
        assert_eq!(decode_parts(&enc, 3).unwrap(), parts);
        assert!(decode_parts(&enc, 4).unwrap_err().contains("expected 4"));
        assert!(decode_parts(&enc[..enc.len() - 1], 3)
            .unwrap_err()
            .contains("part 2"));
    }
}
