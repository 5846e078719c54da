//! Our layer under measurement, as programs use it: the runtime shim
//! (`runtime_shim::Runtime`, the public API) called from the main thread
//! and from a task, and, one layer down, comm-ofi / amhandler called from a
//! task (a worker thread bound to its own transmit context).
//!
//! Every locale starts the runtime (its worker pool, AM layer, comm layer)
//! with the study's empty on-statement body registered. Locale 0 measures;
//! the other locales only serve (their AM pollers and workers) until locale
//! 0 finalizes. A point measured "in a task" is one `rt.spawn(..)` per
//! round whose body runs the whole round (the spawn is not timed); "main"
//! runs it on the calling (main) thread.

use crate::plan::{Op, Plan};
use crate::proto::{Subject, LOCAL_PAGE_OFFSET};
use crate::stats::{measure, measure_timed, Budget, Point, Res};
use comm_ofi::{AmoOp, AmoRequest, AmoType, GlobalAddr};
use runtime_shim::{Builder, Dist, FnId, GlobalPtr, Runtime};
use std::sync::Arc;
use std::time::Instant;

/// Name of the empty on-statement body.
pub const EMPTY_BODY: &str = "study_empty";

/// Index of the word the typed route's atomics use (rt and `Comm::amo`).
const WORD_AMO: usize = 0;
/// Index of the word `Am::amo_via_am` uses (never mix two routes on one word).
const WORD_AMO_AM: usize = 1;
/// Index of the word the visibility and task-end PUTs store to.
const WORD_PUT: usize = 2;
/// Words per locale.
const WORDS: usize = 8;

/// A registered-heap buffer of this locale as a byte slice.
///
/// # Safety
/// `at` must be a live allocation of `len` bytes of registered memory on
/// this locale that nothing else reads or writes while the slice lives.
pub unsafe fn heap_slice<'a>(at: GlobalAddr, len: usize) -> &'a mut [u8] {
    // SAFETY: forwarded from the caller's guarantee.
    unsafe { std::slice::from_raw_parts_mut(at.addr as *mut u8, len) }
}

/// A caller's buffer of `len` bytes, [`LOCAL_PAGE_OFFSET`] into a page
/// whatever the allocator returned, so that a blocking PUT or GET spans the
/// pages the floor's does (a `Vec` of the same length would move between
/// runs with the allocator's placement).
struct UserBuf {
    mem: Vec<u8>,
    at: usize,
    len: usize,
}

impl UserBuf {
    fn new(len: usize) -> UserBuf {
        let mem = vec![0u8; len + 4096 + LOCAL_PAGE_OFFSET as usize];
        let at = mem.as_ptr().align_offset(4096) + LOCAL_PAGE_OFFSET as usize;
        UserBuf { mem, at, len }
    }
}

impl std::ops::Deref for UserBuf {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        &self.mem[self.at..self.at + self.len]
    }
}

impl std::ops::DerefMut for UserBuf {
    fn deref_mut(&mut self) -> &mut [u8] {
        &mut self.mem[self.at..self.at + self.len]
    }
}

/// What a measuring closure needs (cheap to clone into a task).
#[derive(Clone)]
struct Env {
    rt: &'static Runtime,
    empty: FnId,
    /// The region PUTs and GETs target, on locale 1.
    remote: GlobalPtr<u8>,
    /// This locale's registered buffer (comm-level rows' source/destination).
    local: GlobalPtr<u8>,
    /// Its length.
    len: usize,
    /// The words of every locale.
    words: Arc<[GlobalPtr<u64>]>,
}

impl Env {
    fn word(&self, locale: usize, i: usize) -> GlobalPtr<u64> {
        self.words[locale].add(i)
    }
}

/// Our layer in one locale of a job.
pub struct Ours {
    env: Env,
    _region: Dist<u8>,
    _local: Dist<u8>,
    _words: Dist<u64>,
}

impl Ours {
    /// Starts the runtime and allocates the job's buffers (collective).
    pub fn start(plan: &Plan) -> Res<Ours> {
        let b = Builder::new();
        let empty = b.register(EMPTY_BODY, |_, _| Vec::new())?;
        let rt = b.init()?;
        let len = plan.region_bytes() as usize;
        let region = rt.alloc_all::<u8>(len)?;
        // Room for the local side's page offset (comm-level rows).
        let local = rt.alloc_all::<u8>(len + LOCAL_PAGE_OFFSET as usize)?;
        let words = rt.alloc_all::<u64>(WORDS)?;
        let remote = if rt.num_locales() > 1 {
            region.at(1)?
        } else {
            region.local()
        };
        let all: Vec<GlobalPtr<u64>> = words.parts().to_vec();
        rt.barrier()?;
        Ok(Ours {
            env: Env {
                rt,
                empty,
                remote,
                local: local.local(),
                len,
                words: all.into(),
            },
            _region: region,
            _local: local,
            _words: words,
        })
    }

    /// The runtime.
    pub fn rt(&self) -> &'static Runtime {
        self.env.rt
    }

    /// The empty on-statement body.
    pub fn empty_body(&self) -> FnId {
        self.env.empty
    }

    /// The target region on locale 1 and this locale's registered buffer.
    pub fn buffers(&self) -> (GlobalPtr<u8>, GlobalPtr<u8>) {
        (self.env.remote, self.env.local)
    }

    /// Locale 1's word for the typed route's atomics.
    pub fn amo_word(&self) -> GlobalPtr<u64> {
        self.env.word(1, WORD_AMO)
    }

    /// Whether u64 atomics take the native route (else CPU atomics via AM).
    pub fn amo_native(&self) -> bool {
        self.env.rt.amo_native(AmoType::U64)
    }

    /// Lines for the log: the runtime's and the comm layer's description.
    pub fn describe(&self) -> Vec<String> {
        let rt = self.env.rt;
        vec![
            rt.describe(),
            rt.comm().describe(),
            format!(
                "main thread bound to its own transmit context: {}; u64 atomics: {}",
                if rt.comm().thread_is_bound() {
                    "yes"
                } else {
                    "no (shared contexts)"
                },
                if self.amo_native() {
                    "native"
                } else {
                    "CPU at the owner via AM"
                }
            ),
        ]
    }

    /// What `subject` calls for `op` (the `note` of its record).
    pub fn note(&self, subject: Subject, op: Op) -> String {
        let comm = subject == Subject::CommTask;
        let route = if self.amo_native() {
            "native"
        } else {
            "cpu-am"
        };
        match op {
            Op::Put(_) if comm => "Comm::put (registered src)".into(),
            Op::Put(_) => "rt.put".into(),
            Op::Get(_) if comm => "Comm::get (registered dst)".into(),
            Op::Get(_) => "rt.get".into(),
            Op::PutVisible if comm => "Comm::put + Comm::force_visible".into(),
            Op::PutVisible => "rt.put + rt.task_end_hook".into(),
            Op::SpawnPut => "rt.spawn{rt.put}.join".into(),
            Op::PutBw(_, w) | Op::PutRate(w) => format!("{w}x rt.put_nb(owned Vec) + wait"),
            Op::GetBw(_, w) => format!("{w}x rt.get_nb_into(owned Vec) + wait"),
            Op::FetchAdd if comm => format!("Comm::amo [{route}]"),
            Op::FetchAdd => format!("rt.atomic.fetch_add [{route}]"),
            Op::FetchAddAm => "Am::amo_via_am".into(),
            Op::AddRate(w) => format!("{w}x rt.atomic.add + rt.task_end_hook [{route}]"),
            Op::AddUnorderedRate(w) => {
                format!("{w}x rt.atomic.add_unordered + rt.task_end_hook [{route}]")
            }
            Op::OnStmt => "rt.on(empty)".into(),
            Op::Spawn => "rt.spawn(empty).join".into(),
            Op::TaskEnd(k) => format!("{k}x rt.put, then rt.task_end_hook timed"),
        }
    }

    /// Measures one round of `op` by `subject` on locale 0.
    pub fn measure(&self, subject: Subject, op: Op, b: Budget) -> Res<Point> {
        match subject {
            Subject::RtMain => run(&self.env, subject, op, b),
            Subject::RtTask | Subject::CommTask => {
                let env = self.env.clone();
                self.env
                    .rt
                    .spawn(move || run(&env, subject, op, b))?
                    .join_on_worker()?
            }
            Subject::Raw => Err("the floor is measured by Raw".into()),
        }
    }

    /// Ends the runtime (collective: the other locales wait here until
    /// locale 0 has finished measuring).
    pub fn finish(self) -> Res<()> {
        Ok(self.env.rt.finalize()?)
    }
}

/// The measuring loop of `op` by `subject`, on the calling thread.
fn run(env: &Env, subject: Subject, op: Op, b: Budget) -> Res<Point> {
    let rt = env.rt;
    let comm = rt.comm();
    let am = rt.am();
    let remote = env.remote;
    if subject == Subject::CommTask {
        // SAFETY: `local` is this locale's own registered buffer of `len`
        // bytes after its page offset (allocated with room for it); only the
        // one measuring thread touches it, through this slice.
        let buf = unsafe {
            heap_slice(
                env.local.add(LOCAL_PAGE_OFFSET as usize).global_addr(),
                env.len,
            )
        };
        let dst = remote.global_addr();
        let word = env.word(1, WORD_AMO).global_addr();
        return match op {
            Op::Put(s) => {
                let src = &buf[..s as usize];
                measure(b, || Ok(comm.put(dst, src)?))
            }
            Op::Get(s) => measure(b, || Ok(comm.get(&mut buf[..s as usize], dst)?)),
            Op::PutVisible => {
                let to = env.word(1, WORD_PUT).global_addr();
                let src = &buf[..8];
                measure(b, || {
                    comm.put(to, src)?;
                    Ok(comm.force_visible()?)
                })
            }
            Op::FetchAdd => measure(b, || {
                comm.amo(&AmoRequest::new(word, AmoType::U64, AmoOp::Add, 1).fetching(true))?;
                Ok(())
            }),
            Op::FetchAddAm => {
                let w = env.word(1, WORD_AMO_AM).global_addr();
                measure(b, || {
                    am.amo_via_am(&AmoRequest::new(w, AmoType::U64, AmoOp::Add, 1).fetching(true))?;
                    Ok(())
                })
            }
            _ => Err(format!("no comm-level measurement of {}", op.name()).into()),
        };
    }
    match op {
        Op::Put(s) => {
            let mut src = UserBuf::new(s as usize);
            src.fill(1);
            measure(b, || Ok(rt.put(remote, &src)?))
        }
        Op::Get(s) => {
            let mut dst = UserBuf::new(s as usize);
            measure(b, || Ok(rt.get(&mut dst, remote)?))
        }
        Op::PutVisible => {
            let to = env.word(1, WORD_PUT);
            measure(b, || {
                rt.put_value(to, 1u64)?;
                Ok(rt.task_end_hook()?)
            })
        }
        Op::SpawnPut => {
            let to = env.word(1, WORD_PUT);
            measure(b, || {
                rt.spawn(move || rt.put_value(to, 1u64))?.join()??;
                Ok(())
            })
        }
        Op::PutBw(s, w) => put_window(rt, remote, s, w, b),
        Op::PutRate(w) => put_window(rt, remote, 8, w, b),
        Op::GetBw(s, w) => {
            let mut bufs: Vec<Vec<u8>> = (0..w).map(|_| vec![0u8; s as usize]).collect();
            measure(b, || {
                let mut hs = Vec::with_capacity(w as usize);
                for (i, buf) in bufs.drain(..).enumerate() {
                    hs.push(rt.get_nb_into(buf, remote.add(i * s as usize))?);
                }
                for h in hs {
                    bufs.push(h.wait()?);
                }
                Ok(())
            })
        }
        Op::FetchAdd => {
            let a = rt.atomic(env.word(1, WORD_AMO));
            measure(b, || {
                a.fetch_add(1u64)?;
                Ok(())
            })
        }
        Op::AddRate(w) | Op::AddUnorderedRate(w) => {
            let unordered = matches!(op, Op::AddUnorderedRate(_));
            let a = rt.atomic(env.word(1, WORD_AMO));
            measure(b, || {
                for _ in 0..w {
                    if unordered {
                        a.add_unordered(1u64)?;
                    } else {
                        a.add(1u64)?;
                    }
                }
                Ok(rt.task_end_hook()?)
            })
        }
        Op::OnStmt => measure(b, || {
            rt.on(1, env.empty, &[])?;
            Ok(())
        }),
        Op::Spawn => measure(b, || {
            rt.spawn(|| ())?.join()?;
            Ok(())
        }),
        Op::TaskEnd(k) => {
            let targets: Vec<GlobalPtr<u64>> =
                (1..=k as usize).map(|t| env.word(t, WORD_PUT)).collect();
            measure_timed(b, || {
                for t in &targets {
                    rt.put_value(*t, 1u64)?;
                }
                let t0 = Instant::now();
                rt.task_end_hook()?;
                Ok(t0.elapsed())
            })
        }
        Op::FetchAddAm => Err("fetch-add via AM is measured at the comm level".into()),
    }
}

/// A window of `w` non-blocking PUTs of `size` bytes from owned buffers
/// (reused: `NbPut::wait` hands each back), then wait for all.
fn put_window(
    rt: &'static Runtime,
    remote: GlobalPtr<u8>,
    size: u64,
    w: u64,
    b: Budget,
) -> Res<Point> {
    let mut bufs: Vec<Vec<u8>> = (0..w).map(|_| vec![1u8; size as usize]).collect();
    measure(b, || {
        let mut hs = Vec::with_capacity(w as usize);
        for (i, buf) in bufs.drain(..).enumerate() {
            hs.push(rt.put_nb(remote.add(i * size as usize), buf)?);
        }
        for h in hs {
            bufs.push(h.wait()?);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn user_buffers_start_at_the_floors_page_offset() {
        for len in [8usize, 4096, 8192, 131072] {
            let mut b = UserBuf::new(len);
            assert_eq!(b.len(), len);
            assert_eq!(b.as_ptr() as u64 % 4096, LOCAL_PAGE_OFFSET, "len {len}");
            b.fill(7);
            assert!(b.iter().all(|&x| x == 7));
        }
    }
}
