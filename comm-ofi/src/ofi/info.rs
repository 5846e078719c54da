//! Owned `fi_info` lists: hints we build, and what `fi_getinfo` returns.
//!
//! `fi_info` is a C linked list whose strings and attribute structs libfabric
//! frees in `fi_freeinfo`; these wrappers make sure that happens exactly once
//! and give typed read access to the fields the comm layer looks at.

use super::error::{check, OfiError};
use libfabric_sys as sys;
use std::ffi::{CStr, CString};
use std::ptr;

/// The libfabric API version we ask for (1.9: what the original asks, and
/// what Debian's 1.17 and every 2.x library accept).
pub const API_VERSION: u32 = sys::fi_version(1, 9);

/// The version of the libfabric library loaded: (major, minor).
pub fn library_version() -> (u32, u32) {
    // SAFETY: fi_version (fi_library_version here) has no preconditions.
    let v = unsafe { sys::fi_library_version() };
    (sys::fi_major(v), sys::fi_minor(v))
}

/// The memory-registration mode a provider asks for (`FI_MR_*` bits), and
/// what each bit means for the data path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MrMode(pub u64);

impl MrMode {
    /// `FI_MR_LOCAL`: local buffers must be registered and passed with
    /// their descriptor.
    pub const fn local(self) -> bool {
        self.0 & sys::FI_MR_LOCAL != 0
    }
    /// `FI_MR_VIRT_ADDR`: remote addresses are virtual addresses (else
    /// offsets into the registration).
    pub const fn virt_addr(self) -> bool {
        self.0 & sys::FI_MR_VIRT_ADDR != 0
    }
    /// `FI_MR_ENDPOINT`: a region must be bound to the endpoint and enabled.
    pub const fn endpoint(self) -> bool {
        self.0 & sys::FI_MR_ENDPOINT != 0
    }
}

/// An owned `fi_info` (one entry, or the head of a list).
#[derive(Debug)]
pub struct Info {
    ptr: *mut sys::fi_info,
}

// SAFETY: an fi_info is plain heap data owned by this wrapper; libfabric keeps
// no reference to it, so moving it between threads is fine.
unsafe impl Send for Info {}
// SAFETY: shared access only reads the structure.
unsafe impl Sync for Info {}

impl Drop for Info {
    fn drop(&mut self) {
        if !self.ptr.is_null() {
            // SAFETY: ptr came from fi_allocinfo/fi_dupinfo/fi_getinfo and is freed once.
            unsafe { sys::fi_freeinfo(self.ptr) };
        }
    }
}

fn cstr_or_empty(p: *const std::os::raw::c_char) -> String {
    if p.is_null() {
        String::new()
    } else {
        // SAFETY: libfabric strings in fi_info are NUL-terminated C strings.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }
}

/// Sets the string attribute `field` to a copy of `s`, freeing the old value.
///
/// # Safety
/// `field` is null or was malloc'd (by libfabric or by us): fi_freeinfo
/// frees it with free().
unsafe fn replace_str(field: &mut *mut std::os::raw::c_char, s: &str) {
    let c = CString::new(s).expect("no NUL in provider names");
    if !field.is_null() {
        // SAFETY: the caller vouches that a non-null value was malloc'd.
        unsafe { libc::free(*field as *mut libc::c_void) };
    }
    // SAFETY: c is a valid C string; strdup returns malloc'd memory that
    // fi_freeinfo will release with free().
    *field = unsafe { libc::strdup(c.as_ptr()) };
}

impl Info {
    /// Empty hints (`fi_allocinfo`): all sub-attribute structs allocated.
    pub fn hints() -> Self {
        // SAFETY: fi_allocinfo has no preconditions; it returns null only on OOM.
        let ptr = unsafe { sys::fi_allocinfo() };
        assert!(!ptr.is_null(), "fi_allocinfo: out of memory");
        Info { ptr }
    }

    /// `fi_getinfo` with these hints. `Ok(None)` when no provider matches
    /// (`-FI_ENODATA`), an error for anything else.
    pub fn getinfo(hints: &Info) -> Result<Option<Info>, OfiError> {
        let mut out: *mut sys::fi_info = ptr::null_mut();
        // SAFETY: hints is a valid fi_info; out is an out-pointer.
        let ret = unsafe {
            sys::fi_getinfo(
                API_VERSION,
                ptr::null(),
                ptr::null(),
                0,
                hints.ptr,
                &mut out,
            )
        };
        if ret == -sys::FI_ENODATA {
            return Ok(None);
        }
        check("fi_getinfo", ret)?;
        Ok((!out.is_null()).then_some(Info { ptr: out }))
    }

    /// A deep copy of this one entry (`fi_dupinfo`, `next` cleared).
    pub fn dup_one(&self) -> Info {
        // SAFETY: self.ptr is valid; fi_dupinfo copies one entry only.
        let ptr = unsafe { sys::fi_dupinfo(self.ptr) };
        assert!(!ptr.is_null(), "fi_dupinfo: out of memory");
        // SAFETY: ptr is a fresh single entry we own.
        unsafe { (*ptr).next = ptr::null_mut() };
        Info { ptr }
    }

    /// Every entry of the list, copied.
    pub fn entries(&self) -> Vec<Info> {
        let mut v = Vec::new();
        let mut p = self.ptr;
        while !p.is_null() {
            let view = std::mem::ManuallyDrop::new(Info { ptr: p });
            v.push(view.dup_one());
            // SAFETY: p is a valid list node.
            p = unsafe { (*p).next };
        }
        v
    }

    /// Raw pointer for this layer's calls that take `struct fi_info *`.
    pub(in crate::ofi) fn as_ptr(&self) -> *mut sys::fi_info {
        self.ptr
    }

    fn raw(&self) -> &sys::fi_info {
        // SAFETY: ptr is valid for the lifetime of self.
        unsafe { &*self.ptr }
    }
    fn tx(&self) -> &sys::fi_tx_attr {
        // SAFETY: fi_getinfo/fi_allocinfo always fill tx_attr.
        unsafe { &*self.raw().tx_attr }
    }
    fn rx(&self) -> &sys::fi_rx_attr {
        // SAFETY: fi_getinfo/fi_allocinfo always fill rx_attr.
        unsafe { &*self.raw().rx_attr }
    }
    fn ep(&self) -> &sys::fi_ep_attr {
        // SAFETY: as tx_attr.
        unsafe { &*self.raw().ep_attr }
    }
    fn dom(&self) -> &sys::fi_domain_attr {
        // SAFETY: as tx_attr.
        unsafe { &*self.raw().domain_attr }
    }
    fn fab(&self) -> &sys::fi_fabric_attr {
        // SAFETY: as tx_attr.
        unsafe { &*self.raw().fabric_attr }
    }

    /// Provider name as libfabric spells it (`tcp;ofi_rxm`, `shm`, ...).
    pub fn prov_name(&self) -> String {
        cstr_or_empty(self.fab().prov_name)
    }
    /// Fabric name.
    pub fn fabric_name(&self) -> String {
        cstr_or_empty(self.fab().name)
    }
    /// Domain name (for tcp: the interface).
    pub fn domain_name(&self) -> String {
        cstr_or_empty(self.dom().name)
    }
    /// Address format (`FI_SOCKADDR_IN`, ...).
    pub fn as_addr_format(&self) -> u32 {
        self.raw().addr_format
    }
    /// Capability bits.
    pub fn caps(&self) -> u64 {
        self.raw().caps
    }
    /// Transmit message ordering.
    pub fn tx_msg_order(&self) -> u64 {
        self.tx().msg_order
    }
    /// Receive message ordering.
    pub fn rx_msg_order(&self) -> u64 {
        self.rx().msg_order
    }
    /// Transmit default op flags.
    pub fn tx_op_flags(&self) -> u64 {
        self.tx().op_flags
    }
    /// Memory-registration mode bits.
    pub fn mr_mode(&self) -> MrMode {
        MrMode(self.dom().mr_mode as u64)
    }
    /// Largest single message/RMA.
    pub fn max_msg_size(&self) -> usize {
        self.ep().max_msg_size
    }
    /// Largest inject.
    pub fn inject_size(&self) -> usize {
        self.tx().inject_size
    }
    /// Transmit queue depth.
    pub fn tx_size(&self) -> usize {
        self.tx().size
    }
    /// Scalable-endpoint transmit contexts available.
    pub fn max_ep_tx_ctx(&self) -> usize {
        self.dom().max_ep_tx_ctx
    }
    /// Endpoints a domain can open.
    pub fn ep_cnt(&self) -> usize {
        self.dom().ep_cnt
    }
    /// Data progress model.
    pub fn data_progress(&self) -> sys::fi_progress {
        self.dom().data_progress
    }
    /// Whether the provider moves data by itself (`FI_PROGRESS_AUTO`: an
    /// internal thread, as `sockets` has), not only inside our calls.
    pub fn progresses_by_itself(&self) -> bool {
        self.data_progress() == sys::FI_PROGRESS_AUTO
    }
    /// Whether the provider has the named capability bits (all of them).
    pub fn has_caps(&self, bits: u64) -> bool {
        self.caps() & bits == bits
    }

    // ----- setters (hints only) -----

    /// Sets capability bits.
    pub fn set_caps(&mut self, caps: u64) -> &mut Self {
        // SAFETY: we own ptr; writing plain fields.
        unsafe { (*self.ptr).caps = caps };
        self
    }
    /// Sets the mode bits we support.
    pub fn set_mode(&mut self, mode: u64) -> &mut Self {
        // SAFETY: as above.
        unsafe { (*self.ptr).mode = mode };
        self
    }
    /// Sets endpoint type.
    pub fn set_ep_type(&mut self, t: sys::fi_ep_type) -> &mut Self {
        // SAFETY: ep_attr is allocated by fi_allocinfo.
        unsafe { (*(*self.ptr).ep_attr).type_ = t };
        self
    }
    /// Sets tx and rx message ordering.
    pub fn set_msg_order(&mut self, order: u64) -> &mut Self {
        // SAFETY: tx_attr/rx_attr are allocated by fi_allocinfo.
        unsafe {
            (*(*self.ptr).tx_attr).msg_order = order;
            (*(*self.ptr).rx_attr).msg_order = order;
        }
        self
    }
    /// Sets tx default op flags.
    pub fn set_tx_op_flags(&mut self, flags: u64) -> &mut Self {
        // SAFETY: tx_attr is allocated.
        unsafe { (*(*self.ptr).tx_attr).op_flags = flags };
        self
    }
    /// Sets domain attributes the comm layer always wants.
    pub fn set_domain(&mut self, threading: sys::fi_threading, mr_mode: u64) -> &mut Self {
        // SAFETY: domain_attr is allocated.
        unsafe {
            let d = &mut *(*self.ptr).domain_attr;
            d.threading = threading;
            d.mr_mode = mr_mode as i32;
            d.resource_mgmt = sys::FI_RM_ENABLED;
            d.av_type = sys::FI_AV_TABLE;
        }
        self
    }
    /// Restricts to one provider (freed by fi_freeinfo).
    pub fn set_prov_name(&mut self, name: &str) -> &mut Self {
        // SAFETY: fabric_attr is allocated; the old value (if any) was malloc'd
        // by libfabric or by us.
        unsafe { replace_str(&mut (*(*self.ptr).fabric_attr).prov_name, name) };
        self
    }
    /// Restricts to one domain name (freed by fi_freeinfo).
    pub fn set_domain_name(&mut self, name: &str) -> &mut Self {
        // SAFETY: as set_prov_name, for domain_attr.
        unsafe { replace_str(&mut (*(*self.ptr).domain_attr).name, name) };
        self
    }
}

/// Names of set bits, for messages (`FI_ORDER_RAW|FI_ORDER_WAW`).
pub fn order_names(bits: u64) -> String {
    const NAMES: &[(u64, &str)] = &[
        (sys::FI_ORDER_RAW, "RAW"),
        (sys::FI_ORDER_WAW, "WAW"),
        (sys::FI_ORDER_SAW, "SAW"),
        (sys::FI_ORDER_SAS, "SAS"),
        (sys::FI_ORDER_RMA_WAW, "RMA_WAW"),
        (sys::FI_ORDER_ATOMIC_WAW, "ATOMIC_WAW"),
        (sys::FI_ORDER_ATOMIC_RAW, "ATOMIC_RAW"),
    ];
    let v: Vec<&str> = NAMES
        .iter()
        .filter(|(b, _)| bits & b == *b)
        .map(|(_, n)| *n)
        .collect();
    v.join("|")
}
