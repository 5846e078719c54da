//! The runtime shim's C ABI end to end: `tests/c/shim_abi.c`, compiled with
//! the system C compiler against `runtime-shim/include/pgas_shim.h`, linked
//! once against the cdylib and once against the staticlib, run under
//! `pgasrun -n 2` (and 3 on one provider). The program checks lifecycle,
//! PUT/GET (blocking, non-blocking, strided, unordered), every atomic type,
//! on-statements, tasks, broadcast and bad input itself and prints
//! `shim_abi ok` on locale 0.

use pgas_tests::compile_c;
use pgas_tests::job::Job;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The compiled test program (once per link kind).
fn binary(static_link: bool) -> &'static Path {
    static DYN: OnceLock<PathBuf> = OnceLock::new();
    static STAT: OnceLock<PathBuf> = OnceLock::new();
    if static_link {
        STAT.get_or_init(|| compile_c("shim_abi", true))
    } else {
        DYN.get_or_init(|| compile_c("shim_abi", false))
    }
}

fn run(static_link: bool, n: usize, provider: &str, extra: &[(&str, &str)]) {
    let r = Job::new(binary(static_link).to_path_buf(), n)
        .provider(provider)
        .env(extra)
        .serial()
        .passes(&[format!("shim_abi ok on {provider}")]);
    // The bad-input section printed each error it provoked.
    r.assert_at_least("shim_abi bad input:", 30);
}

#[test]
fn c_abi_shm_dynamic_and_static() {
    run(false, 2, "shm", &[]);
    run(true, 2, "shm", &[("PGAS_AMO_VIA_AM", "1")]);
}

#[test]
fn c_abi_tcp_three_locales() {
    run(false, 3, "tcp;ofi_rxm", &[]);
}

#[test]
fn c_abi_sockets_fence_mode() {
    run(false, 2, "sockets", &[]);
}
