//! Compiles the few lines of C the library needs (`long double`
//! arithmetic: no Rust type has its representation), and lists the
//! profiling interface's names.
//!
//! The profiling interface (`src/profiling.rs`) gives every call of the
//! C API a second name, `pshmem_X` for `shmem_X`. The list of calls is the
//! header's: `include/shmem.h` is run through the C preprocessor and every
//! function it declares (not the `static inline` ones, which are defined in
//! the header itself) becomes one line of `$OUT_DIR/profiling_names.rs`.
//! The library is linked with `-Bsymbolic-functions`, so that a
//! `pshmem_X` reaches the library's own `shmem_X` even when the program
//! defines a `shmem_X` of its own (the point of the interface).
use std::path::PathBuf;

include!("old_names.rs");

fn main() {
    println!("cargo:rerun-if-changed=src/ldouble.c");
    println!("cargo:rerun-if-changed=include");
    println!("cargo:rerun-if-changed=old_names.rs");
    cc::Build::new()
        .file("src/ldouble.c")
        .compile("pgas_shmem_ldouble");

    println!("cargo:rustc-check-cfg=cfg(pgas_shmem_profiling)");
    let names = declared_names();
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("OUT_DIR"));
    let mut rs = String::from("trampolines! {\n");
    for n in &names {
        rs.push_str(&format!("    p{n} => {n},\n"));
    }
    rs.push_str("}\n");
    std::fs::write(out.join("profiling_names.rs"), rs).expect("write profiling_names.rs");
    // Naked functions (the trampolines) are stable from Rust 1.88; an older
    // compiler builds the library without the profiling names.
    if rustc_minor() >= 88 {
        println!("cargo:rustc-cfg=pgas_shmem_profiling");
        println!("cargo:rustc-cdylib-link-arg=-Wl,-Bsymbolic-functions");
    }
}

/// The functions `include/shmem.h` declares, from its preprocessed text.
fn declared_names() -> Vec<String> {
    let text = cc::Build::new()
        .file("include/shmem.h")
        .include("include")
        .cargo_warnings(false)
        .expand();
    let text = String::from_utf8_lossy(&text);
    let bytes = text.as_bytes();
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    let mut names = std::collections::BTreeSet::new();
    let mut inline = std::collections::BTreeSet::new();
    let mut i = 0;
    while i < bytes.len() {
        if !ident(bytes[i]) || (i > 0 && ident(bytes[i - 1])) {
            i += 1;
            continue;
        }
        let start = i;
        while i < bytes.len() && ident(bytes[i]) {
            i += 1;
        }
        let word = &text[start..i];
        let mut j = i;
        while j < bytes.len() && bytes[j].is_ascii_whitespace() {
            j += 1;
        }
        let is_call = j < bytes.len() && bytes[j] == b'(';
        if is_call && (word.starts_with("shmem_") || OLD_NAMES.contains(&word)) {
            // A definition in the header: `static inline ... name(` with no
            // `;`, `{` or `}` between.
            let before = &text[..start];
            let decl_start = before.rfind([';', '{', '}']).map_or(0, |k| k + 1);
            if before[decl_start..].contains("static") {
                inline.insert(word.to_string());
            } else {
                names.insert(word.to_string());
            }
        }
    }
    names.retain(|n| !inline.contains(n));
    assert!(
        names.len() > 1000 && names.contains("shmem_long_p"),
        "found only {} functions in the preprocessed shmem.h",
        names.len()
    );
    names.into_iter().collect()
}

/// The minor version of the Rust compiler building the crate.
fn rustc_minor() -> u32 {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let out = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .expect("rustc --version");
    let v = String::from_utf8_lossy(&out.stdout);
    v.split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse().ok())
        .unwrap_or(0)
}
