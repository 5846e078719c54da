//! PUT and GET through the public API: blocking, non-blocking with owned
//! buffers ([`NbPut`], [`NbGet`], the [`Pending`] trait), strided, and the
//! unordered ones buffered per task (the buffer itself: `crate::unordered`).

use super::*;

/// A non-blocking operation in flight that can be tested and waited for
/// ([`NbPut`], [`NbGet`], and the C ABI's raw handle).
pub trait Pending {
    /// Whether the operation has completed (drives progress).
    fn test(&mut self) -> Result<bool>;
}

impl<P: Pending + ?Sized> Pending for &mut P {
    fn test(&mut self) -> Result<bool> {
        (**self).test()
    }
}

/// A non-blocking PUT in flight. It owns its source buffer and hands it back
/// from [`NbPut::wait`]; dropping it waits. Leaking it (`mem::forget`) leaks
/// the buffer too, so the network never reads freed memory: the API is safe.
/// Not `Send`: it belongs to the creating thread's transmit context.
///
/// ```compile_fail,E0277
/// fn needs_send<T: Send>() {}
/// needs_send::<runtime_shim::NbPut<'static, u64>>();
/// ```
#[must_use = "a non-blocking PUT is only known complete once waited for"]
pub struct NbPut<'a, T: Pod> {
    // Field order is drop order: the handle waits before the buffer goes.
    handle: comm_ofi::NbHandle<'a>,
    buf: Vec<T>,
}

/// A non-blocking GET in flight, owning its destination buffer, which
/// [`NbGet::wait`] returns filled. Dropping it waits; leaking it leaks the
/// buffer (safe). Not `Send`, like [`NbPut`].
///
/// ```compile_fail,E0277
/// fn needs_send<T: Send>() {}
/// needs_send::<runtime_shim::NbGet<'static, u8>>();
/// ```
#[must_use = "the data of a non-blocking GET is only there once waited for"]
pub struct NbGet<'a, T: Pod> {
    handle: comm_ofi::NbHandle<'a>,
    buf: Vec<T>,
}

/// What the handles that own their buffer ([`NbPut`], [`NbGet`]) do alike:
/// `Debug`, `test`, `wait` and [`Pending`]; only the documentation differs.
macro_rules! owned_nb {
    ($name:ident, test: $test_doc:literal, wait: $wait_doc:literal) => {
        impl<T: Pod> std::fmt::Debug for $name<'_, T> {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.debug_struct(stringify!($name))
                    .field("handle", &self.handle)
                    .field("len", &self.buf.len())
                    .finish()
            }
        }

        impl<T: Pod> $name<'_, T> {
            #[doc = $test_doc]
            pub fn test(&mut self) -> Result<bool> {
                Ok(self.handle.test()?)
            }

            #[doc = $wait_doc]
            pub fn wait(self) -> Result<Vec<T>> {
                let $name { handle, buf } = self;
                handle.wait()?;
                Ok(buf)
            }
        }

        impl<T: Pod> Pending for $name<'_, T> {
            fn test(&mut self) -> Result<bool> {
                $name::test(self)
            }
        }
    };
}

owned_nb!(
    NbPut,
    test: "Whether the PUT has completed (its source may be reused).",
    wait: "Waits for the PUT and returns its source buffer."
);
owned_nb!(
    NbGet,
    test: "Whether the GET has completed.",
    wait: "Waits for the GET and returns the filled buffer."
);

/// The C ABI's handle: a non-blocking operation on a buffer the C caller
/// owns (the header states the contract a leak would break).
pub(crate) struct RawNb<'a>(pub(crate) comm_ofi::NbHandle<'a>);

impl Pending for RawNb<'_> {
    fn test(&mut self) -> Result<bool> {
        Ok(self.0.test()?)
    }
}

impl Runtime {
    /// Blocking PUT of `src` to `dst` (`src` may be reused on return).
    pub fn put<T: Pod>(&self, dst: GlobalPtr<T>, src: &[T]) -> Result<()> {
        self.check_open()?;
        self.check_live("PUT", dst.global_addr(), std::mem::size_of_val(src))?;
        Ok(self.comm.put(dst.global_addr(), as_bytes(src))?)
    }

    /// Blocking GET of `dst.len()` elements from `src`.
    pub fn get<T: Pod>(&self, dst: &mut [T], src: GlobalPtr<T>) -> Result<()> {
        self.check_open()?;
        self.check_live("GET", src.global_addr(), std::mem::size_of_val(dst))?;
        Ok(self.comm.get(as_bytes_mut(dst), src.global_addr())?)
    }

    /// PUT of one value.
    pub fn put_value<T: Pod>(&self, dst: GlobalPtr<T>, v: T) -> Result<()> {
        self.put(dst, std::slice::from_ref(&v))
    }

    /// GET of one value.
    pub fn get_value<T: Pod>(&self, src: GlobalPtr<T>) -> Result<T> {
        let mut v = [T::from_zero()];
        self.get(&mut v, src)?;
        Ok(v[0])
    }

    /// Non-blocking PUT of `src` (moved in; handed back by [`NbPut::wait`]).
    /// The PUT is ordered like a blocking one of the same task; it is
    /// complete by the task's next boundary at the latest.
    pub fn put_nb<T: Pod>(&self, dst: GlobalPtr<T>, src: Vec<T>) -> Result<NbPut<'_, T>> {
        self.check_open()?;
        self.check_live(
            "PUT",
            dst.global_addr(),
            std::mem::size_of_val(src.as_slice()),
        )?;
        let bytes: &[u8] = as_bytes(&src);
        // SAFETY: the slice is the heap buffer of `src`, which moves into the
        // returned NbPut next to the handle and is dropped only after it (the
        // handle waits in its Drop); if the NbPut is leaked, so is the
        // buffer, which then stays valid forever. Moving the Vec does not
        // move its heap buffer.
        let bytes: &'static [u8] =
            unsafe { std::slice::from_raw_parts(bytes.as_ptr(), bytes.len()) };
        // SAFETY: the handle is never leaked without the buffer (above).
        let handle = unsafe { self.comm.put_nb(dst.global_addr(), bytes)? };
        Ok(NbPut { handle, buf: src })
    }

    /// Non-blocking GET of `len` elements at `src` into a new buffer, handed
    /// over filled by [`NbGet::wait`].
    pub fn get_nb<T: Pod>(&self, src: GlobalPtr<T>, len: usize) -> Result<NbGet<'_, T>> {
        let buf = (0..len).map(|_| T::from_zero()).collect();
        self.get_nb_into(buf, src)
    }

    /// Non-blocking GET into `buf` (moved in, all of it filled), to reuse a
    /// buffer; see [`Runtime::get_nb`]. The read is ordered before every
    /// later PUT, atomic or on-statement of the task to `src`'s locale.
    pub fn get_nb_into<T: Pod>(&self, mut buf: Vec<T>, src: GlobalPtr<T>) -> Result<NbGet<'_, T>> {
        self.check_open()?;
        self.check_live(
            "GET",
            src.global_addr(),
            std::mem::size_of_val(buf.as_slice()),
        )?;
        let bytes = as_bytes_mut(&mut buf);
        // SAFETY: as in put_nb: the buffer lives in the NbGet beside the
        // handle, dropped after it, leaked with it.
        let bytes: &'static mut [u8] =
            unsafe { std::slice::from_raw_parts_mut(bytes.as_mut_ptr(), bytes.len()) };
        // SAFETY: the handle is never leaked without the buffer (above).
        let handle = unsafe { self.comm.get_nb(bytes, src.global_addr())? };
        Ok(NbGet { handle, buf })
    }

    /// Waits until one of `handles` has completed and returns its index (the
    /// caller removes it and may `wait` it, which then returns at once).
    /// Mix kinds with `&mut dyn Pending` elements.
    pub fn wait_any<H: Pending>(&self, handles: &mut [H]) -> Result<usize> {
        if handles.is_empty() {
            return Err(Error::InvalidLength {
                what: "wait_any handle list",
                len: 0,
                reason: "needs at least one handle".into(),
            });
        }
        let mut found: Option<Result<usize>> = None;
        let mut check = || {
            for (i, h) in handles.iter_mut().enumerate() {
                match h.test() {
                    Ok(true) => {
                        found = Some(Ok(i));
                        return true;
                    }
                    Ok(false) => {}
                    Err(e) => {
                        found = Some(Err(e));
                        return true;
                    }
                }
            }
            false
        };
        self.pool.wait_until(&mut check);
        found.expect("wait_until returned, so check found one")
    }

    /// The plan of a strided transfer (`what`) of `T`s with `remote` on the
    /// far side, its remote extent checked live; `None` when there is
    /// nothing to move.
    fn strided_plan<T: Pod>(
        &self,
        what: &'static str,
        remote: GlobalAddr,
        count: &[usize],
        local_strides: &[usize],
        remote_strides: &[usize],
        local_len: usize,
    ) -> Result<Option<Plan>> {
        self.check_open()?;
        let elem = std::mem::size_of::<T>();
        let Some(plan) = Plan::new(elem, count, local_strides, remote_strides, local_len)? else {
            return Ok(None);
        };
        self.check_live(what, remote, plan.remote_extent as usize)?;
        Ok(Some(plan))
    }

    /// Strided PUT: `count[0]` contiguous elements per chunk, `count[i]`
    /// repetitions at level i, strides in elements on each side (see
    /// [`crate::strided`]). Chunks are PUT non-blocking, a window at a time.
    pub fn put_strided<T: Pod>(
        &self,
        dst: GlobalPtr<T>,
        dst_strides: &[usize],
        src: &[T],
        src_strides: &[usize],
        count: &[usize],
    ) -> Result<()> {
        let Some(plan) = self.strided_plan::<T>(
            "strided PUT",
            dst.global_addr(),
            count,
            src_strides,
            dst_strides,
            std::mem::size_of_val(src),
        )?
        else {
            return Ok(());
        };
        let bytes = as_bytes(src);
        let mut window = VecDeque::with_capacity(STRIDED_WINDOW);
        for (l, r) in plan.offsets() {
            if window.len() == STRIDED_WINDOW {
                let h: comm_ofi::NbHandle<'_> = window.pop_front().expect("full window");
                h.wait()?;
            }
            let to = dst.global_addr().offset(r);
            // SAFETY: every handle of the window is waited for (or dropped,
            // which waits) before this function returns; none is leaked.
            window.push_back(unsafe { self.comm.put_nb(to, &bytes[l..l + plan.chunk])? });
        }
        for h in window {
            h.wait()?;
        }
        Ok(())
    }

    /// Strided GET (see [`Runtime::put_strided`]); `dst_strides` are the
    /// local ones. Chunks are fetched non-blocking into a staging buffer and
    /// then placed.
    pub fn get_strided<T: Pod>(
        &self,
        dst: &mut [T],
        dst_strides: &[usize],
        src: GlobalPtr<T>,
        src_strides: &[usize],
        count: &[usize],
    ) -> Result<()> {
        let Some(plan) = self.strided_plan::<T>(
            "strided GET",
            src.global_addr(),
            count,
            dst_strides,
            src_strides,
            std::mem::size_of_val(dst),
        )?
        else {
            return Ok(());
        };
        let total = plan
            .chunk
            .checked_mul(plan.chunks)
            .ok_or_else(|| Error::Strides("total transfer size overflows".into()))?;
        let mut stage = vec![0u8; total];
        {
            let mut window = VecDeque::with_capacity(STRIDED_WINDOW);
            for ((_, r), piece) in plan.offsets().zip(stage.chunks_mut(plan.chunk)) {
                if window.len() == STRIDED_WINDOW {
                    let h: comm_ofi::NbHandle<'_> = window.pop_front().expect("full window");
                    h.wait()?;
                }
                // SAFETY: every handle is waited for or dropped (waits)
                // before `stage` is read or freed; none is leaked.
                window.push_back(unsafe { self.comm.get_nb(piece, src.global_addr().offset(r))? });
            }
            for h in window {
                h.wait()?;
            }
        }
        let out = as_bytes_mut(dst);
        for ((l, _), piece) in plan.offsets().zip(stage.chunks(plan.chunk)) {
            out[l..l + plan.chunk].copy_from_slice(piece);
        }
        Ok(())
    }

    /// Unordered PUT: buffered (the data is copied), issued at the task's
    /// next unordered fence or end. Larger than
    /// [`unordered::MAX_BYTES`]: done at once.
    pub fn put_unordered<T: Pod>(&self, dst: GlobalPtr<T>, src: &[T]) -> Result<()> {
        self.check_open()?;
        let bytes = as_bytes(src);
        if bytes.len() > unordered::MAX_BYTES {
            return self.put(dst, src);
        }
        // Checked now, so that a bad address is this call's error rather
        // than the later fence's.
        self.comm.check_range(dst.global_addr(), bytes.len())?;
        self.check_live("unordered PUT", dst.global_addr(), bytes.len())?;
        if unordered::push(unordered::Op::Put {
            dst: dst.global_addr(),
            data: bytes.to_vec(),
        }) {
            self.unordered_fence()?;
        }
        Ok(())
    }

    /// Unordered GET of `n` elements from `src` into `dst`, which must be
    /// on this locale (registered memory); the data is there after the
    /// task's next unordered fence or end.
    pub fn get_unordered<T: Pod>(
        &self,
        dst: GlobalPtr<T>,
        src: GlobalPtr<T>,
        n: usize,
    ) -> Result<()> {
        self.check_open()?;
        if dst.locale() != self.here() {
            return Err(Error::BadAddress {
                locale: dst.locale(),
                addr: dst.addr(),
                reason: format!(
                    "an unordered GET's destination must be on this locale ({})",
                    self.here()
                ),
            });
        }
        let len = byte_len::<T>(n, "unordered GET")?;
        if !self.comm.heap().contains(dst.addr(), len) {
            return Err(Error::BadAddress {
                locale: dst.locale(),
                addr: dst.addr(),
                reason: format!(
                    "an unordered GET's destination (+{len} bytes) must lie in this locale's \
                     registered heap"
                ),
            });
        }
        self.comm.check_range(src.global_addr(), len)?;
        self.check_live("unordered GET", src.global_addr(), len)?;
        self.check_live("unordered GET", dst.global_addr(), len)?;
        if len > unordered::MAX_BYTES {
            let mut tmp = vec![0u8; len];
            self.comm.get(&mut tmp, src.global_addr())?;
            return Ok(self.comm.put(dst.global_addr(), &tmp)?);
        }
        if unordered::push(unordered::Op::Get {
            dst: dst.global_addr(),
            src: src.global_addr(),
            len,
        }) {
            self.unordered_fence()?;
        }
        Ok(())
    }

    /// Issues every unordered operation this task buffered and waits for
    /// them (also done at task end, at the end of an on-statement body, at
    /// a barrier and at finalize).
    pub fn unordered_fence(&self) -> Result<()> {
        self.check_open()?;
        self.flush_unordered()
    }
}
