//! What a read found, in the one spelling every front end reports and the
//! oracles speak: a small value of this iteration (`0` the initial one,
//! `1`, `2`, ... what the writers stored), `old` (whole data of an earlier
//! iteration) or `torn` (a mix). Front ends stamp every value they write
//! with the iteration so that the two failures can be told apart; on the
//! wire (a reply, a gathered line, the C harness's output) a label is one
//! byte, [`Label::code`].
//!
//! The stamp of the Rust API front end is [`stamp`] (`(it + 1) << 8 | v`,
//! repeated over a buffer by [`pattern`], read back by [`decode`]); the C
//! harness (`front::c`) writes `it << 8 | v` with iterations from 1, the
//! same layout; the comm-layer front end stamps each word of a buffer with
//! its index too (a shifted copy reads as torn there).

/// A label's wire code for `old`.
pub const OLD: u8 = 254;
/// A label's wire code for `torn`.
pub const TORN: u8 = 255;

/// What a read found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Label {
    /// Value `v` of this iteration, whole.
    V(u64),
    /// A whole buffer of an earlier iteration.
    Old,
    /// Mixed data.
    Torn,
}

impl Label {
    /// One byte: the value itself, [`OLD`] or [`TORN`].
    pub fn code(self) -> u8 {
        match self {
            Label::V(v) => v as u8,
            Label::Old => OLD,
            Label::Torn => TORN,
        }
    }

    /// The label of a code.
    pub fn from_code(c: u8) -> Label {
        match c {
            OLD => Label::Old,
            TORN => Label::Torn,
            v => Label::V(v as u64),
        }
    }

    /// The oracle's spelling: `1`, `old`, `torn`.
    pub fn text(self) -> String {
        match self {
            Label::V(v) => v.to_string(),
            Label::Old => "old".into(),
            Label::Torn => "torn".into(),
        }
    }
}

/// The spelling of a code ([`Label::text`] of [`Label::from_code`]).
pub fn code_text(c: u8) -> String {
    Label::from_code(c).text()
}

/// The stamped word of value `v` in iteration `it` (never 0: fresh memory
/// reads as `old`).
pub fn stamp(it: u64, v: u8) -> u64 {
    (it + 1) << 8 | v as u64
}

/// `len` bytes of [`stamp`]`(it, v)`, repeated.
pub fn pattern(it: u64, v: u8, len: usize) -> Vec<u8> {
    let s = stamp(it, v).to_le_bytes();
    (0..len).map(|k| s[k % 8]).collect()
}

/// The code of a buffer written with [`pattern`] (at least 8 bytes).
pub fn decode(bytes: &[u8], it: u64) -> u8 {
    let mut s = [0u8; 8];
    s.copy_from_slice(&bytes[..8]);
    if bytes.iter().enumerate().any(|(k, b)| *b != s[k % 8]) {
        return TORN;
    }
    decode_word(u64::from_le_bytes(s), it)
}

/// The code of one stamped word.
pub fn decode_word(word: u64, it: u64) -> u8 {
    if word >> 8 != it + 1 || word & 0xff >= OLD as u64 {
        OLD
    } else {
        (word & 0xff) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_round_trip_and_buffers_decode() {
        for l in [Label::V(0), Label::V(2), Label::Old, Label::Torn] {
            assert_eq!(Label::from_code(l.code()), l);
        }
        assert_eq!(code_text(OLD), "old");
        assert_eq!(code_text(TORN), "torn");
        assert_eq!(code_text(1), "1");
        let b = pattern(5, 2, 20);
        assert_eq!(decode(&b, 5), 2);
        assert_eq!(decode(&b, 6), OLD);
        let mut t = b.clone();
        t[19] ^= 1;
        assert_eq!(decode(&t, 5), TORN);
        assert_eq!(decode_word(0, 0), OLD);
    }
}
