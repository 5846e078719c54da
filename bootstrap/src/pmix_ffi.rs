//! The few PMIx client calls and types the PMIx backend needs, resolved from
//! the installed `libpmix.so.2` at run time (`dlopen` through libloading).
//!
//! Why at run time rather than linking (or bindgen at build time): the crate
//! must build, and programs must run under `pgasrun`, on machines without
//! PMIx; and the library that matters is the one of the launcher that started
//! us (Slurm's or OpenMPI's install, found through the usual loader path),
//! not whichever one the build machine had.
//!
//! The declarations below follow the PMIx Standard's ABI (`pmix_common.h`,
//! stable since PMIx v2; the soname has been `libpmix.so.2` since then).
//! `tests::layout_matches_the_installed_header` compiles a C program against
//! the installed header and compares sizes and offsets, so a drift fails a
//! test instead of corrupting memory.

use std::ffi::{c_char, c_int, c_void, CStr};
use std::sync::OnceLock;

/// `PMIX_MAX_NSLEN`.
pub(crate) const MAX_NSLEN: usize = 255;
/// `PMIX_MAX_KEYLEN`.
pub(crate) const MAX_KEYLEN: usize = 511;
/// `PMIX_RANK_WILDCARD`: "the job as a whole" in [`Proc::rank`].
pub(crate) const RANK_WILDCARD: u32 = u32::MAX - 1;
/// `PMIX_SUCCESS`.
pub(crate) const SUCCESS: c_int = 0;
/// `PMIX_ERR_NOT_FOUND`.
pub(crate) const ERR_NOT_FOUND: c_int = -46;
/// `PMIX_GLOBAL` (a `pmix_scope_t`): share with local and remote processes.
pub(crate) const SCOPE_GLOBAL: u8 = 3;

/// `pmix_data_type_t` values used here.
pub(crate) mod ty {
    pub(crate) const BOOL: u16 = 1;
    pub(crate) const SIZE: u16 = 4;
    pub(crate) const INT: u16 = 6;
    pub(crate) const UINT: u16 = 11;
    pub(crate) const UINT16: u16 = 13;
    pub(crate) const UINT32: u16 = 14;
    pub(crate) const UINT64: u16 = 15;
    pub(crate) const BYTE_OBJECT: u16 = 27;
}

/// Attribute keys used here.
pub(crate) mod key {
    /// `PMIX_JOB_SIZE` (uint32): processes in the job.
    pub(crate) const JOB_SIZE: &std::ffi::CStr = c"pmix.job.size";
    /// `PMIX_COLLECT_DATA` (bool): a fence that also gathers everyone's
    /// committed data, so later `PMIx_Get`s are local.
    pub(crate) const COLLECT_DATA: &std::ffi::CStr = c"pmix.collect";
    /// `PMIX_OPTIONAL` (bool): `PMIx_Get` looks only in the data already
    /// here and returns `PMIX_ERR_NOT_FOUND` rather than waiting for it.
    pub(crate) const OPTIONAL: &std::ffi::CStr = c"pmix.optional";
}

/// `pmix_proc_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Proc {
    pub(crate) nspace: [c_char; MAX_NSLEN + 1],
    pub(crate) rank: u32,
}

impl Proc {
    pub(crate) fn zeroed() -> Proc {
        Proc {
            nspace: [0; MAX_NSLEN + 1],
            rank: 0,
        }
    }

    /// The namespace as text (it is NUL-terminated within the array).
    pub(crate) fn nspace_str(&self) -> String {
        c_text(&self.nspace)
    }
}

/// The text of a NUL-terminated string in a fixed `char` array (all of it
/// if there is no NUL).
fn c_text(chars: &[c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `pmix_byte_object_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct ByteObject {
    pub(crate) bytes: *mut c_char,
    pub(crate) size: usize,
}

/// The `data` union of `pmix_value_t`: the members used here, plus padding
/// to the union's real size (its largest member, `pmix_envar_t`, is two
/// pointers and a char).
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) union ValueData {
    pub(crate) flag: bool,
    pub(crate) uint16: u16,
    pub(crate) uint32: u32,
    pub(crate) uint64: u64,
    pub(crate) integer: c_int,
    pub(crate) size: usize,
    pub(crate) bo: ByteObject,
    _envar: [*mut c_void; 3],
}

/// `pmix_value_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Value {
    pub(crate) ty: u16,
    pub(crate) data: ValueData,
}

/// `pmix_info_t`.
#[repr(C)]
#[derive(Clone, Copy)]
pub(crate) struct Info {
    pub(crate) key: [c_char; MAX_KEYLEN + 1],
    pub(crate) flags: u32,
    pub(crate) value: Value,
}

impl Info {
    /// A boolean attribute (`PMIX_INFO_LOAD(&i, key, &true, PMIX_BOOL)`).
    pub(crate) fn flag(key: &CStr, on: bool) -> Info {
        let mut k = [0 as c_char; MAX_KEYLEN + 1];
        for (d, &s) in k.iter_mut().zip(key.to_bytes().iter().take(MAX_KEYLEN)) {
            *d = s as c_char;
        }
        Info {
            key: k,
            flags: 0,
            value: Value {
                ty: ty::BOOL,
                data: ValueData { flag: on },
            },
        }
    }
}

type InitFn = unsafe extern "C" fn(*mut Proc, *mut Info, usize) -> c_int;
type FinalizeFn = unsafe extern "C" fn(*const Info, usize) -> c_int;
type AbortFn = unsafe extern "C" fn(c_int, *const c_char, *mut Proc, usize) -> c_int;
type PutFn = unsafe extern "C" fn(u8, *const c_char, *mut Value) -> c_int;
type CommitFn = unsafe extern "C" fn() -> c_int;
type FenceFn = unsafe extern "C" fn(*const Proc, usize, *const Info, usize) -> c_int;
type GetFn =
    unsafe extern "C" fn(*const Proc, *const c_char, *const Info, usize, *mut *mut Value) -> c_int;
type ErrorStringFn = unsafe extern "C" fn(c_int) -> *const c_char;
type VersionFn = unsafe extern "C" fn() -> *const c_char;
type ValueDestructFn = unsafe extern "C" fn(*mut Value);

/// The resolved entry points, and the library they point into.
pub(crate) struct Lib {
    /// Which file was loaded (for messages).
    pub(crate) path: String,
    pub(crate) init: InitFn,
    pub(crate) finalize: FinalizeFn,
    pub(crate) abort: AbortFn,
    pub(crate) put: PutFn,
    pub(crate) commit: CommitFn,
    pub(crate) fence: FenceFn,
    pub(crate) get: GetFn,
    error_string: ErrorStringFn,
    version: VersionFn,
    /// `PMIx_Value_destruct` (PMIx >= 4); older libraries get the manual
    /// release in [`Lib::release`].
    value_destruct: Option<ValueDestructFn>,
    /// The loaded library, kept open while the pointers above are used (the
    /// `Lib` of a process lives in a static: never closed).
    _lib: libloading::os::unix::Library,
}

/// Overrides the library to load (a path or a soname).
pub const LIB_VAR: &str = "PGAS_PMIX_LIB";

/// Tried in order when [`LIB_VAR`] is unset: the ABI soname, the
/// development symlink, and Debian's private directory (the loader finds the
/// first two through `LD_LIBRARY_PATH` and the system paths).
const CANDIDATES: [&str; 3] = [
    "libpmix.so.2",
    "libpmix.so",
    "/usr/lib/x86_64-linux-gnu/pmix2/lib/libpmix.so.2",
];

impl Lib {
    /// Loads the PMIx client library once per process.
    pub(crate) fn get() -> Result<&'static Lib, String> {
        static LIB: OnceLock<Result<Lib, String>> = OnceLock::new();
        LIB.get_or_init(|| {
            let wanted: Vec<String> = match std::env::var(LIB_VAR) {
                Ok(v) if !v.is_empty() => vec![v],
                _ => CANDIDATES.iter().map(|s| s.to_string()).collect(),
            };
            let mut errors = Vec::new();
            for name in &wanted {
                match Lib::open(name) {
                    Ok(lib) => return Ok(lib),
                    Err(e) => errors.push(e),
                }
            }
            Err(format!(
                "cannot load the PMIx client library ({}); install it (Debian: \
                 apt-get install libpmix2) or point {LIB_VAR} at libpmix.so.2",
                errors.join("; ")
            ))
        })
        .as_ref()
        .map_err(Clone::clone)
    }

    fn open(name: &str) -> Result<Lib, String> {
        use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
        // SAFETY: loading libpmix runs its initializers, which have no
        // preconditions on us. RTLD_GLOBAL: libpmix's own plugins resolve
        // symbols against it.
        let lib = unsafe { Library::open(Some(name), RTLD_NOW | RTLD_GLOBAL) }.map_err(|e| {
            let e = e.to_string();
            if e.contains(name) {
                e
            } else {
                format!("{name}: {e}")
            }
        })?;
        /// Copies the function pointer out of the symbol named `s`.
        ///
        /// # Safety
        /// `F` must be the prototype of the function `s` names.
        unsafe fn sym<F: Copy>(lib: &Library, name: &str, s: &CStr) -> Result<F, String> {
            // SAFETY: the caller's; `s` is NUL-terminated.
            match unsafe { lib.get::<F>(s.to_bytes_with_nul()) } {
                Ok(f) => Ok(*f),
                Err(_) => Err(format!("{name}: no symbol {}", s.to_string_lossy())),
            }
        }
        // SAFETY: each symbol is the PMIx client function of that name; the
        // fn type it is read as is its prototype in pmix.h (PMIx Standard,
        // unchanged since v2), over the types the layout test checks against
        // the header. The pointers stay valid: `lib` is kept in the `Lib`
        // they are stored in, and never closed.
        unsafe {
            Ok(Lib {
                path: name.to_owned(),
                init: sym::<InitFn>(&lib, name, c"PMIx_Init")?,
                finalize: sym::<FinalizeFn>(&lib, name, c"PMIx_Finalize")?,
                abort: sym::<AbortFn>(&lib, name, c"PMIx_Abort")?,
                put: sym::<PutFn>(&lib, name, c"PMIx_Put")?,
                commit: sym::<CommitFn>(&lib, name, c"PMIx_Commit")?,
                fence: sym::<FenceFn>(&lib, name, c"PMIx_Fence")?,
                get: sym::<GetFn>(&lib, name, c"PMIx_Get")?,
                error_string: sym::<ErrorStringFn>(&lib, name, c"PMIx_Error_string")?,
                version: sym::<VersionFn>(&lib, name, c"PMIx_Get_version")?,
                value_destruct: sym::<ValueDestructFn>(&lib, name, c"PMIx_Value_destruct").ok(),
                _lib: lib,
            })
        }
    }

    /// `PMIx_Error_string(status)`, with the number.
    pub(crate) fn error_string(&self, status: c_int) -> String {
        // SAFETY: PMIx_Error_string accepts any status and returns a static
        // NUL-terminated string (or NULL, checked).
        let p = unsafe { (self.error_string)(status) };
        let name = if p.is_null() {
            "unknown status".into()
        } else {
            // SAFETY: non-NULL, NUL-terminated, static (see above).
            unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
        };
        format!("{name} ({status})")
    }

    /// `PMIx_Get_version()`.
    pub(crate) fn version(&self) -> String {
        // SAFETY: takes nothing, returns a static NUL-terminated string.
        let p = unsafe { (self.version)() };
        if p.is_null() {
            return "unknown".into();
        }
        // SAFETY: non-NULL, NUL-terminated, static.
        unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
    }

    /// Frees a value `PMIx_Get` returned (`PMIX_VALUE_RELEASE`).
    ///
    /// # Safety
    /// `v` is a value returned by this library's `PMIx_Get`, not yet
    /// released.
    pub(crate) unsafe fn release(&self, v: *mut Value) {
        if v.is_null() {
            return;
        }
        match self.value_destruct {
            // SAFETY: the caller gives a live value from PMIx_Get; destruct
            // frees what it owns, not the value itself.
            Some(d) => unsafe { d(v) },
            None => {
                // SAFETY: `v` is live (caller). Before PMIx 4 the library
                // allocated values and byte objects with malloc; the scalar
                // types own nothing.
                unsafe {
                    if (*v).ty == ty::BYTE_OBJECT {
                        libc::free((*v).data.bo.bytes.cast());
                    }
                }
            }
        }
        // SAFETY: PMIx_Get malloc'ed the value itself (PMIX_VALUE_RELEASE
        // frees it with free(3)); nothing refers to it any more.
        unsafe { libc::free(v.cast()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};
    use std::path::Path;
    use std::process::Command;

    const HEADER_DIR: &str = "/usr/lib/x86_64-linux-gnu/pmix2/include";

    /// Compiles a C program against the installed `pmix_common.h` that
    /// prints the sizes and offsets we rely on, and compares. libpmix-dev
    /// and gcc come from scripts/setup; without them this fails (it must
    /// not pass by skipping).
    #[test]
    fn layout_matches_the_installed_header() {
        let inc = std::env::var("PMIX_INCLUDE_DIR").unwrap_or_else(|_| HEADER_DIR.into());
        assert!(
            Path::new(&inc).join("pmix_common.h").exists(),
            "{inc}/pmix_common.h missing: run scripts/setup (installs libpmix-dev), \
             or set PMIX_INCLUDE_DIR"
        );
        let dir = std::env::temp_dir().join(format!("pgas-pmix-layout-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let src = dir.join("layout.c");
        std::fs::write(
            &src,
            r#"#include <stdio.h>
#include <stddef.h>
#include <pmix_common.h>
int main(void) {
  printf("%zu %zu %zu %zu %zu %zu %zu %zu %zu %zu\n",
    sizeof(pmix_proc_t), offsetof(pmix_proc_t, rank),
    sizeof(pmix_value_t), offsetof(pmix_value_t, data),
    sizeof(pmix_info_t), offsetof(pmix_info_t, flags), offsetof(pmix_info_t, value),
    sizeof(pmix_byte_object_t), (size_t)PMIX_MAX_NSLEN, (size_t)PMIX_MAX_KEYLEN);
  printf("%d %d %d %d %d %d %d %d %d %d %d %u\n",
    PMIX_SUCCESS, PMIX_ERR_NOT_FOUND, PMIX_GLOBAL, PMIX_BOOL, PMIX_SIZE, PMIX_INT,
    PMIX_UINT, PMIX_UINT16, PMIX_UINT32, PMIX_UINT64, PMIX_BYTE_OBJECT,
    (unsigned)PMIX_RANK_WILDCARD);
  printf("%s %s %s\n", PMIX_JOB_SIZE, PMIX_COLLECT_DATA, PMIX_OPTIONAL);
  return 0;
}
"#,
        )
        .unwrap();
        let exe = dir.join("layout");
        let out = Command::new("cc")
            .arg(format!("-I{inc}"))
            .arg(&src)
            .arg("-o")
            .arg(&exe)
            .output()
            .expect("run cc (run scripts/setup)");
        assert!(
            out.status.success(),
            "compiling against pmix_common.h failed: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = Command::new(&exe).output().unwrap();
        let _ = std::fs::remove_dir_all(&dir);
        let text = String::from_utf8(out.stdout).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        let ours_layout = [
            size_of::<Proc>(),
            offset_of!(Proc, rank),
            size_of::<Value>(),
            offset_of!(Value, data),
            size_of::<Info>(),
            offset_of!(Info, flags),
            offset_of!(Info, value),
            size_of::<ByteObject>(),
            MAX_NSLEN,
            MAX_KEYLEN,
        ]
        .map(|n| n.to_string())
        .join(" ");
        assert_eq!(
            lines[0], ours_layout,
            "struct layout differs from the header"
        );
        let ours_consts = [
            SUCCESS as i64,
            ERR_NOT_FOUND as i64,
            SCOPE_GLOBAL as i64,
            ty::BOOL as i64,
            ty::SIZE as i64,
            ty::INT as i64,
            ty::UINT as i64,
            ty::UINT16 as i64,
            ty::UINT32 as i64,
            ty::UINT64 as i64,
            ty::BYTE_OBJECT as i64,
            RANK_WILDCARD as i64,
        ]
        .map(|n| n.to_string())
        .join(" ");
        assert_eq!(lines[1], ours_consts, "constants differ from the header");
        let keys = [key::JOB_SIZE, key::COLLECT_DATA, key::OPTIONAL]
            .map(|k| k.to_str().unwrap())
            .join(" ");
        assert_eq!(lines[2], keys, "attribute keys differ from the header");
    }

    #[test]
    fn info_flag_is_loaded_like_the_macro() {
        let i = Info::flag(key::COLLECT_DATA, true);
        assert_eq!(c_text(&i.key), "pmix.collect");
        assert_eq!(i.value.ty, ty::BOOL);
        // SAFETY: `flag` is the member that was written.
        assert!(unsafe { i.value.data.flag });
    }

    #[test]
    fn a_missing_library_is_a_clear_error() {
        let e = Lib::open("/nonexistent/libpmix.so.2").err().unwrap();
        assert!(e.contains("/nonexistent/libpmix.so.2"), "{e}");
    }
}
