//! The PMIx backend: the process was started by a PMIx launcher (OpenMPI's
//! `mpirun`, Slurm's `srun --mpi=pmix`, PRRTE's `prterun`), whose PMIx
//! server does the collectives.
//!
//! * rank: `PMIx_Init`; size: `PMIX_JOB_SIZE` of the job (rank wildcard).
//! * collective #k puts its bytes under the key `pgas.oob.<k>` (unique per
//!   collective, so no round reads another's data), commits, and runs
//!   `PMIx_Fence` with `PMIX_COLLECT_DATA`; then `PMIx_Get` reads each
//!   peer's value from the local copy (`PMIX_OPTIONAL`: a missing key is an
//!   error, never a wait). allgather: everybody puts and reads everybody;
//!   broadcast: only the root puts; barrier: a fence without data.
//! * Every value starts with a small header (kind and root), so a locale that
//!   finds a different kind of collective under the same number reports a
//!   collective mismatch instead of returning garbage.
//! * abort: `PMIx_Abort` on the whole namespace; the launcher prints the
//!   message and kills every process. A guard thread exits the process if
//!   that has not happened within a few seconds.
//! * `PMIx_Finalize` runs at process exit (`on_exit`): a PMIx launcher treats
//!   a process that initialized PMIx and exits without finalizing as failed.
//!   Which is what we want of a locale that exits before its comm layer
//!   finalized ([`Oob::guard_exit`]): its exit handler then says so and
//!   skips `PMIx_Finalize`, and the launcher kills the job.

use std::ffi::{c_int, c_void, CString};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::env::PmixEnv;
use crate::error::OobError;
use crate::oob::Oob;
use crate::pmix_ffi::{self as ffi, key, ty, Info, Lib, Proc, Value, ValueData};
use crate::single::check_len;
use crate::wire::PmixValue;

/// After `PMIx_Abort`, how long to wait for the launcher to kill us before
/// exiting on our own.
const ABORT_WAIT: Duration = Duration::from_secs(10);
/// Longest abort message passed on.
const MAX_ABORT_MSG: usize = 64 * 1024;
/// Exit status of an aborting locale (and the status asked of the launcher).
const ABORT_EXIT_CODE: i32 = 1;

/// Collective kinds in a value's header (`wire::PmixValue`).
const KIND_ALLGATHER: u8 = 1;
const KIND_BROADCAST: u8 = 2;

fn kind_name(k: u8) -> &'static str {
    match k {
        KIND_ALLGATHER => "allgather",
        KIND_BROADCAST => "broadcast",
        _ => "an unknown collective",
    }
}

/// Set once `abort()` started: the exit handler must not finalize then.
static ABORTING: AtomicBool = AtomicBool::new(false);
/// Set once PMIx was initialized: the exit handler finalizes it.
static INITIALIZED: AtomicBool = AtomicBool::new(false);
/// Set by `guard_exit`: an exit before `finalized` fails the job.
static GUARDED: AtomicBool = AtomicBool::new(false);
/// Set by `finalized`: the exit handler may finalize PMIx.
static FINALIZED: AtomicBool = AtomicBool::new(false);
/// Our rank, for the exit handler's message.
static RANK: AtomicUsize = AtomicUsize::new(usize::MAX);

extern "C" {
    /// glibc's `on_exit`: like `atexit`, but the handler gets the exit status.
    fn on_exit(f: extern "C" fn(c_int, *mut c_void), arg: *mut c_void) -> c_int;
}

/// The process-wide instance: PMIx is initialized once per process and the
/// collective numbers must be shared by every handle.
static SHARED: std::sync::Mutex<Option<PmixOob>> = std::sync::Mutex::new(None);

/// Returns the process's PMIx OOB, initializing PMIx on first use.
pub(crate) fn connect_shared(env: &PmixEnv) -> Result<PmixOob, OobError> {
    let mut shared = SHARED.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(o) = shared.as_ref() {
        return Ok(o.clone());
    }
    let o = PmixOob::init(env)?;
    *shared = Some(o.clone());
    Ok(o)
}

struct Inner {
    lib: &'static Lib,
    /// Our namespace and rank, as PMIx_Init returned them.
    me: Proc,
    rank: usize,
    size: usize,
    /// Next collective number; held for a whole collective.
    next_seq: Mutex<u64>,
}

/// OOB through the PMIx server of the launcher that started us.
#[derive(Clone)]
pub(crate) struct PmixOob {
    inner: Arc<Inner>,
}

impl PmixOob {
    fn init(env: &PmixEnv) -> Result<PmixOob, OobError> {
        let lib = Lib::get().map_err(OobError::PmixUnavailable)?;
        let mut me = Proc::zeroed();
        // SAFETY: `me` is a writable pmix_proc_t; no info array.
        let rc = unsafe { (lib.init)(&mut me, std::ptr::null_mut(), 0) };
        if rc != ffi::SUCCESS {
            return Err(OobError::Pmix {
                call: "PMIx_Init",
                detail: format!(
                    "{} (library {}, PMIX_NAMESPACE={}, PMIX_RANK={}): the PMIx server of \
                     the launcher cannot be reached; start the program with mpirun or \
                     srun --mpi=pmix (or pgasrun), or unset PMIX_RANK and PMIX_NAMESPACE to \
                     run it as a single locale",
                    lib.error_string(rc),
                    lib.path,
                    env.namespace.as_deref().unwrap_or("unset"),
                    env.rank.map_or("unset".into(), |r| r.to_string()),
                ),
            });
        }
        let rank = me.rank as usize;
        RANK.store(rank, Ordering::SeqCst);
        if !INITIALIZED.swap(true, Ordering::SeqCst) {
            // SAFETY: registers a plain extern "C" fn; its argument is unused.
            if unsafe { on_exit(finalize_at_exit, std::ptr::null_mut()) } != 0 {
                tracing::warn!("on_exit failed: PMIx_Finalize will not run at exit");
            }
        }
        if let Some(r) = env.rank {
            if r as usize != rank {
                tracing::warn!(
                    env_rank = r,
                    pmix_rank = rank,
                    "PMIX_RANK disagrees with PMIx_Init"
                );
            }
        }
        let mut job = me;
        job.rank = ffi::RANK_WILDCARD;
        let size = get_uint(lib, &job, key::JOB_SIZE)?;
        if size == 0 || rank >= size {
            return Err(OobError::Pmix {
                call: "PMIx_Get(PMIX_JOB_SIZE)",
                detail: format!("job size {size} does not fit rank {rank}"),
            });
        }
        tracing::debug!(
            rank,
            size,
            namespace = %me.nspace_str(),
            version = %lib.version(),
            library = %lib.path,
            "PMIx initialized"
        );
        Ok(PmixOob {
            inner: Arc::new(Inner {
                lib,
                me,
                rank,
                size,
                next_seq: Mutex::new(0),
            }),
        })
    }

    fn pmix_err(&self, call: &'static str, rc: c_int, seq: u64) -> OobError {
        OobError::Pmix {
            call,
            detail: format!("{} in collective #{seq}", self.inner.lib.error_string(rc)),
        }
    }

    /// Puts `data` (with its header) under this collective's key, if given;
    /// fences (collecting data if `collect`); returns the key.
    fn put_and_fence(
        &self,
        seq: u64,
        value: Option<&[u8]>,
        collect: bool,
    ) -> Result<CString, OobError> {
        let lib = self.inner.lib;
        let k = CString::new(format!("pgas.oob.{seq}")).expect("no NUL in key");
        if let Some(bytes) = value {
            let mut v = Value {
                ty: ty::BYTE_OBJECT,
                data: ValueData {
                    bo: ffi::ByteObject {
                        bytes: bytes.as_ptr().cast_mut().cast(),
                        size: bytes.len(),
                    },
                },
            };
            // SAFETY: `k` is NUL-terminated; `v` is a byte object pointing
            // at `bytes`, live for the call. PMIx_Put copies the value and
            // never writes through the pointer.
            let rc = unsafe { (lib.put)(ffi::SCOPE_GLOBAL, k.as_ptr(), &mut v) };
            if rc != ffi::SUCCESS {
                return Err(self.pmix_err("PMIx_Put", rc, seq));
            }
            // SAFETY: takes nothing; sends what was put to the server.
            let rc = unsafe { (lib.commit)() };
            if rc != ffi::SUCCESS {
                return Err(self.pmix_err("PMIx_Commit", rc, seq));
            }
        }
        let info = [Info::flag(key::COLLECT_DATA, true)];
        let ninfo = usize::from(collect);
        // SAFETY: NULL procs = every process of our namespace; `info` is an
        // array of `ninfo` (0 or 1) initialized pmix_info_t, live for the
        // call.
        let rc = unsafe { (lib.fence)(std::ptr::null(), 0, info.as_ptr(), ninfo) };
        if rc != ffi::SUCCESS {
            return Err(OobError::Pmix {
                call: "PMIx_Fence",
                detail: format!(
                    "{} in collective #{seq} ({}; did every locale call the same \
                     collectives in the same order, and is every locale still running?)",
                    self.inner.lib.error_string(rc),
                    if collect {
                        "allgather or broadcast"
                    } else {
                        "barrier"
                    },
                ),
            });
        }
        Ok(k)
    }

    /// Reads `rank`'s value under `k` (after a collecting fence) and checks
    /// its header; returns the payload.
    fn fetch(
        &self,
        seq: u64,
        k: &CString,
        rank: usize,
        kind: u8,
        root: usize,
    ) -> Result<Vec<u8>, OobError> {
        let lib = self.inner.lib;
        let mut peer = self.inner.me;
        peer.rank = rank as u32;
        let raw = match get_bytes(lib, &peer, k) {
            Ok(raw) => raw,
            Err(ffi::ERR_NOT_FOUND) => {
                return Err(mismatch(
                    seq,
                    &format!(
                        "locale {rank} put no data for it (a barrier, or a broadcast \
                         from another root?)"
                    ),
                    self.inner.rank,
                    kind,
                    root,
                ))
            }
            Err(rc) => return Err(self.pmix_err("PMIx_Get", rc, seq)),
        };
        let value = PmixValue::decode(&raw).map_err(|why| {
            OobError::Protocol(format!(
                "collective #{seq}: locale {rank}'s value is not ours: {why}"
            ))
        })?;
        let their_root = value.root as usize;
        if value.kind != kind || (kind == KIND_BROADCAST && their_root != root) {
            let theirs = format!("locale {rank} called {}", describe(value.kind, their_root));
            return Err(mismatch(seq, &theirs, self.inner.rank, kind, root));
        }
        Ok(value.data.to_vec())
    }

    fn header(kind: u8, root: usize, data: &[u8]) -> Vec<u8> {
        PmixValue {
            kind,
            root: root as u32,
            data,
        }
        .encode()
    }
}

fn describe(kind: u8, root: usize) -> String {
    if kind == KIND_BROADCAST {
        format!("broadcast from root {root}")
    } else {
        kind_name(kind).to_owned()
    }
}

fn mismatch(seq: u64, theirs: &str, me: usize, kind: u8, root: usize) -> OobError {
    OobError::CollectiveFailed(format!(
        "collective mismatch at collective #{seq}: {theirs} but locale {me} called {} \
         (all locales must call the same collectives in the same order)",
        describe(kind, root)
    ))
}

impl Oob for PmixOob {
    fn rank(&self) -> usize {
        self.inner.rank
    }

    fn size(&self) -> usize {
        self.inner.size
    }

    fn allgather(&self, data: &[u8]) -> Result<Vec<Vec<u8>>, OobError> {
        check_len(data)?;
        let mut seq_guard = self.inner.next_seq.lock();
        let seq = *seq_guard;
        *seq_guard += 1;
        let value = Self::header(KIND_ALLGATHER, 0, data);
        let k = self.put_and_fence(seq, Some(&value), true)?;
        drop(value);
        let mut out = Vec::with_capacity(self.inner.size);
        for r in 0..self.inner.size {
            if r == self.inner.rank {
                out.push(data.to_vec());
            } else {
                out.push(self.fetch(seq, &k, r, KIND_ALLGATHER, 0)?);
            }
        }
        tracing::trace!(seq, bytes = data.len(), "PMIx allgather done");
        Ok(out)
    }

    fn broadcast(&self, root: usize, data: &[u8]) -> Result<Vec<u8>, OobError> {
        let size = self.inner.size;
        if root >= size {
            return Err(OobError::InvalidRoot { root, size });
        }
        let am_root = root == self.inner.rank;
        if am_root {
            check_len(data)?;
        }
        let mut seq_guard = self.inner.next_seq.lock();
        let seq = *seq_guard;
        *seq_guard += 1;
        let value = am_root.then(|| Self::header(KIND_BROADCAST, root, data));
        let k = self.put_and_fence(seq, value.as_deref(), true)?;
        let got = if am_root {
            data.to_vec()
        } else {
            self.fetch(seq, &k, root, KIND_BROADCAST, root)?
        };
        tracing::trace!(seq, root, bytes = got.len(), "PMIx broadcast done");
        Ok(got)
    }

    fn barrier(&self) -> Result<(), OobError> {
        let mut seq_guard = self.inner.next_seq.lock();
        let seq = *seq_guard;
        *seq_guard += 1;
        self.put_and_fence(seq, None, false)?;
        tracing::trace!(seq, "PMIx barrier done");
        Ok(())
    }

    fn guard_exit(&self) -> Result<(), OobError> {
        GUARDED.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn finalized(&self) -> Result<(), OobError> {
        FINALIZED.store(true, Ordering::SeqCst);
        Ok(())
    }

    fn abort(&self, msg: &str) -> ! {
        self.end_job(ABORT_EXIT_CODE, "abort: ", msg)
    }

    fn global_exit(&self, status: i32, msg: &str) -> ! {
        self.end_job(status, "global exit: ", msg)
    }
}

impl PmixOob {
    /// PMIx_Abort with `status` (the launcher's exit status for the job).
    fn end_job(&self, status: i32, what: &str, msg: &str) -> ! {
        ABORTING.store(true, Ordering::SeqCst);
        let rank = self.inner.rank;
        let mut end = msg.len().min(MAX_ABORT_MSG);
        while !msg.is_char_boundary(end) {
            end -= 1;
        }
        let msg = &msg[..end];
        // mpirun does not print the message it gets with PMIx_Abort (srun
        // may): say it here, before the launcher kills us.
        let _ = writeln!(std::io::stderr(), "pgas locale {rank}: {what}{msg}");
        // PMIx wants a C string: drop interior NULs rather than the message.
        let text = format!("pgas locale {rank}: {what}{msg}").replace('\0', " ");
        let cmsg = CString::new(text).expect("NULs removed");
        // Never hang: whatever PMIx_Abort does, the process ends.
        let _ = std::thread::Builder::new()
            .name("pgas-abort-guard".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                std::thread::sleep(ABORT_WAIT);
                let _ = writeln!(
                    std::io::stderr(),
                    "pgas locale {rank}: the launcher did not stop the job within \
                     {ABORT_WAIT:?} of PMIx_Abort; exiting"
                );
                // SAFETY: _exit ends the process without running exit
                // handlers (PMIx may be mid-call on another thread).
                unsafe { libc::_exit(status) }
            });
        // SAFETY: `cmsg` is NUL-terminated and live for the call; NULL procs
        // = every process of our namespace.
        let rc = unsafe { (self.inner.lib.abort)(status, cmsg.as_ptr(), std::ptr::null_mut(), 0) };
        if rc == ffi::SUCCESS {
            // The launcher prints the message and kills the job, us included.
            std::thread::sleep(ABORT_WAIT);
        }
        let _ = writeln!(
            std::io::stderr(),
            "pgas locale {rank}: PMIx_Abort: {}; exiting",
            self.inner.lib.error_string(rc)
        );
        // SAFETY: see the guard thread.
        unsafe { libc::_exit(status) }
    }
}

/// Reads a byte object; `Err(status)` on a PMIx error or another type.
fn get_bytes(lib: &Lib, proc_: &Proc, k: &CString) -> Result<Vec<u8>, c_int> {
    let info = [Info::flag(key::OPTIONAL, true)];
    let mut val: *mut Value = std::ptr::null_mut();
    // SAFETY: `proc_`, `k` and `info` are live and initialized for the call;
    // on success PMIx stores a malloc'ed value in `val`.
    let rc = unsafe { (lib.get)(proc_, k.as_ptr(), info.as_ptr(), info.len(), &mut val) };
    if rc != ffi::SUCCESS {
        return Err(rc);
    }
    if val.is_null() {
        return Err(ffi::ERR_NOT_FOUND);
    }
    // SAFETY: `val` is the live value PMIx_Get returned; its type tag says
    // which union member is valid, and a byte object's `bytes` holds `size`
    // bytes (or is NULL with size 0).
    let out = unsafe {
        if (*val).ty == ty::BYTE_OBJECT {
            let bo = (*val).data.bo;
            if bo.bytes.is_null() || bo.size == 0 {
                Some(Vec::new())
            } else {
                Some(std::slice::from_raw_parts(bo.bytes.cast::<u8>(), bo.size).to_vec())
            }
        } else {
            None
        }
    };
    // SAFETY: returned by PMIx_Get above, released once.
    unsafe { lib.release(val) };
    out.ok_or(ffi::ERR_NOT_FOUND)
}

/// Reads an unsigned integer attribute (any PMIx integer type).
fn get_uint(lib: &Lib, proc_: &Proc, k: &std::ffi::CStr) -> Result<usize, OobError> {
    let mut val: *mut Value = std::ptr::null_mut();
    // SAFETY: `proc_` and `k` are live for the call; no info; on success PMIx
    // stores a malloc'ed value in `val`.
    let rc = unsafe { (lib.get)(proc_, k.as_ptr(), std::ptr::null(), 0, &mut val) };
    let what = || format!("PMIx_Get({})", k.to_string_lossy());
    if rc != ffi::SUCCESS || val.is_null() {
        return Err(OobError::Pmix {
            call: "PMIx_Get",
            detail: format!("{}: {}", what(), lib.error_string(rc)),
        });
    }
    // SAFETY: `val` is live; the type tag selects the valid union member.
    let (t, n) = unsafe {
        let v = &*val;
        let n: Option<u64> = match v.ty {
            ty::UINT32 => Some(v.data.uint32.into()),
            ty::UINT16 => Some(v.data.uint16.into()),
            ty::UINT64 => Some(v.data.uint64),
            ty::SIZE => Some(v.data.size as u64),
            ty::UINT => Some(v.data.uint32.into()),
            ty::INT => u64::try_from(v.data.integer).ok(),
            _ => None,
        };
        (v.ty, n)
    };
    // SAFETY: returned by PMIx_Get above, released once.
    unsafe { lib.release(val) };
    n.and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| OobError::Pmix {
            call: "PMIx_Get",
            detail: format!("{}: unexpected value (type {t})", what()),
        })
}

/// `on_exit` handler: finalize PMIx so the launcher sees a clean exit, unless
/// the locale is ending before its comm layer finalized (peers may wait for
/// it on the fabric): then say so and leave PMIx unfinalized, which the
/// launcher treats as a failed process (mpirun: "exiting improperly"), so it
/// kills the job even when the status is 0.
extern "C" fn finalize_at_exit(status: c_int, _arg: *mut c_void) {
    if ABORTING.load(Ordering::SeqCst) || !INITIALIZED.load(Ordering::SeqCst) {
        return;
    }
    if GUARDED.load(Ordering::SeqCst) && !FINALIZED.load(Ordering::SeqCst) {
        let _ = writeln!(
            std::io::stderr(),
            "pgas locale {}: exited with status {status} before finalize; failing the job \
             (PMIx left unfinalized)",
            RANK.load(Ordering::SeqCst)
        );
        return;
    }
    if let Ok(lib) = Lib::get() {
        // SAFETY: PMIx was initialized (flag above); no info array.
        let rc = unsafe { (lib.finalize)(std::ptr::null(), 0) };
        if rc != ffi::SUCCESS {
            tracing::debug!(status = %lib.error_string(rc), "PMIx_Finalize failed");
        }
    }
}
