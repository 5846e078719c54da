//! Owned libfabric objects: fabric, domain, address vector, completion queue,
//! endpoint, memory region.
//!
//! Each wrapper owns one `fid` and closes it in `Drop`. Children hold an `Arc`
//! of their parents, so a domain is never closed before its endpoints and
//! memory regions. The data path's posting calls on `Endpoint` are in
//! `ops`; `Cq::read` answers "none ready" as `Ok(0)`.

use super::error::{check, strerror, OfiError};
use super::info::Info;
use libfabric_sys as sys;
use std::ffi::c_void;
use std::ptr;
use std::sync::Arc;

/// An address in the address vector (`fi_addr_t`; the AV is `FI_AV_TABLE`,
/// so the n-th inserted name is n).
pub type FiAddr = sys::fi_addr_t;

macro_rules! owned_fid {
    ($name:ident, $raw:ty, $what:literal) => {
        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: ptr is a live fid we opened; it is closed exactly once,
                // after every child (which holds an Arc of us) is gone.
                let ret = unsafe { sys::fi_close(&mut (*self.ptr).fid) };
                if ret != 0 {
                    tracing::warn!("fi_close({}) failed: {} ({ret})", $what, strerror(-ret));
                }
            }
        }
        // SAFETY: the domain is opened with FI_THREAD_SAFE, so libfabric allows
        // calls on this object from any thread, concurrently.
        unsafe impl Send for $name {}
        // SAFETY: as above.
        unsafe impl Sync for $name {}
        impl $name {
            /// The raw object, for this layer's calls.
            #[allow(dead_code)] // not every object is used by a call elsewhere in `ofi`
            pub(in crate::ofi) fn as_ptr(&self) -> *mut $raw {
                self.ptr
            }
            /// The object's `fid`, for bind and option calls.
            #[allow(dead_code)] // not every object is bound
            pub(in crate::ofi) fn fid(&self) -> *mut sys::fid {
                // SAFETY: ptr is live; taking the address of its first field.
                unsafe { &mut (*self.ptr).fid }
            }
        }
    };
}

/// `fid_fabric`.
#[derive(Debug)]
pub struct Fabric {
    ptr: *mut sys::fid_fabric,
}
owned_fid!(Fabric, sys::fid_fabric, "fabric");

impl Fabric {
    /// `fi_fabric` for the fabric of `info`.
    pub fn open(info: &Info) -> Result<Arc<Fabric>, OfiError> {
        let mut ptr = ptr::null_mut();
        // SAFETY: fabric_attr of a getinfo result is valid; ptr is an out-pointer.
        let ret =
            unsafe { sys::fi_fabric((*info.as_ptr()).fabric_attr, &mut ptr, ptr::null_mut()) };
        check("fi_fabric", ret)?;
        Ok(Arc::new(Fabric { ptr }))
    }
}

/// `fid_domain`.
#[derive(Debug)]
pub struct Domain {
    ptr: *mut sys::fid_domain,
    _fabric: Arc<Fabric>,
}
owned_fid!(Domain, sys::fid_domain, "domain");

impl Domain {
    /// `fi_domain`.
    pub fn open(fabric: &Arc<Fabric>, info: &Info) -> Result<Arc<Domain>, OfiError> {
        let mut ptr = ptr::null_mut();
        // SAFETY: fabric is open; info is a valid getinfo entry.
        let ret = unsafe { sys::fi_domain(fabric.ptr, info.as_ptr(), &mut ptr, ptr::null_mut()) };
        check("fi_domain", ret)?;
        Ok(Arc::new(Domain {
            ptr,
            _fabric: fabric.clone(),
        }))
    }
}

/// `fid_av`, always `FI_AV_TABLE`: the n-th inserted address is `fi_addr_t` n.
#[derive(Debug)]
pub struct Av {
    ptr: *mut sys::fid_av,
    _domain: Arc<Domain>,
}
owned_fid!(Av, sys::fid_av, "av");

impl Av {
    /// `fi_av_open` of a table with room for `count` addresses.
    pub fn open(domain: &Arc<Domain>, count: usize) -> Result<Arc<Av>, OfiError> {
        let mut attr = sys::fi_av_attr {
            type_: sys::FI_AV_TABLE,
            count,
            ..Default::default()
        };
        let mut ptr = ptr::null_mut();
        // SAFETY: domain open; attr valid for the call.
        let ret = unsafe { sys::fi_av_open(domain.ptr, &mut attr, &mut ptr, ptr::null_mut()) };
        check("fi_av_open", ret)?;
        Ok(Arc::new(Av {
            ptr,
            _domain: domain.clone(),
        }))
    }

    /// Inserts endpoint names in order; returns their `fi_addr_t`s.
    pub fn insert(&self, names: &[Vec<u8>]) -> Result<Vec<FiAddr>, OfiError> {
        let mut out = Vec::with_capacity(names.len());
        for name in names {
            let mut addr: sys::fi_addr_t = sys::FI_ADDR_NOTAVAIL;
            // SAFETY: name holds one address in the provider's format (from
            // fi_getname on a peer using the same provider); addr is an out-param.
            let ret = unsafe {
                sys::fi_av_insert(
                    self.ptr,
                    name.as_ptr() as *const c_void,
                    1,
                    &mut addr,
                    0,
                    ptr::null_mut(),
                )
            };
            if ret != 1 {
                return Err(OfiError {
                    call: "fi_av_insert",
                    code: ret as i64,
                    text: if ret < 0 {
                        strerror(-ret)
                    } else {
                        format!("inserted {ret} of 1 addresses")
                    },
                });
            }
            out.push(addr);
        }
        Ok(out)
    }
}

/// How a thread waits for completions on a CQ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WaitMode {
    /// Poll `fi_cq_read` (manual-progress providers, where reading drives progress).
    Spin,
    /// Block in `fi_cq_sread` on the CQ's wait object (auto-progress providers
    /// with an internal progress thread, i.e. `sockets`, which starves when we spin).
    Block,
}

/// `fid_cq` in `FI_CQ_FORMAT_DATA`.
#[derive(Debug)]
pub struct Cq {
    ptr: *mut sys::fid_cq,
    wait: WaitMode,
    _domain: Arc<Domain>,
}
owned_fid!(Cq, sys::fid_cq, "cq");

/// One completion entry (`struct fi_cq_data_entry`).
pub type CqEntry = sys::fi_cq_data_entry;

/// What a receive poller asks of a completion entry, without the flag
/// constants of the raw bindings.
pub trait RecvCompletion {
    /// The bytes of a received message, if this completion is one (the
    /// caller must read them before the buffer is reposted).
    fn received(&self) -> Option<(*const u8, usize)>;
    /// Whether the provider retired the multi-receive buffer with it.
    fn retires_buffer(&self) -> bool;
    /// The operation context given when the buffer was posted.
    fn context(&self) -> usize;
}

impl RecvCompletion for CqEntry {
    fn received(&self) -> Option<(*const u8, usize)> {
        (self.flags & sys::FI_RECV != 0 && self.len > 0 && !self.buf.is_null())
            .then_some((self.buf as *const u8, self.len))
    }
    fn retires_buffer(&self) -> bool {
        self.flags & sys::FI_MULTI_RECV != 0
    }
    fn context(&self) -> usize {
        self.op_context as usize
    }
}

/// A completion error, with the provider's detail text.
#[derive(Debug, Clone)]
pub struct CqError {
    /// The operation's context pointer.
    pub op_context: *mut c_void,
    /// The error as an `OfiError`.
    pub error: OfiError,
}

impl Cq {
    /// `fi_cq_open` with `size` entries.
    pub fn open(domain: &Arc<Domain>, size: usize, wait: WaitMode) -> Result<Arc<Cq>, OfiError> {
        let mut attr = sys::fi_cq_attr {
            size,
            format: sys::FI_CQ_FORMAT_DATA,
            wait_obj: match wait {
                WaitMode::Spin => sys::FI_WAIT_NONE,
                WaitMode::Block => sys::FI_WAIT_UNSPEC,
            },
            ..Default::default()
        };
        let mut ptr = ptr::null_mut();
        // SAFETY: domain open; attr valid for the call.
        let ret = unsafe { sys::fi_cq_open(domain.ptr, &mut attr, &mut ptr, ptr::null_mut()) };
        check("fi_cq_open", ret)?;
        Ok(Arc::new(Cq {
            ptr,
            wait,
            _domain: domain.clone(),
        }))
    }

    /// How waits on this CQ are done.
    pub fn wait_mode(&self) -> WaitMode {
        self.wait
    }

    /// Reads up to `buf.len()` completions. `Ok(0)` when none are ready
    /// (this call also drives manual progress). In `Block` mode it waits up to
    /// `timeout_ms` for the first one.
    pub fn read(&self, buf: &mut [CqEntry], timeout_ms: i32) -> Result<usize, CqError> {
        let ret = match self.wait {
            // SAFETY: buf has room for buf.len() entries of the CQ's format.
            WaitMode::Spin => unsafe {
                sys::fi_cq_read(self.ptr, buf.as_mut_ptr() as *mut c_void, buf.len())
            },
            // SAFETY: as above; cond is unused for FI_CQ_COND_NONE.
            WaitMode::Block => unsafe {
                sys::fi_cq_sread(
                    self.ptr,
                    buf.as_mut_ptr() as *mut c_void,
                    buf.len(),
                    ptr::null(),
                    timeout_ms,
                )
            },
        };
        if ret >= 0 {
            return Ok(ret as usize);
        }
        let ret = ret as i32;
        if ret == -sys::FI_EAGAIN || ret == -sys::FI_ETIMEDOUT || ret == -sys::FI_EINTR {
            return Ok(0);
        }
        if ret == -(sys::FI_EAVAIL as i32) {
            return Err(self.read_error());
        }
        Err(CqError {
            op_context: ptr::null_mut(),
            error: OfiError::from_ret("fi_cq_read", ret as i64),
        })
    }

    /// Unblocks a thread waiting in [`Cq::read`] on a blocking CQ (its read
    /// returns `-FI_ECANCELED`, or none if it found completions); on the
    /// providers here the signal stays set until a read takes it.
    pub fn signal(&self) -> Result<(), OfiError> {
        // SAFETY: a live CQ; fi_cq_signal only sets its wait object.
        let ret = unsafe { sys::fi_cq_signal(self.ptr) };
        check("fi_cq_signal", ret as i64)
    }

    fn read_error(&self) -> CqError {
        let mut e = sys::fi_cq_err_entry::default();
        // SAFETY: e is a valid, zeroed err entry (err_data_size 0: provider
        // uses its own buffer for err_data).
        let ret = unsafe { sys::fi_cq_readerr(self.ptr, &mut e, 0) };
        if ret < 0 {
            return CqError {
                op_context: ptr::null_mut(),
                error: OfiError::from_ret("fi_cq_readerr", ret as i64),
            };
        }
        // SAFETY: fi_cq_strerror returns a provider-owned string for prov_errno.
        let detail = unsafe {
            let p = sys::fi_cq_strerror(self.ptr, e.prov_errno, e.err_data, ptr::null_mut(), 0);
            if p.is_null() {
                String::new()
            } else {
                std::ffi::CStr::from_ptr(p).to_string_lossy().into_owned()
            }
        };
        CqError {
            op_context: e.op_context,
            error: OfiError {
                call: "completion",
                code: -(e.err as i64),
                text: format!("{} (provider: {detail})", strerror(e.err)),
            },
        }
    }
}

/// `fid_ep`: an enabled RDM endpoint bound to an AV and one CQ.
#[derive(Debug)]
pub struct Endpoint {
    ptr: *mut sys::fid_ep,
    cq: Arc<Cq>,
    rx_cq: Option<Arc<Cq>>,
    _av: Arc<Av>,
    _domain: Arc<Domain>,
}
owned_fid!(Endpoint, sys::fid_ep, "endpoint");

impl Endpoint {
    /// Opens, binds (AV; CQ for transmit and receive) and enables an endpoint.
    pub fn open(
        domain: &Arc<Domain>,
        info: &Info,
        av: &Arc<Av>,
        cq: &Arc<Cq>,
    ) -> Result<Endpoint, OfiError> {
        Self::open_split(domain, info, av, cq, None)
    }

    /// As [`Endpoint::open`], with a separate CQ for receive completions
    /// when `rx_cq` is given (transmit completions go to `cq`).
    pub fn open_split(
        domain: &Arc<Domain>,
        info: &Info,
        av: &Arc<Av>,
        cq: &Arc<Cq>,
        rx_cq: Option<&Arc<Cq>>,
    ) -> Result<Endpoint, OfiError> {
        let mut ptr = ptr::null_mut();
        // SAFETY: domain open, info valid; ptr is an out-pointer.
        let ret = unsafe { sys::fi_endpoint(domain.ptr, info.as_ptr(), &mut ptr, ptr::null_mut()) };
        check("fi_endpoint", ret)?;
        let ep = Endpoint {
            ptr,
            cq: cq.clone(),
            rx_cq: rx_cq.cloned(),
            _av: av.clone(),
            _domain: domain.clone(),
        };
        // SAFETY: ep and av are open objects of the same domain.
        check("fi_ep_bind(av)", unsafe {
            sys::fi_ep_bind(ep.ptr, av.fid(), 0)
        })?;
        match rx_cq {
            None => {
                // SAFETY: as above for the CQ.
                check("fi_ep_bind(cq)", unsafe {
                    sys::fi_ep_bind(ep.ptr, cq.fid(), sys::FI_TRANSMIT | sys::FI_RECV)
                })?;
            }
            Some(rx) => {
                // SAFETY: as above, one CQ per direction.
                check("fi_ep_bind(tx cq)", unsafe {
                    sys::fi_ep_bind(ep.ptr, cq.fid(), sys::FI_TRANSMIT)
                })?;
                // SAFETY: as above.
                check("fi_ep_bind(rx cq)", unsafe {
                    sys::fi_ep_bind(ep.ptr, rx.fid(), sys::FI_RECV)
                })?;
            }
        }
        // SAFETY: ep is open and bound.
        check("fi_enable", unsafe { sys::fi_enable(ep.ptr) })?;
        Ok(ep)
    }

    /// The CQ this endpoint reports transmit completions to.
    pub fn cq(&self) -> &Arc<Cq> {
        &self.cq
    }

    /// The CQ this endpoint reports receive completions to.
    pub fn rx_cq(&self) -> &Arc<Cq> {
        self.rx_cq.as_ref().unwrap_or(&self.cq)
    }

    /// `fi_getname`: this endpoint's address, to publish to peers.
    pub fn name(&self) -> Result<Vec<u8>, OfiError> {
        let mut buf = vec![0u8; 256];
        let mut len = buf.len();
        // SAFETY: buf has len bytes; fi_getname updates len.
        let mut ret = unsafe {
            sys::fi_getname(
                &mut (*self.ptr).fid,
                buf.as_mut_ptr() as *mut c_void,
                &mut len,
            )
        };
        if ret == -(sys::FI_ETOOSMALL as i32) {
            buf.resize(len, 0);
            // SAFETY: as above with the size libfabric asked for.
            ret = unsafe {
                sys::fi_getname(
                    &mut (*self.ptr).fid,
                    buf.as_mut_ptr() as *mut c_void,
                    &mut len,
                )
            };
        }
        check("fi_getname", ret)?;
        buf.truncate(len);
        Ok(buf)
    }
}

/// `fid_mr`: a registered memory region.
#[derive(Debug)]
pub struct Mr {
    ptr: *mut sys::fid_mr,
    _domain: Arc<Domain>,
}
owned_fid!(Mr, sys::fid_mr, "mr");

impl Mr {
    /// Access for RMA both ways and for the local buffers of sends and
    /// receives (`FI_READ | FI_WRITE | FI_REMOTE_READ | FI_REMOTE_WRITE |
    /// FI_SEND | FI_RECV`).
    pub const ACCESS_RMA_AND_MSG: u64 = sys::FI_READ
        | sys::FI_WRITE
        | sys::FI_REMOTE_READ
        | sys::FI_REMOTE_WRITE
        | sys::FI_SEND
        | sys::FI_RECV;

    /// `fi_mr_reg` of `len` bytes at `addr`.
    ///
    /// # Safety
    /// `addr..addr+len` must stay mapped until the region is dropped.
    pub unsafe fn register(
        domain: &Arc<Domain>,
        addr: *const u8,
        len: usize,
        access: u64,
        requested_key: u64,
    ) -> Result<Mr, OfiError> {
        let mut ptr = ptr::null_mut();
        // SAFETY: the caller guarantees the buffer outlives the MR.
        let ret = unsafe {
            sys::fi_mr_reg(
                domain.ptr,
                addr as *const c_void,
                len,
                access,
                0,
                requested_key,
                0,
                &mut ptr,
                ptr::null_mut(),
            )
        };
        check("fi_mr_reg", ret)?;
        Ok(Mr {
            ptr,
            _domain: domain.clone(),
        })
    }

    /// Binds the region to an endpoint and enables it (`FI_MR_ENDPOINT`).
    pub fn bind_enable(&self, ep: &Endpoint) -> Result<(), OfiError> {
        // SAFETY: both objects are open in the same domain.
        check("fi_mr_bind", unsafe {
            sys::fi_mr_bind(self.ptr, ep.fid(), 0)
        })?;
        // SAFETY: the MR is bound.
        check("fi_mr_enable", unsafe { sys::fi_mr_enable(self.ptr) })
    }

    /// The key a peer uses to reach this region.
    pub fn key(&self) -> u64 {
        // SAFETY: the MR is live.
        unsafe { sys::fi_mr_key(self.ptr) }
    }

    /// The local descriptor passed with buffers in this region.
    pub fn desc(&self) -> *mut c_void {
        // SAFETY: the MR is live.
        unsafe { sys::fi_mr_desc(self.ptr) }
    }
}
