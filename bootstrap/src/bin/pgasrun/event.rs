//! The one channel of pgasrun's threads: what the connection threads and
//! the output forwarders tell the main thread (`job::run`), which owns all
//! the state. Its own module so that the producers (`conn`, `output`) and
//! the consumer (`job`) depend on it, not on each other.

use std::net::TcpStream;
use std::time::Instant;

use bootstrap::wire::Msg;

/// What the helper threads tell the main thread.
pub enum Event {
    /// A locale said hello; `stream` is the write half.
    Connected {
        conn: u64,
        rank: usize,
        pid: u32,
        stream: TcpStream,
    },
    /// A collective, abort, ... from a connected locale, read at `at`.
    Frame {
        conn: u64,
        rank: usize,
        msg: Msg,
        at: Instant,
    },
    /// The connection ended (noticed `at`); `error` if it broke the protocol.
    Closed {
        conn: u64,
        rank: usize,
        at: Instant,
        error: Option<String>,
    },
    /// One of the locale's output pipes reached end of file.
    OutputClosed { rank: usize },
}
