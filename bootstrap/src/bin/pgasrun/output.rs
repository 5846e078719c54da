//! Forwarding of the locales' stdout/stderr to pgasrun's own, one thread per
//! pipe. Output is written a whole line at a time under the terminal stream's
//! lock, so lines of different locales never interleave mid-line; with
//! `--prefix` each line gets `[rank] ` in front.

use std::io::{self, Read, Write};
use std::sync::mpsc::Sender;

use crate::event::Event;

/// A line longer than this is forwarded in pieces (each piece prefixed).
const MAX_LINE: usize = 64 * 1024;

/// Which of pgasrun's streams to write to.
#[derive(Clone, Copy, Debug)]
pub enum Dest {
    Stdout,
    Stderr,
}

impl Dest {
    fn write_lines(self, prefix: Option<&[u8]>, lines: &[u8], add_newline: bool) {
        // Errors (closed terminal, EPIPE) are ignored: we keep draining the
        // pipe so the locale is not blocked, and the job goes on.
        let _ = match self {
            Dest::Stdout => emit(&mut io::stdout().lock(), prefix, lines, add_newline),
            Dest::Stderr => emit(&mut io::stderr().lock(), prefix, lines, add_newline),
        };
    }
}

fn emit(
    w: &mut impl Write,
    prefix: Option<&[u8]>,
    lines: &[u8],
    add_newline: bool,
) -> io::Result<()> {
    match prefix {
        None => w.write_all(lines)?,
        Some(p) => {
            for line in lines.split_inclusive(|&b| b == b'\n') {
                w.write_all(p)?;
                w.write_all(line)?;
            }
        }
    }
    if add_newline {
        w.write_all(b"\n")?;
    }
    w.flush()
}

/// Starts a thread copying `src` to `dest` line by line; it sends
/// [`Event::OutputClosed`] at end of file.
pub fn spawn_forwarder(
    rank: usize,
    src: impl Read + Send + 'static,
    dest: Dest,
    prefix: bool,
    events: Sender<Event>,
) -> io::Result<()> {
    std::thread::Builder::new()
        .name(format!("pgasrun-out-{rank}"))
        .stack_size(128 * 1024)
        .spawn(move || {
            let prefix = prefix.then(|| format!("[{rank}] ").into_bytes());
            forward(src, prefix.as_deref(), |p, l, nl| {
                dest.write_lines(p, l, nl)
            });
            let _ = events.send(Event::OutputClosed { rank });
        })?;
    Ok(())
}

/// Copies `src` to `sink` in whole lines. `sink(prefix, lines, add_newline)`
/// gets one or more complete lines, or at EOF / over-long line a piece.
fn forward(
    mut src: impl Read,
    prefix: Option<&[u8]>,
    mut sink: impl FnMut(Option<&[u8]>, &[u8], bool),
) {
    let mut buf: Vec<u8> = Vec::with_capacity(8192);
    let mut chunk = vec![0u8; 8192];
    loop {
        let n = match src.read(&mut chunk) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => {
                tracing::debug!(error = %e, "reading locale output failed");
                break;
            }
        };
        buf.extend_from_slice(&chunk[..n]);
        if let Some(last_nl) = buf.iter().rposition(|&b| b == b'\n') {
            sink(prefix, &buf[..=last_nl], false);
            buf.drain(..=last_nl);
        }
        if buf.len() >= MAX_LINE {
            sink(prefix, &buf, prefix.is_some());
            buf.clear();
        }
    }
    if !buf.is_empty() {
        // Last line without newline: keep it unchanged unless prefixing,
        // where the next locale's prefix must start on a new line.
        sink(prefix, &buf, prefix.is_some());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A reader returning the given pieces one read at a time.
    struct Pieces(Vec<Vec<u8>>);
    impl Read for Pieces {
        fn read(&mut self, out: &mut [u8]) -> io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            let n = self.0[0].len().min(out.len());
            out[..n].copy_from_slice(&self.0[0][..n]);
            self.0[0].drain(..n);
            if self.0[0].is_empty() {
                self.0.remove(0);
            }
            Ok(n)
        }
    }

    fn run(pieces: &[&str], prefix: Option<&str>) -> (String, Vec<String>) {
        let src = Pieces(pieces.iter().map(|s| s.as_bytes().to_vec()).collect());
        let mut out = Vec::new();
        let mut calls = Vec::new();
        forward(src, prefix.map(str::as_bytes), |p, l, nl| {
            emit(&mut out, p, l, nl).unwrap();
            calls.push(String::from_utf8_lossy(l).into_owned());
        });
        (String::from_utf8(out).unwrap(), calls)
    }

    #[test]
    fn only_whole_lines_are_written() {
        let (out, calls) = run(&["ab", "c\nde", "f\ng\n", "tail"], None);
        assert_eq!(out, "abc\ndef\ng\ntail");
        assert_eq!(calls, vec!["abc\n", "def\ng\n", "tail"]);
    }

    #[test]
    fn prefix_goes_on_every_line_and_ends_partial_line() {
        let (out, _) = run(&["a\nb", "\n\nc"], Some("[3] "));
        assert_eq!(out, "[3] a\n[3] b\n[3] \n[3] c\n");
    }

    #[test]
    fn overlong_line_is_split() {
        let long = "x".repeat(MAX_LINE + 10);
        let (out, calls) = run(&[&long[..MAX_LINE], &long[MAX_LINE..], "\n"], None);
        assert_eq!(out, format!("{long}\n"));
        assert_eq!(calls.len(), 2);
    }
}
