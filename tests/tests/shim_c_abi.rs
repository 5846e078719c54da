//! The runtime shim's C ABI end to end: `tests/c/shim_abi.c`, compiled with
//! the system C compiler against `runtime-shim/include/pgas_shim.h`, linked
//! once against the cdylib and once against the staticlib, run under
//! `pgasrun -n 2` (and 3 on one provider). The program checks lifecycle,
//! PUT/GET (blocking, non-blocking, strided, unordered), every atomic type,
//! on-statements, tasks, broadcast and bad input itself and prints
//! `shim_abi ok` on locale 0.

use pgas_tests::{compile_c, launch};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

static SERIAL: Mutex<()> = Mutex::new(());

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
    let prog = binary(static_link);
    let _g = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let mut env = vec![("PGAS_PROVIDER", provider)];
    env.extend_from_slice(extra);
    let r = launch(n, prog, &[], &env, Duration::from_secs(120));
    r.assert_ok(&format!(
        "shim_abi ({}) on {provider} x{n} {extra:?}",
        if static_link { "static" } else { "dynamic" }
    ));
    assert!(
        r.stdout.contains(&format!("shim_abi ok on {provider}")),
        "no ok line: {}",
        r.stdout
    );
    // The bad-input section printed each error it provoked.
    assert!(
        r.stdout.matches("shim_abi bad input:").count() >= 30,
        "bad-input lines missing: {}",
        r.stdout
    );
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
