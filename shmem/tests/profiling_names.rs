//! The profiling interface is complete: every call `libpgas_shmem.so`
//! exports as `shmem_X` (and the 1.2 names `start_pes`, `_my_pe`, ...) is
//! also exported as `pshmem_X` (`pstart_pes`, `p_my_pe`, ...), and no
//! profiling name lacks its call. (`tests/tests/shmem_c.rs` interposes one
//! call and checks that it reaches the library.)
//!
//! Compiled only where `build.rs` builds the profiling names
//! (`pgas_shmem_profiling`: Rust 1.88's naked functions), so an older
//! toolchain has no such test rather than one that passes unchecked.
#![cfg(pgas_shmem_profiling)]

use std::collections::BTreeSet;
use std::process::Command;

include!("../old_names.rs");

#[test]
fn every_exported_call_has_its_profiling_name() {
    // target/<profile>/deps/<this test> -> target/<profile>/libpgas_shmem.so
    let exe = std::env::current_exe().expect("test path");
    let so = exe
        .parent()
        .and_then(|d| d.parent())
        .expect("target dir")
        .join("libpgas_shmem.so");
    // cargo test builds the rlib only: build the cdylib first, with the
    // workspace's selection (as the tests crate's harness does, so that no
    // dependency is rebuilt with other features).
    let release = so.parent().is_some_and(|d| d.ends_with("release"));
    let mut b = Command::new(std::env::var("CARGO").unwrap_or_else(|_| "cargo".into()));
    b.args([
        "build",
        "--quiet",
        "--workspace",
        "--lib",
        "--bins",
        "--examples",
    ]);
    if release {
        b.arg("--release");
    }
    let st = b
        .arg("--manifest-path")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/../Cargo.toml"))
        .status()
        .expect("run cargo build");
    assert!(st.success(), "building libpgas_shmem.so failed");
    let out = Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&so)
        .output()
        .expect("run nm (binutils)");
    assert!(out.status.success(), "nm {}: {:?}", so.display(), out);
    let text = String::from_utf8_lossy(&out.stdout);
    let funcs: BTreeSet<&str> = text
        .lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let (_addr, kind, name) = (f.next()?, f.next()?, f.next()?);
            (kind == "T").then_some(name)
        })
        .collect();
    let calls: Vec<&str> = funcs
        .iter()
        .copied()
        .filter(|n| n.starts_with("shmem_") || OLD_NAMES.contains(n))
        .collect();
    assert!(
        calls.len() > 1000,
        "only {} calls exported by {}",
        calls.len(),
        so.display()
    );
    let missing: Vec<_> = calls
        .iter()
        .filter(|n| !funcs.contains(format!("p{n}").as_str()))
        .collect();
    assert!(
        missing.is_empty(),
        "calls without a profiling name: {missing:?}"
    );
    let orphans: Vec<_> = funcs
        .iter()
        .filter(|n| n.starts_with("pshmem_") || n.starts_with("p_") || n.starts_with("psh"))
        .filter(|n| !funcs.contains(&n[1..]))
        .collect();
    assert!(
        orphans.is_empty(),
        "profiling names without a call: {orphans:?}"
    );
}
