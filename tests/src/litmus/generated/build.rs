//! The program builder of the generator: words, registers, handles and
//! threads, and the ways a family writes, releases and reads a word.

use super::program::{Mem, OnKind, Program, Size, Step, Thread, ThreadKind, Word};

/// Which locale a word lives on, seen from the thread that acts on it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Place {
    Acting,
    Peer,
    Third,
}

pub(super) const PLACES: [Place; 3] = [Place::Acting, Place::Peer, Place::Third];

pub(super) fn home(p: Place, acting: u8, peer: u8, third: u8) -> u8 {
    match p {
        Place::Acting => acting,
        Place::Peer => peer,
        Place::Third => third,
    }
}

/// Builds one program: words first, then threads.
pub(super) struct B {
    pub(super) words: Vec<Word>,
    threads: Vec<Thread>,
    regs: u8,
    handles: u8,
}

impl B {
    pub(super) fn new() -> B {
        B {
            words: Vec::new(),
            threads: Vec::new(),
            regs: 0,
            handles: 0,
        }
    }
    pub(super) fn word(&mut self, home: u8, atomic: bool) -> u8 {
        self.word_in(home, atomic, Mem::Heap)
    }
    pub(super) fn word_in(&mut self, home: u8, atomic: bool, mem: Mem) -> u8 {
        self.words.push(Word { home, atomic, mem });
        self.words.len() as u8 - 1
    }
    pub(super) fn reg(&mut self) -> u8 {
        self.regs += 1;
        self.regs - 1
    }
    pub(super) fn handle(&mut self) -> u8 {
        self.handles += 1;
        self.handles - 1
    }
    pub(super) fn thread(&mut self, locale: u8, kind: ThreadKind) -> u8 {
        self.threads.push(Thread {
            locale,
            kind,
            steps: Vec::new(),
        });
        self.threads.len() as u8 - 1
    }
    pub(super) fn push(&mut self, t: u8, s: Step) {
        self.threads[t as usize].steps.push(s);
    }
    pub(super) fn build(self, family: &'static str, size: Size, unbound_cell: bool) -> Program {
        Program {
            family,
            words: self.words,
            threads: self.threads,
            size,
            regs: self.regs,
            unbound_cell,
        }
    }
}

/// How a writer stores a plain data word.
#[derive(Clone, Copy, Debug)]
pub(super) enum DataWrite {
    Put,
    PutNb,
    /// `put_nb`, waited only after the release.
    PutNbLate,
}

/// How a reader loads a data word.
#[derive(Clone, Copy, Debug)]
pub(super) enum DataRead {
    Get,
    GetNb,
    /// `on(home) { r = get(d) }` (a blocking on-statement to the word's home).
    OnHome,
    /// An atomic read.
    Atomic,
}

/// How the flag is set.
#[derive(Clone, Copy, Debug)]
pub(super) enum Release {
    Write,
    FetchAdd,
    Cas,
    Add,
}

pub(super) fn write_data(b: &mut B, t: u8, w: u8, how: DataWrite) -> Option<u8> {
    match how {
        DataWrite::Put => {
            b.push(t, Step::put(w, 1));
            None
        }
        DataWrite::PutNb => {
            let h = b.handle();
            b.push(
                t,
                Step::Put {
                    w,
                    v: 1,
                    nb: Some(h),
                },
            );
            b.push(t, Step::Wait { h });
            None
        }
        DataWrite::PutNbLate => {
            let h = b.handle();
            b.push(
                t,
                Step::Put {
                    w,
                    v: 1,
                    nb: Some(h),
                },
            );
            Some(h)
        }
    }
}

pub(super) fn release(b: &mut B, t: u8, f: u8, how: Release) {
    match how {
        Release::Write => b.push(t, Step::AWrite { w: f, v: 1 }),
        Release::FetchAdd => {
            let r = b.reg();
            b.push(t, Step::AFetchAdd { w: f, r });
        }
        Release::Cas => {
            let r = b.reg();
            b.push(
                t,
                Step::ACas {
                    w: f,
                    expect: 0,
                    new: 1,
                    r,
                },
            );
        }
        Release::Add => b.push(t, Step::AAdd { w: f }),
    }
}

pub(super) fn read_data(b: &mut B, t: u8, w: u8, how: DataRead) {
    let r = b.reg();
    match how {
        DataRead::Get => b.push(t, Step::Get { w, r, nb: None }),
        DataRead::GetNb => {
            let h = b.handle();
            b.push(t, Step::Get { w, r, nb: Some(h) });
            b.push(t, Step::Wait { h });
        }
        DataRead::Atomic => b.push(t, Step::ARead { w, r }),
        DataRead::OnHome => {
            let home = b.words[w as usize].home;
            let c = b.thread(home, ThreadKind::Child);
            b.push(c, Step::Get { w, r, nb: None });
            b.push(t, Step::on(c, OnKind::Blocking));
        }
    }
}
