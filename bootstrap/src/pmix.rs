//! The PMIx backend: the process was started by a PMIx launcher (OpenMPI's
//! `mpirun`, Slurm's `srun --mpi=pmix`, PRRTE's `prterun`), whose PMIx
//! server does the collectives.
//!
//! * rank: `PMIx_Init`; size: `PMIX_JOB_SIZE` of the job (rank wildcard).
//! * collectives: the first one starts a collective service in locale 0
//!   and publishes its address under one key (`pgas.oob.hub`, one
//!   `PMIx_Fence` with `PMIX_COLLECT_DATA`); every collective then goes
//!   through that service (`crate::hub`), so the PMIx store does not grow
//!   with the number of collectives (a key per collective made every fence
//!   slower, until the litmus suite stalled on the multi-host bed). A
//!   mismatched collective fails on every locale, named as under pgasrun.
//! * abort: `PMIx_Abort` on the whole namespace; the launcher prints the
//!   message and kills every process. A guard thread exits the process if
//!   that has not happened within a few seconds.
//! * `PMIx_Finalize` runs at process exit (`on_exit`): a PMIx launcher treats
//!   a process that initialized PMIx and exits without finalizing as failed.
//!   Which is what we want of a locale that exits before its comm layer
//!   finalized ([`Oob::guard_exit`]): its exit handler then says so and
//!   skips `PMIx_Finalize`, and the launcher kills the job.
//! * a locale lost (its process ended before it finalized) ends the job
//!   naming it, even when the launcher does not notice: locale 0's
//!   collective service sees a guarded locale's connection close, the
//!   others see theirs to locale 0 close (`hub`'s liveness); either aborts
//!   the job (`PMIx_Abort`) naming the lost locale.

use std::ffi::{c_int, c_void, CString};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::env::PmixEnv;
use crate::error::OobError;
use crate::hub::{self, HubAd, HubClient, OnLost, StopHeard};
use crate::oob::{abort_text, shared_instance, Relayed};
use crate::pmix_ffi::{self as ffi, key, ty, Info, Lib, Proc, Value, ValueData};
use crate::single::check_len;
use crate::wire::{Msg, Op, PmixValue};

/// After `PMIx_Abort`, how long to wait for the launcher to kill us before
/// exiting on our own.
const ABORT_WAIT: Duration = Duration::from_secs(10);
/// Locale 0's finalize waits this long for its service to tell the others.
const FINALIZE_WAIT: Duration = Duration::from_secs(5);
/// A locale 0 ending the job waits this long for its service to pass the
/// cause on (it takes well under a millisecond when the service is alive).
const STOP_ECHO_WAIT: Duration = Duration::from_secs(1);
/// Exit status of an aborting locale (and the status asked of the launcher).
const ABORT_EXIT_CODE: i32 = 1;

/// Kinds of locale 0's one value (`wire::PmixValue`): where its collective
/// service listens, or why it could not start one. (1 and 2 were the
/// allgather and broadcast values of the key-per-collective scheme.)
const KIND_HUB: u8 = 3;
const KIND_HUB_FAILED: u8 = 4;
/// The one key of the run.
const HUB_KEY: &str = "pgas.oob.hub";

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
    shared_instance(&SHARED, || PmixOob::init(env))
}

struct Inner {
    lib: &'static Lib,
    /// Our namespace and rank, as PMIx_Init returned them.
    me: Proc,
    rank: usize,
    size: usize,
    /// Held for a whole collective.
    calls: Mutex<Calls>,
    /// The service connection's write side, once connected (`Guard` and
    /// `Finalized` are sent on it outside collectives).
    hub_writer: std::sync::OnceLock<Arc<Mutex<std::net::TcpStream>>>,
    /// The service's `Stop`, as this locale's connection heard it.
    hub_stop: std::sync::OnceLock<Arc<StopHeard>>,
}

struct Calls {
    /// Next collective number.
    next_seq: u64,
    /// Set up by the first collective.
    hub: Option<HubClient>,
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
                calls: Mutex::new(Calls {
                    next_seq: 0,
                    hub: None,
                }),
                hub_writer: std::sync::OnceLock::new(),
                hub_stop: std::sync::OnceLock::new(),
            }),
        })
    }

    /// Puts `value` under `key`, commits, and fences collecting data.
    fn put_and_fence(&self, key: &CString, value: Option<&[u8]>) -> Result<(), OobError> {
        let lib = self.inner.lib;
        let err = |call: &'static str, rc: c_int| OobError::Pmix {
            call,
            detail: format!(
                "{} while setting up the collectives (did every locale start, and is \
                 every locale still running?)",
                lib.error_string(rc)
            ),
        };
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
            // SAFETY: `key` is NUL-terminated; `v` is a byte object pointing
            // at `bytes`, live for the call. PMIx_Put copies the value and
            // never writes through the pointer.
            let rc = unsafe { (lib.put)(ffi::SCOPE_GLOBAL, key.as_ptr(), &mut v) };
            if rc != ffi::SUCCESS {
                return Err(err("PMIx_Put", rc));
            }
            // SAFETY: takes nothing; sends what was put to the server.
            let rc = unsafe { (lib.commit)() };
            if rc != ffi::SUCCESS {
                return Err(err("PMIx_Commit", rc));
            }
        }
        let info = [Info::flag(key::COLLECT_DATA, true)];
        // SAFETY: NULL procs = every process of our namespace; `info` is an
        // initialized pmix_info_t array, live for the call.
        let rc = unsafe { (lib.fence)(std::ptr::null(), 0, info.as_ptr(), info.len()) };
        if rc != ffi::SUCCESS {
            return Err(err("PMIx_Fence", rc));
        }
        Ok(())
    }

    /// The connection to locale 0's collective service, set up by the first
    /// collective (the only PMIx fence and key of the run; see `hub`).
    fn hub<'a>(&self, calls: &'a mut Calls) -> Result<&'a mut HubClient, OobError> {
        if calls.hub.is_none() {
            let (rank, size) = (self.inner.rank, self.inner.size);
            let key = CString::new(HUB_KEY).expect("no NUL in key");
            let ad = if rank == 0 {
                let (kind, data) = match hub::start(size, 0, self.on_lost()) {
                    Ok(ad) => (KIND_HUB, ad.encode()),
                    Err(e) => (KIND_HUB_FAILED, e.to_string().into_bytes()),
                };
                let value = PmixValue {
                    kind,
                    root: 0,
                    data: &data,
                }
                .encode();
                self.put_and_fence(&key, Some(&value))?;
                HubAd::decode(&data).map_err(|_| {
                    OobError::ConnectionLost(String::from_utf8_lossy(&data).into_owned())
                })?
            } else {
                self.put_and_fence(&key, None)?;
                let mut root = self.inner.me;
                root.rank = 0;
                let raw = get_bytes(self.inner.lib, &root, &key).map_err(|rc| OobError::Pmix {
                    call: "PMIx_Get",
                    detail: format!(
                        "{} reading locale 0's collective-service address",
                        self.inner.lib.error_string(rc)
                    ),
                })?;
                let v = PmixValue::decode(&raw).map_err(OobError::Protocol)?;
                match v.kind {
                    KIND_HUB => HubAd::decode(v.data).map_err(OobError::Protocol)?,
                    KIND_HUB_FAILED => {
                        return Err(OobError::PeerDied {
                            rank: 0,
                            detail: format!(
                                "it could not start the collective service: {}",
                                String::from_utf8_lossy(v.data)
                            ),
                        })
                    }
                    k => {
                        return Err(OobError::Protocol(format!(
                            "locale 0's collective-service value has kind {k}"
                        )))
                    }
                }
            };
            let client = HubClient::connect(&ad, rank, size, self.on_lost())?;
            let writer = client.writer();
            let _ = self.inner.hub_stop.set(client.stop_heard());
            calls.hub = Some(client);
            let _ = self.inner.hub_writer.set(Arc::clone(&writer));
            // Guarded before the first collective (the comm layer's start).
            if GUARDED.load(Ordering::SeqCst) {
                hub::send(&writer, &Msg::Guard)?;
            }
        }
        Ok(calls.hub.as_mut().expect("set above"))
    }

    /// What this locale does when the collective service reports a locale
    /// lost: abort the job naming it, once its comm layer started and until
    /// it finalized (plain OOB users and finished locales carry on).
    fn on_lost(&self) -> OnLost {
        let me = self.clone();
        Arc::new(move |rank, detail| {
            let guarded = GUARDED.load(Ordering::SeqCst);
            if !guarded || FINALIZED.load(Ordering::SeqCst) || ABORTING.load(Ordering::SeqCst) {
                tracing::debug!(rank, detail, guarded, "collective service: locale gone");
                return;
            }
            // Tell the others (locale 0 noticed a loss they may not have),
            // without waiting for the echo: this may be the service's own
            // thread, which is what would send it.
            let cause = format!("aborted: {detail}");
            me.end_with(ABORT_EXIT_CODE, "abort: ", &detail, &cause, false)
        })
    }

    /// Why the job is ending, as the service passed it on from another
    /// locale (not our own cause echoed back).
    fn cause_heard(&self) -> Option<String> {
        let reason = self.inner.hub_stop.get()?.get()?;
        let own = format!("locale {} ", self.inner.rank);
        (!reason.starts_with(&own)).then_some(reason)
    }

    /// Tells the collective service, if connected, that this locale is
    /// ending the job and why (`cause`: "aborted: ...", "exited with status
    /// 1 before it finalized"), so that the others report this cause rather
    /// than this locale's death when its connection closes. Locale 0, whose
    /// process hosts the service, waits until the service passed it on
    /// (`wait_echo`). Best effort: an abort must not wait on a busy or
    /// broken connection.
    fn tell_service_ending(&self, cause: &str, wait_echo: bool) {
        let Some(w) = self.inner.hub_writer.get() else {
            return;
        };
        let Some(mut s) = w.try_lock_for(Duration::from_millis(100)) else {
            return;
        };
        let sent = Msg::Abort {
            msg: cause.to_owned(),
        }
        .write_to(&mut *s)
        .is_ok();
        drop(s);
        if sent && wait_echo && self.inner.rank == 0 {
            if let Some(stop) = self.inner.hub_stop.get() {
                if !stop.wait(STOP_ECHO_WAIT) {
                    tracing::debug!("collective service: no stop echo within {STOP_ECHO_WAIT:?}");
                }
            }
        }
    }

    /// Sends `m` to the collective service if connected.
    fn tell_hub(&self, m: &Msg) -> Result<(), OobError> {
        match self.inner.hub_writer.get() {
            Some(w) => hub::send(w, m),
            None => Ok(()),
        }
    }
}

impl Relayed for PmixOob {
    /// Collective number `next_seq` through the service.
    fn collective(&self, op: Op, root: usize, data: &[u8]) -> Result<Vec<u8>, OobError> {
        check_len(data)?;
        let mut calls = self.inner.calls.lock();
        let seq = calls.next_seq;
        calls.next_seq += 1;
        let out = self.hub(&mut calls)?.collective(seq, op, root, data)?;
        tracing::trace!(
            seq,
            op = op.name(),
            bytes = out.len(),
            "PMIx-job collective done"
        );
        Ok(out)
    }

    fn place(&self) -> (usize, usize) {
        (self.inner.rank, self.inner.size)
    }

    fn guard(&self) -> Result<(), OobError> {
        GUARDED.store(true, Ordering::SeqCst);
        self.tell_hub(&Msg::Guard)
    }

    fn done(&self) -> Result<(), OobError> {
        FINALIZED.store(true, Ordering::SeqCst);
        self.tell_hub(&Msg::Finalized)?;
        if self.inner.rank == 0 {
            // The service lives in this process: exit only once it told
            // the others that its closing is no loss.
            let calls = self.inner.calls.lock();
            if let Some(h) = calls.hub.as_ref() {
                if !h.await_finalized(FINALIZE_WAIT) {
                    tracing::warn!("collective service: no finalize echo within {FINALIZE_WAIT:?}");
                }
            }
        }
        Ok(())
    }

    fn end_job(&self, status: Option<i32>, msg: &str) -> ! {
        match status {
            None => self.end_with(
                ABORT_EXIT_CODE,
                "abort: ",
                msg,
                &format!("aborted: {msg}"),
                true,
            ),
            Some(s) => {
                let cause = format!("ended the job (global exit, status {s}): {msg}");
                self.end_with(s, "global exit: ", msg, &cause, true)
            }
        }
    }
}

impl PmixOob {
    /// Ends the job: tells the collective service `cause` (the first time
    /// only; see `tell_service_ending`), then `PMIx_Abort`.
    fn end_with(&self, status: i32, what: &str, msg: &str, cause: &str, wait_echo: bool) -> ! {
        if !ABORTING.swap(true, Ordering::SeqCst) {
            self.tell_service_ending(cause, wait_echo);
        }
        self.pmix_abort(status, what, msg)
    }

    /// PMIx_Abort with `status` (the launcher's exit status for the job).
    fn pmix_abort(&self, status: i32, what: &str, msg: &str) -> ! {
        ABORTING.store(true, Ordering::SeqCst);
        let rank = self.inner.rank;
        let msg = match self.cause_heard().filter(|c| !msg.contains(c.as_str())) {
            Some(cause) => format!("{} (the job was ending: {cause})", abort_text(msg)),
            None => abort_text(msg).to_owned(),
        };
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
        // The others will see our connection close: give them the cause
        // (the program's own output says why it exited); and if another
        // locale was ending the job already, say so.
        let mut heard = None;
        if let Ok(shared) = SHARED.try_lock() {
            if let Some(me) = shared.as_ref() {
                heard = me.cause_heard();
                me.tell_service_ending(
                    &format!(
                        "exited with status {status} before it finalized (its own output says \
                         why)"
                    ),
                    true,
                );
            }
        }
        let also = heard.map_or(String::new(), |c| format!("; the job was ending: {c}"));
        let _ = writeln!(
            std::io::stderr(),
            "pgas locale {}: exited with status {status} before finalize; failing the job \
             (PMIx left unfinalized){also}",
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
