//! The library's one state: the runtime, this image's place in the world,
//! the team stack, and the two words arrays every image keeps for its peers
//! (image status, synchronisation counters).
//!
//! gfortran registers module and `save` coarrays from constructors that run
//! before `main`, i.e. before `_gfortran_caf_init`: whichever entry comes
//! first starts the runtime ([`Caf::get`]), so registration happens in the
//! same order on every image (the same binary runs the same constructors).

use parking_lot::Mutex;
use runtime_shim::{Dist, GlobalPtr, Runtime};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// An image's status word (in every image's status array).
pub const IMAGE_RUNNING: u64 = 0;
/// The image executed STOP.
pub const IMAGE_STOPPED: u64 = 1;
/// The image executed FAIL IMAGE.
pub const IMAGE_FAILED: u64 = 2;
/// The image reached the end of the program (normal termination without
/// STOP): a partner that waits for it sees a stopped image, but
/// `stopped_images()` lists only the images that executed STOP, so that an
/// image finishing in the same segment as the caller's query is not
/// counted (OpenCoarrays' suite and its users read it that way).
pub const IMAGE_ENDED: u64 = 3;

pub use crate::team_rec::TeamRec;

/// The library's state (one per process).
pub struct Caf {
    /// The runtime underneath.
    pub rt: &'static Runtime,
    /// This image's world locale.
    pub me: usize,
    /// Images in the initial team.
    pub world_n: usize,
    /// `status.at(k)[j]`: image k's record of image j's status.
    status: Dist<u64>,
    /// `sync.at(k)[j]`: notifications image k received from image j (SYNC
    /// ALL / SYNC IMAGES / SYNC TEAM / END TEAM, pairwise counters).
    sync: Dist<u64>,
    /// Notifications from each image already consumed here.
    pub(crate) seen: Mutex<Vec<u64>>,
    /// The team stack: `[0]` is the initial team, the last the current one.
    teams: Mutex<Vec<Arc<TeamRec>>>,
    /// `PGAS_CAF_WEAKEN=no-segment-fence` (a negative control of the
    /// Fortran litmus family): image control statements skip their
    /// visibility forcing. Tests only. Alone it breaks nothing observable:
    /// the runtime's atomic that notifies the partners forces too; it is
    /// caught where that atomic does not (SYNC MEMORY before a CPU-route
    /// atomic with `PGAS_MCM_WEAKEN=local-amo-no-force`; docs/coarrays.md).
    pub weaken_segments: bool,
    /// STOP / FAIL IMAGE / finalize already ran on this image.
    pub(crate) ended: AtomicBool,
}

static CAF: OnceLock<Caf> = OnceLock::new();

impl Caf {
    /// The state, starting the runtime on first use (collective: every image
    /// reaches its first coarray call in the same order).
    pub fn get() -> &'static Caf {
        CAF.get_or_init(Caf::start)
    }

    /// The state if the runtime has started.
    pub fn try_get() -> Option<&'static Caf> {
        CAF.get()
    }

    fn start() -> Caf {
        let mut b = runtime_shim::Builder::new();
        if std::env::var_os("PGAS_HEAP_SIZE").is_none() {
            // Coarray programs allocate whole arrays as coarrays: a larger
            // default than the runtime's (lazily backed, so free if unused).
            b = b.heap_size(1 << 30);
        }
        // On-statement bodies of the library (every image registers them).
        if let Err(e) = b.register(
            crate::byref::alloc::ALLOC_BODY,
            crate::byref::alloc::alloc_body,
        ) {
            eprintln!("pgas-caf: registering an on-statement body failed: {e}");
            std::process::exit(1);
        }
        let rt = match b.init() {
            Ok(rt) => rt,
            Err(e) => {
                eprintln!("pgas-caf: starting the runtime failed: {e}");
                std::process::exit(1);
            }
        };
        let weaken_segments = match std::env::var("PGAS_CAF_WEAKEN") {
            Err(_) => false,
            Ok(v) if v == "no-segment-fence" => true,
            Ok(v) if v.is_empty() => false,
            Ok(v) => {
                eprintln!(
                    "pgas-caf: PGAS_CAF_WEAKEN={v:?} is not known (the one weakening is \
                     'no-segment-fence', tests only)"
                );
                std::process::exit(1);
            }
        };
        let n = rt.num_locales();
        let status = rt
            .alloc_all::<u64>(n)
            .unwrap_or_else(|e| start_failed(rt, e));
        let sync = rt
            .alloc_all::<u64>(n)
            .unwrap_or_else(|e| start_failed(rt, e));
        let world = TeamRec {
            team: rt.world().clone(),
            number: -1,
            parent: None,
            allocated: Mutex::new(Vec::new()),
        };
        Caf {
            rt,
            me: rt.here(),
            world_n: n,
            status,
            sync,
            seen: Mutex::new(vec![0; n]),
            teams: Mutex::new(vec![Arc::new(world)]),
            weaken_segments,
            ended: AtomicBool::new(false),
        }
    }

    /// The current team.
    pub fn current(&self) -> Arc<TeamRec> {
        self.teams.lock().last().expect("the initial team").clone()
    }

    /// The initial team.
    pub fn initial(&self) -> Arc<TeamRec> {
        self.teams.lock()[0].clone()
    }

    /// CHANGE TEAM: `t` becomes the current team.
    pub fn push_team(&self, t: Arc<TeamRec>) {
        self.teams.lock().push(t);
    }

    /// END TEAM: back to the parent; the team left.
    pub fn pop_team(&self) -> Option<Arc<TeamRec>> {
        let mut s = self.teams.lock();
        if s.len() > 1 {
            s.pop()
        } else {
            None
        }
    }

    /// The world locale of image `image` (1-based, of the current team).
    pub fn locale_of(&self, image: i64) -> Option<usize> {
        self.current().locale_of(image)
    }

    /// Where image k keeps its record of image j's status.
    pub(crate) fn status_word(&self, on: usize, of: usize) -> GlobalPtr<u64> {
        self.status.at(on).expect("a locale of the job").add(of)
    }

    /// Where image k counts image j's notifications.
    pub(crate) fn sync_word(&self, on: usize, from: usize) -> GlobalPtr<u64> {
        self.sync.at(on).expect("a locale of the job").add(from)
    }

    /// This image's view of image `locale`'s status (IMAGE_*).
    pub fn status_of(&self, locale: usize) -> u64 {
        let p = self.status_word(self.me, locale);
        // SAFETY: p is a word of this image's registered heap (its status
        // array, alloc_all'd at start and never freed), written by peers
        // only with atomic word writes.
        let w = unsafe { &*(p.addr() as *const std::sync::atomic::AtomicU64) };
        w.load(Ordering::SeqCst)
    }

    /// Tells every image (this one included) that this one is `status`.
    pub(crate) fn announce(&self, status: u64) {
        for k in 0..self.world_n {
            let _ = self.rt.atomic(self.status_word(k, self.me)).write(status);
        }
        let _ = self.rt.quiet();
    }

    /// The segment boundary of an image control statement: everything this
    /// image wrote before it is visible everywhere (skipped under the
    /// negative control `PGAS_CAF_WEAKEN=no-segment-fence`).
    ///
    /// Redundant with the runtime in every statement as the runtime stands
    /// (each notifies its partners with an atomic, an AM or a collective,
    /// which force the caller's stores first in every MCM mode) and kept as
    /// a defence in depth: the segment rule holds by this step whatever
    /// the runtime does at its atomics. Load-bearing at SYNC MEMORY when
    /// the user's atomic after it does not force (docs/coarrays.md,
    /// "Memory model").
    pub fn end_segment(&self) -> runtime_shim::Result<()> {
        if self.weaken_segments {
            return Ok(());
        }
        self.rt.quiet()
    }
}

fn start_failed(rt: &Runtime, e: runtime_shim::Error) -> ! {
    rt.abort(&format!("pgas-caf: start-up allocation failed: {e}"))
}

/// Error termination: prints `msg` naming this image and ends every image
/// with exit status `code` (non-zero).
pub fn error_termination(msg: &str, code: i32) -> ! {
    let code = if code == 0 { 1 } else { code };
    match Caf::try_get() {
        Some(c) => {
            let image = c.current().this_image();
            let full = format!("Fortran error on image {image}: {msg}");
            eprintln!("{full}");
            c.rt.global_exit(code, &full)
        }
        None => {
            eprintln!("Fortran error: {msg}");
            std::process::exit(code)
        }
    }
}
