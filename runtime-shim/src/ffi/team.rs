//! Teams and their collectives.

#![allow(clippy::missing_safety_doc)]

use super::common::*;

/// A team (`pgas_team_t`, opaque in C).
#[derive(Debug)]
pub struct PgasTeam(crate::team::Team);

static WORLD_TEAM: std::sync::OnceLock<usize> = std::sync::OnceLock::new();

fn team<'a>(t: *mut PgasTeam) -> Result<&'a crate::team::Team> {
    non_null(t, "team")?;
    rt()?;
    // SAFETY: a live team from pgas_team_world / pgas_team_split_* that
    // was not destroyed (header contract).
    Ok(unsafe { &(*t).0 })
}

fn team_rank(t: &crate::team::Team, r: c_int) -> Result<usize> {
    let r = usize::try_from(r).map_err(|_| Error::InvalidLength {
        what: "team rank",
        len: r as i64 as u64,
        reason: format!("negative; team {} has {} members", t.name(), t.size()),
    })?;
    t.locale_of(r)?;
    Ok(r)
}

fn reduce_op(o: c_int) -> Result<crate::team::ReduceOp> {
    by_code(&crate::team::ReduceOp::ALL, o, "reduction op")
}

/// The world team (every locale, rank = locale); never destroyed. NULL if
/// the runtime is not initialized (see pgas_last_error).
#[no_mangle]
pub extern "C" fn pgas_team_world() -> *mut PgasTeam {
    ffi_ptr(|| {
        let rt = rt()?;
        Ok(*WORLD_TEAM
            .get_or_init(|| Box::into_raw(Box::new(PgasTeam(rt.world().clone()))) as usize)
            as *mut PgasTeam)
    })
}

/// This locale's rank in `t` (negative error code on bad input).
#[no_mangle]
pub unsafe extern "C" fn pgas_team_rank(t: *mut PgasTeam) -> c_int {
    ffi(|| Ok(team(t)?.rank()))
}

/// Number of members of `t` (negative error code on bad input).
#[no_mangle]
pub unsafe extern "C" fn pgas_team_size(t: *mut PgasTeam) -> c_int {
    ffi(|| Ok(team(t)?.size()))
}

/// A new team handle in `out`, or NULL for a member left out of the split.
fn split_out(out: Out<*mut PgasTeam>, t: Option<crate::team::Team>) {
    match t {
        Some(t) => out.set_handle(PgasTeam(t)),
        None => out.set(std::ptr::null_mut()),
    }
}

/// Collective over `parent`: ranks start, start+stride, ... (size of them)
/// form a new team in `*out`; other members get NULL.
#[no_mangle]
pub unsafe extern "C" fn pgas_team_split_strided(
    parent: *mut PgasTeam,
    start: c_int,
    stride: c_int,
    size: c_int,
    out: *mut *mut PgasTeam,
) -> c_int {
    ffi(|| {
        // SAFETY: out is a team slot (header contract).
        let out = unsafe { self::out(out, "out")? };
        let t = team(parent)?;
        let new = t.split_strided(
            non_negative(start, "team start")?,
            non_negative(stride, "team stride")?,
            non_negative(size, "team size")?,
        )?;
        split_out(out, new);
        Ok(())
    })
}

/// Collective over `parent`: members with the same `color` (negative: none)
/// form a team ordered by `key`, in `*out` (NULL for colour < 0).
#[no_mangle]
pub unsafe extern "C" fn pgas_team_split_color(
    parent: *mut PgasTeam,
    color: c_int,
    key: i64,
    out: *mut *mut PgasTeam,
) -> c_int {
    ffi(|| {
        // SAFETY: out is a team slot (header contract).
        let out = unsafe { self::out(out, "out")? };
        let t = team(parent)?;
        let new = t.split_color(u32::try_from(color).ok(), key)?;
        split_out(out, new);
        Ok(())
    })
}

/// Releases a team handle from a split (the world team is never released;
/// passing it is PGAS_ERR_STATE).
#[no_mangle]
pub unsafe extern "C" fn pgas_team_destroy(t: *mut PgasTeam) -> c_int {
    ffi(|| {
        non_null(t, "team")?;
        if WORLD_TEAM.get() == Some(&(t as usize)) {
            return Err(Error::State("the world team cannot be destroyed".into()));
        }
        // SAFETY: a live split team handle, given back for good (header contract).
        drop(unsafe { take_handle(t, "team")? });
        Ok(())
    })
}

/// Team barrier (an MCM boundary).
#[no_mangle]
pub unsafe extern "C" fn pgas_team_barrier(t: *mut PgasTeam) -> c_int {
    ffi(|| team(t)?.barrier())
}

/// Broadcast in place: `len` bytes of `buf` at rank `root` land in `buf` on
/// every member.
#[no_mangle]
pub unsafe extern "C" fn pgas_team_broadcast(
    t: *mut PgasTeam,
    root: c_int,
    buf: *mut c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        let t = team(t)?;
        let root = team_rank(t, root)?;
        // SAFETY: buf holds len bytes, ours for the call (header contract).
        let b = unsafe { dst_bytes(rt()?, buf, "buf", len, "broadcast")? };
        let mine: &[u8] = if t.rank() == root { b } else { &[] };
        let got = t.broadcast(root, mine)?;
        received("broadcast", len, got.len(), "the root")?;
        b.copy_from_slice(&got);
        Ok(())
    })
}

fn typed_reduce<T: crate::team::Reduce>(
    t: &crate::team::Team,
    root: Option<usize>,
    op: crate::team::ReduceOp,
    src: *const c_void,
    dst: *mut c_void,
    count: usize,
) -> Result<()> {
    let bytes_len = times(count, std::mem::size_of::<T>(), "reduction count")?;
    // SAFETY: src holds count elements of T (header contract); read as bytes.
    let input: Vec<T> = crate::pod::vec_from_bytes(unsafe {
        src_bytes(rt()?, src, "src", bytes_len, "reduction")?
    });
    let out = match root {
        Some(r) => t.reduce(r, &input, op)?,
        None => Some(t.allreduce(&input, op)?),
    };
    if let Some(v) = out {
        // SAFETY: dst holds count elements of T, writable (header contract).
        unsafe { bytes_mut(dst, bytes_len) }.copy_from_slice(crate::pod::as_bytes(&v));
    }
    Ok(())
}

/// Reduce `count` elements of atomic type `type` with `op` (PGAS_OP_*):
/// the result lands in `dst` at rank `root` only.
#[no_mangle]
pub unsafe extern "C" fn pgas_team_reduce(
    t: *mut PgasTeam,
    root: c_int,
    r#type: c_int,
    op: c_int,
    src: *const c_void,
    dst: *mut c_void,
    count: usize,
) -> c_int {
    ffi(|| {
        let t = team(t)?;
        let root = team_rank(t, root)?;
        if t.rank() == root {
            non_null(dst, "dst")?;
        }
        let op = reduce_op(op)?;
        by_type!(r#type, typed_reduce, t, Some(root), op, src, dst, count)
    })
}

/// Allreduce: [`pgas_team_reduce`] with the result in `dst` everywhere.
#[no_mangle]
pub unsafe extern "C" fn pgas_team_allreduce(
    t: *mut PgasTeam,
    r#type: c_int,
    op: c_int,
    src: *const c_void,
    dst: *mut c_void,
    count: usize,
) -> c_int {
    ffi(|| {
        let t = team(t)?;
        non_null(dst, "dst")?;
        let op = reduce_op(op)?;
        by_type!(r#type, typed_reduce, t, None, op, src, dst, count)
    })
}

/// Fcollect: `len` bytes from every member, concatenated by rank into
/// `dst` (`size * len` bytes) on every member.
#[no_mangle]
pub unsafe extern "C" fn pgas_team_fcollect(
    t: *mut PgasTeam,
    src: *const c_void,
    dst: *mut c_void,
    len: usize,
) -> c_int {
    ffi(|| {
        let t = team(t)?;
        non_null(dst, "dst")?;
        // SAFETY: src holds len bytes (header contract).
        let got = t.fcollect(unsafe { src_bytes(rt()?, src, "src", len, "fcollect")? })?;
        // SAFETY: dst holds size * len bytes (header contract).
        unsafe { bytes_mut(dst, got.len()) }.copy_from_slice(&got);
        Ok(())
    })
}

/// Alltoall: `src` holds `size` blocks of `block` bytes, block i for rank
/// i; `dst` (`size * block` bytes) receives one block from each rank.
#[no_mangle]
pub unsafe extern "C" fn pgas_team_alltoall(
    t: *mut PgasTeam,
    src: *const c_void,
    dst: *mut c_void,
    block: usize,
) -> c_int {
    ffi(|| {
        let t = team(t)?;
        non_null(dst, "dst")?;
        let total = times(block, t.size(), "alltoall block")?;
        // SAFETY: src and dst hold size * block bytes (header contract).
        let got = t.alltoall(unsafe { src_bytes(rt()?, src, "src", total, "alltoall")? })?;
        // SAFETY: as above.
        unsafe { bytes_mut(dst, total) }.copy_from_slice(&got);
        Ok(())
    })
}
