//! The library examples of docs/embedding.md (a distributed histogram and a
//! 2-D stencil with halo exchange and a global residual), in Rust and in C
//! (built with their Makefile), run on two providers; the C and Rust
//! stencils must agree to the printed digit.

use pgas_tests::cbuild::{build_libraries, workspace};
use pgas_tests::job::Job;
use pgas_tests::{example, target_dir};
use std::path::{Path, PathBuf};
use std::process::Command;

const PROVIDERS: [&str; 2] = ["shm", "tcp;ofi_rxm"];

fn c_examples() -> PathBuf {
    build_libraries();
    let dir = target_dir();
    let ws = workspace();
    let src = ws.join("runtime-shim/examples/c");
    let out = Command::new("make")
        .arg("-C")
        .arg(&src)
        .arg(format!("TARGET={}", dir.display()))
        .output()
        .expect("run make");
    assert!(
        out.status.success(),
        "make in runtime-shim/examples/c failed:\n{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    src
}

fn run(program: &Path, n: usize, provider: &str) -> String {
    Job::new(program.to_path_buf(), n)
        .provider(provider)
        .secs(180)
        .succeeds()
        .stdout
}

#[test]
fn histogram_and_stencil_in_rust_and_c() {
    let c = c_examples();
    for p in PROVIDERS {
        for prog in [example("histogram"), c.join("histogram")] {
            let out = run(&prog, 4, p);
            assert!(out.contains("histogram: 80000 of 80000 draws"), "{out}");
        }
        let rust = run(&example("stencil2d"), 3, p);
        let c_out = run(&c.join("stencil2d"), 3, p);
        assert!(
            rust.starts_with("stencil2d: 3 x 32 x 64 grid, residual"),
            "{rust}"
        );
        assert_eq!(rust, c_out, "the Rust and C stencils disagree");
    }
}
