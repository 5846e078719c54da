//! What active messages carry to memory: atomics (`Am::amo`, comm-ofi's
//! routing; the AM half of the CPU route, sending an atomic to its word's
//! owner, and the owner applying it) and PUT/GET of unregistered memory.

use super::*;

impl Am {
    /// A remote atomic, by its type's route (native, or CPU atomics at the
    /// word's owner): `Comm::amo`, which owns the routing and the ordering.
    pub fn amo(&self, req: &AmoRequest) -> Result<u64> {
        Ok(self.comm.amo(req)?)
    }

    /// An atomic carried out with CPU atomics at the word's owner whatever
    /// the type's route: for measuring the AM path where the provider has
    /// native atomics. Never use it on a word that is also used by the
    /// type's own route (NIC and CPU atomics are not atomic together).
    #[doc(hidden)]
    pub fn amo_via_am(&self, req: &AmoRequest) -> Result<u64> {
        Ok(self.comm.amo_on_route(AmoRoute::Cpu, req)?)
    }

    /// Sends an atomic to its word's owner (the AM half of comm-ofi's CPU
    /// route; comm-ofi has settled and ordered what must come first). With
    /// `postpone`, returns once it is sent; comm-ofi keeps the handle.
    pub(super) fn send_amo(&self, req: &AmoRequest, postpone: bool) -> Result<AmoReply> {
        self.check_target(req.target.locale)?;
        let mut h = Header::new(Op::Amo, FLAG_BLOCKING, self.here, 0);
        h.set_amo(req);
        if postpone {
            let slot = self.slots.get(&self.comm)?;
            slot::arm(&HeapSlot(slot));
            h.slot = slot;
            if let Err(e) = self.send_msg(req.target.locale, &h, &[]) {
                self.slots.put(slot);
                return Err(e);
            }
            return Ok(AmoReply::Postponed(PostponedAmo {
                target: req.target.locale,
                token: slot,
            }));
        }
        let r = self.call(req.target.locale, h, &[])?;
        Ok(AmoReply::Done(reply_word(&r)))
    }

    /// Applies `req`, an atomic on a word of this locale, with CPU atomics
    /// (the owner's half of the CPU route).
    pub(super) fn local_amo(&self, req: &AmoRequest) -> std::result::Result<u64, String> {
        let AmoRequest {
            target: GlobalAddr { addr, .. },
            ty,
            op,
            operand,
            compare,
            fetch,
        } = *req;
        let registered = self.comm.heap().contains(addr, ty.size())
            || self
                .comm
                .is_static(GlobalAddr::new(self.here, addr), ty.size());
        if !registered {
            return Err(format!(
                "atomic target {addr:#x} (+{}) is outside the registered heap and static data \
                 of locale {}",
                ty.size(),
                self.here
            ));
        }
        self.counters.amos.fetch_add(1, Ordering::Relaxed);
        // SAFETY: inside our heap or registered static data and aligned
        // (checked by apply); words targeted by atomics are only accessed
        // atomically (the API contract).
        unsafe { cpu_amo::apply(addr, ty, op, operand, compare, fetch) }
    }

    /// GET from memory of `locale` that is not registered there: the target
    /// reads it and PUTs it back. The range is checked there (an unmapped
    /// address is an error reply, not a crash).
    ///
    /// # Safety
    /// `addr..addr+dst.len()` on `locale` must not be written concurrently in
    /// a way the program's memory model forbids (a data race there).
    pub unsafe fn get_unregistered(&self, dst: &mut [u8], locale: Locale, addr: u64) -> Result<()> {
        self.check_target(locale)?;
        if dst.is_empty() {
            return Ok(());
        }
        if locale == self.here {
            let v = crate::rawmem::read(addr, dst.len())
                .map_err(|msg| Error::Remote { locale, msg })?;
            dst.copy_from_slice(&v);
            return Ok(());
        }
        self.comm.force_visible()?;
        let buf = self.comm.alloc(dst.len(), 64)?;
        let mut h = Header::new(Op::Get, FLAG_BLOCKING, self.here, 0);
        h.a = addr;
        h.b = buf.addr;
        h.len = match u32::try_from(dst.len()) {
            Ok(l) => l,
            Err(_) => {
                self.comm.free(buf)?;
                return Err(Error::TooLarge {
                    locale,
                    reason: format!("{}-byte GET exceeds the 4 GiB limit", dst.len()),
                });
            }
        };
        let r = self.call(locale, h, &[]);
        if r.is_ok() {
            // SAFETY: buf holds dst.len() bytes, written by the target before its done.
            unsafe {
                std::ptr::copy_nonoverlapping(buf.addr as *const u8, dst.as_mut_ptr(), dst.len())
            };
        }
        self.comm.free(buf)?;
        r.map(|_| ())
    }

    /// PUT to memory of `locale` that is not registered there: inline up to
    /// [`Am::inline_limit`] bytes, else the target GETs the data from our heap.
    ///
    /// # Safety
    /// Writing `addr..addr+src.len()` on `locale` must be what that program
    /// expects (it is its memory, not the heap); an unmapped or read-only
    /// range is an error reply.
    pub unsafe fn put_unregistered(&self, locale: Locale, addr: u64, src: &[u8]) -> Result<()> {
        self.check_target(locale)?;
        if src.is_empty() {
            return Ok(());
        }
        if locale == self.here {
            return crate::rawmem::write(addr, src).map_err(|msg| Error::Remote { locale, msg });
        }
        self.comm.force_visible()?;
        let mut h = Header::new(Op::Put, FLAG_BLOCKING, self.here, 0);
        h.a = addr;
        h.len = u32::try_from(src.len()).map_err(|_| Error::TooLarge {
            locale,
            reason: format!("{}-byte PUT exceeds the 4 GiB limit", src.len()),
        })?;
        if src.len() <= INLINE_MAX {
            return self.call(locale, h, src).map(|_| ());
        }
        let buf = self.comm.alloc(src.len(), 64)?;
        // SAFETY: fresh heap allocation of src.len() bytes.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), buf.addr as *mut u8, src.len()) };
        h.b = buf.addr;
        let r = self.call(locale, h, &[]);
        self.comm.free(buf)?;
        r.map(|_| ())
    }
}

/// The old value an atomic's reply carries: its first 8 bytes (fewer:
/// zero-extended), little-endian.
pub(super) fn reply_word(reply: &[u8]) -> u64 {
    let mut w = [0u8; 8];
    let k = reply.len().min(8);
    w[..k].copy_from_slice(&reply[..k]);
    u64::from_le_bytes(w)
}
