//! Our layer under measurement: comm-ofi's PUT/GET/AMO and non-blocking
//! handles, amhandler's AMOs and on-statements, the task-end boundary.
//!
//! Locale 0 measures from a thread bound to worker context 0
//! (`Comm::bind_worker(0)`, the path real worker threads take); the other
//! locales only serve (their AM poller drives progress) until locale 0
//! finalizes.

use crate::plan::{Op, Plan};
use crate::stats::{measure, measure_timed, Budget, Point, Res};
use amhandler::{Am, FnId, Options, Registry};
use comm_ofi::{AmoOp, AmoType, Comm, GlobalAddr};
use std::sync::Arc;
use std::time::Instant;

/// Name of the empty on-statement body.
pub const EMPTY_BODY: &str = "study_empty";

/// Starts comm + AM layer with the study's empty body registered.
pub fn start() -> Res<(Arc<Comm>, Arc<Am>, FnId)> {
    let comm = Comm::init()?;
    let reg = Registry::new();
    let empty = reg.register(EMPTY_BODY, |_, _| Vec::new())?;
    let am = amhandler::start_with(
        comm.clone(),
        Options {
            registry: reg,
            ..Default::default()
        },
    )?;
    Ok((comm, am, empty))
}

/// A registered-heap buffer of this locale as a byte slice.
///
/// # Safety
/// `at` must be a live allocation of `len` bytes from `comm.alloc` on this
/// locale that nothing else reads or writes while the slice lives.
pub unsafe fn heap_slice<'a>(at: GlobalAddr, len: usize) -> &'a mut [u8] {
    // SAFETY: forwarded from the caller's guarantee.
    unsafe { std::slice::from_raw_parts_mut(at.addr as *mut u8, len) }
}

/// Our layer in one locale of a job.
pub struct Ours {
    comm: Arc<Comm>,
    am: Arc<Am>,
    empty: FnId,
    /// This locale's source/destination buffer (registered heap).
    local: GlobalAddr,
    len: usize,
    /// The region PUTs and GETs target (symmetric: the peer's is at the
    /// same offset).
    target: GlobalAddr,
    /// A word for atomics and task-end stores (symmetric).
    word: GlobalAddr,
}

impl Ours {
    /// Starts comm + AM and allocates the job's buffers (collective).
    pub fn start(plan: &Plan) -> Res<Ours> {
        let (comm, am, empty) = start()?;
        let len = plan.region_bytes() as usize;
        // Same allocations in the same order everywhere: symmetric addresses.
        let local = comm.alloc(len, 4096)?;
        let target = comm.alloc(len, 4096)?;
        let word = comm.alloc(64, 64)?;
        comm.barrier()?;
        Ok(Ours {
            comm,
            am,
            empty,
            local,
            len,
            target,
            word,
        })
    }

    /// The comm layer.
    pub fn comm(&self) -> &Arc<Comm> {
        &self.comm
    }

    /// The AM layer.
    pub fn am(&self) -> &Arc<Am> {
        &self.am
    }

    /// The empty on-statement body.
    pub fn empty_body(&self) -> FnId {
        self.empty
    }

    /// (local buffer, symmetric target region, symmetric word) of this
    /// locale; the local buffer is `region_bytes` of the plan long.
    pub fn buffers(&self) -> (GlobalAddr, GlobalAddr, GlobalAddr) {
        (self.local, self.target, self.word)
    }

    /// Binds the calling (measuring) thread to worker context 0, the path
    /// real worker threads take.
    pub fn bind(&self) -> Res<()> {
        Ok(self.comm.bind_worker(0)?)
    }

    /// Lines for the log: the layer's verbose line and the binding.
    pub fn describe(&self) -> Vec<String> {
        vec![
            self.comm.describe(),
            format!(
                "measuring thread bound to worker context 0: {}",
                if self.comm.is_bound() {
                    "yes"
                } else {
                    "no (too few endpoints: shared context)"
                }
            ),
        ]
    }

    /// Why ours does not measure `op` here, if it does not.
    pub fn skip_reason(&self, op: Op) -> Option<String> {
        let n = self.comm.num_locales() as u64;
        match op {
            Op::TaskEnd(k) if k >= n => Some(format!("needs {} locales, job has {n}", k + 1)),
            _ => None,
        }
    }

    /// Path note for `op` (`native` or `via-am` for atomics).
    pub fn note(&self, op: Op) -> &'static str {
        match op {
            Op::Amo => {
                if self.comm.amo_is_native(AmoType::U64, AmoOp::Add, true)
                    && !self.comm.config().amo_via_am
                {
                    "native"
                } else {
                    "via-am"
                }
            }
            Op::AmoAm => "via-am",
            Op::PutBw(..) | Op::GetBw(..) | Op::PutRate(_) => "nb",
            Op::OnStmt => "blocking",
            _ => "",
        }
    }

    /// Measures one point on locale 0.
    pub fn point(&mut self, op: Op, b: Budget) -> Res<Point> {
        let comm = &*self.comm;
        let am = &*self.am;
        // SAFETY: `local` is this locale's own allocation of `len` bytes; only
        // the measuring thread touches it, through this one slice at a time.
        let buf = unsafe { heap_slice(self.local, self.len) };
        let remote = comm.symmetric(self.target, 1)?;
        let w1 = comm.symmetric(self.word, 1)?;
        match op {
            Op::Put(s) => {
                let src = &buf[..s as usize];
                measure(b, || Ok(comm.put(remote, src)?))
            }
            Op::Get(s) => measure(b, || Ok(comm.get(&mut buf[..s as usize], remote)?)),
            Op::PutBw(s, w) => {
                let src = &buf[..s as usize];
                measure(b, || {
                    let mut hs = Vec::with_capacity(w as usize);
                    for i in 0..w {
                        // SAFETY: every handle is waited for below; none leaks.
                        hs.push(unsafe { comm.put_nb(remote.offset(i * s), src)? });
                    }
                    for h in hs {
                        h.wait()?;
                    }
                    Ok(())
                })
            }
            Op::GetBw(s, w) => measure(b, || {
                let mut hs = Vec::with_capacity(w as usize);
                for (i, chunk) in buf[..(w * s) as usize].chunks_mut(s as usize).enumerate() {
                    // SAFETY: every handle is waited for below; none leaks.
                    hs.push(unsafe { comm.get_nb(chunk, remote.offset(i as u64 * s))? });
                }
                for h in hs {
                    h.wait()?;
                }
                Ok(())
            }),
            Op::PutRate(w) => {
                let src = &buf[..8];
                measure(b, || {
                    let mut hs = Vec::with_capacity(w as usize);
                    for i in 0..w {
                        // SAFETY: every handle is waited for below; none leaks.
                        hs.push(unsafe { comm.put_nb(remote.offset(8 * i), src)? });
                    }
                    for h in hs {
                        h.wait()?;
                    }
                    Ok(())
                })
            }
            Op::Amo => measure(b, || {
                am.amo(w1, AmoType::U64, AmoOp::Add, 1, 0, true)?;
                Ok(())
            }),
            Op::AmoAm => measure(b, || {
                am.amo_via_am(w1, AmoType::U64, AmoOp::Add, 1, 0, true)?;
                Ok(())
            }),
            Op::OnStmt => measure(b, || {
                am.execute_on(1, self.empty, &[])?;
                Ok(())
            }),
            Op::TaskEnd(k) => {
                let targets: Vec<GlobalAddr> = (1..=k as u32)
                    .map(|t| comm.symmetric(self.word, t))
                    .collect::<Result<_, _>>()?;
                let src = &buf[..8];
                measure_timed(b, || {
                    for t in &targets {
                        comm.put(*t, src)?;
                    }
                    let t0 = Instant::now();
                    comm.task_end()?;
                    Ok(t0.elapsed())
                })
            }
            Op::PingPong => Err("ours has no raw ping-pong".into()),
        }
    }

    /// Ends the AM and comm layers (collective: the other locales wait
    /// here until locale 0 has finished measuring).
    pub fn finish(self) -> Res<()> {
        Ok(self.am.finalize()?)
    }
}
