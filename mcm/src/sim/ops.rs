//! The vocabulary of the simulated fabric: addresses, the orderings a
//! simulated provider honours, the shape of a fabric and the operations
//! posted to it. Below both the fabric ([`super::SimFabric`]) and its NICs
//! (`nic.rs`), which take these types from here.

use std::fmt;

use crate::{AmoKind, Locale, Mode};

/// A word of a locale's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Addr {
    /// The locale holding the word.
    pub locale: Locale,
    /// The word's index in that locale's memory.
    pub word: usize,
}

impl Addr {
    /// Word `word` of locale `locale`.
    pub const fn new(locale: Locale, word: usize) -> Self {
        Addr { locale, word }
    }
}

/// The message orderings a simulated provider honours, per (context, target)
/// pair, as `fi_ep(3)` defines them. `raw`, `waw`, `saw` cover RMA and atomic
/// operations alike; the `rma_`/`atomic_` ones only operations of that kind.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub struct ProviderOrdering {
    /// `FI_ORDER_RAW`: reads (GET, fetching AMO) after writes (PUT, AMO).
    pub raw: bool,
    /// `FI_ORDER_WAW`: writes after writes.
    pub waw: bool,
    /// `FI_ORDER_SAW`: sends after writes.
    pub saw: bool,
    /// `FI_ORDER_SAS`: sends after sends.
    pub sas: bool,
    /// `FI_ORDER_RMA_WAW`: PUTs after PUTs.
    pub rma_waw: bool,
    /// `FI_ORDER_ATOMIC_WAW`: atomic writes after atomic writes.
    pub atomic_waw: bool,
    /// `FI_ORDER_ATOMIC_RAW`: fetching atomics after atomic writes.
    pub atomic_raw: bool,
}

impl ProviderOrdering {
    /// The weakest provider `mode` accepts: exactly the orderings the mode's
    /// hints require (SAS is in the base hints of every mode; atomic RAW,
    /// which message-order-fence takes "where offered", is left out).
    pub const fn for_mode(mode: Mode) -> Self {
        let none = ProviderOrdering {
            raw: false,
            waw: false,
            saw: false,
            sas: true,
            rma_waw: false,
            atomic_waw: false,
            atomic_raw: false,
        };
        match mode {
            Mode::MessageOrderFence => ProviderOrdering {
                rma_waw: true,
                atomic_waw: true,
                ..none
            },
            Mode::MessageOrder => ProviderOrdering {
                raw: true,
                waw: true,
                saw: true,
                ..none
            },
            Mode::DeliveryComplete => none,
        }
    }

    /// The weakest provider `selector` accepts: its mode's
    /// ([`for_mode`](Self::for_mode)), plus atomic WAW where the table relies
    /// on it beyond the mode (delivery-complete's AMO window).
    pub fn for_selector<T: crate::Transport>(selector: &crate::Selector<T>) -> Self {
        let mode = Self::for_mode(selector.mode());
        if selector.amo_window() {
            ProviderOrdering {
                atomic_waw: true,
                ..mode
            }
        } else {
            mode
        }
    }

    /// What the original (Chapel) asked for in message-order-fence mode: atomic
    /// RAW/WAR/WAW and SAS, without RMA WAW. Used to show why this layer keeps
    /// RMA WAW.
    pub const ORIGINAL_FENCE: ProviderOrdering = ProviderOrdering {
        raw: false,
        waw: false,
        saw: false,
        sas: true,
        rma_waw: false,
        atomic_waw: true,
        atomic_raw: true,
    };
}

/// Who runs the NIC's steps; see the module docs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Progress {
    /// A NIC thread racing the program's threads (use under loom).
    NicThread,
    /// No NIC thread; waits and quiesce pick runnable steps with this seed.
    Seeded(u64),
}

/// The shape of a simulated fabric.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct SimConfig {
    /// Number of locales.
    pub locales: usize,
    /// Words of memory per locale, all starting at 0.
    pub words: usize,
    /// The orderings the simulated provider honours.
    pub ordering: ProviderOrdering,
    /// Who runs the NIC's steps.
    pub progress: Progress,
}

/// A simulated PUT: local word `src` to word `dst` of the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimPut {
    /// Source word in the initiator's memory (read by the NIC, later).
    pub src: usize,
    /// Destination word in the target's memory.
    pub dst: usize,
}

/// A simulated GET: word `src` of the target into local word `dst`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SimGet {
    /// Source word in the target's memory.
    pub src: usize,
    /// Destination word in the initiator's memory.
    pub dst: usize,
}

/// A simulated native AMO on a word of the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimAmo {
    /// Atomic write, non-fetching.
    Write { word: usize, value: u64 },
    /// Atomic add, non-fetching.
    Add { word: usize, value: u64 },
    /// Atomic read into local word `dst`.
    Read { word: usize, dst: usize },
    /// Fetch-add; the old value goes to local word `dst`.
    FetchAdd { word: usize, value: u64, dst: usize },
}

impl SimAmo {
    /// The kind to pass to [`Selector::amo`](crate::Selector::amo).
    pub const fn kind(&self) -> AmoKind {
        match self {
            SimAmo::Write { .. } | SimAmo::Add { .. } => AmoKind::Update,
            SimAmo::Read { .. } => AmoKind::Read,
            SimAmo::FetchAdd { .. } => AmoKind::FetchUpdate,
        }
    }
}

/// A simulated AM: what its handler does at the target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SimSend {
    /// Read the word `from` (any locale: the handler's own memory, or another
    /// locale's as a GET from the handler would, which can only be later) and
    /// store it into word `to` of the target.
    CopyWord { from: Addr, to: usize },
}

/// A post naming memory the fabric does not have.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SimError {
    /// The locale is not in `0..locales`.
    LocaleOutOfRange { locale: Locale, locales: usize },
    /// The word is not in `0..words`.
    WordOutOfRange { word: usize, words: usize },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::LocaleOutOfRange { locale, locales } => {
                write!(f, "locale {locale} out of range 0..{locales}")
            }
            SimError::WordOutOfRange { word, words } => {
                write!(f, "word {word} out of range 0..{words}")
            }
        }
    }
}

impl std::error::Error for SimError {}
